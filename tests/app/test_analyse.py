"""``damii analyse`` and the web app's review and analysis board: the command's outputs
and errors, the server's fair-play refusal in a rated game (and of its position pasted on
the analysis board), a review of a finished game and of a pasted PDN."""

from __future__ import annotations

import time

import pytest

from damii_app.cli import main
from damii_env import Game
from damii_env.pdn import loads, record, write_file

# White men 32, 39, 46-48 against Black 1-5 and 22: 32-28 hangs two men (22x33x44),
# tests/players/test_review.py says why
HANGING = "W:W32,39,46,47,48:B1,2,3,4,5,22"


def _short_game(tmp_path):
    game = Game.from_fen(HANGING, "international")
    for move in ("32-28", "22x33x44", "48-43"):
        game.push(move)
    return write_file(tmp_path / "game.pdn", [record(game, white="Ann", black="Bob")])


def test_analyse_writes_the_annotated_pdn_the_summary_and_the_graph(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = _short_game(tmp_path)
    assert main(["analyse", str(path), "--time", "0.1", "--workers", "1",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "White (Ann): 2 moves" in out and "Black (Bob): 1 moves" in out
    annotated = tmp_path / "game.analysed.pdn"
    assert f"annotated PDN: {annotated}" in out
    back = loads(annotated.read_text())[0]
    assert back.moves == ["32-28", "22x33x44", "48-43"]
    assert "better" in back.comments[0]  # 32-28 loses at least a man: marked, with a line
    assert back.tags["Annotator"].startswith("damii analyse pretrained:international, 0.1 s")
    png = tmp_path / "game.analysed.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_bad_pdn_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "bad.pdn"
    path.write_text('[Variant "international"]\n1. 32-28 19-23 2. 31-27 *\n')
    assert main(["analyse", str(path), "--no-progress", "--no-graph"]) == 2
    err = capsys.readouterr().err
    assert "move 2. 31-27 (ply 3) cannot be played" in err
    assert main(["analyse", str(tmp_path / "none.pdn")]) == 2
    assert "no PDN file" in capsys.readouterr().err
    path.write_text('[Variant "damii"]\n1. 31-26 *\n')
    assert main(["analyse", str(path), "--player", "random", "--no-graph"]) == 2
    assert "alphabeta:... or pretrained:NAME" in capsys.readouterr().err
    assert main(["analyse", str(path), "--out", str(path), "--no-graph"]) == 2
    assert "does not overwrite the game it reads" in capsys.readouterr().err


# --- the web app ---------------------------------------------------------------------------
def _new(client, **body):
    r = client.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def _play(client, gid, move):
    r = client.post(f"/api/games/{gid}/move", json={"move": move})
    assert r.status_code == 200, r.text
    return r.json()


def test_a_rated_game_is_not_analysed_while_it_runs(client):
    state = _new(client, variant="international", white="human", black="human", casual=False,
                 fen=HANGING)
    gid = state["id"]
    state = _play(client, gid, "32-28")
    r = client.post("/api/analysis", json={"game": gid})
    assert r.status_code == 403, r.text
    assert "fair play" in r.text and "a rated game" in r.text and "still being played" in r.text
    # its position pasted on the analysis board, written otherwise: refused too
    fen = Game.from_fen(HANGING, "international")
    fen.push("32-28")
    r = client.post("/api/analysis/position", json={"variant": "international",
                                                 "fen": fen.fen()})
    assert r.status_code == 403 and "fair play" in r.text, r.text
    r = client.post("/api/analysis/position", json={"game": gid})
    assert r.status_code == 403 and "fair play" in r.text, r.text
    # its PDN, copied to the review: refused while it runs
    pdn = client.get(f"/api/games/{gid}/pdn").text
    r = client.post("/api/analysis", json={"pdn": pdn})
    assert r.status_code == 403 and "fair play" in r.text, r.text
    # once it has ended, the review runs
    client.post(f"/api/games/{gid}/resign", json={"side": "black"})
    r = client.post("/api/analysis", json={"game": gid, "seconds": 0.05})
    assert r.status_code == 200, r.text
    review = _finished(client, r.json()["id"])
    assert [m["move"] for m in review["moves"]] == ["32-28"]
    assert review["moves"][0]["mark"] in ("?", "??")
    assert len(review["graph"]) == 2


def test_a_casual_game_and_a_pasted_pdn_are_reviewed(client, tmp_path):
    state = _new(client, variant="international", white="human", black="human", fen=HANGING)
    _play(client, state["id"], "32-28")
    r = client.post("/api/analysis/position", json={"game": state["id"], "seconds": 0.05})
    assert r.status_code == 200, r.text  # a hint in a casual game
    assert r.json()["best"] == "22x33x44" and r.json()["legal"] == 1
    pdn = _short_game(tmp_path).read_text()
    r = client.post("/api/analysis", json={"pdn": pdn, "seconds": 0.05})
    assert r.status_code == 200, r.text
    review = _finished(client, r.json()["id"])
    assert [m["move"] for m in review["moves"]] == ["32-28", "22x33x44", "48-43"]
    assert review["moves"][0]["mark"] in ("?", "??") and review["moves"][0]["line"]
    assert review["summary"][0]["moves"] == 2
    r = client.post("/api/analysis", json={"pdn": '[Variant "international"]\n1. 32-29 *'})
    assert r.status_code == 400 and "1. 32-29 (ply 1) cannot be played" in r.text, r.text


def _finished(client, aid, timeout=120.0):
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        state = client.get(f"/api/analysis/{aid}").json()
        assert state.get("error") is None, state
        if not state["running"]:
            return state["review"]
        time.sleep(0.05)
    raise AssertionError(f"the analysis did not finish: {state}")


def test_the_outputs_get_the_usual_file_mode(tmp_path):
    import os

    path = _short_game(tmp_path)
    assert main(["analyse", str(path), "--time", "0.05", "--workers", "1", "--no-progress",
                 "--no-graph"]) == 0
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "game.analysed.pdn").stat().st_mode & 0o777 == 0o666 & ~mask


def test_clients_without_a_cookie_get_their_own_reviews(app, tmp_path):
    """An API client's first request is a review: it gets a session of its own (before,
    every client without a cookie shared the session None: the second one's review was
    refused as "yours is still running", and each could read the other's)."""
    from fastapi.testclient import TestClient

    pdn = _short_game(tmp_path).read_text()
    with TestClient(app) as ann, TestClient(app) as bob:
        started = [c.post("/api/analysis", json={"pdn": pdn, "seconds": 0.05})
                   for c in (ann, bob)]
        assert [r.status_code for r in started] == [200, 200], [r.text for r in started]
        assert ann.cookies.get("damii_session") != bob.cookies.get("damii_session")
        ann_id, bob_id = (r.json()["id"] for r in started)
        assert bob.get(f"/api/analysis/{ann_id}").status_code == 404
        assert _finished(ann, ann_id)["moves"] and _finished(bob, bob_id)["moves"]

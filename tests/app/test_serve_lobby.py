"""The lobby of `damii serve`: a game opened in one browser session and joined from
another, spectators read-only, each seat moved only by its own session; heartbeats, the
reconnection grace and loss by disconnection (short times, set for the test)."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from damii_app.serve import create_app  # noqa: E402
from damii_env.pdn import loads  # noqa: E402


@pytest.fixture()
def app():
    return create_app(workers=0, agent_delay=0.0, grace=0.6, heartbeat_timeout=0.3)


@pytest.fixture()
def patient_app():
    """Times no busy machine reaches between two beats, for a test that plays a whole
    game (on the 2-core machine at load 3-4 the game once ended with the result *:
    abandoned, neither seat heard within the short fixture's 0.3 s + 0.6 s)."""
    return create_app(workers=0, agent_delay=0.0, grace=30.0, heartbeat_timeout=10.0)


def ok(r):
    assert r.status_code == 200, r.text
    return r.json()


def test_open_join_watch_and_play_to_the_end(patient_app):
    app = patient_app
    with TestClient(app) as ana, TestClient(app) as ben, TestClient(app) as eve:
        state = ok(ana.post("/api/lobby", json={"name": "ana", "variant": "damii"}))
        gid = state["id"]
        assert state["open"] and state["seats"][1]["label"] == "open"
        listed = ok(eve.get("/api/lobby"))["games"]
        assert [(g["id"], g["open"], g["white"]) for g in listed] == [(gid, True, "ana")]
        r = ana.post(f"/api/games/{gid}/move", json={"move": "32-27"})
        assert "waiting for an opponent" in r.json()["error"]
        assert "already play" in ana.post(f"/api/lobby/{gid}/join", json={"name": "x"}
                                          ).json()["error"]
        state = ok(ben.post(f"/api/lobby/{gid}/join", json={"name": "ben"}))
        assert not state["open"] and state["seats"][1]["label"] == "ben"
        assert "not open" in eve.post(f"/api/lobby/{gid}/join", json={}).json()["error"]
        # a spectator sees the game but cannot act; a player moves only its own seat
        assert ok(eve.get(f"/api/games/{gid}"))["id"] == gid
        for path, body in (("move", {"move": "32-27"}), ("resign", {}),
                           ("draw", {"action": "offer"})):
            r = eve.post(f"/api/games/{gid}/{path}", json=body)
            assert r.status_code == 403 and "only its players move" in r.json()["error"]
        r = ben.post(f"/api/games/{gid}/move", json={"move": "32-27"})
        assert "white's turn, not yours" in r.json()["error"]
        with eve.websocket_connect(f"/api/games/{gid}/ws") as ws:  # watching live
            first = ws.receive_json()
            for _ in range(200):
                state = ok(ana.get(f"/api/games/{gid}"))
                if state["over"]:
                    break
                mover = (ana, ben)[state["position"]["turn"]]
                ok(mover.post(f"/api/games/{gid}/move",
                              json={"move": state["position"]["legal"][0]["text"]}))
                for c in (ana, ben):
                    c.post(f"/api/games/{gid}/heartbeat")
            if not state["over"]:  # long games: Black gives up after 200 moves each
                state = ok(ben.post(f"/api/games/{gid}/resign", json={}))
            assert ws.receive_json()["version"] > first["version"]
        assert state["over"] and state["result"] in ("1-0", "0-1", "1/2-1/2")
        (record,) = loads(eve.get(f"/api/games/{gid}/pdn").text)  # spectators read it
        assert record.tags["White"] == "ana" and record.tags["Black"] == "ben"
        assert "take-backs" in ana.post(f"/api/games/{gid}/takeback").json()["error"]


def beat_until(clients, gid, seconds):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        for c in clients:
            c.post(f"/api/games/{gid}/heartbeat")
        time.sleep(0.05)


def test_a_player_who_drops_and_comes_back_within_the_grace_plays_on(app):
    with TestClient(app) as ana, TestClient(app) as ben:
        gid = ok(ana.post("/api/lobby", json={"name": "ana"}))["id"]
        ok(ben.post(f"/api/lobby/{gid}/join", json={"name": "ben"}))
        beat_until([ana, ben], gid, 0.3)
        beat_until([ana], gid, 0.55)  # ben is away (0.3 s without a beat), grace 0.6 s
        state = ok(ana.get(f"/api/games/{gid}"))
        away = state["connections"][1]
        assert not away["connected"] and 0 < away["grace_left"] < 0.6
        assert "lost the connection" in state["message"]
        assert state["connections"][0]["connected"]
        ok(ben.post(f"/api/games/{gid}/heartbeat"))  # back in time
        state = ok(ana.get(f"/api/games/{gid}"))
        assert state["connections"][1]["connected"] and not state["over"]
        assert "is back" in state["message"]


def test_a_player_who_does_not_come_back_loses_by_disconnection(app):
    with TestClient(app) as ana, TestClient(app) as ben:
        gid = ok(ana.post("/api/lobby", json={"name": "ana"}))["id"]
        ok(ben.post(f"/api/lobby/{gid}/join", json={"name": "ben"}))
        beat_until([ana], gid, 1.5)  # 0.3 s timeout + 0.6 s grace, and the ticker's beat
        state = ok(ana.get(f"/api/games/{gid}"))
        assert (state["result"], state["termination"]) == ("1-0", "disconnection")
        assert "loses by disconnection" in state["message"]


def test_the_command_line_takes_grace_and_db():
    from damii_app.cli import build_parser

    args = build_parser().parse_args(["serve", "--grace", "30", "--db", "x.sqlite3"])
    assert (args.grace, args.db, args.host) == (30.0, "x.sqlite3", "127.0.0.1")
    assert build_parser().parse_args(["serve"]).grace == 90.0

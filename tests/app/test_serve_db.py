"""`damii serve --db`: players, finished games as PDN and the Elo ladder kept in SQLite
across a restart of the server; the schema made by the server; ratings hand-checked.
Games in progress kept move by move and taken up again after a restart (real servers on
a free local port, one browser a cookie jar): their moves, seats and turn, the cookies
still their seats', an agent to move asked again, the reconnection grace from the
restart and the loss by disconnection of a person who does not come back."""

from __future__ import annotations

import sqlite3
import time

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from fastapi.testclient import TestClient  # noqa: E402

from damii_app.serve import create_app  # noqa: E402
from damii_app.serve.store import SCHEMA, Store, expected_score  # noqa: E402
from damii_env.pdn import loads  # noqa: E402
from tests.app.test_serve_api import EVENT_WAIT, served  # noqa: E402


def rated_game(client, name: str, resign: bool = True) -> dict:
    r = client.post("/api/games", json={"white": "human", "black": "random", "casual": False,
                                        "name": name, "seed": 1})
    assert r.status_code == 200, r.text
    state = r.json()
    r = client.post(f"/api/games/{state['id']}/resign", json={})
    assert r.status_code == 200, r.text
    return r.json()


def test_games_and_the_ladder_outlive_a_restart(tmp_path):
    db = tmp_path / "data" / "serve.sqlite3"
    with TestClient(create_app(workers=0, agent_delay=0.0, db=db)) as client:
        state = rated_game(client, "ana")
        assert (state["result"], state["termination"]) == ("0-1", "resignation")
        casual = client.post("/api/games", json={"white": "human", "black": "human",
                                                 "name": "ben"}).json()
        client.post(f"/api/games/{casual['id']}/resign", json={})
        ladder = client.get("/api/ladder").json()["players"]
    # hand-checked Elo: both at 1500, expected score 1/2, K 32: ana 1484, random 1516
    assert {p["name"]: (p["rating"], p["games"]) for p in ladder} == {
        "ana": (1484.0, 1), "random": (1516.0, 1), "ben": (1500.0, 0)}
    with TestClient(create_app(workers=0, agent_delay=0.0, db=db)) as client:  # restarted
        assert client.get("/api/ladder").json()["players"] == ladder
        games = client.get("/api/history").json()["games"]
        assert len(games) == 2 and {g["rated"] for g in games} == {0, 1}
        kept = next(g for g in games if g["id"] == state["id"])
        (record,) = loads(kept["pdn"])
        assert record.tags["White"] == "ana" and record.result == "0-1"
        state2 = rated_game(client, "ana")  # ana loses again, from 1484 against 1516
        assert state2["result"] == "0-1"
        ladder = {p["name"]: p["rating"] for p in client.get("/api/ladder").json()["players"]}
    change = 32 * (1 - expected_score(1516, 1484))
    assert ladder["random"] == round(1516 + change, 1) and ladder["ana"] == round(1484 - change, 1)
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert con.execute("PRAGMA user_version").fetchone()[0] == len(SCHEMA)


def test_a_game_is_counted_once_and_the_schema_is_migrated_from_empty(tmp_path):
    store = Store(tmp_path / "s.sqlite3")
    assert store.version == len(SCHEMA)
    for _ in range(2):  # the same game kept twice changes the ratings once
        store.record_game("g1", "damii", ("a", "person"), ("b", "person"), "1-0",
                          "resignation", True, "[Result \"1-0\"]\n1-0")
    assert {p["name"]: p["rating"] for p in store.ladder()} == {"a": 1516.0, "b": 1484.0}
    store.close()
    assert Store(tmp_path / "s.sqlite3").version == len(SCHEMA)  # opened again: no change


def test_without_a_database_nothing_is_kept(tmp_path):
    with TestClient(create_app(workers=0, agent_delay=0.0)) as client:
        assert client.get("/api/ladder").json() == {"players": [], "kept": False}
        bad = client.post("/api/games", json={"name": "a\nb"})
        assert bad.status_code == 400 and "name" in bad.json()["error"]


def ok(r) -> dict:
    assert r.status_code == 200, r.text
    return r.json()


def wait(http, gid: str, pred, timeout: float = EVENT_WAIT) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        state = ok(http.get(f"/api/games/{gid}"))
        if pred(state):
            return state
        assert time.monotonic() < deadline, f"timed out: {state['message']}"
        time.sleep(0.05)


def person_to_move(state: dict) -> bool:
    return state["over"] or (state["seats"][state["position"]["turn"]]["human"]
                             and not state["thinking"])


def play(browsers, gid: str, plies: int) -> dict:
    """`plies` moves of the people of a game (each by the browser of the side to move,
    `browsers[side]`), each the first legal move, an agent's reply awaited after each."""
    for _ in range(plies):
        state = wait(browsers[0], gid, person_to_move)
        mover = browsers[state["position"]["turn"]]
        ok(mover.post(f"/api/games/{gid}/move",
                      json={"move": state["position"]["legal"][0]["text"]}))
    return wait(browsers[0], gid, person_to_move)


def live_rows(db) -> dict[str, int]:
    with sqlite3.connect(db) as con:
        return dict(con.execute("SELECT g.id, COUNT(m.ply) FROM live_games g LEFT JOIN "
                                "live_moves m ON m.game = g.id GROUP BY g.id").fetchall())


def again(http, base: str):
    """The same browser (its cookie jar) talking to the server started again."""
    return httpx.Client(base_url=base, cookies=http.cookies, timeout=30)


def test_games_in_progress_and_their_sessions_outlive_a_restart(tmp_path):
    db = tmp_path / "serve.sqlite3"
    # agents pause 30 s between their moves in a game of agents only: it is stopped with
    # an agent to move; started again without the pause, the agent is asked again
    first = create_app(workers=0, agent_delay=30.0, db=db, grace=60)
    with served(first, join_seconds=20) as (base, _):
        ana, ben, carl, dan, fay = (httpx.Client(base_url=base, timeout=30) for _ in range(5))
        lobby = ok(ana.post("/api/lobby", json={"name": "ana"}))["id"]
        ok(ben.post(f"/api/lobby/{lobby}/join", json={"name": "ben"}))
        before = play([ana, ben], lobby, 5)
        timed = ok(fay.post("/api/games", json={"white": "human", "black": "random",
                                                "clock": "3"}))["id"]  # 3 s a move
        play([fay, fay], timed, 1)
        assert live_rows(db)[lobby] == 5  # each move written as it was played
        agent = ok(carl.post("/api/games", json={"white": "human", "black": "alphabeta:depth=2",
                                                 "name": "carl", "casual": False}))["id"]
        mine = play([carl, carl], agent, 3)  # carl's 3 moves and the agent's 3 replies
        assert len(mine["moves"]) == 6 and live_rows(db)[agent] == 6
        agents = ok(dan.post("/api/games", json={"white": "random", "black": "greedy"}))["id"]
        wait(dan, agents, lambda s: len(s["moves"]) == 1)  # then 30 s until the next move
        assert live_rows(db) == {lobby: 5, timed: 2, agent: 6, agents: 1}
    second = create_app(workers=0, agent_delay=0.0, db=db, grace=60)
    with served(second, join_seconds=20) as (base, _):
        up = time.monotonic()
        ana, ben, carl, dan, fay = (again(c, base) for c in (ana, ben, carl, dan, fay))
        eve = httpx.Client(base_url=base, timeout=30)  # a spectator who was not there before
        state = ok(eve.get(f"/api/games/{lobby}"))
        assert state["moves"] == before["moves"] and not state["over"]
        assert state["position"]["turn"] == before["position"]["turn"] == 1
        assert [s["label"] for s in state["seats"]] == ["ana", "ben"]
        assert "the server restarted; ana (white) and ben (black) have 60 s" in state["message"]
        assert [c["connected"] for c in state["connections"]] == [False, False]
        assert 0 < state["connections"][1]["grace_left"] <= 60
        # the cookies are the server's own still: no fresh session, each seat its browser's
        r = ben.get("/api/lobby")
        assert "damii_session" not in r.cookies
        assert [g["you"] for g in ok(r)["games"] if g["id"] == lobby] == [[1]]
        r = ana.post(f"/api/games/{lobby}/move",
                     json={"move": state["position"]["legal"][0]["text"]})
        assert "black's turn, not yours" in r.json()["error"]  # ana plays White only
        assert eve.post(f"/api/games/{lobby}/move", json={"move": "1-2"}).status_code == 403
        for c in (ana, ben):
            ok(c.post(f"/api/games/{lobby}/heartbeat"))
        after = play([ana, ben], lobby, 2)
        assert after["moves"][:5] == before["moves"] and len(after["moves"]) == 7
        assert [c["connected"] for c in after["connections"]] == [True, True]
        assert live_rows(db)[lobby] == 7
        # the game against an agent: carl's cookie moves again, the agent answers
        state = ok(carl.get(f"/api/games/{agent}"))
        assert state["moves"] == mine["moves"] and state["position"]["turn"] == 0
        assert state["seats"][1]["label"] == "alphabeta:depth=2" and not state["casual"]
        state = play([carl, carl], agent, 1)
        assert state["moves"][:6] == mine["moves"] and len(state["moves"]) == 8
        # the game of agents: the agent to move was asked again and it plays to the end
        state = wait(dan, agents, lambda s: s["over"])
        assert state["moves"][0] != "" and len(state["moves"]) > 1
        history = {g["id"]: g for g in ok(dan.get("/api/history"))["games"]}
        (record,) = loads(history[agents]["pdn"])
        assert record.moves == state["moves"]
        assert agents not in live_rows(db)  # a finished game leaves the games in progress
        # the move clock of a person to move waits for the person to come back
        time.sleep(max(0.0, up + 3.5 - time.monotonic()))  # longer than the 3 s a move
        state = ok(fay.get(f"/api/games/{timed}"))  # looking is not coming back
        assert not state["over"] and state["clock"]["remaining"] == 3.0
        assert 0 < state["connections"][0]["grace_left"] < 57
        ok(fay.post(f"/api/games/{timed}/heartbeat"))  # back: the 3 s start now
        state = ok(fay.get(f"/api/games/{timed}"))
        assert not state["over"] and 0.0 < state["clock"]["remaining"] <= 3.0
        assert "came back after the restart" in state["message"]
        assert len(play([fay, fay], timed, 1)["moves"]) == 4
        ok(ana.post(f"/api/games/{lobby}/resign", json={}))
        assert set(live_rows(db)) == {agent, timed}
    with sqlite3.connect(db) as con:
        sessions = {r[0] for r in con.execute("SELECT id FROM sessions")}
    assert carl.cookies.get("damii_session") in sessions


GRACE = 5.0
"""The grace of the restart below: ana's first heartbeat must come within it of the
restore (a busy machine took over a second to get there)."""


def test_a_person_who_does_not_come_back_after_a_restart_loses_by_disconnection(tmp_path):
    db = tmp_path / "serve.sqlite3"
    with served(create_app(workers=0, agent_delay=0.0, db=db), join_seconds=20) as (base, _):
        ana, ben, carl, dan = (httpx.Client(base_url=base, timeout=30) for _ in range(4))
        lobby = ok(ana.post("/api/lobby", json={"name": "ana"}))["id"]
        ok(ben.post(f"/api/lobby/{lobby}/join", json={"name": "ben"}))
        play([ana, ben], lobby, 2)
        agent = ok(carl.post("/api/games", json={"white": "human", "black": "random",
                                                 "name": "carl", "casual": False}))["id"]
        play([carl, carl], agent, 1)
        board = ok(dan.post("/api/games", json={"white": "human", "black": "human",
                                                "name": "dan", "casual": False}))["id"]
        play([dan, dan], board, 1)  # two people at one screen
    second = create_app(workers=0, agent_delay=0.0, db=db, grace=GRACE, heartbeat_timeout=5.0)
    with served(second, join_seconds=20) as (base, _):
        ana, ben, carl, dan = (again(c, base) for c in (ana, ben, carl, dan))
        # ana comes back and stays (her heartbeats); the others do not: wait until their
        # grace has ended each game (events, not a guessed time)
        deadline = time.monotonic() + EVENT_WAIT
        while True:
            ok(ana.post(f"/api/games/{lobby}/heartbeat"))
            if all(ok(h.get(f"/api/games/{g}"))["over"]
                   for h, g in ((ana, lobby), (carl, agent), (dan, board))):
                break
            assert time.monotonic() < deadline, "the absent players' grace never ended"
            time.sleep(0.05)
        state = ok(ana.get(f"/api/games/{lobby}"))
        assert (state["result"], state["termination"]) == ("1-0", "disconnection")
        assert f"ben (black) did not come back within {GRACE:g} s" in state["message"]
        state = ok(carl.get(f"/api/games/{agent}"))
        assert (state["result"], state["termination"]) == ("0-1", "disconnection")
        state = ok(dan.get(f"/api/games/{board}"))  # neither of its two people came back
        assert (state["result"], state["termination"]) == ("*", "both players disconnected")
        ladder = {p["name"]: p["rating"] for p in ok(ana.get("/api/ladder"))["players"]}
        assert live_rows(db) == {}
    # rated games, hand-checked: all at 1500, K 32: the winner +16, the loser -16; the
    # abandoned game counts for nobody
    assert (ladder["ana"], ladder["ben"], ladder["carl"], ladder["random"], ladder["dan"]) == (
        1516.0, 1484.0, 1484.0, 1516.0, 1500.0)


def test_a_version_1_database_is_migrated_and_keeps_its_games(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as con:  # a database as the first schema left it
        for statement in SCHEMA[0]:
            con.execute(statement)
        con.execute("INSERT INTO players VALUES ('a', 'person', 1516, 1, 0)")
        con.execute("INSERT INTO players VALUES ('b', 'person', 1484, 1, 0)")
        con.execute("INSERT INTO games VALUES ('g1', 'damii', 'a', 'b', '1-0', "
                    "'resignation', 1, '[Result \"1-0\"]\n1-0', 0)")
        con.execute("PRAGMA user_version=1")
    store = Store(path)
    assert store.version == len(SCHEMA) == 2
    assert [g["id"] for g in store.history()] == ["g1"]
    assert store.live_games() == [] and store.sessions() == []
    store.close()


def test_moves_taken_back_leave_the_database_and_an_evicted_game_too(tmp_path, monkeypatch):
    import damii_app.serve.state as serve_state

    db = tmp_path / "serve.sqlite3"
    with TestClient(create_app(workers=0, agent_delay=0.0, db=db)) as client:
        gid = ok(client.post("/api/games", json={"white": "human", "black": "greedy"}))["id"]
        state = play([client, client], gid, 3)
        assert live_rows(db) == {gid: 6}
        state = ok(client.post(f"/api/games/{gid}/takeback"))
        assert live_rows(db) == {gid: 4}
        with sqlite3.connect(db) as con:
            kept = [r[0] for r in con.execute("SELECT move FROM live_moves WHERE game = ? "
                                              "ORDER BY ply", (gid,))]
        assert kept == state["moves"]
        # the session's oldest game is evicted when it opens one game too many
        monkeypatch.setattr(serve_state, "MAX_GAMES_PER_SESSION", 1)
        other = ok(client.post("/api/games", json={"white": "human", "black": "human"}))["id"]
        assert live_rows(db) == {other: 0}


def test_moves_played_are_kept_when_the_server_is_killed(tmp_path):
    """kill -9, not a clean stop: what was answered had been written."""
    import os
    import signal
    import socket
    import subprocess
    import sys

    db = tmp_path / "serve.sqlite3"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from damii_app.cli import main; "
         "sys.exit(main(sys.argv[1:]))", "serve", "--port", str(port), "--workers", "0",
         "--db", str(db)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(f"{base}/api/meta", timeout=5)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.2)
        ana, ben = (httpx.Client(base_url=base, timeout=30) for _ in range(2))
        lobby = ok(ana.post("/api/lobby", json={"name": "ana"}))["id"]
        ok(ben.post(f"/api/lobby/{lobby}/join", json={"name": "ben"}))
        before = play([ana, ben], lobby, 6)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    with served(create_app(workers=0, agent_delay=0.0, db=db), join_seconds=20) as (base, _):
        ana, ben = (again(c, base) for c in (ana, ben))
        state = ok(ben.get(f"/api/games/{lobby}"))
        assert state["moves"] == before["moves"] and len(state["moves"]) == 6
        state = play([ana, ben], lobby, 1)  # the cookies are still their seats'
        assert len(state["moves"]) == 7


def test_a_finished_game_leaves_the_games_in_progress_and_its_sessions_go_at_a_start(tmp_path):
    store = Store(tmp_path / "s.sqlite3")
    seats = [{"label": "a", "spec": None, "session": "s1"},
             {"label": "b", "spec": None, "session": "s2"}]
    live = {"owner": "s1", "variant": "damii", "options": {"turn_limit": 400},
            "start_fen": None, "seats": seats, "clock": 60.0, "casual": False, "lobby": True,
            "seed": None, "took_back": False, "draw_offer": None, "created": 1.0}
    store.open_live("g1", live, ["32-28"], {"s1", "s2"})
    store.open_live("g2", dict(live, owner="s3", seats=[]), [], {"s3"})
    store.update_live("g1", dict(live, draw_offer=1), 1, ["19-23", "28x19"])
    (kept, _) = store.live_games()
    assert kept["moves"] == ["32-28", "19-23", "28x19"] and kept["draw_offer"] == 1
    assert kept["seats"] == seats and kept["options"] == {"turn_limit": 400}
    store.record_game("g1", "damii", ("a", "person"), ("b", "person"), "1-0", "resignation",
                      True, "[Result \"1-0\"]\n1-0")
    assert [g["id"] for g in store.live_games()] == ["g2"]
    with sqlite3.connect(tmp_path / "s.sqlite3") as con:  # its moves went with it
        assert con.execute("SELECT COUNT(*) FROM live_moves").fetchone()[0] == 0
    assert store.sessions() == ["s1", "s2", "s3"]
    assert store.sessions(prune=True) == ["s3"]  # s1 and s2 play nothing any more
    store.close()

"""Issue 63, the database off the event loop: every write goes through one writer thread
(a queue, in order) and reads have connections of their own. These tests make each
commit slow (a patched connection: 1.2 s a COMMIT, a disk that syncs slowly) and check
that a ping is answered meanwhile (the loop did not wait), that an answered request's
writes are in the database when it is answered (nothing acknowledged is lost), and
that the writes keep their order. At ba23c36 (and until this change) a finished game's
write, a move's, and a tournament's entry ran on the event loop: the ping waited for
the commit."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from damii_app.serve import create_app  # noqa: E402
from damii_app.serve.session import SessionLimits  # noqa: E402
from damii_app.serve.store import Store  # noqa: E402

OPEN = SessionLimits(address_burst=1e9, address_rate=1e9, total_burst=1e9, total_rate=1e9)
SLOW = 1.2
"""Seconds each patched COMMIT takes."""


def ok(r):
    assert r.status_code == 200, r.text
    return r.json()


class SlowCommits:
    """A connection whose COMMITs take :data:`SLOW` seconds (everything else passed on)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._inner = db
        self.commits = 0

    def execute(self, sql, *args):
        if sql == "COMMIT":
            time.sleep(SLOW)
            self.commits += 1
        return self._inner.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def pinged_during(client: TestClient, request) -> tuple[float, object]:
    """Run `request` (a callable sending one request) in a thread; 0.2 s after it starts,
    a ping: its latency and the request's response."""
    out: dict[str, object] = {}
    thread = threading.Thread(target=lambda: out.setdefault("r", request()))
    thread.start()
    time.sleep(0.2)
    start = time.perf_counter()
    ok(client.get("/api/ping"))
    waited = time.perf_counter() - start
    thread.join(30)
    return waited, out["r"]


def slow_app(tmp_path):
    app = create_app(workers=0, agent_delay=3600.0, db=tmp_path / "s.sqlite3",
                     session_limits=OPEN)
    return app, tmp_path / "s.sqlite3"


def test_a_slow_commit_of_a_move_and_of_a_finished_game_does_not_stall_a_ping(tmp_path):
    app, path = slow_app(tmp_path)
    with TestClient(app) as c:
        gid = ok(c.post("/api/games", json={"white": "human", "black": "human",
                                            "casual": False, "name": "ana"}))["id"]
        move = ok(c.get(f"/api/games/{gid}"))["position"]["legal"][0]["text"]
        store = app.state.server.store
        store._db = SlowCommits(store._db)
        waited, r = pinged_during(c, lambda: c.post(f"/api/games/{gid}/move",
                                                     json={"move": move}))
        assert waited < SLOW / 2, f"the ping waited {waited:.2f} s for a move's write"
        assert ok(r)["moves"] == [move]
        with sqlite3.connect(path) as db:  # answered: written
            assert db.execute("SELECT move FROM live_moves WHERE game = ?",
                              (gid,)).fetchall() == [(move,)]
        waited, r = pinged_during(c, lambda: c.post(f"/api/games/{gid}/resign", json={}))
        assert waited < SLOW / 2, f"the ping waited {waited:.2f} s for a result's write"
        assert ok(r)["over"]
        with sqlite3.connect(path) as db:  # answered: the finished game is kept
            assert db.execute("SELECT id FROM games").fetchall() == [(gid,)]
            assert db.execute("SELECT COUNT(*) FROM live_games").fetchone() == (0,)


def test_a_watchers_push_of_a_move_waits_until_the_move_is_written(tmp_path):
    """Issue 63: the page's websocket was sent a move before its write was done (a
    kill -9 then lost a move a watcher had seen); now a push waits for the writes
    submitted before it, as an answer does."""
    app, path = slow_app(tmp_path)
    with TestClient(app) as c:
        gid = ok(c.post("/api/games", json={"white": "human", "black": "human",
                                            "casual": False, "name": "ana"}))["id"]
        move = ok(c.get(f"/api/games/{gid}"))["position"]["legal"][0]["text"]
        with c.websocket_connect(f"/api/games/{gid}/ws") as ws:
            assert ws.receive_json()["moves"] == []
            store = app.state.server.store
            store._db = SlowCommits(store._db)
            thread = threading.Thread(target=lambda: c.post(f"/api/games/{gid}/move",
                                                            json={"move": move}))
            thread.start()
            pushed = ws.receive_json()
            with sqlite3.connect(path) as db:  # what the watcher was shown is written
                kept = db.execute("SELECT move FROM live_moves WHERE game = ?",
                                  (gid,)).fetchall()
            thread.join(30)
        assert pushed["moves"] == [move]
        assert kept == [(move,)], "the move was pushed before its write was done"


def test_a_slow_commit_of_a_tournament_entry_does_not_stall_a_ping(tmp_path):
    app, path = slow_app(tmp_path)
    with TestClient(app) as c:
        tid = ok(c.post("/api/tournaments", json={"name": "Year", "max_players": 8}))["id"]
        store = app.state.server.store
        store._db = SlowCommits(store._db)
        waited, r = pinged_during(c, lambda: c.post(f"/api/tournaments/{tid}/agents",
                                                     json={"spec": "random", "name": "r1"}))
        assert waited < SLOW / 2, f"the ping waited {waited:.2f} s for an entry's write"
        assert [e["name"] for e in ok(r)["entrants"]] == ["r1"]
        waited, r = pinged_during(c, lambda: c.post(f"/api/tournaments/{tid}/join",
                                                     json={"name": "ana"}))
        assert waited < SLOW / 2, f"the ping waited {waited:.2f} s for an entry's write"
        assert sorted(e["name"] for e in ok(r)["entrants"]) == ["ana", "r1"]
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT COUNT(*) FROM entrants").fetchone() == (2,)


def test_writes_run_in_order_in_one_thread_and_reads_wait_for_none(tmp_path):
    store = Store(tmp_path / "s.sqlite3")
    try:
        store.write([("CREATE TABLE t (x INTEGER)", ())])
        threads: list[str] = []

        def steps(x: int):
            def run():
                threads.append(threading.current_thread().name)
                store._db.execute("INSERT INTO t VALUES (?)", (x,))
                return x
            return run

        store._db = SlowCommits(store._db)
        futures = [store.submit(steps(x)) for x in range(3)]
        start = time.perf_counter()
        assert store.query("SELECT COUNT(*) FROM t")[0][0] in (0, 1)  # no wait for a write
        assert time.perf_counter() - start < SLOW / 2
        barrier = store.flushed()
        assert barrier.result(30) is None and all(f.done() for f in futures)
        assert [f.result() for f in futures] == [0, 1, 2]
        assert [r[0] for r in store.query("SELECT x FROM t ORDER BY rowid")] == [0, 1, 2]
        assert set(threads) == {"damii-db-writer"}
        failed = store.submit(lambda: store._db.execute("INSERT INTO nowhere VALUES (1)"))
        with pytest.raises(sqlite3.OperationalError):
            failed.result(30)
        assert not store._db.in_transaction  # rolled back; the next write goes on
        assert store.write([("INSERT INTO t VALUES (3)", ())]) == [1]
    finally:
        store.close()
    with pytest.raises(sqlite3.ProgrammingError):
        store.write([("INSERT INTO t VALUES (4)", ())])

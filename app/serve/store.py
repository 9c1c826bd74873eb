"""The server's database (``damii serve --db PATH``): players, finished games as PDN and
an Elo ladder of people and agents over rated games, the games in progress and the
sessions that play them, kept across restarts.

SQLite in WAL mode; each finished game is written in one transaction together with the
rating change it causes and its removal from the games in progress, so nothing already
played is lost or counted twice. A game in progress is written when it starts and then
move by move (each change one transaction). The schema is created and migrated by the
server (``PRAGMA user_version`` is its version).

One server at a time uses a database: it holds a lock on ``PATH.lock`` (with its process
id) while it runs, and a second one is refused with a clear :class:`StoreError`. At open
the file is checked (``PRAGMA quick_check``); a damaged, unreadable or newer database is
refused in one line that says what to do.

Every write goes through one writer thread that owns the write connection: a queue of
transactions, run in the order they were submitted (:meth:`Store.submit`; the plain
methods wait for theirs). Reads have connections of their own (one a thread), so a read
never waits for a write synced to disk, and the event loop never runs a write: it submits
one and is told when it is done (or, for an answer that acknowledges it, awaits
:meth:`Store.flushed`: every write submitted before is then in the database).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from damii_env.pdn import RESULTS, white_points

START_RATING = 1500.0
K_FACTOR = 32.0
"""Elo: every player starts at 1500; a rated game moves each rating by K (S - E)."""
SCHEMA: list[list[str]] = [
    [  # version 1
        """CREATE TABLE players (
               name TEXT PRIMARY KEY,
               kind TEXT NOT NULL,
               rating REAL NOT NULL,
               games INTEGER NOT NULL DEFAULT 0,
               created REAL NOT NULL)""",
        """CREATE TABLE games (
               id TEXT PRIMARY KEY,
               variant TEXT NOT NULL,
               white TEXT NOT NULL REFERENCES players(name),
               black TEXT NOT NULL REFERENCES players(name),
               result TEXT NOT NULL,
               termination TEXT NOT NULL,
               rated INTEGER NOT NULL,
               pdn TEXT NOT NULL,
               finished REAL NOT NULL)""",
        "CREATE INDEX games_finished ON games(finished)",
    ],
    [  # version 2: games in progress and the sessions that play them
        """CREATE TABLE sessions (
               id TEXT PRIMARY KEY,
               created REAL NOT NULL)""",
        """CREATE TABLE live_games (
               id TEXT PRIMARY KEY,
               owner TEXT NOT NULL,
               variant TEXT NOT NULL,
               options TEXT NOT NULL,
               start_fen TEXT,
               seats TEXT NOT NULL,
               clock REAL,
               casual INTEGER NOT NULL,
               lobby INTEGER NOT NULL,
               seed INTEGER,
               took_back INTEGER NOT NULL DEFAULT 0,
               draw_offer INTEGER,
               created REAL NOT NULL)""",
        """CREATE TABLE live_moves (
               game TEXT NOT NULL REFERENCES live_games(id) ON DELETE CASCADE,
               ply INTEGER NOT NULL,
               move TEXT NOT NULL,
               PRIMARY KEY (game, ply))""",
    ],
]
LIVE_SYNCHRONOUS = "NORMAL"
"""SQLite's ``synchronous`` for the writes of games in progress (a move, a seat taken):
in WAL mode NORMAL keeps every committed move through a crash or kill of the server
(the restart this is for) but not always through a power cut, and costs about 0.06 ms a
move instead of 4 ms for FULL (an fsync) on the development machine, time the event
loop would wait for each move. Finished games and ratings are written with FULL."""
LIVE_FIELDS = ("owner", "variant", "options", "start_fen", "seats", "clock", "casual",
               "lobby", "seed", "took_back", "draw_offer", "created")
"""A game in progress: who opened it, its set-up (variant, rule options as JSON, start
FEN, clock seconds or None, casual, lobby, seed), its seats (JSON: label, spec and
session of each colour), whether a move was taken back, a standing draw offer, when it
was created (Unix time)."""


try:
    import fcntl
except ImportError:  # Windows: no lock (one server per database is then the user's care)
    fcntl = None  # type: ignore[assignment]


SETTLE_ROUNDS = 3
"""How many times :meth:`Store.settled` waits for the writes submitted before it: those
their own completions submit count too."""


class StoreError(Exception):
    """The database cannot be used: what is wrong and what to do, in one line."""


def default_db_path() -> Path:
    """``$DAMII_DATA/serve.sqlite3``, else ``~/.local/share/damii/serve.sqlite3``."""
    base = os.environ.get("DAMII_DATA") or Path.home() / ".local" / "share" / "damii"
    return Path(base) / "serve.sqlite3"


def expected_score(rating: float, other: float) -> float:
    """Elo's expected score of `rating` against `other`."""
    return 1.0 / (1.0 + 10.0 ** ((other - rating) / 400.0))


class Store:
    """The database at `path` (created with its folder when missing). Writes run in its
    writer thread, one transaction after another in the order submitted; reads on a
    connection of the calling thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._held: Any = None
        self._closed = False
        self._readers: list[sqlite3.Connection] = []
        self._local = threading.local()
        self._readers_lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Future, Callable[[], Any] | None, str] | None] = \
            queue.SimpleQueue()
        self._submit_lock = threading.Lock()
        self._pending = 0
        """Writes submitted and not done yet (:meth:`busy`)."""
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if self.path.is_dir():
                raise StoreError(f"the database {self.path} is a folder; give --db a file")
            self._take_lock()
        except OSError as exc:
            raise StoreError(f"the database {self.path} cannot be opened: "
                             f"{exc.strerror or exc}; give --db a file in a folder this "
                             f"user can write") from None
        try:
            fresh = not self.path.exists()
            self._db = sqlite3.connect(self.path, check_same_thread=False,
                                       isolation_level=None)
            """The write connection: the writer thread's (and the opening's, before it)."""
            if fresh:  # it holds session ids: this user's only (the WAL files follow)
                with contextlib.suppress(OSError):
                    os.chmod(self.path, 0o600)
            self._db.row_factory = sqlite3.Row
            self._check()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._synchronous = "FULL"
            self._migrate()
        except sqlite3.Error as exc:
            self._release()
            raise StoreError(f"the database {self.path} cannot be used ({exc}); if it is "
                             f"damaged, move it away (a new one is made) or put back a "
                             f"copy") from None
        except StoreError:
            self._release()
            raise
        self._writer = threading.Thread(target=self._write_loop, daemon=True,
                                        name="damii-db-writer")
        self._writer.start()

    def _take_lock(self) -> None:
        """Hold ``PATH.lock`` for as long as this store is open (another server: a clear
        :class:`StoreError` naming its process)."""
        if fcntl is None:
            return
        held = open(self.path.with_name(self.path.name + ".lock"), "a+")  # noqa: SIM115
        try:
            fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held.seek(0)
            pid = held.read().strip()[:20] or "?"
            held.close()
            raise StoreError(f"the database {self.path} is in use by another damii serve "
                             f"(process {pid}); stop that server first, or give this one "
                             f"another --db") from None
        held.seek(0)
        held.truncate()
        held.write(str(os.getpid()))
        held.flush()
        self._held = held

    def _release(self) -> None:
        if self._held is not None:
            self._held.close()  # closing the file drops the lock
            self._held = None

    def _check(self) -> None:
        """``PRAGMA quick_check`` and the schema's version, else a clear error."""
        found = [str(r[0]) for r in self._db.execute("PRAGMA quick_check").fetchall()]
        if found != ["ok"]:
            raise StoreError(f"the database {self.path} is damaged ({found[0][:120]}); move "
                             f"it away and start again (a new one is made), or put back a "
                             f"copy (sqlite3 FILE .recover may save its games)")
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > len(SCHEMA):
            raise StoreError(f"the database {self.path} was made by a newer damii-env "
                             f"(schema {version}; this one knows up to {len(SCHEMA)}); use "
                             f"that version, or give another --db")

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        for number, statements in enumerate(SCHEMA[version:], start=version + 1):
            self._db.execute("BEGIN IMMEDIATE")
            for statement in statements:
                self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version={number}")
            self._db.execute("COMMIT")

    # --- the writer thread and the readers' connections ----------------------------------
    def submit(self, steps: Callable[[], Any], synchronous: str = "FULL") -> Future:
        """Run `steps` (statements on :attr:`_db`) in one transaction in the writer thread,
        after every write submitted before; written with `synchronous` (FULL: synced to
        disk; :data:`LIVE_SYNCHRONOUS` for games in progress). Returns at once: the future
        gives what `steps` returned, or its error (the transaction rolled back)."""
        future: Future = Future()
        with self._submit_lock:
            if self._closed:
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            self._pending += 1
            self._jobs.put((future, steps, synchronous))
        return future

    def flushed(self) -> Future:
        """A future done once every write submitted before this call is done (written or
        failed): what an answer that acknowledges a change waits for."""
        future: Future = Future()
        with self._submit_lock:
            if self._closed or not self._pending:
                future.set_result(None)
                return future
            self._pending += 1
            self._jobs.put((future, None, ""))
        return future

    @property
    def busy(self) -> bool:
        """Whether writes are waiting or running."""
        return self._pending > 0

    async def settled(self) -> None:
        """Wait (without holding the event loop) until the writes submitted before this
        call are done: what an answer or a pushed state that shows a change waits for,
        so that nothing a person was shown is lost by a kill -9. A write done may submit
        the next (a finished game, then its tournament board's result): a few rounds
        (:data:`SETTLE_ROUNDS`), not "until idle", which others' writes could put off for
        ever."""
        for _ in range(SETTLE_ROUNDS):
            if not self.busy:
                return
            await asyncio.wrap_future(self.flushed())

    def _write_loop(self) -> None:
        """The writer thread: each submitted transaction in turn, until :meth:`close`."""
        while True:
            job = self._jobs.get()
            if job is None:
                return
            future, steps, synchronous = job
            try:
                if steps is None or not future.set_running_or_notify_cancel():
                    if steps is None:
                        future.set_result(None)
                    continue
                try:
                    future.set_result(self._run(steps, synchronous))
                except BaseException as exc:  # noqa: BLE001 - the submitter's to handle
                    future.set_exception(exc)
            finally:
                with self._submit_lock:
                    self._pending -= 1

    def _run(self, steps: Callable[[], Any], synchronous: str) -> Any:
        if synchronous != self._synchronous:
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            self._synchronous = synchronous
        self._db.execute("BEGIN IMMEDIATE")
        try:
            out = steps()
            self._db.execute("COMMIT")
        except BaseException:
            _rollback(self._db)
            raise
        return out

    def _reader(self) -> sqlite3.Connection:
        """This thread's read connection (made at its first read)."""
        db = getattr(self._local, "db", None)
        if db is None:
            if self._closed:
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.row_factory = sqlite3.Row
            with self._readers_lock:
                self._readers.append(db)
            self._local.db = db
        return db

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return self._reader().execute(sql, params).fetchall()

    @property
    def version(self) -> int:
        return int(self._read("PRAGMA user_version")[0][0])

    def _player(self, name: str, kind: str) -> float:
        self._db.execute("INSERT OR IGNORE INTO players(name, kind, rating, created) "
                         "VALUES (?, ?, ?, ?)", (name, kind, START_RATING, time.time()))
        return float(self._db.execute("SELECT rating FROM players WHERE name = ?",
                                      (name,)).fetchone()[0])

    def record_game_later(self, gid: str, variant: str, white: tuple[str, str],
                          black: tuple[str, str], result: str, termination: str,
                          rated: bool, pdn: str) -> Future:
        """Keep a finished game (``white``/``black``: name and kind, person or agent), in
        the writer thread (returns its future at once); a rated decisive or drawn game
        updates both ratings in the same transaction, which also takes the game out of the
        games in progress. Written with FULL."""
        def steps() -> None:
            self._db.execute("DELETE FROM live_games WHERE id = ?", (gid,))
            rw, rb = self._player(*white), self._player(*black)
            known = self._db.execute("SELECT 1 FROM games WHERE id = ?", (gid,)).fetchone()
            self._db.execute(
                "INSERT OR REPLACE INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (gid, variant, white[0], black[0], result, termination, int(rated), pdn,
                 time.time()))
            score = white_points(result) if result in RESULTS else None
            if rated and score is not None and not known and white[0] != black[0]:
                change = K_FACTOR * (score - expected_score(rw, rb))
                for name, delta in ((white[0], change), (black[0], -change)):
                    self._db.execute("UPDATE players SET rating = rating + ?, "
                                     "games = games + 1 WHERE name = ?", (delta, name))
        return self.submit(steps)

    def record_game(self, gid: str, variant: str, white: tuple[str, str],
                    black: tuple[str, str], result: str, termination: str, rated: bool,
                    pdn: str) -> None:
        """:meth:`record_game_later`, waited for."""
        self.record_game_later(gid, variant, white, black, result, termination, rated,
                               pdn).result()

    def ladder(self, limit: int = 100) -> list[dict[str, Any]]:
        """Players by rating (those with rated games first)."""
        rows = self._read("SELECT name, kind, rating, games FROM players "
                          "ORDER BY games > 0 DESC, rating DESC, name LIMIT ?", (limit,))
        return [{"name": r["name"], "kind": r["kind"], "rating": round(r["rating"], 1),
                 "games": r["games"]} for r in rows]

    def history(self, limit: int = 100) -> list[dict[str, Any]]:
        """The latest finished games, newest first."""
        rows = self._read("SELECT * FROM games ORDER BY finished DESC LIMIT ?", (limit,))
        return [dict(r) for r in rows]

    # --- games in progress ---------------------------------------------------------------
    def _sessions(self, ids: Collection[str]) -> None:
        self._db.executemany("INSERT OR IGNORE INTO sessions(id, created) VALUES (?, ?)",
                             [(sid, time.time()) for sid in sorted(ids)])

    @staticmethod
    def _live_row(live: dict[str, Any]) -> list[Any]:
        row = dict(live, options=json.dumps(live["options"], sort_keys=True),
                   seats=json.dumps(live["seats"]), casual=int(live["casual"]),
                   lobby=int(live["lobby"]), took_back=int(live["took_back"]))
        return [row[f] for f in LIVE_FIELDS]

    def _transaction(self, steps: Callable[[], object]) -> Future:
        """`steps` in one transaction, written with :data:`LIVE_SYNCHRONOUS` (submitted)."""
        return self.submit(steps, LIVE_SYNCHRONOUS)

    def open_live_later(self, gid: str, live: dict[str, Any], moves: list[str],
                        sessions: set[str]) -> Future:
        """Keep a game in progress (``live``: the :data:`LIVE_FIELDS`) with its moves so
        far and the sessions that play it, in one transaction (replacing what was kept of
        it); submitted: returns its future."""
        row, moves, sessions = self._live_row(live), list(moves), set(sessions)

        def steps() -> None:
            self._db.execute("DELETE FROM live_games WHERE id = ?", (gid,))
            self._db.execute(f"INSERT INTO live_games(id, {', '.join(LIVE_FIELDS)}) VALUES "
                             f"(?{', ?' * len(LIVE_FIELDS)})", [gid, *row])
            self._db.executemany("INSERT INTO live_moves(game, ply, move) VALUES (?, ?, ?)",
                                 [(gid, i, m) for i, m in enumerate(moves)])
            self._sessions(sessions)
        return self._transaction(steps)

    def open_live(self, gid: str, live: dict[str, Any], moves: list[str],
                  sessions: set[str]) -> None:
        """:meth:`open_live_later`, waited for."""
        self.open_live_later(gid, live, list(moves), set(sessions)).result()

    def update_live_later(self, gid: str, live: dict[str, Any] | None, keep: int,
                          moves: list[str], sessions: Collection[str] = ()) -> Future:
        """One change of a game in progress, in one transaction: its moves from ply
        `keep` on are `moves` (a move played: ``keep`` is the plies kept before; a
        take-back: fewer); ``live``, when given, replaces its row (a seat taken, a draw
        offer). Submitted: returns its future."""
        row = None if live is None else self._live_row(live)
        ids, moves = set(sessions), list(moves)

        def steps() -> None:
            if row is not None:
                self._db.execute(f"UPDATE live_games SET "
                                 f"{', '.join(f + ' = ?' for f in LIVE_FIELDS)} WHERE id = ?",
                                 [*row, gid])
            self._db.execute("DELETE FROM live_moves WHERE game = ? AND ply >= ?", (gid, keep))
            self._db.executemany("INSERT INTO live_moves(game, ply, move) VALUES (?, ?, ?)",
                                 [(gid, keep + i, m) for i, m in enumerate(moves)])
            self._sessions(ids)
        return self._transaction(steps)

    def update_live(self, gid: str, live: dict[str, Any] | None, keep: int,
                    moves: list[str], sessions: Collection[str] = ()) -> None:
        """:meth:`update_live_later`, waited for."""
        self.update_live_later(gid, live, keep, list(moves), sessions).result()

    def drop_live_later(self, gid: str) -> Future:
        """Forget a game in progress that will not be finished (evicted); submitted."""
        return self._transaction(lambda: self._db.execute("DELETE FROM live_games WHERE id = ?",
                                                          (gid,)))

    def drop_live(self, gid: str) -> None:
        """:meth:`drop_live_later`, waited for."""
        self.drop_live_later(gid).result()

    def live_games(self, warn: bool = True) -> list[dict[str, Any]]:
        """The games in progress, oldest first: ``id``, the :data:`LIVE_FIELDS` (options
        and seats decoded) and ``moves``; a row that cannot be read is left out (`warn`:
        said in one line)."""
        reader = self._reader()
        reader.execute("BEGIN")  # both reads from one snapshot
        try:
            rows = reader.execute("SELECT * FROM live_games ORDER BY created, id").fetchall()
            moves = reader.execute("SELECT game, move FROM live_moves "
                                   "ORDER BY game, ply").fetchall()
        finally:
            reader.execute("COMMIT")
        by_game: dict[str, list[str]] = {}
        for game, move in moves:
            by_game.setdefault(game, []).append(move)
        out = []
        for r in rows:
            live = dict(r)
            try:
                live.update(options=json.loads(r["options"]), seats=json.loads(r["seats"]),
                            casual=bool(r["casual"]), lobby=bool(r["lobby"]),
                            took_back=bool(r["took_back"]), moves=by_game.get(r["id"], []))
                if not isinstance(live["options"], dict) or not isinstance(live["seats"], list):
                    raise ValueError("options must be an object and seats a list")
            except (ValueError, TypeError) as exc:
                if warn:
                    print(f"damii serve: game {str(r['id'])[:40]!r} in progress cannot be "
                          f"read ({exc}) and stays in the database", file=sys.stderr)
                continue
            out.append(live)
        return out

    def sessions(self, prune: bool = False) -> list[str]:
        """The session ids kept (those that played a game in progress); `prune`: first
        forget those whose games are all finished."""
        if prune:
            live = self.live_games(warn=False)
            playing = {g["owner"] for g in live} | {
                seat.get("session") for g in live for seat in g["seats"] if isinstance(seat, dict)}
            ids = [r[0] for r in self._read("SELECT id FROM sessions")]
            gone = [(sid,) for sid in ids if sid not in playing]
            self._transaction(lambda: self._db.executemany(
                "DELETE FROM sessions WHERE id = ?", gone)).result()
        rows = self._read("SELECT id FROM sessions ORDER BY created")
        return [r[0] for r in rows]

    # --- other tables (clubs and tournaments: damii_app.serve.clubs, .tournaments) -------
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """The rows of one read (on this thread's read connection: it sees every write
        done, and waits for none)."""
        return self._read(sql, params)

    def write_later(self, statements: Sequence[tuple[str, Sequence[Any]]],
                    then: Callable[[sqlite3.Connection], Any] | None = None) -> Future:
        """`statements` (SQL, parameters) in one transaction, written with FULL, in the
        writer thread; the future gives the rows each statement changed (with `then`:
        what ``then(connection)`` returns, run in the same transaction after them)."""
        statements = list(statements)

        def steps() -> Any:
            changed = [self._db.execute(sql, params).rowcount for sql, params in statements]
            return changed if then is None else then(self._db)
        return self.submit(steps)

    def write(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[int]:
        """`statements` (SQL, parameters) in one transaction, written with FULL (waited
        for); the rows each statement changed."""
        return self.write_later(statements).result()

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Close the database and drop the lock (once): the writes submitted before are
        done first."""
        with self._submit_lock:
            if self._closed:
                return
            self._closed = True
            self._jobs.put(None)
        self._writer.join()
        self._db.close()
        with self._readers_lock:
            for db in self._readers:
                with contextlib.suppress(sqlite3.Error):
                    db.close()
            self._readers.clear()
        self._release()


def _rollback(db: sqlite3.Connection) -> None:
    """Roll back the transaction in progress, if one is: a failed write (a full disk)
    may have ended it already, and the rollback's own error ("no transaction is active")
    would then hide the first one."""
    if db.in_transaction:
        try:
            db.execute("ROLLBACK")
        except sqlite3.Error:
            pass


def after(future: Future, then: Callable[[Future], Any]) -> Future:
    """``then(future)`` once `future` (a write submitted to a :class:`Store`) is done: on
    the event loop running in this thread, later, as a callback (the loop does not wait);
    with none running (a thread, a test), now, the write waited for (its error raised).
    Returns `future`."""
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        future.exception()  # waits
        then(future)
        future.result()  # its error, raised to the caller
        return future
    future.add_done_callback(lambda f: loop.call_soon_threadsafe(then, f))
    return future

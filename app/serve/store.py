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
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Collection, Sequence
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
    """The database at `path` (created with its folder when missing)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._held: Any = None
        self._closed = False
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
            if fresh:  # it holds session ids: this user's only (the WAL files follow)
                with contextlib.suppress(OSError):
                    os.chmod(self.path, 0o600)
            self._db.row_factory = sqlite3.Row
            self._check()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.Error as exc:
            self._release()
            raise StoreError(f"the database {self.path} cannot be used ({exc}); if it is "
                             f"damaged, move it away (a new one is made) or put back a "
                             f"copy") from None
        except StoreError:
            self._release()
            raise

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
        with self._lock:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            for number, statements in enumerate(SCHEMA[version:], start=version + 1):
                self._db.execute("BEGIN IMMEDIATE")
                for statement in statements:
                    self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version={number}")
                self._db.execute("COMMIT")

    @property
    def version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _player(self, name: str, kind: str) -> float:
        self._db.execute("INSERT OR IGNORE INTO players(name, kind, rating, created) "
                         "VALUES (?, ?, ?, ?)", (name, kind, START_RATING, time.time()))
        return float(self._db.execute("SELECT rating FROM players WHERE name = ?",
                                      (name,)).fetchone()[0])

    def record_game(self, gid: str, variant: str, white: tuple[str, str],
                    black: tuple[str, str], result: str, termination: str, rated: bool,
                    pdn: str) -> None:
        """Keep a finished game (``white``/``black``: name and kind, person or agent); a
        rated decisive or drawn game updates both ratings in the same transaction, which
        also takes the game out of the games in progress."""
        with self._lock:
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("DELETE FROM live_games WHERE id = ?", (gid,))
                rw, rb = self._player(*white), self._player(*black)
                known = self._db.execute("SELECT 1 FROM games WHERE id = ?",
                                         (gid,)).fetchone()
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
                self._db.execute("COMMIT")
            except BaseException:
                _rollback(self._db)
                raise

    def ladder(self, limit: int = 100) -> list[dict[str, Any]]:
        """Players by rating (those with rated games first)."""
        with self._lock:
            rows = self._db.execute("SELECT name, kind, rating, games FROM players "
                                    "ORDER BY games > 0 DESC, rating DESC, name LIMIT ?",
                                    (limit,)).fetchall()
        return [{"name": r["name"], "kind": r["kind"], "rating": round(r["rating"], 1),
                 "games": r["games"]} for r in rows]

    def history(self, limit: int = 100) -> list[dict[str, Any]]:
        """The latest finished games, newest first."""
        with self._lock:
            rows = self._db.execute("SELECT * FROM games ORDER BY finished DESC LIMIT ?",
                                    (limit,)).fetchall()
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

    def _transaction(self, steps: Callable[[], object]) -> None:
        """`steps` in one transaction, written with :data:`LIVE_SYNCHRONOUS`."""
        with self._lock:
            self._db.execute(f"PRAGMA synchronous={LIVE_SYNCHRONOUS}")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                steps()
                self._db.execute("COMMIT")
            except BaseException:
                _rollback(self._db)
                raise

    def open_live(self, gid: str, live: dict[str, Any], moves: list[str],
                  sessions: set[str]) -> None:
        """Keep a game in progress (``live``: the :data:`LIVE_FIELDS`) with its moves so
        far and the sessions that play it, in one transaction (replacing what was kept of
        it)."""
        def steps() -> None:
            self._db.execute("DELETE FROM live_games WHERE id = ?", (gid,))
            self._db.execute(f"INSERT INTO live_games(id, {', '.join(LIVE_FIELDS)}) VALUES "
                             f"(?{', ?' * len(LIVE_FIELDS)})", [gid, *self._live_row(live)])
            self._db.executemany("INSERT INTO live_moves(game, ply, move) VALUES (?, ?, ?)",
                                 [(gid, i, m) for i, m in enumerate(moves)])
            self._sessions(sessions)
        self._transaction(steps)

    def update_live(self, gid: str, live: dict[str, Any] | None, keep: int,
                    moves: list[str], sessions: Collection[str] = ()) -> None:
        """One change of a game in progress, in one transaction: its moves from ply
        `keep` on are `moves` (a move played: ``keep`` is the plies kept before; a
        take-back: fewer); ``live``, when given, replaces its row (a seat taken, a draw
        offer)."""
        def steps() -> None:
            if live is not None:
                self._db.execute(f"UPDATE live_games SET "
                                 f"{', '.join(f + ' = ?' for f in LIVE_FIELDS)} WHERE id = ?",
                                 [*self._live_row(live), gid])
            self._db.execute("DELETE FROM live_moves WHERE game = ? AND ply >= ?", (gid, keep))
            self._db.executemany("INSERT INTO live_moves(game, ply, move) VALUES (?, ?, ?)",
                                 [(gid, keep + i, m) for i, m in enumerate(moves)])
            self._sessions(set(sessions))
        self._transaction(steps)

    def drop_live(self, gid: str) -> None:
        """Forget a game in progress that will not be finished (evicted)."""
        self._transaction(lambda: self._db.execute("DELETE FROM live_games WHERE id = ?",
                                                   (gid,)))

    def live_games(self, warn: bool = True) -> list[dict[str, Any]]:
        """The games in progress, oldest first: ``id``, the :data:`LIVE_FIELDS` (options
        and seats decoded) and ``moves``; a row that cannot be read is left out (`warn`:
        said in one line)."""
        with self._lock:
            rows = self._db.execute("SELECT * FROM live_games ORDER BY created, id").fetchall()
            moves = self._db.execute("SELECT game, move FROM live_moves "
                                     "ORDER BY game, ply").fetchall()
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
            with self._lock:
                ids = [r[0] for r in self._db.execute("SELECT id FROM sessions")]
            gone = [(sid,) for sid in ids if sid not in playing]
            self._transaction(lambda: self._db.executemany(
                "DELETE FROM sessions WHERE id = ?", gone))
        with self._lock:
            rows = self._db.execute("SELECT id FROM sessions ORDER BY created").fetchall()
        return [r[0] for r in rows]

    # --- other tables (clubs and tournaments: damii_app.serve.clubs, .tournaments) -------
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """The rows of one read."""
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def write(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[int]:
        """`statements` (SQL, parameters) in one transaction, written with FULL; the rows
        each statement changed."""
        with self._lock:
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                changed = [self._db.execute(sql, params).rowcount for sql, params in statements]
                self._db.execute("COMMIT")
            except BaseException:
                _rollback(self._db)
                raise
        return changed

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Close the database and drop the lock (once)."""
        with self._lock:
            if not self._closed:
                self._db.close()
                self._closed = True
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

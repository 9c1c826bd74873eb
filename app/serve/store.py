"""The server's database (``damii serve --db PATH``): players, finished games as PDN and
an Elo ladder of people and agents over rated games, kept across restarts.

SQLite in WAL mode; each finished game is written in one transaction together with the
rating change it causes, so nothing already played is lost or counted twice. The schema
is created and migrated by the server (``PRAGMA user_version`` is its version).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

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
]


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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._migrate()

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
        rated decisive or drawn game updates both ratings in the same transaction."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                rw, rb = self._player(*white), self._player(*black)
                known = self._db.execute("SELECT 1 FROM games WHERE id = ?",
                                         (gid,)).fetchone()
                self._db.execute(
                    "INSERT OR REPLACE INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (gid, variant, white[0], black[0], result, termination, int(rated), pdn,
                     time.time()))
                score = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(result)
                if rated and score is not None and not known and white[0] != black[0]:
                    change = K_FACTOR * (score - expected_score(rw, rb))
                    for name, delta in ((white[0], change), (black[0], -change)):
                        self._db.execute("UPDATE players SET rating = rating + ?, "
                                         "games = games + 1 WHERE name = ?", (delta, name))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
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

    def close(self) -> None:
        with self._lock:
            self._db.close()

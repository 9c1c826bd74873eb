"""Clubs of ``damii serve``: a named group made by an organizer, joined with a code the
organizer hands out, with its members (a name each, bound to the browser session that
joined), its own games and its own Elo ladder over them.

A browser session is who someone is on this server (there are no accounts): the session
that made a club is its organizer, the session that joined with the code is that member.
Everything is kept in the server's SQLite database (:class:`~damii_app.serve.store.Store`)
and read again after a restart; the sessions of organizers and members are given back to
the server then, so that each browser is still who it was.
"""

from __future__ import annotations

import secrets
import string
import sys
import time
from concurrent.futures import Future
from typing import Any

from fastapi import HTTPException

from damii_app.serve.store import K_FACTOR, START_RATING, Store, after, expected_score
from damii_env.errors import InvalidOptionError
from damii_env.pdn import RESULTS, white_points

TABLES = (
    """CREATE TABLE IF NOT EXISTS clubs (
           id TEXT PRIMARY KEY,
           name TEXT NOT NULL UNIQUE COLLATE NOCASE,
           code TEXT NOT NULL UNIQUE,
           organizer TEXT NOT NULL,
           created REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS club_members (
           club TEXT NOT NULL REFERENCES clubs(id),
           name TEXT NOT NULL COLLATE NOCASE,
           session TEXT NOT NULL,
           joined REAL NOT NULL,
           PRIMARY KEY (club, name),
           UNIQUE (club, session))""",
    """CREATE TABLE IF NOT EXISTS club_games (
           game TEXT PRIMARY KEY,
           club TEXT NOT NULL REFERENCES clubs(id))""",
)
"""The clubs' tables (made when missing; the tables of the store's schema are untouched)."""
CODE_LETTERS = "".join(c for c in string.ascii_uppercase + string.digits if c not in "O0I1")
CODE_LENGTH = 6
MAX_CLUBS = 1000
"""Clubs on the server, all sessions together (more: 503)."""
MAX_CLUBS_PER_SESSION = 5
"""Clubs one browser session organizes (more: a clear 400)."""


class ClubBook:
    """The clubs of one server, kept in `store`."""

    def __init__(self, store: Store) -> None:
        self.store = store
        store.write([(sql, ()) for sql in TABLES])
        self.game_club: dict[str, str] = {
            r["game"]: r["club"] for r in store.query(
                "SELECT game, club FROM club_games WHERE game IN (SELECT id FROM live_games)")}
        """The club of each club game the server holds (lobby and tournament games): those
        in progress at the start, then each one opened, until the server forgets it (the
        database's ``club_games`` keeps them all): memory follows the games in play."""
        self.kept_sessions: set[str] = {
            r[0] for r in store.query("SELECT organizer FROM clubs UNION "
                                      "SELECT session FROM club_members")}
        """The sessions of organizers and members (never forgotten by the server)."""

    # --- clubs ---------------------------------------------------------------------------
    def create(self, name: str, session: str) -> dict[str, Any]:
        """A new club organized by `session`; its code is in the answer (and shown to its
        organizer only)."""
        text = " ".join(name.split())
        if not text:
            raise InvalidOptionError("a club's name needs a letter or a digit")
        if self.store.query("SELECT 1 FROM clubs WHERE name = ?", (text,)):
            raise InvalidOptionError(f"a club named {text!r} exists already; choose "
                                     f"another name")
        mine = self.store.query("SELECT COUNT(*) FROM clubs WHERE organizer = ?",
                                (session,))[0][0]
        if mine >= MAX_CLUBS_PER_SESSION:
            raise InvalidOptionError(f"you organize {mine} clubs, the limit of one browser "
                                     f"({MAX_CLUBS_PER_SESSION})")
        total = self.store.query("SELECT COUNT(*) FROM clubs")[0][0]
        if total >= MAX_CLUBS:
            raise HTTPException(503, f"this server holds {total} clubs, its limit for all "
                                     f"users together ({MAX_CLUBS}); the operator may remove "
                                     f"old ones (docs/SERVE.md)")
        cid = secrets.token_urlsafe(6)
        code = "".join(secrets.choice(CODE_LETTERS) for _ in range(CODE_LENGTH))
        self.store.write([("INSERT INTO clubs VALUES (?, ?, ?, ?, ?)",
                           (cid, text, code, session, time.time()))])
        self.kept_sessions = self.kept_sessions | {session}  # a new set: it may run in a thread
        return self.view(cid, session)

    def get(self, cid: str) -> dict[str, Any]:
        """The club's row, else a clear error (404)."""
        rows = self.store.query("SELECT * FROM clubs WHERE id = ?", (cid,))
        if not rows:
            raise HTTPException(404, f"no club {cid!r} on this server; see GET /api/clubs")
        return dict(rows[0])

    def join(self, code: str, name: str, session: str) -> dict[str, Any]:
        """`session` joins the club whose code is `code`, as `name`."""
        wanted = "".join(code.split()).upper()
        rows = self.store.query("SELECT * FROM clubs WHERE code = ?", (wanted,))
        if not rows:
            raise InvalidOptionError(f"no club has the code {code.strip()!r}; ask your "
                                     f"organizer for the club's code ({CODE_LENGTH} letters "
                                     f"and digits)")
        club = dict(rows[0])
        mine = self.member_name(club["id"], session)
        if mine is not None:
            raise InvalidOptionError(f"you are already in {club['name']} as {mine!r}")
        if self.store.query("SELECT 1 FROM club_members WHERE club = ? AND name = ?",
                            (club["id"], name)):
            raise InvalidOptionError(f"the name {name!r} is taken in {club['name']}; "
                                     f"choose another")
        self.store.write([("INSERT INTO club_members VALUES (?, ?, ?, ?)",
                           (club["id"], name, session, time.time()))])
        self.kept_sessions = self.kept_sessions | {session}  # a new set: it may run in a thread
        return self.view(club["id"], session)

    def member_name(self, cid: str, session: str | None) -> str | None:
        """The name `session` has in the club (None: not a member)."""
        rows = self.store.query("SELECT name FROM club_members WHERE club = ? AND "
                                "session = ?", (cid, session))
        return rows[0]["name"] if rows else None

    def require_member(self, cid: str, session: str | None) -> str:
        """The member's name, else a clear error (403)."""
        club = self.get(cid)
        name = self.member_name(cid, session)
        if name is None:
            raise HTTPException(403, f"you are not a member of {club['name']}; join it first "
                                  f"with the code its organizer gives out")
        return name

    def require_organizer(self, cid: str, session: str | None) -> dict[str, Any]:
        """The club, when `session` is its organizer; else a clear error (403)."""
        club = self.get(cid)
        if club["organizer"] != session:
            raise HTTPException(403, f"only the organizer of {club['name']} may do this")
        return club

    def members(self, cid: str) -> list[str]:
        return [r["name"] for r in self.store.query(
            "SELECT name FROM club_members WHERE club = ? ORDER BY joined, name", (cid,))]

    def listing(self, session: str | None) -> list[dict[str, Any]]:
        """Every club: name, members' count, and what `session` is in it."""
        rows = self.store.query("SELECT c.id, c.name, c.organizer, COUNT(m.name) AS n "
                                "FROM clubs c LEFT JOIN club_members m ON m.club = c.id "
                                "GROUP BY c.id ORDER BY c.name")
        return [{"id": r["id"], "name": r["name"], "members": r["n"],
                 "organizer": r["organizer"] == session,
                 "you": self.member_name(r["id"], session)} for r in rows]

    def view(self, cid: str, session: str | None) -> dict[str, Any]:
        """The club as its page shows it (the code only to its organizer)."""
        club = self.get(cid)
        out = {"id": cid, "name": club["name"], "members": self.members(cid),
               "organizer": club["organizer"] == session,
               "you": self.member_name(cid, session)}
        if out["organizer"]:
            out["code"] = club["code"]
        return out

    # --- its games and ladder --------------------------------------------------------------
    def add_game(self, gid: str, cid: str) -> None:
        """A game (lobby or tournament) belongs to the club."""
        self.game_club[gid] = cid
        after(self.store.write_later([("INSERT OR REPLACE INTO club_games VALUES (?, ?)",
                                       (gid, cid))]), _said)

    def history(self, cid: str, limit: int = 100) -> list[dict[str, Any]]:
        """The club's finished games, newest first."""
        self.get(cid)
        rows = self.store.query("SELECT g.* FROM games g JOIN club_games c ON c.game = g.id "
                                "WHERE c.club = ? ORDER BY g.finished DESC LIMIT ?",
                                (cid, limit))
        return [dict(r) for r in rows]

    def ladder(self, cid: str) -> list[dict[str, Any]]:
        """The club's Elo ladder: every member and every player of its rated games, from
        1500, each rated game of the club in the order played (the server's K)."""
        self.get(cid)
        rating = dict.fromkeys(self.members(cid), START_RATING)
        kind = dict.fromkeys(rating, "person")
        played = dict.fromkeys(rating, 0)
        rows = self.store.query(
            "SELECT g.white, g.black, g.result, pw.kind AS wk, pb.kind AS bk FROM games g "
            "JOIN club_games c ON c.game = g.id JOIN players pw ON pw.name = g.white "
            "JOIN players pb ON pb.name = g.black WHERE c.club = ? AND g.rated = 1 "
            "ORDER BY g.finished, g.id", (cid,))
        for r in rows:
            white, black = r["white"], r["black"]
            for name, k in ((white, r["wk"]), (black, r["bk"])):
                rating.setdefault(name, START_RATING)
                kind.setdefault(name, k)
                played.setdefault(name, 0)
            score = white_points(r["result"]) if r["result"] in RESULTS else None
            if score is None or white == black:
                continue
            change = K_FACTOR * (score - expected_score(rating[white], rating[black]))
            rating[white] += change
            rating[black] -= change
            played[white] += 1
            played[black] += 1
        order = sorted(rating, key=lambda n: (played[n] == 0, -rating[n], n))
        return [{"name": n, "kind": kind[n], "rating": round(rating[n], 1),
                 "games": played[n]} for n in order]


def _said(future: Future) -> None:
    """A write nobody waits for: its failure said in the log."""
    if future.exception() is not None:
        print(f"damii serve: a club's game could not be written to the database: "
              f"{future.exception()}", file=sys.stderr)

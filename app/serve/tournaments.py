"""Tournaments of ``damii serve``: a round robin or a Swiss inside a club or open to all,
of any variant and clock, between people and agents (an agent spec fills a place).

The organizer (the session that made it; in a club, the club's organizer) adds agents
and starts each round; the server pairs it (:mod:`damii_app.serve.pairing`) and opens one
live game per board (:class:`~damii_app.serve.live.LiveGame`, a lobby game whose seats
are the entrants' browser sessions; an agent's moves come from the server's search pool
as in any game). A board's result is read from its game when the game ends, whatever
ended it (the live game's own result and termination, taken as they are); standings,
tie-breaks, the games' PDN and the standings as CSV follow from the results.

All of it is in the server's SQLite database: the tournament, its entrants and each
board's pairing, game id and result. It is read again after a restart, and a board's
result is taken from the finished games the database keeps when its game ended while the
server was stopping; a game lost before it was first written is opened again.
"""

from __future__ import annotations

import csv
import io
import math
import re
import secrets
import sqlite3
import sys
import time
from collections.abc import Iterable
from concurrent.futures import Future
from typing import Any

from fastapi import HTTPException

from damii_agents.registry import PlayerSpec
from damii_app.serve.clubs import ClubBook
from damii_app.serve.live import LiveGame, Seat
from damii_app.serve.pairing import (
    BYE,
    ROUND_ROBIN,
    SWISS,
    SYSTEMS,
    round_robin,
    standings,
    swiss_round,
)
from damii_app.serve.specs import parse_clock
from damii_app.serve.store import Store, after
from damii_env.errors import DamiiError, InvalidOptionError
from damii_env.pdn import RESULTS, white_points

TABLES = (
    """CREATE TABLE IF NOT EXISTS tournaments (
           id TEXT PRIMARY KEY,
           club TEXT REFERENCES clubs(id),
           name TEXT NOT NULL,
           system TEXT NOT NULL,
           variant TEXT NOT NULL,
           clock TEXT NOT NULL,
           rounds INTEGER NOT NULL,
           max_players INTEGER NOT NULL,
           rated INTEGER NOT NULL,
           organizer TEXT NOT NULL,
           status TEXT NOT NULL,
           round INTEGER NOT NULL DEFAULT 0,
           created REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS entrants (
           tournament TEXT NOT NULL REFERENCES tournaments(id),
           name TEXT NOT NULL COLLATE NOCASE,
           spec TEXT,
           session TEXT,
           seed INTEGER NOT NULL,
           PRIMARY KEY (tournament, name))""",
    """CREATE TABLE IF NOT EXISTS pairings (
           tournament TEXT NOT NULL REFERENCES tournaments(id),
           round INTEGER NOT NULL,
           board INTEGER NOT NULL,
           white TEXT NOT NULL,
           black TEXT,
           game TEXT,
           result TEXT,
           termination TEXT,
           PRIMARY KEY (tournament, round, board))""",
)
"""The tournaments' tables (made when missing)."""
# `server` below is the app's ServerState (its games, pool and settings), not imported:
# the state imports this module.
OPEN, RUNNING, FINISHED = "open", "running", "finished"
TIEBREAKS = {ROUND_ROBIN: "Sonneborn-Berger", SWISS: "Buchholz"}
MAX_PLAYERS = 64
"""Players of a round robin (63 rounds at most)."""
MAX_SWISS_PLAYERS = 256
"""Players of a Swiss (a school's whole year: its rounds are ceil(log2 n) + 3 at most,
11 for 129 to 256 players, and each is paired in bounded time off the event loop)."""
TOURNAMENT = "tournament:"
"""The owner of a tournament's board games: ``tournament:`` and the tournament's id (no
browser session has a colon); their searches take the organizer's share of the pool
(``ServerState.organizers``)."""
LIST_LIMIT = 100
"""Tournaments a list gives (the newest): a list is read by every clubs page."""
MAX_TOURNAMENTS_PER_SESSION = 5
"""Tournaments not finished that one session organizes (more: a clear 400)."""
MAX_OPEN_TOURNAMENTS = 200
"""Tournaments not finished on the whole server (more: a clear 503)."""


def max_swiss_rounds(players: int) -> int:
    """The most rounds a Swiss of `players` is started with: every round can then be
    paired without a repeat (n - 1 up to 5 players, n - 3 above: a top-down Swiss
    pairing could be left with only repeats in its last rounds; tried over 200 random
    tournaments of each size up to 16), and at most what a Swiss uses to find its winner,
    ceil(log2 n) + 3 (9 rounds for 33 to 64 players): later rounds of a big field are
    slow to pair and decide nothing a round robin would not."""
    return max(1, min(players - 1 if players <= 5 else players - 3,
                      math.ceil(math.log2(max(players, 2))) + 3))


def damaged(row: dict[str, Any]) -> str | None:
    """Why a tournament's row cannot be used (a database changed by hand), or None."""
    if row.get("system") not in SYSTEMS:
        return f"system {row.get('system')!r:.40}"
    if row.get("status") not in (OPEN, RUNNING, FINISHED):
        return f"status {row.get('status')!r:.40}"
    for key in ("rounds", "round", "max_players"):
        if not isinstance(row.get(key), int) or row[key] < 0:
            return f"{key} {row.get(key)!r:.40}"
    return None


def normal_result(result: str | None) -> str | None:
    """A game's result as a tournament counts it (``1-0``, ``0-1``, ``1/2-1/2``; ``*``
    when the game ended without one, e.g. abandoned)."""
    if result is None:
        return None
    points = white_points(result) if result in RESULTS else None
    return {1.0: "1-0", 0.0: "0-1", 0.5: "1/2-1/2"}.get(points, "*")  # type: ignore[arg-type]


class TournamentBook:
    """The tournaments of one server, kept in `store` (clubs: `clubs`)."""

    def __init__(self, store: Store, clubs: ClubBook) -> None:
        self.store, self.clubs = store, clubs
        store.write([(sql, ()) for sql in TABLES])
        self.opening: set[str] = set()
        """The games of a round being opened (the route opens a big round's boards a few
        at a time, giving the event loop back between them): :meth:`sync` leaves them
        alone (not yet lost, only not yet opened)."""

    @property
    def kept_sessions(self) -> set[str]:
        """The sessions of the organizers and entrants of tournaments not finished (never
        forgotten by the server while the tournament runs; those of finished ones may be)."""
        return {r[0] for r in self.store.query(
            "SELECT organizer FROM tournaments WHERE status != ? UNION SELECT e.session "
            "FROM entrants e JOIN tournaments t ON t.id = e.tournament WHERE t.status != ? "
            "AND e.session IS NOT NULL", (FINISHED, FINISHED))}

    # --- reading -------------------------------------------------------------------------
    def get(self, tid: str) -> dict[str, Any]:
        rows = self.store.query("SELECT * FROM tournaments WHERE id = ?", (tid,))
        if not rows:
            raise HTTPException(404, f"no tournament {tid!r} on this server; see GET "
                                     f"/api/tournaments")
        row = dict(rows[0])
        why = damaged(row)
        if why is not None:
            raise HTTPException(500, f"tournament {tid!r} is damaged in the database "
                                     f"({why}); the operator may repair or remove its row")
        return row

    def entrants(self, tid: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self.store.query(
            "SELECT * FROM entrants WHERE tournament = ? ORDER BY seed", (tid,))]

    def boards(self, tid: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self.store.query(
            "SELECT * FROM pairings WHERE tournament = ? ORDER BY round, board", (tid,))]

    def pending(self, tid: str) -> list[dict[str, Any]]:
        """The boards with a game and no result yet (at most one round's)."""
        return [dict(r) for r in self.store.query(
            "SELECT * FROM pairings WHERE tournament = ? AND result IS NULL AND game IS NOT "
            "NULL ORDER BY round, board", (tid,))]

    @staticmethod
    def games_of(boards: list[dict[str, Any]]) -> list[tuple[str, str | None, str]]:
        """The boards as (White, Black, result) for :mod:`~damii_app.serve.pairing`."""
        return [(b["white"], b["black"], BYE if b["black"] is None else b["result"] or "")
                for b in boards]

    def listing(self, club: str | None, session: str | None) -> list[dict[str, Any]]:
        """The tournaments (of `club` only, when given), newest first: at most
        :data:`LIST_LIMIT` of them."""
        sql = ("SELECT t.*, (SELECT COUNT(*) FROM entrants e WHERE e.tournament = t.id) "
               "AS players FROM tournaments t")
        params: tuple = ()
        if club is not None:
            self.clubs.get(club)
            sql, params = sql + " WHERE t.club = ?", (club,)
        rows = self.store.query(sql + " ORDER BY t.created DESC LIMIT ?",
                                (*params, LIST_LIMIT))
        out = []
        for r in rows:
            if damaged(dict(r)) is not None:
                continue  # one damaged row does not break the list (GET it: the reason)
            count = r["players"]
            out.append({"id": r["id"], "name": r["name"], "club": r["club"],
                        "system": r["system"], "variant": r["variant"], "clock": r["clock"],
                        "status": r["status"], "round": r["round"], "rounds": r["rounds"],
                        "players": count, "max_players": r["max_players"],
                        "organizer": r["organizer"] == session})
        return out

    def synced_listing(self, server: Any, club: str | None,
                       session: str | None) -> list[dict[str, Any]]:
        """:meth:`listing`, the running tournaments' results read first (:meth:`sync`)."""
        written = [self.sync(server, t["id"]) for t in self.listing(club, session)
                   if t["status"] == RUNNING]
        for future in written:
            if future is not None:
                future.result()  # read back below (the writes are few: a club's own)
        return self.listing(club, session)

    def view(self, tid: str, session: str | None) -> dict[str, Any]:
        """Everything the page shows of a tournament."""
        t = self.get(tid)
        entrants = self.entrants(tid)
        boards = self.boards(tid)
        names = [e["name"] for e in entrants]
        you = next((e["name"] for e in entrants if e["session"] == session), None)
        club = self.clubs.get(t["club"]) if t["club"] else None
        return {
            "id": tid, "name": t["name"], "club": t["club"],
            "club_name": club["name"] if club else None, "system": t["system"],
            "variant": t["variant"], "clock": t["clock"], "rounds": t["rounds"],
            "max_players": t["max_players"], "rated": bool(t["rated"]),
            "status": t["status"], "round": t["round"],
            "organizer": t["organizer"] == session, "you": you,
            "entrants": [{"name": e["name"], "kind": "agent" if e["spec"] else "person",
                          "spec": e["spec"]} for e in entrants],
            "boards": [{**{k: b[k] for k in ("round", "board", "white", "black", "game",
                                              "result", "termination")},
                        "yours": you is not None and you in (b["white"], b["black"])}
                       for b in boards],
            "tiebreak": TIEBREAKS[t["system"]],
            "standings": standings(names, self.games_of(boards), t["system"]),
        }

    # --- entries -------------------------------------------------------------------------
    def create(self, session: str, name: str, system: str, variant: str, clock: str,
               rounds: int | None, max_players: int, rated: bool,
               club: str | None) -> str:
        """A new tournament; `session` organizes it (in a club: it must be the club's
        organizer). Returns its id."""
        if system not in SYSTEMS:
            raise InvalidOptionError(f"system must be {' or '.join(SYSTEMS)}, got {system!r}")
        parse_clock(clock, variant)  # a bad clock is refused now, not at the first round
        most = MAX_SWISS_PLAYERS if system == SWISS else MAX_PLAYERS
        if not 2 <= max_players <= most:
            raise InvalidOptionError(f"max_players of a {system} must be 2 to {most}, got "
                                     f"{max_players}")
        if system == SWISS and (rounds is None or rounds < 1):
            raise InvalidOptionError("a Swiss needs its number of rounds (rounds: 1 or more)")
        if club is not None:
            self.clubs.require_organizer(club, session)
        mine = self.store.query("SELECT COUNT(*) FROM tournaments WHERE organizer = ? AND "
                                "status != ?", (session, FINISHED))[0][0]
        if mine >= MAX_TOURNAMENTS_PER_SESSION:
            raise InvalidOptionError(f"you organize {mine} tournaments not finished, the "
                                     f"limit of one browser ({MAX_TOURNAMENTS_PER_SESSION}); "
                                     f"finish one first")
        running = self.store.query("SELECT COUNT(*) FROM tournaments WHERE status != ?",
                                   (FINISHED,))[0][0]
        if running >= MAX_OPEN_TOURNAMENTS:
            raise HTTPException(503, f"this server holds {running} tournaments not finished, "
                                     f"its limit for all users together "
                                     f"({MAX_OPEN_TOURNAMENTS}); try again when one has "
                                     f"finished", headers={"Retry-After": "60"})
        text = " ".join(name.split())
        if not text:
            raise InvalidOptionError("a tournament's name needs a letter or a digit")
        tid = secrets.token_urlsafe(6)
        self.store.write([("INSERT INTO tournaments VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                           "0, ?)", (tid, club, text, system, variant, clock,
                                     rounds if system == SWISS else 0, max_players,
                                     int(rated), session, OPEN, time.time()))])
        return tid

    def _entry_open(self, t: dict[str, Any]) -> None:
        """A clear error unless entries are open and a place is free."""
        if t["status"] == FINISHED:
            raise InvalidOptionError(f"{t['name']} has finished; entries are closed")
        if t["status"] == RUNNING:
            raise InvalidOptionError(f"{t['name']} has started (round {t['round']}); "
                                     f"entries are closed")
        count = len(self.entrants(t["id"]))
        if count >= t["max_players"]:
            raise InvalidOptionError(f"{t['name']} is full ({count} of {t['max_players']} "
                                     f"places taken)")

    def _enter(self, t: dict[str, Any], name: str, spec: str | None,
               session: str | None) -> None:
        taken = {e["name"].lower() for e in self.entrants(t["id"])}
        if name.lower() in taken:
            raise InvalidOptionError(f"{name!r} is already entered in {t['name']}; "
                                     f"choose another name")
        seed = len(taken)
        self.store.write([("INSERT INTO entrants VALUES (?, ?, ?, ?, ?)",
                           (t["id"], name, spec, session, seed))])

    def join(self, tid: str, session: str, name: str) -> None:
        """`session` enters as `name` (in a club: as its member's name, members only)."""
        t = self.get(tid)
        if t["club"] is not None:
            name = self.clubs.require_member(t["club"], session)
        mine = next((e["name"] for e in self.entrants(tid) if e["session"] == session), None)
        if mine is not None:
            raise InvalidOptionError(f"you are already entered in {t['name']} as {mine!r}")
        self._entry_open(t)
        self._enter(t, name, None, session)

    def add_agent(self, tid: str, session: str, spec: PlayerSpec, name: str) -> None:
        """The organizer fills a place with an agent (`spec`, already checked; its text is
        kept)."""
        t = self.require_organizer(tid, session)
        self._entry_open(t)
        self._enter(t, name, spec.text, None)

    def require_organizer(self, tid: str, session: str | None) -> dict[str, Any]:
        t = self.get(tid)
        if t["organizer"] != session:
            raise HTTPException(403, f"only the organizer of {t['name']} may do this")
        return t

    # --- rounds and results ----------------------------------------------------------------
    def next_pairings(self, t: dict[str, Any]) -> list[tuple[str, str | None]]:
        """The pairings of the next round, else a clear error (a round still being
        played, all rounds played, too few players)."""
        tid, boards = t["id"], self.boards(t["id"])
        names = [e["name"] for e in self.entrants(tid)]
        if t["status"] == FINISHED:
            raise InvalidOptionError(f"{t['name']} has finished")
        pending = [f"{b['board']} ({b['white']} - {b['black']})" for b in boards
                   if b["round"] == t["round"] and b["result"] is None]
        if pending:
            raise InvalidOptionError(f"round {t['round']} is still being played: board"
                                     f"{'s' if len(pending) > 1 else ''} "
                                     f"{', '.join(pending)} without a result")
        if len(names) < 2:
            raise InvalidOptionError(f"{t['name']} needs at least 2 players to start; it "
                                     f"has {len(names)}")
        if t["system"] == ROUND_ROBIN:
            schedule = round_robin(names)
            if t["round"] >= len(schedule):
                raise InvalidOptionError(f"all {len(schedule)} rounds have been played")
            return schedule[t["round"]]
        if t["round"] >= t["rounds"]:
            raise InvalidOptionError(f"all {t['rounds']} rounds have been played")
        if t["round"] == 0 and t["rounds"] > max_swiss_rounds(len(names)):
            raise InvalidOptionError(f"a Swiss of {len(names)} players has at most "
                                     f"{max_swiss_rounds(len(names))} rounds here (no "
                                     f"pairing repeated); it was made with {t['rounds']}")
        try:
            return swiss_round(names, self.games_of(boards), t["round"] + 1)
        except ValueError as exc:
            raise InvalidOptionError(str(exc)) from None

    def start_round(self, server: Any, tid: str, session: str | None) -> int:
        """The organizer starts the next round: its pairings are written, then one live
        game per board is opened. Returns the round's number. (The server's route runs
        the pairing in a thread: :meth:`prepare_round`, :meth:`open_round`.)"""
        t = self.prepare_round(server, tid, session)
        return self.open_round(server, t, self.next_pairings(t))

    def prepare_round(self, server: Any, tid: str, session: str | None) -> dict[str, Any]:
        """Before a round is paired (on the event loop): the results read, the organizer
        checked. Returns the tournament's row."""
        self.sync(server, tid)
        return self.require_organizer(tid, session)

    def open_round(self, server: Any, t: dict[str, Any],
                   pairs: list[tuple[str, str | None]]) -> int:
        """Write the next round's pairings (made by :meth:`next_pairings` from `t`, the
        tournament as it was read) and open a game on each board; the round's number.
        (The server's route opens the games a few at a time: :meth:`write_round`.)"""
        number, rows, specs, entrants, written = self.write_round(server, t, pairs)
        written.result()
        for row in rows:
            self.open_game(server, t, row, specs, entrants)
        self.sync(server, t["id"])
        return number

    def write_round(self, server: Any, t: dict[str, Any], pairs: list[tuple[str, str | None]]
                    ) -> tuple[int, list[dict[str, Any]], dict[str, PlayerSpec],
                               dict[str, dict[str, Any]], Future]:
        """Write the next round's pairings (see :meth:`open_round`); the round's number,
        its boards with a game to open (their games in :attr:`opening` until
        :meth:`open_game` opens them), the agents' specs, the entrants by name, and the
        pairings' write (submitted to the database's writer thread: its future, to be
        waited for before the games are opened)."""
        tid = t["id"]
        now = self.get(tid)
        if (now["round"], now["status"]) != (t["round"], t["status"]):
            raise InvalidOptionError(f"round {now['round']} of {now['name']} was started "
                                     f"meanwhile")
        number = t["round"] + 1
        entrants = {e["name"]: e for e in self.entrants(tid)}
        rounds = len(round_robin(list(entrants))) if t["system"] == ROUND_ROBIN \
            else t["rounds"]
        for _ in pairs:
            server.room_on_server()
        specs = self.agent_specs(server, t, entrants.values())  # before anything is written
        rows, writes = [], []
        for board, (white, black) in enumerate(pairs, start=1):
            gid = None if black is None else secrets.token_urlsafe(9)
            rows.append({"round": number, "board": board, "white": white, "black": black,
                         "game": gid})
            writes.append(("INSERT INTO pairings VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           (tid, number, board, white, black, gid,
                            BYE if black is None else None, "bye" if black is None else None)))
            if gid is not None and t["club"] is not None:
                writes.append(("INSERT OR REPLACE INTO club_games VALUES (?, ?)",
                               (gid, t["club"])))
        writes.append(("UPDATE tournaments SET status = ?, round = ?, rounds = ? WHERE id = ?",
                       (RUNNING, number, rounds, tid)))
        written = self.store.write_later(writes)
        rows = [row for row in rows if row["game"] is not None]
        self.opening.update(row["game"] for row in rows)
        for row in rows:
            if t["club"] is not None:
                self.clubs.game_club[row["game"]] = t["club"]
        return number, rows, specs, entrants, written

    def agent_specs(self, server: Any, t: dict[str, Any],
                    entrants: Iterable[dict[str, Any]] | None = None) -> dict[str, PlayerSpec]:
        """The agents of tournament `t` (`entrants`: its entrants as read, else read now)
        by name, their specs read back from the database (the text kept at entry) and
        parsed: a spec this server no longer plays (an engine or a file gone since) is a
        clear error here."""
        if entrants is None:
            entrants = self.entrants(t["id"])
        return {e["name"]: server.checker.resolve(e["spec"], t["variant"])
                for e in entrants if e["spec"] is not None}

    def open_game(self, server: Any, t: dict[str, Any], row: dict[str, Any],
                  specs: dict[str, PlayerSpec] | None = None,
                  entrants: dict[str, dict[str, Any]] | None = None) -> None:
        """Open the live game of one board (people: their sessions' seats; an agent: its
        spec from `specs`, by name, else :meth:`agent_specs`, and a seat session no
        browser has); `entrants`: the tournament's by name, else read now."""
        self.opening.discard(row["game"])
        if entrants is None:
            entrants = {e["name"]: e for e in self.entrants(t["id"])}
        if specs is None:
            specs = self.agent_specs(server, t, entrants.values())
        seats = []
        for name in (row["white"], row["black"]):
            e = entrants[name]
            seats.append(Seat(name, None, e["session"]) if e["spec"] is None else
                         Seat(name, specs[name], "agent-" + secrets.token_urlsafe(18)))
        # its owner is no browser's: a session's new games never evict it; its searches
        # take the organizer's turn in the pool (one share for all its boards)
        owner = TOURNAMENT + t["id"]
        server.organizers[owner] = t["organizer"]
        game = LiveGame(row["game"], owner, t["variant"], seats,
                        parse_clock(t["clock"], t["variant"]), not t["rated"], server.pool,
                        agent_delay=server.agent_delay, lobby=True, **server.game_options())
        game.message = (f"{t['name']}, round {row['round']}, board {row['board']}: "
                        f"{row['white']} (White) against {row['black']} (Black)")
        server.games[game.id] = game
        server.persist(game)
        game.agents.schedule()

    def adjudicate(self, server: Any, tid: str, session: str | None, rnd: int, board: int,
                   result: str) -> None:
        """The organizer decides a board of the round in play (a player who never came,
        a game played on a real board): its game, if still on, is stopped and left out
        of the records, and the result is kept with the termination ``adjudicated``.
        (The server's route runs :meth:`decide`, its database part, in a thread.)"""
        self.sync(server, tid)
        self.decided(server, tid, self.decide(tid, session, rnd, board, result))

    def decide(self, tid: str, session: str | None, rnd: int, board: int,
               result: str) -> str | None:
        """The database part of :meth:`adjudicate` (no live game touched: it may run in a
        thread): the checks and the result written, unless the board has one by then (its
        game ended meanwhile: a clear error). Returns the board's game (None: a bye)."""
        t = self.require_organizer(tid, session)
        if result not in ("1-0", "0-1", "1/2-1/2"):
            raise InvalidOptionError(f"result must be 1-0, 0-1 or 1/2-1/2, got {result!r}")
        where = "tournament = ? AND round = ? AND board = ?"
        found = [dict(r) for r in self.store.query(f"SELECT * FROM pairings WHERE {where}",
                                                   (tid, rnd, board))]
        if not found:
            raise InvalidOptionError(f"{t['name']} has no board {board} in round {rnd}")
        b = found[0]
        if b["result"] is None:
            (changed,) = self.store.write([(
                f"UPDATE pairings SET result = ?, termination = ? WHERE {where} AND result "
                f"IS NULL", (result, "adjudicated", tid, rnd, board))])
            if changed:
                return b["game"]
            b = dict(self.store.query(f"SELECT * FROM pairings WHERE {where}",
                                      (tid, rnd, board))[0])
        raise InvalidOptionError(f"board {board} of round {rnd} has its result already "
                                 f"({b['result']}, {b['termination']})")

    def decided(self, server: Any, tid: str, gid: str | None) -> None:
        """After :meth:`decide` (on the event loop): the board's game, if still on, is
        stopped, and the tournament's results read."""
        game = server.games.get(gid) if gid else None
        if game is not None and not game.over:
            server.forget(game)
        self.sync(server, tid)

    def game_ended(self, server: Any, gid: str) -> None:
        """A game has ended and is kept: its board's result now (when it is a board's;
        a failure is said in the log and left to the next read, which reads it again).
        No game is opened again from here: during a restart's restore the other games
        are not all back yet."""
        rows = self.store.query("SELECT tournament FROM pairings WHERE game = ?", (gid,))
        if not rows:
            return
        def said(future: Future) -> None:
            if future.exception() is not None:
                print(f"damii serve: the result of game {gid} is not in its tournament yet "
                      f"({future.exception()}); it is read again when the tournament is",
                      file=sys.stderr)
        try:
            written = self.sync(server, rows[0]["tournament"], reopen=False)
        except (sqlite3.Error, HTTPException, InvalidOptionError) as exc:
            print(f"damii serve: the result of game {gid} is not in its tournament yet "
                  f"({exc}); it is read again when the tournament is", file=sys.stderr)
            return
        if written is not None:
            written.add_done_callback(said)

    def sync(self, server: Any, tid: str, reopen: bool = True) -> Future | None:
        """Take each board's result from its game once it has ended (the live game, else
        the finished games of the database); open again a game lost before it was ever
        written (`reopen`); the tournament is finished when its last round has every
        result. The results are written by the database's writer thread: on the event
        loop the write's future is returned at once (a route awaits it before it reads
        them back: :func:`synced`); elsewhere it is waited for (its error raised)."""
        t = self.get(tid)
        writes = []
        for b in self.pending(tid):  # the boards of one round at most, not the whole event
            if b["game"] in self.opening:
                continue  # its round is being opened
            game = server.games.get(b["game"])
            if game is not None and game.end is not None:
                end = (game.end.result, game.end.termination)
            elif game is None:
                kept = self.store.query("SELECT result, termination FROM games WHERE id = ?",
                                        (b["game"],))
                if kept:
                    end = (kept[0]["result"], kept[0]["termination"])
                else:  # reopened unless the database holds it in progress (unreadable)
                    if reopen and not self.store.query(
                            "SELECT 1 FROM live_games WHERE id = ?", (b["game"],)):
                        try:
                            self.open_game(server, t, b)
                        except DamiiError as exc:  # an agent's spec no longer played
                            print(f"damii serve: board {b['board']} of round {b['round']} "
                                  f"of tournament {tid} cannot be opened again: "
                                  f"{server.checker.public(str(exc))}", file=sys.stderr)
                    continue
            else:
                continue
            writes.append(("UPDATE pairings SET result = ?, termination = ? WHERE "
                           "tournament = ? AND round = ? AND board = ? AND result IS NULL",
                           (normal_result(end[0]), end[1], tid, b["round"], b["board"])))
        last = t["status"] == RUNNING and t["round"] >= t["rounds"]
        if not writes and not (last and not self.store.query(
                "SELECT 1 FROM pairings WHERE tournament = ? AND result IS NULL LIMIT 1",
                (tid,))):
            return None

        def finish(db: sqlite3.Connection) -> bool:
            """In the same transaction: the tournament finished once every board of its
            last round has its result."""
            if not last or db.execute("SELECT 1 FROM pairings WHERE tournament = ? AND "
                                      "result IS NULL LIMIT 1", (tid,)).fetchone():
                return False
            db.execute("UPDATE tournaments SET status = ? WHERE id = ?", (FINISHED, tid))
            return True

        def finished(future: Future) -> None:
            if not future.exception() and future.result():
                server.organizers.pop(TOURNAMENT + tid, None)  # no board of it runs now
        return after(self.store.write_later(writes, then=finish), finished)

    # --- exports ----------------------------------------------------------------------------
    def pdn(self, tid: str) -> str:
        """Every finished game of the tournament as PDN, named by the tournament, its
        round and board."""
        t = self.get(tid)
        out = []
        for b in self.boards(tid):
            if b["game"] is None:
                continue
            rows = self.store.query("SELECT pdn FROM games WHERE id = ?", (b["game"],))
            if not rows:
                continue
            text = re.sub(r'^\[Event "[^"]*"\]', f'[Event "{_tag(t["name"])}"]', rows[0]["pdn"],
                          count=1, flags=re.M)
            text = re.sub(r'^\[Round "[^"]*"\]', f'[Round "{b["round"]}.{b["board"]}"]', text,
                          count=1, flags=re.M)
            out.append(text.strip() + "\n")
        return "\n".join(out)

    def standings_csv(self, tid: str, session: str | None) -> str:
        """The standings as CSV (rank, name, points, the tie-break, games, W/D/L)."""
        view = self.view(tid, session)
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["rank", "name", "points", view["tiebreak"], "played", "wins",
                         "draws", "losses"])
        for row in view["standings"]:
            writer.writerow([row["rank"], row["name"], row["points"], row["tiebreak"],
                             row["played"], row["wins"], row["draws"], row["losses"]])
        return buf.getvalue()


def _tag(text: str) -> str:
    """A PDN tag's value (no quote or backslash)."""
    return text.replace("\\", "/").replace('"', "'")

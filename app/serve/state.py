"""What ``damii serve`` holds while it runs: one :class:`ServerState` (``app.state.server``)
with the games and arena matches in play, the browser sessions, the search pool, the
database and the server's settings; the routes (:mod:`damii_app.serve.routes`) take it as a
parameter typed :data:`Server`.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import time
from collections import OrderedDict
from concurrent.futures import Future
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, HTTPException
from starlette.requests import HTTPConnection

from damii_agents.match.game_loop import COLOURS
from damii_agents.registry import PlayerSpec
from damii_app.serve.arena import ArenaWatch
from damii_app.serve.clubs import ClubBook
from damii_app.serve.jobs import START_SECONDS, Pool, make_pool
from damii_app.serve.live import LiveGame
from damii_app.serve.session import RateLimit, SessionLimits
from damii_app.serve.specs import SpecChecker
from damii_app.serve.store import Store, StoreError
from damii_app.serve.tournaments import TOURNAMENT, TournamentBook
from damii_env.errors import DamiiError

MAX_GAMES_PER_SESSION = 20
"""Games a session keeps (a new one evicts its oldest)."""
MAX_GAMES = 2000
"""Games the server holds, all sessions together (about 90 KB each): a new game first
makes room by forgetting the oldest finished ones; when all are in progress it is refused
(503)."""
RETRY_SECONDS = 30
"""The ``Retry-After`` of a refusal for want of room (games, agent matches)."""
MAX_ARENAS_PER_SESSION = 3
"""Arena matches running, and open lobby games, of one session."""
MAX_AGENT_MATCHES = 8
"""Games between two agents and arena matches running at once, all sessions together (a
session has its own limits too, but anyone can open many sessions)."""
HEARTBEAT_SECONDS = 1.5
"""How often the page says it is there (in a lobby game)."""
HEARTBEAT_TIMEOUT = 5.0
"""A seat not heard for this long is away: its reconnection grace starts."""
IDLE_SECONDS = 3600.0
"""A game in progress (or an open lobby game) with no move, no change and no message from
its page for this long is ended as abandoned (``*``, ``abandoned: idle``) and kept."""
FINISHED_LINGER = 120.0
"""Seconds a finished game stays in memory once the database holds it (its page shows
the end; later the database's history has it): memory follows the games in play."""


class ServerState:
    """The server's games, arena matches and sessions, its search pool and database (both
    made by :meth:`open`), and its settings (see :func:`~damii_app.serve.app.create_app`).
    Changed only on the server's event loop."""

    def __init__(self, checker: SpecChecker, workers: int = 2, agent_delay: float = 0.25,
                 job_deadline: float | None = None, db: str | Path | None = None,
                 grace: float = 90.0, heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
                 max_agent_matches: int = MAX_AGENT_MATCHES, max_games: int = MAX_GAMES,
                 session_limits: SessionLimits | None = None,
                 idle_seconds: float = IDLE_SECONDS,
                 finished_linger: float = FINISHED_LINGER) -> None:
        self.checker = checker
        self.idle_seconds, self.finished_linger = idle_seconds, finished_linger
        self.pairing = asyncio.Lock()
        """One tournament round is paired at a time (the pairing runs in a thread)."""
        self.organizers: dict[str, str] = {}
        """The organizer session of each tournament whose games run (``tournament:ID``)."""
        self.max_games = max_games
        self.session_limits = limits = session_limits or SessionLimits()
        self._codes_address = RateLimit(limits.address_codes, limits.code_rate)
        self._codes_session = RateLimit(limits.session_codes, limits.code_rate / 2)
        self.workers, self.job_deadline, self.db = workers, job_deadline, db
        self.agent_delay, self.grace = agent_delay, grace
        self.heartbeat_timeout, self.max_agent_matches = heartbeat_timeout, max_agent_matches
        self.games: dict[str, LiveGame] = {}
        self.arenas: dict[str, ArenaWatch] = {}
        self.sessions: OrderedDict[str, str | None] = OrderedDict()
        """The session ids this server issued (:class:`~damii_app.serve.session.SessionCookie`),
        each with the client address that made it (None: restored after a restart)."""
        self.kept: dict[str, tuple[dict[str, Any], list[str]]] = {}
        """What the database holds of each game in progress: its row and its moves."""
        self.replays = asyncio.Semaphore(1)
        self.pool: Pool
        self.store: Store | None = None
        self.unsaved: dict[str, LiveGame] = {}
        self.writing: dict[str, Future] = {}
        """Finished games being written (:meth:`keep`): their write's future."""
        self.clubs: ClubBook | None = None
        self.tournaments: TournamentBook | None = None
        """Clubs and tournaments (kept in the database; None without one)."""
        """Finished games whose result could not be written yet (retried by :meth:`tick`)."""

    # --- start and stop ----------------------------------------------------------------
    def open(self) -> None:
        """Start the search pool and open the database (when there is one)."""
        self.pairing = asyncio.Lock()  # made on the server's event loop
        self.pool = make_pool(self.workers,
                              *(() if self.job_deadline is None else (self.job_deadline,)))
        self.pool.budget_of = self.budget_of
        if isinstance(self.db, Store):
            self.store = self.db  # opened (locked and checked) before the server started
        else:
            self.store = Store(self.db) if self.db is not None else None
        if self.store is not None:
            self.clubs = ClubBook(self.store)
            self.tournaments = TournamentBook(self.store, self.clubs)

    async def settled(self) -> None:
        """The database's writes submitted so far done (:meth:`Store.settled`; at once
        without a database)."""
        if self.store is not None:
            await self.store.settled()

    async def start_workers(self) -> None:
        """Wait until each worker process has started (and warmed up)."""
        if self.workers > 0:
            await asyncio.gather(*(asyncio.wrap_future(self.pool.submit(abs, 0))
                                   for _ in range(self.workers)))
            lane = getattr(self.pool, "lane_started", None)
            if lane is not None:  # the light lane's worker too
                await asyncio.to_thread(lane, START_SECONDS)

    def stopping(self) -> None:
        """The server is asked to stop: every search ends now and every request waiting
        for one is answered "the server is stopping" (before uvicorn waits for them)."""
        self.pool.shutdown()

    def close(self) -> None:
        """Stop every arena match and game, the pool, and close the database (a finished
        game that could still not be written is printed as PDN: no result is lost)."""
        for arena in self.arenas.values():
            arena.stop()
        for game in self.games.values():
            game.close()
        self.pool.shutdown()
        for gid, future in list(self.writing.items()):  # their callbacks will not run now
            game = self.games.get(gid)
            if game is not None:
                self._kept(game, future)
        self.writing.clear()
        for game in list(self.unsaved.values()):
            self.keep(game, wait=True)
        for game in self.unsaved.values():
            print(f"damii serve: game {game.id} ({game.end.result if game.end else '*'}) "
                  f"could not be written to the database; its PDN:\n{game.pdn()}",
                  file=sys.stderr)
        if self.store is not None:
            self.store.close()

    def pinned(self) -> set[str]:
        """The sessions never forgotten: those that play a game in progress or watch a
        running arena match."""
        out = {sid for game in self.games.values() if not game.over
               for sid in game.seating.sessions()}
        out |= self.club_sessions()
        return out | {a.owner for a in self.arenas.values() if a.running}

    def club_sessions(self) -> set[str]:
        """The sessions of clubs' organizers and members and of tournaments' entrants."""
        if self.clubs is None or self.tournaments is None:
            return set()
        return self.clubs.kept_sessions | self.tournaments.kept_sessions

    async def tick(self) -> None:
        """Clocks and heartbeats, watched or not: a person whose clock ran out loses on
        time, absent lobby players lose once their grace is over; results not written
        yet are retried every few seconds."""
        ticks = 0
        while True:
            await asyncio.sleep(min(0.5, self.heartbeat_timeout / 3))
            for game in list(self.games.values()):
                if not game.open:
                    game.clocks.check()
                game.seating.check()
            ticks += 1
            if ticks % 10 == 0:
                self.expire()
            if self.unsaved and ticks % 10 == 0:
                self.retry_unsaved()

    def expire(self) -> None:
        """End the games idle for :attr:`idle_seconds` (abandoned, kept in the database),
        and forget the finished games the database holds after :attr:`finished_linger`."""
        now = time.monotonic()
        for game in list(self.games.values()):
            if not game.over and now - game.active > self.idle_seconds:
                game.expire(self.idle_seconds)
            elif game.over and self.store is not None and now - game.active > \
                    self.finished_linger and not (game.id in self.unsaved or game.id in
                                                   self.writing or game.id in self.kept):
                self.forget(game)

    def retry_unsaved(self) -> None:
        """Write again the finished games whose result could not be written."""
        for game in list(self.unsaved.values()):
            self.keep(game)

    # --- games and the database ----------------------------------------------------------
    def game_options(self) -> dict[str, Any]:
        """The keyword arguments every :class:`LiveGame` of this server gets."""
        return {"public": self.checker.public, "on_end": self.keep,
                "on_change": self.persist, "grace": self.grace,
                "heartbeat_timeout": self.heartbeat_timeout}

    def restore(self) -> None:
        """After a restart: the sessions that play games in progress, and those games
        (each person's seat gets the grace time from now to come back; an agent to move
        is asked again)."""
        store = self.store
        if store is None:
            return
        for sid in store.sessions(prune=True):
            self.sessions[sid] = None
        for tid, organizer in store.query("SELECT id, organizer FROM tournaments WHERE "
                                          "status = 'running'"):
            self.organizers[TOURNAMENT + tid] = organizer
        for sid in sorted(self.club_sessions() - set(self.sessions)):
            self.sessions[sid] = None
        for row in store.live_games():
            if row["id"] in self.games:
                continue
            try:
                game = LiveGame.restore(row, self.pool, self.checker.resolve,
                                        agent_delay=self.agent_delay, **self.game_options())
            except (DamiiError, ValueError, KeyError, TypeError, AttributeError,
                    IndexError) as exc:
                print(f"damii serve: game {row['id']} in progress cannot be taken up again "
                      f"and stays in the database: {self.checker.public(str(exc))}",
                      file=sys.stderr)
                continue
            self.games[game.id] = game
            self.kept[game.id] = (game.record.row(), list(row["moves"]))
            if game.over:  # its last move ended it before the restart could record it
                self.keep(game)
                continue
            game.agents.schedule()

    def keep(self, game: LiveGame, wait: bool = False) -> None:
        """A finished game goes into the database (rated: not casual, no take-back) and
        leaves the games in progress there, in one transaction: written by the database's
        writer thread, and what follows (memory freed, a tournament board's result) done
        on the event loop once it is written (`wait`, or no event loop running: waited
        for here). An answer that acknowledges it waits for it (:class:`Flushed`)."""
        store = self.store
        if store is None or game.end is None or game.id in self.writing:
            return
        sides = [(s.label, "person" if s.human else "agent") for s in game.seats]
        try:
            future = store.record_game_later(
                game.id, game.variant, sides[0], sides[1], game.end.result,
                game.end.termination, not game.casual and not game.took_back, game.pdn())
        except (sqlite3.Error, StoreError, ValueError, TypeError) as exc:
            self._not_kept(game, exc)
            return
        loop = None if wait else _running_loop()
        if loop is None:
            self._kept(game, future)
            return
        self.writing[game.id] = future
        future.add_done_callback(
            lambda f: loop.call_soon_threadsafe(self._kept, game, f))

    def _kept(self, game: LiveGame, future: Future) -> None:
        """After :meth:`keep`'s write (its future done, waited for if not)."""
        if self.writing.get(game.id) is future:
            del self.writing[game.id]
        try:
            future.result()
        except (sqlite3.Error, StoreError, ValueError, TypeError) as exc:
            self._not_kept(game, exc)
            return
        if self.unsaved.pop(game.id, None) is not None:
            print(f"damii serve: the result of game {game.id} is now written to the "
                  f"database", file=sys.stderr)
        self.kept.pop(game.id, None)
        game.settle()  # memory follows the games in play: the finished one holds little
        if self.tournaments is not None:
            self.tournaments.game_ended(self, game.id)  # a tournament board's result

    def _not_kept(self, game: LiveGame, exc: Exception) -> None:
        """A finished game's write failed: kept in memory and written again by
        :meth:`tick`; said once in the log and on its page."""
        first = game.id not in self.unsaved
        self.unsaved[game.id] = game
        if first:
            print(f"damii serve: the result of game {game.id} could not be written to "
                  f"the database {self.store.path if self.store else ''}: {exc}; it is "
                  f"kept here and written again every few seconds (check the file: sqlite3 "
                  f"FILE 'PRAGMA integrity_check')", file=sys.stderr)
            game.announce(game.message + "; the result could not be written to the "
                                         "server's database yet: the server tries again")

    def persist(self, game: LiveGame) -> None:
        """Keep a game in progress in the database as it changes: its row when it starts
        and when a seat or an offer changes, then each move (one transaction a change,
        submitted to the database's writer thread: the event loop does not wait for it;
        an answer that acknowledges a change does, :class:`Flushed`)."""
        store = self.store
        if store is None or game.over:
            return
        row, stack = game.record.row(), game.game.move_stack
        try:
            held = self.kept.get(game.id)
            if held is None:
                moves = [str(m) for m in stack]
                future = store.open_live_later(game.id, row, moves, game.seating.sessions())
                self.kept[game.id] = (row, moves)
            else:
                old_row, old_moves = held
                same = min(len(old_moves), len(stack))  # the plies kept still played
                if same and str(stack[same - 1]) != old_moves[same - 1]:
                    same = next((i for i in range(same) if str(stack[i]) != old_moves[i]),
                                same)
                if same == len(old_moves) == len(stack) and row == old_row:
                    return
                new = [str(m) for m in stack[same:]]
                changed = row != old_row
                future = store.update_live_later(game.id, row if changed else None, same, new,
                                                 game.seating.sessions() if changed else set())
                self.kept[game.id] = (row, old_moves[:same] + new)
        except sqlite3.Error as exc:
            self._not_persisted(game, exc)
            return
        loop = _running_loop()
        if loop is None:
            self._persisted(game, future)
        else:
            future.add_done_callback(
                lambda f: loop.call_soon_threadsafe(self._persisted, game, f))

    def _persisted(self, game: LiveGame, future: Future) -> None:
        try:
            future.result()
        except sqlite3.Error as exc:
            self._not_persisted(game, exc)

    def _not_persisted(self, game: LiveGame, exc: Exception) -> None:
        """The game goes on; its next change writes it whole."""
        self.kept.pop(game.id, None)
        print(f"damii serve: game {game.id} could not be written to the database: "
              f"{exc}", file=sys.stderr)

    def forget(self, game: LiveGame) -> None:
        """A game leaves memory: a finished one the database holds, or one in progress
        that will not be finished (evicted: out of the database too)."""
        game.close()
        self.games.pop(game.id, None)
        if self.clubs is not None:
            self.clubs.game_club.pop(game.id, None)
        if self.kept.pop(game.id, None) is not None and self.store is not None:
            self.store.drop_live_later(game.id).add_done_callback(_said)

    def room_for_a_game(self, session: str) -> None:
        """Evict the oldest games of `session` while it has its limit of them; then the
        limit of its address (:meth:`room_for_an_address`), then room on the server
        (:meth:`room_on_server`)."""
        mine = sorted((g for g in self.games.values() if g.owner == session),
                      key=lambda g: g.created)
        while len(mine) >= MAX_GAMES_PER_SESSION:
            self.forget(mine.pop(0))
        self.room_for_an_address(session)
        self.room_on_server()

    def room_for_an_address(self, session: str) -> None:
        """A clear 429 when the games in progress of `session`'s client address (all its
        sessions together) are at :attr:`SessionLimits.address_games`."""
        address = self.sessions.get(session)
        if address is None:
            return
        limit = self.session_limits.address_games
        held = sum(1 for g in self.games.values()
                   if not g.over and self.sessions.get(g.owner) == address)
        if held >= limit:
            raise HTTPException(429, f"your address plays {held} games in progress, the limit "
                                     f"of one address ({limit}; a school behind one address: "
                                     f"see docs/SERVE.md, DAMII_SERVE_PER_ADDRESS); finish or "
                                     f"resign one first", headers={"Retry-After": "60"})

    def code_tries(self, session: str, address: str) -> float:
        """0.0 when `session` at `address` may try a club code now, else the seconds to
        wait (:class:`SessionLimits`: a few tries a session, more an address)."""
        return self._codes_session.take(session) or self._codes_address.take(address)

    def address_of(self, session: str) -> str:
        """The client address that made `session` (the session itself when unknown)."""
        return self.sessions.get(session) or session

    def budget_of(self, share: str) -> tuple[str, str]:
        """Whose budget a search takes in the pool: (group, share). A browser's: its
        address, its session; a tournament board's: its organizer's address and session."""
        session = self.organizers.get(share, share)
        return self.address_of(session), session

    def room_on_server(self) -> None:
        """Room for one more game on the server: the oldest finished games are forgotten
        while it holds its limit (:data:`MAX_GAMES`); when all it holds are in progress,
        a clear 503 with a ``Retry-After``."""
        if len(self.games) < self.max_games:
            return
        done = sorted((g for g in self.games.values() if g.over and g.id not in self.unsaved
                       and g.id not in self.writing), key=lambda g: g.created)
        for game in done[:len(self.games) - self.max_games + 1]:
            self.forget(game)
        if len(self.games) >= self.max_games:
            raise HTTPException(503, f"the server holds {len(self.games):,} games in "
                                     f"progress, its limit for all users together "
                                     f"({self.max_games:,}); try again when one has finished",
                                headers={"Retry-After": str(RETRY_SECONDS)})

    def agents_only_room(self) -> None:
        """Refuse a new game between agents or arena match when the server runs its
        limit of them already (all sessions together; tournaments' boards have their own
        limits and take their organizer's share of the pool)."""
        running = sum(1 for g in self.games.values() if not g.over and not any(
            s.human for s in g.seats) and not g.owner.startswith(TOURNAMENT)) + sum(
            1 for a in self.arenas.values() if a.running)
        if running >= self.max_agent_matches:
            raise HTTPException(503, f"the server is running {running} games between agents "
                                     f"and arena matches, its limit for all users together "
                                     f"({self.max_agent_matches}); try again when one has "
                                     f"finished", headers={"Retry-After": str(RETRY_SECONDS)})

    # --- what a session may reach --------------------------------------------------------
    def own_game(self, session: str, gid: str) -> LiveGame:
        """A game `session` may see: its own, or any lobby game (read-only)."""
        game = self.games.get(gid)
        if game is None or not (game.lobby or game.owner == session):
            raise HTTPException(404, f"no game {gid!r} in this session")
        return game

    def playing(self, session: str, gid: str) -> tuple[LiveGame, str | None]:
        """A game `session` plays in, and the side it speaks for in a lobby game."""
        game = self.own_game(session, gid)
        sides = game.seating.sides_of(session)
        if not sides:
            raise HTTPException(403, "you watch this game; only its players move")
        game.seating.heartbeat(session)  # a player who acts is there
        return game, COLOURS[sides[0]] if game.lobby else None

    def own_arena(self, session: str, aid: str) -> ArenaWatch:
        """An arena match of `session`."""
        arena = self.arenas.get(aid)
        if arena is None or arena.owner != session:
            raise HTTPException(404, f"no arena match {aid!r} in this session")
        return arena

    async def checked(self, spec: str, variant: str) -> PlayerSpec:
        """A request's spec parsed, checked and ready to run (:meth:`SpecChecker.check`, in a
        thread: it builds the player); what the server carries from then on."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.checker.check, spec, variant)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, if one is."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _said(future: Future) -> None:
    """A write nobody waits for: its failure said in the log."""
    exc = future.exception()
    if exc is not None:
        print(f"damii serve: a change could not be written to the database: {exc}",
              file=sys.stderr)


async def server_state(connection: HTTPConnection) -> ServerState:
    """The :class:`ServerState` of the app that serves `connection`."""
    return connection.app.state.server


Server = Annotated[ServerState, Depends(server_state)]
"""A route's parameter that receives the :class:`ServerState`."""

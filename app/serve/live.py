"""Live games in the browser (:class:`LiveGame`), and the :class:`Notifier` that wakes the
websockets of a game or an arena match (:mod:`damii_app.serve.arena`) when it changes.

A :class:`LiveGame` belongs to one browser session and is changed only on the server's
event loop. The rules of the game in play are the match's own
:class:`~damii_agents.match.game_loop.Referee`, driven move by move: a per-move clock (a
Sci-Damath capture may take any time), resignation, draws offered and accepted, and an
illegal move from an agent ends the game. Casual games allow take-backs. Between two
people a threefold repetition is claimed (:data:`CLAIMS`), and blitz has no draw offers; a
Sci-Damath classroom match (:mod:`damii_app.serve.classroom`) adds its clocks, warnings,
forced moves, touch move and score sheet.

A game is made of parts, one concern each, which it owns and which act on it:

- :class:`~damii_app.serve.game_seating.Seating`: its people (which session plays which
  colour, joining a lobby game, heartbeats, the grace to come back);
- :class:`~damii_app.serve.game_clocks.GameClocks`: its clocks (a move's time, the
  classroom match's minute and game clock);
- :class:`~damii_app.serve.game_draws.DrawOffers`: draws offered, answered and claimed;
- :class:`~damii_app.serve.game_agents.AgentTurns`: its agents' moves, jobs in the
  search pool (:mod:`damii_app.serve.jobs`), awaited without blocking the loop;
- :class:`~damii_app.serve.game_record.GameRecord`: its PDN and its row in the database;
- :class:`~damii_app.serve.game_page.GamePage`: the state the page shows.

The game itself holds what they share (the referee and board, the seats, the version) and
the people's moves (play, touch move, resignation, take-back), and says when it changed
(:meth:`LiveGame.announce`): its version goes up, the server keeps it, and its
:class:`Notifier` wakes the page's websocket at once (no polling).
"""

from __future__ import annotations

import asyncio
import random
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from damii_agents.match.game_loop import COLOURS, Clock, GameEnd, Referee, game_options
from damii_agents.registry import PlayerSpec
from damii_app.serve.classroom import ClassroomMatch, MatchRules, ScoreSheet
from damii_app.serve.game_agents import AgentTurns
from damii_app.serve.game_clocks import GameClocks
from damii_app.serve.game_draws import BLITZ_SECONDS, DrawOffers
from damii_app.serve.game_page import GamePage
from damii_app.serve.game_record import GameRecord, restored
from damii_app.serve.game_seating import Seat, Seating
from damii_app.serve.jobs import Pool
from damii_env.errors import IllegalMoveError, InvalidOptionError
from damii_env.rules import make_rules

__all__ = ["BLITZ_SECONDS", "CLAIMS", "LiveGame", "Notifier", "Seat"]

CLAIMS = {"repetition": 0, "repetition_claim": 3}
"""The rule options of a game between two people: Damii's threefold repetition is a draw
a player claims, not an automatic end (docs/RULES.md); Sci-Damath's rulebook ends the game
itself (rule 17), so its games keep the automatic rule."""


class Notifier:
    """Wakes the websockets that wait on one game or arena; :meth:`notify` may be called
    from any thread. ``tick = n.ticks`` before reading the state, then ``await
    n.wait(tick, timeout)``: a change in between is not missed."""

    def __init__(self) -> None:
        self.ticks = 0
        self._waiting: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self._lock = threading.Lock()

    def notify(self) -> None:
        with self._lock:
            self.ticks += 1
            waiting = list(self._waiting)
        for loop, event in waiting:
            loop.call_soon_threadsafe(event.set)

    async def wait(self, tick: int, timeout: float | None) -> None:
        """Until a :meth:`notify` after `tick` was read, or `timeout` seconds."""
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            if self.ticks != tick:
                return
            self._waiting.add(entry)
        try:
            await asyncio.wait_for(entry[1].wait(), timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            with self._lock:
                self._waiting.discard(entry)


class LiveGame:
    """One game played in the browser, between people and agents: its referee and board,
    its seats, the people's moves; its parts (:attr:`seating`, :attr:`clocks`,
    :attr:`draws`, :attr:`agents`, :attr:`record`, :attr:`page`) do the rest."""

    def __init__(self, gid: str, owner: str, variant: str, seats: Sequence[Seat],
                 clock: Clock | MatchRules, casual: bool, pool: Pool, fen: str | None = None,
                 seed: int | None = None, agent_delay: float = 0.0,
                 public: Callable[[str], str] = str,
                 on_end: Callable[[LiveGame], None] | None = None, lobby: bool = False,
                 grace: float = 90.0, heartbeat_timeout: float = 5.0,
                 on_change: Callable[[LiveGame], None] | None = None,
                 options: dict[str, Any] | None = None) -> None:
        self.id, self.owner = gid, owner
        self.lobby = lobby
        """A game between people at different browsers: each seat moves for its own
        session only, others watch read-only."""
        self.on_end = on_end
        """Called once when the game ends (the server keeps it in its database)."""
        self.on_change = on_change
        """Called after every change while the game is on (the server keeps its moves)."""
        self._recorded = False
        self.took_back = False
        self.match = ClassroomMatch(clock) if isinstance(clock, MatchRules) else None
        """A Sci-Damath classroom match (its clock, violations, touch move), or None."""
        options, toss = self._people_options(variant, seats, fen, seed, dict(options or {}))
        self.options = game_options(variant, **options)
        self.referee = Referee.start(variant, clock if isinstance(clock, Clock) else Clock(),
                                     fen, **self.options)
        self.game = self.referee.game
        self.sheet = ScoreSheet()
        self.start_fen = self.game.fen() if fen else None
        self.variant = self.game.rules.name
        self.seats = tuple(seats)
        self.clock, self.casual, self.pool, self.seed = clock, casual, pool, seed
        self.public = public
        """Makes a text fit to show (no server paths)."""
        self.toss = toss
        """Who the coin toss made move first (a classroom match), else None."""
        self.version = 0
        self.generation = 0
        """Bumped when the line of play changes under the agents (an end, a take-back):
        a search of the old line is answered too late and dropped."""
        self.created = time.time()
        self.active = time.monotonic()
        """When the game last changed or its page was last heard (idle expiry)."""
        self.changed = Notifier()
        self.seating = Seating(self, grace, heartbeat_timeout)
        self.clocks = GameClocks(self)
        self.draws = DrawOffers(self)
        self.agents = AgentTurns(self, agent_delay)
        self.record = GameRecord(self)
        self.page = GamePage(self)
        self.message = "" if toss is None else self.toss_text()

    def _people_options(self, variant: str, seats: Sequence[Seat], fen: str | None,
                        seed: int | None, options: dict[str, Any]
                        ) -> tuple[dict[str, Any], int | None]:
        """The rule options of the game: a game between two people claims repetitions
        (:data:`CLAIMS`, unless set); a classroom match tosses a coin for the first move
        (from the seed when one is given; not from a FEN). Also the toss (None: none)."""
        rules = make_rules(variant, **options)
        if self.match is not None and rules.scoring != "damath":
            raise InvalidOptionError(f"the clock {self.match.rules} is Sci-Damath's classroom "
                                     f"match; choose the variant damath (got {rules.name})")
        if all(seat.human for seat in seats) and rules.scoring != "damath" and \
                not CLAIMS.keys() & options.keys():
            options.update(CLAIMS)
        toss = None
        if self.match is not None and fen is None and "first_player" not in options:
            toss = random.Random(seed).randrange(2) if seed is not None else \
                secrets.randbelow(2)
            options["first_player"] = ("first", "second")[toss]
        if self.match is not None:
            options.setdefault("turn_limit", 0)  # the game clock ends it, not 100 plies
        return options, toss

    @classmethod
    def restore(cls, kept: dict[str, Any], pool: Pool,
                spec_of: Callable[[str, str], PlayerSpec] | None = None,
                **kwargs: Any) -> LiveGame:
        """A game in progress as the database kept it, taken up again after a restart
        (:func:`~damii_app.serve.game_record.restored`)."""
        return restored(cls, kept, pool, spec_of, **kwargs)

    # --- what the parts share ----------------------------------------------------------
    @property
    def end(self) -> GameEnd | None:
        return self.referee.end

    @property
    def over(self) -> bool:
        return self.referee.over

    @property
    def draw_offer(self) -> int | None:
        return self.referee.draw_offer

    @property
    def open(self) -> bool:
        """A lobby game still waiting for its second player."""
        return self.lobby and any(s.session is None for s in self.seats)

    def state(self) -> dict[str, Any]:
        """Everything the page shows (:meth:`GamePage.state`)."""
        return self.page.state()

    def pdn(self) -> str:
        """The game as PDN (:meth:`GameRecord.pdn`)."""
        return self.record.pdn()

    def announce(self, message: str | None = None) -> None:
        """The game changed (and says `message`, when given): a new version; the server
        keeps a game in progress, or records a finished one once; the pages are woken."""
        self.version += 1
        self.active = time.monotonic()
        if message is not None:
            self.message = message
        if self.end is None:
            self._recorded = False
            if self.on_change is not None:
                self.on_change(self)
        elif not self._recorded and self.on_end is not None:
            self._recorded = True
            self.on_end(self)
        self.changed.notify()

    def ended(self, message: str) -> None:
        """The referee has ended the game: stop any search of it and say so."""
        self.generation += 1
        self.pool.cancel(f"{self.id}:")
        self.announce(message)

    def moved(self, side: int, message: str, offer: int | None) -> None:
        """A move was played for `side` (`offer`: the draw offer before it): say so, and
        start the agent's turn when an agent is to move."""
        if offer == 1 - side and self.draw_offer is None:
            message += " (the draw offer lapses)"
        if self.end is not None:
            message += f"; game over: {self.end.result} ({self.end.termination})"
        if not self.over and not self.seats[self.game.turn].human:
            self.agents.thinking = True  # said in this state, not a second one a moment later
        self.announce(message)
        self.agents.schedule()

    def require_playing(self) -> None:
        """A clear error unless the game is on (its clocks checked first)."""
        self.clocks.check()
        self.referee.require_playing()
        if self.open:
            raise InvalidOptionError("waiting for an opponent to join this game")

    def toss_text(self) -> str:
        assert self.toss is not None
        seat = self.seats[self.toss]
        who = "the player who joins" if self.open and seat.session is None and seat.human \
            else seat.label
        return f"coin toss: {COLOURS[self.toss]} ({who}) moves first"

    # --- the people's moves ------------------------------------------------------------
    def play(self, text: str) -> None:
        """A person's move, as PDN text (``32-28``, ``28x19x10``)."""
        mover = self.game.turn
        self.require_playing()
        side = self.game.turn
        if side != mover and self.match is not None:
            raise IllegalMoveError(f"too late: {COLOURS[mover]}'s minute was up and the "
                                   f"arbiter has moved for {COLOURS[mover]}")
        if not self.seats[side].human:
            raise IllegalMoveError(f"it is {self.seats[side].label}'s turn ({COLOURS[side]}), "
                                   f"not yours")
        offer, began = self.draw_offer, self.referee.turn_started
        if self.match is not None:
            self.match.check_move(self.game.parse_move(text))
        self.referee.play(text)
        if self.match is not None:
            self.match.turn_over(side, time.monotonic() - began)
        self.moved(side, f"{COLOURS[side]} played {self.game.move_stack[-1]}", offer)

    def touch(self, square: int) -> None:
        """Touch move: the person to move has picked up the chip on `square` (the page
        says so when it is selected); it must move."""
        self.require_playing()
        side = self.game.turn
        if self.match is None or not self.match.rules.touch_move:
            raise InvalidOptionError("this game is not played with touch move (the "
                                     "clock sci-damath:touch has it)")
        if not self.seats[side].human:
            raise IllegalMoveError(f"it is {self.seats[side].label}'s turn "
                                   f"({COLOURS[side]}), not yours")
        if self.match.touched == square:
            return
        self.match.touch(self.game, square)
        self.announce(f"{COLOURS[side]} touched the chip on {square}: it must move "
                      f"(touch move)")

    def resign(self, side: str | None = None) -> None:
        """A person resigns (the side named, else the only person, else the mover)."""
        self.require_playing()
        s = self.seating.human_side(side)
        self.referee.resign(s)
        self.ended(f"{COLOURS[s]} resigns")

    def takeback(self) -> None:
        """Casual games: take back the last move of a person (and the agent's reply)."""
        if not self.casual:
            raise InvalidOptionError("take-backs are allowed in casual games only")
        if self.match is not None:
            raise InvalidOptionError("no take-backs in a Sci-Damath match")
        if not any(seat.human for seat in self.seats):
            raise InvalidOptionError("no person plays in this game")
        taken = [str(self.referee.take_back())]
        while self.game.move_stack and not self.seats[self.game.turn].human:
            taken.append(str(self.referee.take_back()))
        self.generation += 1
        self.took_back = True
        self.pool.cancel(f"{self.id}:")
        self.announce("took back " + ", ".join(reversed(taken)))
        self.agents.schedule()

    # --- its end -----------------------------------------------------------------------
    def settle(self) -> None:
        """The game is over and the database holds it: what it keeps in memory until the
        server forgets it is what its page shows. Its board becomes a copy
        (:meth:`~damii_env.Game.copy`: the same position and moves, without the move
        list's work space, about 100 KB a game; a finished game asks for no legal move
        again)."""
        if self.over:
            self.game = self.referee.game = self.game.copy()
    def expire(self, idle: float) -> None:
        """Nobody moved, changed or looked at the game for `idle` seconds: it ends
        unfinished (``*``, ``abandoned: idle``) and is kept as such."""
        if self.over:
            return
        self.pool.cancel(f"{self.id}:")
        self.referee.abandon("abandoned: idle")
        self.ended(f"nobody moved or looked for {idle / 60:g} minutes: the game is "
                   f"abandoned")

    def close(self) -> None:
        """The game is gone (evicted or the server stops): stop its agents."""
        self.generation += 1
        self.agents.stop()
        self.pool.cancel(f"{self.id}:")

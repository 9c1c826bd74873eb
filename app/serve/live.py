"""Live games in the browser (:class:`LiveGame`) and arena matches watched live
(:class:`ArenaWatch`).

A :class:`LiveGame` belongs to one browser session and is changed only on the server's
event loop; its agents' moves are jobs in the search pool (:mod:`damii_app.serve.jobs`),
awaited without blocking the loop. The rules of the game in play are the match's own
:class:`~damii_agents.match.game_loop.Referee`, driven move by move: a per-move clock (a
Sci-Damath capture may take any time), resignation, draws offered and accepted, and an
illegal move from an agent ends the game; an agent's reply is applied by
:meth:`~damii_agents.match.game_loop.Referee.apply`, the same path as in ``damii eval``.
Casual games allow take-backs. Between two people a threefold repetition is claimed
(:data:`CLAIMS`), and blitz has no draw offers; a Sci-Damath classroom match
(:mod:`damii_app.serve.classroom`) adds its clocks, warnings, forced moves, touch move and
score sheet.

An :class:`ArenaWatch` plays the games of a round robin one after another in a thread of
its own, each move a job in the pool and each game a Referee, and keeps the latest
position for the page. Both tell their :class:`Notifier` when they change, so that the
page's websocket is sent the new state at once (no polling).
"""

from __future__ import annotations

import asyncio
import random
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from damii_agents.match import MatchConfig, player_names, schedule
from damii_agents.match.game_loop import (
    CLOCK_PRESETS,
    COLOURS,
    Clock,
    GameEnd,
    Referee,
    game_options,
)
from damii_app.serve.classroom import (
    DISQUALIFIED_AT,
    ClassroomMatch,
    MatchRules,
    ScoreSheet,
    disqualified,
    totals_end,
)
from damii_app.serve.jobs import STOPPING, AgentJob, AgentReply, Pool, ServerStopping, run_job
from damii_app.serve.specs import is_light, is_quick, parse_clock
from damii_app.serve.views import layout, position
from damii_env import Game
from damii_env.errors import DamiiError, IllegalMoveError, InvalidOptionError
from damii_env.pdn import dumps, record
from damii_env.rules import make_rules

CLAIMS = {"repetition": 0, "repetition_claim": 3}
"""The rule options of a game between two people: Damii's threefold repetition is a draw
a player claims, not an automatic end (docs/RULES.md); Sci-Damath's rulebook ends the game
itself (rule 17), so its games keep the automatic rule."""
BLITZ_SECONDS = CLOCK_PRESETS["blitz"]
"""A clock of this many seconds a move or fewer is blitz: no draw offers (the Damii rules
give the draw by agreement "in standard matches")."""


@dataclass(frozen=True)
class Seat:
    """Who plays a colour: a person (``spec`` None) or an agent; in a lobby game the
    person's browser session (None: the seat is still open)."""

    label: str
    spec: str | None = None
    session: str | None = None

    @property
    def human(self) -> bool:
        return self.spec is None


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
    """One game played in the browser: people and agents, clock, draws, take-backs; its
    rules are a :class:`Referee`'s."""

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
        self.grace, self.heartbeat_timeout = grace, heartbeat_timeout
        self.seen: list[float | None] = [None, None]
        """When each seat's browser was last heard (heartbeats), monotonic seconds."""
        self._away = [False, False]
        self.on_end = on_end
        """Called once when the game ends (the server keeps it in its database)."""
        self.on_change = on_change
        """Called after every change while the game is on (the server keeps its moves)."""
        self.returning: dict[int, float] = {}
        """After a restart of the server: the seats of people not back yet, and until when
        (monotonic seconds) they may come back."""
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
        self.agent_delay = agent_delay
        self.public = public
        """Makes a text fit to show (no server paths)."""
        self.toss = toss
        """Who the coin toss made move first (a classroom match), else None."""
        self.message = "" if toss is None else self._toss_text()
        self.version = 0
        self.generation = 0
        self.thinking = False
        self.created = time.time()
        self.active = time.monotonic()
        """When the game last changed or its page was last heard (idle expiry)."""
        self._offered: dict[int, int] = {}
        """The ply of each side's last draw offer (one offer a move: no spam)."""
        self.changed = Notifier()
        self._task: asyncio.Task | None = None
        self._pdn: tuple[int, str] | None = None
        self._state: tuple[int, dict[str, Any]] | None = None
        self._layout = layout(self.game)
        """The board's drawing (fixed for the game)."""

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
    def restore(cls, kept: dict[str, Any], pool: Pool, **kwargs: Any) -> LiveGame:
        """A game in progress as the database kept it (:meth:`kept`, with ``id`` and
        ``moves``), after a restart of the server: its moves played again, the clock of
        the move in progress started afresh (a person's when the person is back), and
        each seat of a person given the grace time from now to come back
        (:meth:`check_connections`); `kwargs` as for the constructor."""
        options = kept["options"]
        clock = parse_clock(kept["clock"], kept["variant"], **options)
        seats = [Seat(s["label"], s.get("spec"), s.get("session")) for s in kept["seats"]]
        if len(seats) != 2:
            raise InvalidOptionError(f"game {kept['id']}: {len(seats)} seats kept, not 2")
        game = cls(kept["id"], kept["owner"], kept["variant"], seats, clock,
                   bool(kept["casual"]), pool, fen=kept.get("start_fen"), seed=kept.get("seed"),
                   lobby=bool(kept["lobby"]), options=options, **kwargs)
        for i, text in enumerate(kept["moves"]):
            try:
                game.referee.play(text, 0.0)
            except DamiiError as exc:
                raise InvalidOptionError(f"game {game.id}: move {i // 2 + 1} ({text}) cannot "
                                         f"be played again: {exc}") from exc
        if game.match is not None:
            game.match.restore(kept["seats"])  # violations, time used, forced plies, touch
            if not game.over:
                game.match.check_touched(game.game)
        game.took_back = bool(kept.get("took_back"))
        if kept.get("draw_offer") is not None and not game.over:
            game.referee.offer_draw(int(kept["draw_offer"]))
        game.created = float(kept.get("created") or game.created)
        game.referee.turn_started = time.monotonic()  # the mover's clock starts afresh
        people = [i for i, seat in enumerate(game.seats) if seat.human and
                  (not game.lobby or seat.session is not None)]
        if not game.over and not game.open and people:
            until = time.monotonic() + game.grace
            game.returning = dict.fromkeys(people, until)
            names = " and ".join(f"{game.seats[i].label} ({COLOURS[i]})" for i in people)
            game.message = (f"the server restarted; {names} "
                            f"{'has' if len(people) == 1 else 'have'} {game.grace:g} s to "
                            f"come back")
        else:
            game.message = "the server restarted"
        return game

    def kept(self) -> dict[str, Any]:
        """What the database keeps of the game in progress besides its moves (the fields
        of :data:`damii_app.serve.store.LIVE_FIELDS`)."""
        match = self.match
        return {"owner": self.owner, "variant": self.variant, "options": self.options,
                "start_fen": self.start_fen,
                "seats": [{"label": s.label, "spec": s.spec, "session": s.session,
                           **(match.kept(i) if match is not None else {})}
                          for i, s in enumerate(self.seats)],
                "clock": self.clock.seconds if match is None else str(match.rules),
                "casual": self.casual, "lobby": self.lobby,
                "seed": self.seed, "took_back": self.took_back,
                "draw_offer": self.draw_offer, "created": self.created}

    def sessions(self) -> set[str]:
        """The browser sessions that play in the game (its owner and its seats')."""
        return {self.owner} | {s.session for s in self.seats if s.session is not None}

    # --- helpers -------------------------------------------------------------------------
    def _touch(self, message: str | None = None) -> None:
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

    @property
    def end(self) -> GameEnd | None:
        return self.referee.end

    @property
    def over(self) -> bool:
        return self.referee.over

    @property
    def draw_offer(self) -> int | None:
        return self.referee.draw_offer

    def _toss_text(self) -> str:
        assert self.toss is not None
        seat = self.seats[self.toss]
        who = "the player who joins" if self.open and seat.session is None and seat.human \
            else seat.label
        return f"coin toss: {COLOURS[self.toss]} ({who}) moves first"

    def expire(self, idle: float) -> None:
        """Nobody moved, changed or looked at the game for `idle` seconds: it ends
        unfinished (``*``, ``abandoned: idle``) and is kept as such."""
        if self.over:
            return
        self.pool.cancel(f"{self.id}:")
        self.referee.abandon("abandoned: idle")
        self._ended(f"nobody moved or looked for {idle / 60:g} minutes: the game is "
                    f"abandoned")

    def _ended(self, message: str) -> None:
        """The referee has ended the game: stop any search of it and say so."""
        self.generation += 1
        self.pool.cancel(f"{self.id}:")
        self._touch(message)

    def close(self) -> None:
        """The game is gone (evicted or the server stops): stop its agents."""
        self.generation += 1
        if self._task is not None:
            self._task.cancel()
        self.pool.cancel(f"{self.id}:")

    def remaining(self) -> float | None:
        """Seconds left for the move to play now (None: no clock or exempt); after a
        restart the clock of a person to move waits, full, until the person is back."""
        if self.match is not None:
            if self.over or self.open or self._capture_turn():
                return None
            if self.game.turn in self.returning:
                return self.match.rules.move_seconds
            return self.match.rules.move_seconds - self._turn_seconds()
        left = self.referee.remaining()
        if left is not None and self.game.turn in self.returning:
            return self.clock.seconds
        return left

    def _turn_seconds(self) -> float:
        """Seconds the move in progress has taken so far."""
        return time.monotonic() - self.referee.turn_started

    def _capture_turn(self) -> bool:
        """Whether the side to move must capture (captures are compulsory, so every
        legal move of the turn is one): a Sci-Damath capture has no minute (rule 6)."""
        return any(m.is_capture for m in self.game.legal_moves())

    def check_time(self) -> None:
        """A person who has overstepped the clock loses on time (agents are timed by
        their own search time when their move comes back); in a classroom match, the
        match's rules (:meth:`_check_match`)."""
        if self.match is not None:
            self._check_match()
            return
        if self.over or not self.seats[self.game.turn].human or self.game.turn in self.returning:
            return
        side = self.game.turn
        if self.referee.check_time() is not None:
            self._ended(f"{COLOURS[side]} ran out of time")

    def _check_match(self) -> None:
        """The classroom match's clocks: after the game's minutes the totals decide;
        a person who lets the minute pass (not in a capture) is warned and the arbiter
        plays the move (:meth:`ClassroomMatch.forced_move`); the fourth time the person is
        disqualified, whatever the score sheet says."""
        match = self.match
        assert match is not None
        if self.over or self.open or self.game.turn in self.returning:
            return
        side, turn = self.game.turn, self._turn_seconds()
        if match.game_left(turn) <= 0:
            end = self.referee.finish(totals_end(self.game, match.rules.game_minutes))
            self._ended(f"the {match.rules.game_minutes:g} minutes are up: the totals "
                        f"decide, {end.result} ({end.termination})")
            return
        if not self.seats[side].human or self._capture_turn() or \
                turn <= match.rules.move_seconds:
            return
        match.violations[side] += 1
        count, who = match.violations[side], f"{self.seats[side].label} ({COLOURS[side]})"
        if count >= DISQUALIFIED_AT:
            self.referee.finish(disqualified(side))
            self._ended(f"{who} let the minute pass a {count}th time and is disqualified, "
                        f"whatever the score sheet says")
            return
        move, offer = match.forced_move(self.game), self.draw_offer
        match.forced.append(len(self.game.move_stack))
        match.turn_over(side, turn)
        self.referee.play(move, 0.0)
        self._after_move(side, f"warning {count} for {who}: no move within "
                               f"{match.rules.move_seconds:g} s, so the arbiter played {move} "
                               f"(the {DISQUALIFIED_AT}th time disqualifies)", offer)

    def human_side(self, side: str | None, default_to_move: bool = True) -> int:
        """The colour a request speaks for: given, else the one person, else the mover."""
        if side is not None:
            if side not in COLOURS:
                raise InvalidOptionError(f"side must be white or black, got {side!r}")
            s = COLOURS.index(side)
            if not self.seats[s].human:
                raise InvalidOptionError(f"{side} is played by {self.seats[s].label}, "
                                         f"not by a person at this page")
            return s
        humans = [i for i, seat in enumerate(self.seats) if seat.human]
        if not humans:
            raise InvalidOptionError("no person plays in this game")
        if len(humans) == 1 or not default_to_move:
            return humans[0]
        return self.game.turn

    def _require_playing(self) -> None:
        self.check_time()
        self.referee.require_playing()
        if self.open:
            raise InvalidOptionError("waiting for an opponent to join this game")

    # --- the lobby: seats of different browsers, heartbeats, reconnection grace ---------
    @property
    def open(self) -> bool:
        """A lobby game still waiting for its second player."""
        return self.lobby and any(s.session is None for s in self.seats)

    def sides_of(self, session: str) -> list[int]:
        """The colours `session` may play (none: a spectator)."""
        if not self.lobby:
            return [i for i, s in enumerate(self.seats) if s.human] \
                if session == self.owner else []
        return [i for i, s in enumerate(self.seats) if s.session == session]

    def join(self, session: str, name: str) -> None:
        """A second person takes the open seat; the game (and its clock) starts."""
        if not self.open:
            raise InvalidOptionError("this game is not open: both seats are taken")
        if self.sides_of(session):
            raise InvalidOptionError("you already play in this game; open it in another "
                                     "browser to play the other side")
        side = next(i for i, s in enumerate(self.seats) if s.session is None)
        seats = list(self.seats)
        seats[side] = Seat(name, session=session)
        self.seats = tuple(seats)
        self.seen[side] = time.monotonic()
        self.referee.turn_started = time.monotonic()
        self._touch(f"{name} joins as {COLOURS[side]}; " + (
            self._toss_text() if self.toss is not None else f"{COLOURS[self.game.turn]} to move"))

    def heartbeat(self, session: str) -> None:
        """The browser of `session` is there (sent every 1.5 s by the page)."""
        now = time.monotonic()
        if self.sides_of(session):
            self.active = now
        back = [side for side in self.sides_of(session) if side in self.returning]
        for side in back:
            del self.returning[side]
            if side == self.game.turn:
                self.referee.turn_started = now  # the move clock starts when the mover is back
        if back and not self.over:
            self._touch(" and ".join(f"{self.seats[side].label} ({COLOURS[side]})"
                                     for side in back) + " came back after the restart")
        for side in self.sides_of(session) if self.lobby else []:
            self.seen[side] = now
            if self._away[side]:
                self._away[side] = False
                if not self.over:
                    self._touch(f"{self.seats[side].label} ({COLOURS[side]}) is back")

    def grace_left(self, side: int) -> float | None:
        """Seconds left for an absent seat to come back (None: it is connected)."""
        if side in self.returning:
            return max(0.0, self.returning[side] - time.monotonic())
        seen = self.seen[side]
        if not self.lobby or seen is None:
            return None
        away = time.monotonic() - seen - self.heartbeat_timeout
        return None if away <= 0 else max(0.0, self.grace - away)

    def check_connections(self) -> None:
        """A seat not heard for longer than the heartbeat timeout is away; one away for
        longer than the grace loses by disconnection (the server's ticker calls this). After
        a restart, a person's seat not back within the grace loses the same way, in any
        game."""
        if self.over or self.open or not (self.lobby or self.returning):
            return
        lefts = [self.grace_left(side) for side in (0, 1)]
        if all(left is not None and left <= 0 for left in lefts):
            self.returning.clear()
            self.referee.abandon("both players disconnected")
            self._ended(f"neither player came back within {self.grace:g} s: the game is "
                        f"abandoned")
            return
        for side in (0, 1):
            left = lefts[side]
            if left is None:
                continue
            label = self.seats[side].label
            if left <= 0:
                self.returning.clear()
                self.referee.disconnection(side)
                self._ended(f"{label} ({COLOURS[side]}) did not come back within "
                            f"{self.grace:g} s and loses by disconnection")
                return
            if not self._away[side] and side not in self.returning:
                self._away[side] = True
                self._touch(f"{label} ({COLOURS[side]}) lost the connection; "
                            f"{self.grace:g} s to come back")

    # --- actions -----------------------------------------------------------------------
    def play(self, text: str) -> None:
        """A person's move, as PDN text (``32-28``, ``28x19x10``)."""
        mover = self.game.turn
        self._require_playing()
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
        self._after_move(side, f"{COLOURS[side]} played {self.game.move_stack[-1]}", offer)

    def touch(self, square: int) -> None:
        """Touch move: the person to move has picked up the chip on `square` (the page
        says so when it is selected); it must move."""
        self._require_playing()
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
        self._touch(f"{COLOURS[side]} touched the chip on {square}: it must move "
                    f"(touch move)")

    def claim_draw(self, side: str | None = None) -> None:
        """A person claims the draw of a position that has occurred three times (either
        player may, in a game between two people: :data:`CLAIMS`)."""
        self._require_playing()
        s = self.human_side(side)
        count = self.game.repetition_count()
        outcome = self.game.claim_draw()  # a clear error when there is none to claim
        self.referee.finish(GameEnd(outcome.winner, outcome.result(), outcome.termination),
                            on_board=True)
        self._ended(f"{COLOURS[s]} claims the draw: the position has occurred {count} "
                    f"times")

    @property
    def draws_allowed(self) -> bool:
        """Whether draws may be offered: in standard matches, not in blitz (a move clock
        of :data:`BLITZ_SECONDS` or fewer)."""
        return self.match is not None or self.clock.seconds is None or \
            self.clock.seconds > BLITZ_SECONDS

    def _after_move(self, side: int, message: str, offer: int | None) -> None:
        if offer == 1 - side and self.draw_offer is None:
            message += " (the draw offer lapses)"
        if self.end is not None:
            message += f"; game over: {self.end.result} ({self.end.termination})"
        if not self.over and not self.seats[self.game.turn].human:
            self.thinking = True  # said in this state, not in a second one a moment later
        self._touch(message)
        self.schedule_agent()

    def resign(self, side: str | None = None) -> None:
        """A person resigns (the side named, else the only person, else the mover)."""
        self._require_playing()
        s = self.human_side(side)
        self.referee.resign(s)
        self._ended(f"{COLOURS[s]} resigns")

    async def draw(self, action: str, side: str | None = None) -> None:
        """Offer, accept or decline a draw."""
        self._require_playing()
        if action == "offer":
            if not self.draws_allowed:
                raise InvalidOptionError(
                    f"no draw offers in blitz (clock {self.clock}): the Damii rules give the "
                    f"draw by agreement in standard matches; play on (a position repeated "
                    f"three times can still be claimed)")
            s = self.human_side(side)
            ply = len(self.game.move_stack)
            if self._offered.get(s) == ply:
                raise InvalidOptionError("you offered a draw at this move already; one offer "
                                         "a move (make a move, then offer again)")
            self._offered[s] = ply
            other = self.seats[1 - s]
            if other.human:
                self.referee.offer_draw(s)
                self._touch(f"{COLOURS[s]} offers a draw")
                return
            reply = await self._submit(1 - s, hook="accepts_draw")
            if self.over:
                return
            self.referee.offer_draw(s)
            if self.referee.answer_draw(1 - s, reply.answer) is not None:
                self._ended(f"{other.label} accepts the draw")
            else:
                self._touch(f"{other.label} declines the draw; play on")
        elif action in ("accept", "decline"):
            if self.draw_offer is None:
                raise InvalidOptionError("no draw is on offer")
            s = self.human_side(side) if side is not None else 1 - self.draw_offer
            if not self.seats[s].human:
                raise InvalidOptionError(f"{COLOURS[s]} cannot answer its own draw offer")
            if self.referee.answer_draw(s, action == "accept") is not None:
                self._ended(f"{COLOURS[s]} accepts the draw")
            else:
                self._touch(f"{COLOURS[s]} declines the draw; play on")
        else:
            raise InvalidOptionError(f"draw action must be offer, accept or decline, "
                                     f"got {action!r}")

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
        self._touch("took back " + ", ".join(reversed(taken)))
        self.schedule_agent()

    # --- agents ------------------------------------------------------------------------
    def _job(self, side: int, hook: str | None = None) -> AgentJob:
        spec = self.seats[side].spec
        assert spec is not None
        return AgentJob(spec=spec, variant=self.variant,
                        options=tuple(sorted(self.options.items())),
                        start_fen=self.start_fen,
                        moves=tuple(str(m) for m in self.game.move_stack),
                        slot=f"{self.id}:{side}", seed=self.seed, hook=hook)

    async def _submit(self, side: int, hook: str | None = None) -> AgentReply:
        """The agent's answer, from the pool: the job takes the turn of the game's owner
        (round robin between sessions) and replaces a queued job of the same seat; a job
        the stopping server could not run raises :class:`ServerStopping`."""
        job = self._job(side, hook)
        future = self.pool.submit(run_job, job, key=job.slot + (f":{hook}" if hook else ""),
                                  share=self.owner, heavy=not is_quick(job.spec),
                                  light=is_light(job.spec) and self.seats[1 - side].human,
                                  replace=True)
        reply = await asyncio.wrap_future(future)
        if reply.error == STOPPING:
            raise ServerStopping(STOPPING)
        return reply

    def schedule_agent(self) -> None:
        """Start the agent's turn when an agent is to move (once)."""
        if self.over or self.seats[self.game.turn].human:
            return
        if self._task is not None and not self._task.done():
            return
        self._task = asyncio.get_running_loop().create_task(self._agent_turns())

    async def _agent_turns(self) -> None:
        """The agents' moves, one job in the pool each, while an agent is to move."""
        while not self.over and not self.seats[self.game.turn].human:
            side, generation, ply = self.game.turn, self.generation, len(self.game.move_stack)
            if not self.thinking:
                self.thinking = True
                self._touch()
            try:
                reply = await self._submit(side)
            except ServerStopping:
                return  # the game is taken up again at the next start (with --db)
            finally:
                self.thinking = False
            if self.generation != generation or len(self.game.move_stack) != ply or self.over:
                self._touch()
                if self.generation != generation and not self.over:
                    continue
                return
            self._agent_replied(side, reply)  # the loop goes on if an agent is to move
            if self.agent_delay and not self.over and not self.seats[self.game.turn].human:
                await asyncio.sleep(self.agent_delay)

    def _agent_replied(self, side: int, reply: AgentReply) -> None:
        """The referee applies the agent's reply, and the page is told what happened. An
        agent's draw offer stands for a person to answer (between agents none is made)."""
        label = self.seats[side].label
        if reply.error is not None:
            self.referee.abandon("agent error")
            self._ended(f"{label} failed: {self.public(reply.error)}")
            return
        offer, ply = self.draw_offer, len(self.game.move_stack)
        began = self.referee.turn_started
        offers = reply.offers_draw and self.seats[1 - side].human and self.draws_allowed
        end = self.referee.apply(replace(reply, offers_draw=offers))
        if reply.resign:
            self._ended(f"{label} resigns")
        elif len(self.game.move_stack) == ply:  # not played: over the clock, or illegal
            assert end is not None
            self._ended(f"{label} overstepped the clock ({reply.seconds:.1f} s)"
                        if end.termination == "time forfeit"
                        else f"{label} played an illegal move {reply.move}")
        else:
            if self.match is not None:
                self.match.turn_over(side, time.monotonic() - began)
            note = f"{label} played {self.game.move_stack[-1]}"
            if offers and self.draw_offer == side:
                note += " and offers a draw"
            self._after_move(side, note, offer)

    # --- records -----------------------------------------------------------------------
    def pdn(self) -> str:
        """The game as PDN (the server's record), made once per version."""
        if self._pdn is not None and self._pdn[0] == self.version:
            return self._pdn[1]
        end, match = self.end, self.match
        extra = {"Clock": str(self.clock) if match is None else match.rules.describe()}
        if match is not None:
            extra["Violations"] = f"White {match.violations[0]}, Black {match.violations[1]}"
        if end is not None:
            extra["Termination"] = end.termination
        pgame = record(self.game, white=self.seats[0].label, black=self.seats[1].label,
                       result=end.result if end is not None else "*",
                       event="damii-env serve", extra_tags=extra)
        for ply in match.forced if match is not None else ():
            note = "forced by the arbiter after the minute"
            old = pgame.comments.get(ply)
            pgame.comments[ply] = f"{old}; {note}" if old else note
        self._pdn = (self.version, pgame.to_text())
        return self._pdn[1]

    def state(self) -> dict[str, Any]:
        """Everything the page shows (built once per version; the clock read afresh)."""
        self.check_time()
        if self._state is None or self._state[0] != self.version:
            self._state = (self.version, self._build_state())
        out = dict(self._state[1])
        out["clock"] = {**out["clock"], "remaining": self.remaining()}
        if self.match is not None:
            paused = self.over or self.open or self.game.turn in self.returning
            out["match"] = {**out["match"], "game_left": max(0.0, self.match.game_left(
                0.0 if paused else self._turn_seconds()))}
        if self.lobby or self.returning:
            out["connections"] = [{"connected": self.grace_left(i) is None,
                                   "grace_left": self.grace_left(i)} for i in (0, 1)]
        return out

    def _build_state(self) -> dict[str, Any]:
        human_to_move = not self.over and self.seats[self.game.turn].human
        pos = position(self.game, legal=human_to_move)
        if not human_to_move:
            pos["legal"] = []
        return {
            "id": self.id,
            "version": self.version,
            "layout": self._layout,
            "position": pos,
            "seats": [{"label": s.label, "human": s.human} for s in self.seats],
            "lobby": self.lobby,
            "open": self.open,
            "moves": [str(m) for m in self.game.move_stack],
            "pdn": self.pdn(),
            "over": self.over,
            "result": self.end.result if self.end else None,
            "termination": self.end.termination if self.end else None,
            "thinking": self.thinking,
            "draw_offer": None if self.draw_offer is None else COLOURS[self.draw_offer],
            "casual": self.casual,
            "clock": {"name": str(self.clock) if self.match is None
                      else self.match.rules.describe(), "seconds": self.clock.seconds,
                      "remaining": self.remaining(),
                      "exempt": self.clock.seconds is not None and not self.over
                      and (self._capture_turn() if self.match is not None
                           else not self.referee.clock_applies())},
            "message": self.message,
            "draws": self.draws_allowed,
            "claim": self.game.can_claim_draw(),
            "repetitions": self.game.repetition_count()
            if self.game.rules.repetition_claim else None,
            "match": self._match_state(),
            "sheet": self.sheet.rows(self.game, self.match.forced if self.match else ()),
        }

    def _match_state(self) -> dict[str, Any] | None:
        """The classroom match as the page shows it (None: not one)."""
        match = self.match
        if match is None:
            return None
        return {"move_seconds": match.rules.move_seconds,
                "game_seconds": match.rules.game_seconds, "game_left": None,
                "violations": list(match.violations), "disqualified_at": DISQUALIFIED_AT,
                "touch_move": match.rules.touch_move, "touched": match.touched,
                "forced": list(match.forced)}


class ArenaWatch:
    """A round robin played game after game in a thread, watched live by the page."""

    def __init__(self, aid: str, owner: str, variant: str, specs: Sequence[str],
                 labels: Sequence[str], games: int, clock: str, pool: Pool,
                 delay: float = 0.3, seed: int = 0,
                 public: Callable[[str], str] = str) -> None:
        self.id, self.owner = aid, owner
        self.public = public
        self.config = MatchConfig(variant=variant, specs=tuple(specs), games=games,
                                  clock=clock, workers=1, seed=seed, event="damii-env serve")
        self.labels = player_names(labels)
        self.clock = self.config.make_clock()
        self.options = game_options(variant)
        self.pool, self.delay = pool, delay
        self.tasks = schedule(self.config)
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        self.version = 0
        self.records: list[Any] = []
        self.results: list[dict[str, Any]] = []
        self.points = {name: 0.0 for name in self.labels}
        self.current: dict[str, Any] | None = None
        self.running = True
        self.error: str | None = None
        self.changed = Notifier()
        self.thread = threading.Thread(target=self._run, name=f"arena-{aid}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        """Stop after the move being searched (its worker is stopped too)."""
        self.stop_event.set()
        self.pool.cancel(f"{self.id}:")

    def _publish(self, game: Game, task_index: int, white: str, black: str,
                 end: GameEnd | None = None) -> None:
        with self.lock:
            self.current = {"index": task_index + 1, "white": white, "black": black,
                            "layout": layout(game), "position": position(game),
                            "moves": [str(m) for m in game.move_stack],
                            "result": end.result if end else None,
                            "termination": end.termination if end else None}
            self.version += 1
        self.changed.notify()

    def _ask(self, job: AgentJob) -> AgentReply:
        """The answer of a job, from the pool (this thread waits for it)."""
        return self.pool.submit(run_job, job, key=job.slot, share=self.owner,
                                heavy=not is_quick(job.spec)).result()

    def _accepts_draw(self, job: AgentJob, seat: int) -> bool:
        """Whether the player of `seat` accepts a draw in the position of `job`."""
        return self._ask(replace(job, spec=self.config.specs[seat], slot=f"{self.id}:{seat}",
                                 hook="accepts_draw")).answer

    def _play_one(self, task: Any) -> tuple[Game, GameEnd]:
        """Play one game of the round robin, each move a job and each reply applied by a
        Referee; the page sees each position."""
        game = Game(self.config.variant, **self.options)
        for text in task.opening:
            game.push(text)
        referee = Referee(game, self.clock)
        seats = (task.white, task.black)
        white, black = self.labels[task.white], self.labels[task.black]
        self._publish(game, task.index, white, black)
        while referee.end is None:
            if self.stop_event.is_set():
                return game, referee.abandon()
            side, ply = referee.to_move, len(game.move_stack)
            job = AgentJob(spec=self.config.specs[seats[side]], variant=self.config.variant,
                           options=tuple(sorted(self.options.items())), start_fen=None,
                           moves=tuple(str(m) for m in game.move_stack),
                           slot=f"{self.id}:{seats[side]}", seed=task.seed)
            reply = self._ask(job)
            if reply.error is not None:
                raise RuntimeError(f"{self.labels[seats[side]]}: {reply.error}")
            end = referee.apply(reply, partial(self._accepts_draw, job, seats[1 - side]))
            if end is not None and len(game.move_stack) == ply \
                    and end.termination != "time forfeit":
                break  # resigned, a draw agreed or an illegal move: no position to show
            self._publish(game, task.index, white, black)
            self.stop_event.wait(self.delay)
        assert referee.end is not None
        return game, referee.end

    def _run(self) -> None:
        try:
            for task in self.tasks:
                if self.stop_event.is_set():
                    break
                game, end = self._play_one(task)
                white, black = self.labels[task.white], self.labels[task.black]
                self._publish(game, task.index, white, black, end)
                pdn = record(game, white=white, black=black, result=end.result,
                             event="damii-env serve", round=str(task.index + 1),
                             extra_tags={"Termination": end.termination,
                                         "Clock": str(self.clock)})
                with self.lock:
                    self.records.append(pdn)
                    self.results.append({"round": task.index + 1, "white": white,
                                         "black": black, "result": end.result,
                                         "termination": end.termination,
                                         "plies": len(game.move_stack)})
                    self.points[white] += end.white_points
                    self.points[black] += 1.0 - end.white_points
                    self.version += 1
                self.changed.notify()
                self.stop_event.wait(self.delay * 3)
        except Exception as exc:  # noqa: BLE001 - shown in the page
            with self.lock:
                self.error = self.public(f"{type(exc).__name__}: {exc}")
        finally:
            with self.lock:
                self.running = False
                self.version += 1
            self.changed.notify()

    def pdn(self) -> str:
        """Every finished game as PDN."""
        with self.lock:
            return dumps(self.records)

    def state(self) -> dict[str, Any]:
        """Everything the page shows."""
        with self.lock:
            return {"id": self.id, "version": self.version, "variant": self.config.variant,
                    "players": list(self.labels), "games": len(self.tasks),
                    "played": len(self.results), "results": list(self.results),
                    "points": dict(self.points), "current": self.current,
                    "running": self.running, "stopped": self.stop_event.is_set(),
                    "error": self.error}

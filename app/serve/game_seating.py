"""The people of a game in play (:class:`Seating`, a part of
:class:`~damii_app.serve.live.LiveGame`; its :class:`Seat` a person's or an agent's): which
browser session speaks for which colour,
the second person joining a lobby game, heartbeats, and the grace a person who lost the
connection (or whose server restarted) has to come back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from damii_agents.match.game_loop import COLOURS
from damii_agents.registry import PlayerSpec
from damii_env.errors import InvalidOptionError


@dataclass(frozen=True)
class Seat:
    """Who plays a colour: a person (``spec`` None) or an agent (its spec as the server
    checked it); in a lobby game the person's browser session (None: the seat is still
    open)."""

    label: str
    spec: PlayerSpec | None = None
    session: str | None = None

    @property
    def human(self) -> bool:
        return self.spec is None


class Seating:
    """Who may act for which colour, and whether each person's browser is there. In a
    lobby game each seat moves for its own session only (others watch); a seat not heard
    for :attr:`heartbeat_timeout` seconds is away, and one away longer than :attr:`grace`
    loses by disconnection. After a restart of the server every person's seat gets the
    grace from then to come back (:attr:`returning`)."""

    def __init__(self, live: Any, grace: float, heartbeat_timeout: float) -> None:
        self.live = live
        """The :class:`~damii_app.serve.live.LiveGame` this part belongs to (typed Any: the
        game imports its parts, not the other way round)."""
        self.grace, self.heartbeat_timeout = grace, heartbeat_timeout
        self.seen: list[float | None] = [None, None]
        """When each seat's browser was last heard (heartbeats), monotonic seconds."""
        self.away = [False, False]
        """Whether each seat has been said to have lost the connection."""
        self.returning: dict[int, float] = {}
        """After a restart of the server: the seats of people not back yet, and until when
        (monotonic seconds) they may come back."""

    def sessions(self) -> set[str]:
        """The browser sessions that play in the game (its owner and its seats')."""
        live = self.live
        return {live.owner} | {s.session for s in live.seats if s.session is not None}

    def sides_of(self, session: str) -> list[int]:
        """The colours `session` may play (none: a spectator)."""
        live = self.live
        if not live.lobby:
            return [i for i, s in enumerate(live.seats) if s.human] \
                if session == live.owner else []
        return [i for i, s in enumerate(live.seats) if s.session == session]

    def human_side(self, side: str | None, default_to_move: bool = True) -> int:
        """The colour a request speaks for: given, else the one person, else the mover."""
        seats = self.live.seats
        if side is not None:
            if side not in COLOURS:
                raise InvalidOptionError(f"side must be white or black, got {side!r}")
            s = COLOURS.index(side)
            if not seats[s].human:
                raise InvalidOptionError(f"{side} is played by {seats[s].label}, "
                                         f"not by a person at this page")
            return s
        humans = [i for i, seat in enumerate(seats) if seat.human]
        if not humans:
            raise InvalidOptionError("no person plays in this game")
        if len(humans) == 1 or not default_to_move:
            return humans[0]
        return self.live.game.turn

    def join(self, session: str, name: str) -> None:
        """A second person takes the open seat; the game (and its clock) starts."""
        live = self.live
        if not live.open:
            raise InvalidOptionError("this game is not open: both seats are taken")
        if self.sides_of(session):
            raise InvalidOptionError("you already play in this game; open it in another "
                                     "browser to play the other side")
        side = next(i for i, s in enumerate(live.seats) if s.session is None)
        seats = list(live.seats)
        seats[side] = Seat(name, session=session)
        live.seats = tuple(seats)
        self.seen[side] = time.monotonic()
        live.referee.turn_started = time.monotonic()
        live.announce(f"{name} joins as {COLOURS[side]}; " + (
            live.toss_text() if live.toss is not None else f"{COLOURS[live.game.turn]} to move"))

    def back_after_restart(self) -> None:
        """After a restart of the server: each person's seat has the grace from now to
        come back (in a lobby game, the seats taken), and the page says so."""
        live = self.live
        people = [i for i, seat in enumerate(live.seats) if seat.human and
                  (not live.lobby or seat.session is not None)]
        if not live.over and not live.open and people:
            until = time.monotonic() + self.grace
            self.returning = dict.fromkeys(people, until)
            names = " and ".join(f"{live.seats[i].label} ({COLOURS[i]})" for i in people)
            live.message = (f"the server restarted; {names} "
                            f"{'has' if len(people) == 1 else 'have'} {self.grace:g} s to "
                            f"come back")
        else:
            live.message = "the server restarted"

    def heartbeat(self, session: str) -> None:
        """The browser of `session` is there (sent every 1.5 s by the page)."""
        live = self.live
        now = time.monotonic()
        if self.sides_of(session):
            live.active = now
        back = [side for side in self.sides_of(session) if side in self.returning]
        for side in back:
            del self.returning[side]
            if side == live.game.turn:
                live.referee.turn_started = now  # the move clock starts when the mover is back
        if back and not live.over:
            live.announce(" and ".join(f"{live.seats[side].label} ({COLOURS[side]})"
                                       for side in back) + " came back after the restart")
        for side in self.sides_of(session) if live.lobby else []:
            self.seen[side] = now
            if self.away[side]:
                self.away[side] = False
                if not live.over:
                    live.announce(f"{live.seats[side].label} ({COLOURS[side]}) is back")

    def grace_left(self, side: int) -> float | None:
        """Seconds left for an absent seat to come back (None: it is connected)."""
        if side in self.returning:
            return max(0.0, self.returning[side] - time.monotonic())
        seen = self.seen[side]
        if not self.live.lobby or seen is None:
            return None
        away = time.monotonic() - seen - self.heartbeat_timeout
        return None if away <= 0 else max(0.0, self.grace - away)

    def check(self) -> None:
        """A seat not heard for longer than the heartbeat timeout is away; one away for
        longer than the grace loses by disconnection (the server's ticker calls this). After
        a restart, a person's seat not back within the grace loses the same way, in any
        game."""
        live = self.live
        if live.over or live.open or not (live.lobby or self.returning):
            return
        lefts = [self.grace_left(side) for side in (0, 1)]
        if all(left is not None and left <= 0 for left in lefts):
            self.returning.clear()
            live.referee.abandon("both players disconnected")
            live.ended(f"neither player came back within {self.grace:g} s: the game is "
                       f"abandoned")
            return
        for side in (0, 1):
            left = lefts[side]
            if left is None:
                continue
            label = live.seats[side].label
            if left <= 0:
                self.returning.clear()
                live.referee.disconnection(side)
                live.ended(f"{label} ({COLOURS[side]}) did not come back within "
                           f"{self.grace:g} s and loses by disconnection")
                return
            if not self.away[side] and side not in self.returning:
                self.away[side] = True
                live.announce(f"{label} ({COLOURS[side]}) lost the connection; "
                              f"{self.grace:g} s to come back")

    def connections(self) -> list[dict[str, object]]:
        """Each seat's connection as the page shows it."""
        return [{"connected": self.grace_left(i) is None, "grace_left": self.grace_left(i)}
                for i in (0, 1)]

"""The clocks of a game in play (:class:`GameClocks`, a part of
:class:`~damii_app.serve.live.LiveGame`): a per-move clock (the referee's
:class:`~damii_agents.match.game_loop.Clock`) or a Sci-Damath classroom match's move and
game clocks (:mod:`damii_app.serve.classroom`), read for the page and checked by the
server's ticker.
"""

from __future__ import annotations

import time
from typing import Any

from damii_agents.match.game_loop import COLOURS
from damii_app.serve.classroom import DISQUALIFIED_AT, disqualified, totals_end


class GameClocks:
    """How long the move in progress may still take, and what happens when it is up: a
    person over the clock loses on time; in a classroom match the totals decide at the end
    of the game's minutes, and a person who lets the minute pass is warned and the arbiter
    moves (the fourth time disqualifies). Agents are timed by their own search time when
    their move comes back (:class:`~damii_app.serve.game_agents.AgentTurns`)."""

    def __init__(self, live: Any) -> None:
        self.live = live
        """The :class:`~damii_app.serve.live.LiveGame` this part belongs to (typed Any: the
        game imports its parts, not the other way round)."""

    def turn_seconds(self) -> float:
        """Seconds the move in progress has taken so far."""
        return time.monotonic() - self.live.referee.turn_started

    def capture_turn(self) -> bool:
        """Whether the side to move must capture (captures are compulsory, so every
        legal move of the turn is one): a Sci-Damath capture has no minute (rule 6)."""
        return any(m.is_capture for m in self.live.game.legal_moves())

    def remaining(self) -> float | None:
        """Seconds left for the move to play now (None: no clock or exempt); after a
        restart the clock of a person to move waits, full, until the person is back."""
        live = self.live
        returning = live.seating.returning
        if live.match is not None:
            if live.over or live.open or self.capture_turn():
                return None
            if live.game.turn in returning:
                return live.match.rules.move_seconds
            return live.match.rules.move_seconds - self.turn_seconds()
        left = live.referee.remaining()
        if left is not None and live.game.turn in returning:
            return live.clock.seconds
        return left

    def exempt(self) -> bool:
        """Whether the move in progress is exempt from a running clock (a Sci-Damath
        capture; an agent's or a clock the referee does not apply)."""
        live = self.live
        return live.clock.seconds is not None and not live.over and (
            self.capture_turn() if live.match is not None
            else not live.referee.clock_applies())

    def check(self) -> None:
        """A person who has overstepped the clock loses on time; in a classroom match,
        the match's rules (:meth:`_check_match`)."""
        live = self.live
        if live.match is not None:
            self._check_match()
            return
        if live.over or not live.seats[live.game.turn].human \
                or live.game.turn in live.seating.returning:
            return
        side = live.game.turn
        if live.referee.check_time() is not None:
            live.ended(f"{COLOURS[side]} ran out of time")

    def _check_match(self) -> None:
        """The classroom match's clocks: after the game's minutes the totals decide;
        a person who lets the minute pass (not in a capture) is warned and the arbiter
        plays the move (:meth:`~damii_app.serve.classroom.ClassroomMatch.forced_move`);
        the fourth time the person is disqualified, whatever the score sheet says."""
        live, match = self.live, self.live.match
        assert match is not None
        if live.over or live.open or live.game.turn in live.seating.returning:
            return
        side, turn = live.game.turn, self.turn_seconds()
        if match.game_left(turn) <= 0:
            end = live.referee.finish(totals_end(live.game, match.rules.game_minutes))
            live.ended(f"the {match.rules.game_minutes:g} minutes are up: the totals "
                       f"decide, {end.result} ({end.termination})")
            return
        if not live.seats[side].human or self.capture_turn() or \
                turn <= match.rules.move_seconds:
            return
        match.violations[side] += 1
        count, who = match.violations[side], f"{live.seats[side].label} ({COLOURS[side]})"
        if count >= DISQUALIFIED_AT:
            live.referee.finish(disqualified(side))
            live.ended(f"{who} let the minute pass a {count}th time and is disqualified, "
                       f"whatever the score sheet says")
            return
        move, offer = match.forced_move(live.game), live.draw_offer
        match.forced.append(len(live.game.move_stack))
        match.turn_over(side, turn)
        live.referee.play(move, 0.0)
        live.moved(side, f"warning {count} for {who}: no move within "
                         f"{match.rules.move_seconds:g} s, so the arbiter played {move} "
                         f"(the {DISQUALIFIED_AT}th time disqualifies)", offer)

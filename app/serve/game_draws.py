"""Draws in a game in play (:class:`DrawOffers`, a part of
:class:`~damii_app.serve.live.LiveGame`): offered by a person (one offer a move, none in
blitz), answered by the other person or by an agent (a job in the pool), and a repeated
position claimed by a person.
"""

from __future__ import annotations

from typing import Any

from damii_agents.match.game_loop import CLOCK_PRESETS, COLOURS, GameEnd
from damii_env.errors import InvalidOptionError

BLITZ_SECONDS = CLOCK_PRESETS["blitz"]
"""A clock of this many seconds a move or fewer is blitz: no draw offers (the Damii rules
give the draw by agreement "in standard matches")."""


class DrawOffers:
    """A person's draw offers and answers, an agent's answer to one, and claims of a
    repeated position; the referee records the offer and ends the game."""

    def __init__(self, live: Any) -> None:
        self.live = live
        """The :class:`~damii_app.serve.live.LiveGame` this part belongs to (typed Any: the
        game imports its parts, not the other way round)."""
        self.offered: dict[int, int] = {}
        """The ply of each side's last draw offer (one offer a move: no spam)."""

    @property
    def allowed(self) -> bool:
        """Whether draws may be offered: in standard matches, not in blitz (a move clock
        of :data:`BLITZ_SECONDS` or fewer)."""
        live = self.live
        return live.match is not None or live.clock.seconds is None or \
            live.clock.seconds > BLITZ_SECONDS

    async def act(self, action: str, side: str | None = None) -> None:
        """Offer, accept or decline a draw."""
        live = self.live
        live.require_playing()
        if action == "offer":
            await self._offer(side)
        elif action in ("accept", "decline"):
            if live.draw_offer is None:
                raise InvalidOptionError("no draw is on offer")
            s = live.seating.human_side(side) if side is not None else 1 - live.draw_offer
            if not live.seats[s].human:
                raise InvalidOptionError(f"{COLOURS[s]} cannot answer its own draw offer")
            if live.referee.answer_draw(s, action == "accept") is not None:
                live.ended(f"{COLOURS[s]} accepts the draw")
            else:
                live.announce(f"{COLOURS[s]} declines the draw; play on")
        else:
            raise InvalidOptionError(f"draw action must be offer, accept or decline, "
                                     f"got {action!r}")

    async def _offer(self, side: str | None) -> None:
        """A person offers a draw: the other person answers later, an agent at once."""
        live = self.live
        if not self.allowed:
            raise InvalidOptionError(
                f"no draw offers in blitz (clock {live.clock}): the Damii rules give the "
                f"draw by agreement in standard matches; play on (a position repeated "
                f"three times can still be claimed)")
        s = live.seating.human_side(side)
        ply = len(live.game.move_stack)
        if self.offered.get(s) == ply:
            raise InvalidOptionError("you offered a draw at this move already; one offer "
                                     "a move (make a move, then offer again)")
        self.offered[s] = ply
        other = live.seats[1 - s]
        if other.human:
            live.referee.offer_draw(s)
            live.announce(f"{COLOURS[s]} offers a draw")
            return
        reply = await live.agents.submit(1 - s, hook="accepts_draw")
        if live.over:
            return
        live.referee.offer_draw(s)
        if live.referee.answer_draw(1 - s, reply.answer) is not None:
            live.ended(f"{other.label} accepts the draw")
        else:
            live.announce(f"{other.label} declines the draw; play on")

    def claim(self, side: str | None = None) -> None:
        """A person claims the draw of a position that has occurred three times (either
        player may, in a game between two people: :data:`~damii_app.serve.live.CLAIMS`)."""
        live = self.live
        live.require_playing()
        s = live.seating.human_side(side)
        count = live.game.repetition_count()
        outcome = live.game.claim_draw()  # a clear error when there is none to claim
        live.referee.finish(GameEnd(outcome.winner, outcome.result(), outcome.termination),
                            on_board=True)
        live.ended(f"{COLOURS[s]} claims the draw: the position has occurred {count} "
                   f"times")

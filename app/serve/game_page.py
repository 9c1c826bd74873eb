"""What the page shows of a game in play (:class:`GamePage`, a part of
:class:`~damii_app.serve.live.LiveGame`): the state the routes answer and the websocket
pushes, built once per version of the game with its clocks read afresh.
"""

from __future__ import annotations

from typing import Any

from damii_agents.match.game_loop import COLOURS
from damii_app.serve.classroom import DISQUALIFIED_AT
from damii_app.serve.views import layout, position


class GamePage:
    """The game's state for the page: the board, its legal moves for a person to move,
    the seats, the moves and PDN, the result, the clocks, the draws, the classroom match
    and score sheet, and the seats' connections in a lobby game."""

    def __init__(self, live: Any) -> None:
        self.live = live
        """The :class:`~damii_app.serve.live.LiveGame` this part belongs to (typed Any: the
        game imports its parts, not the other way round)."""
        self._layout = layout(live.game)
        """The board's drawing (fixed for the game)."""
        self._state: tuple[int, dict[str, Any]] | None = None

    def state(self) -> dict[str, Any]:
        """Everything the page shows (built once per version; the clock read afresh)."""
        live = self.live
        live.clocks.check()
        if self._state is None or self._state[0] != live.version:
            self._state = (live.version, self._build())
        out = dict(self._state[1])
        out["clock"] = {**out["clock"], "remaining": live.clocks.remaining()}
        returning = live.seating.returning
        if live.match is not None:
            paused = live.over or live.open or live.game.turn in returning
            out["match"] = {**out["match"], "game_left": max(0.0, live.match.game_left(
                0.0 if paused else live.clocks.turn_seconds()))}
        if live.lobby or returning:
            out["connections"] = live.seating.connections()
        return out

    def _build(self) -> dict[str, Any]:
        live = self.live
        game, end = live.game, live.end
        human_to_move = not live.over and live.seats[game.turn].human
        pos = position(game, legal=human_to_move)
        if not human_to_move:
            pos["legal"] = []
        return {
            "id": live.id,
            "version": live.version,
            "layout": self._layout,
            "position": pos,
            "seats": [{"label": s.label, "human": s.human} for s in live.seats],
            "lobby": live.lobby,
            "open": live.open,
            "moves": [str(m) for m in game.move_stack],
            "pdn": live.record.pdn(),
            "over": live.over,
            "result": end.result if end else None,
            "termination": end.termination if end else None,
            "thinking": live.agents.thinking,
            "draw_offer": None if live.draw_offer is None else COLOURS[live.draw_offer],
            "casual": live.casual,
            "clock": {"name": str(live.clock) if live.match is None
                      else live.match.rules.describe(), "seconds": live.clock.seconds,
                      "remaining": live.clocks.remaining(),
                      "exempt": live.clocks.exempt()},
            "message": live.message,
            "draws": live.draws.allowed,
            "claim": game.can_claim_draw(),
            "repetitions": game.repetition_count() if game.rules.repetition_claim else None,
            "match": self._match(),
            "sheet": live.sheet.rows(game, live.match.forced if live.match else ()),
        }

    def _match(self) -> dict[str, Any] | None:
        """The classroom match as the page shows it (None: not one)."""
        match = self.live.match
        if match is None:
            return None
        return {"move_seconds": match.rules.move_seconds,
                "game_seconds": match.rules.game_seconds, "game_left": None,
                "violations": list(match.violations), "disqualified_at": DISQUALIFIED_AT,
                "touch_move": match.rules.touch_move, "touched": match.touched,
                "forced": list(match.forced)}

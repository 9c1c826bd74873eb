"""Turn text inside the environments: the position as a :class:`~damii_env.Game`
and the PDN text of a hop (an action) and of the full move it belongs to.

An environment steps one hop at a time, so in the middle of a multi-capture the position
is not one a :class:`~damii_env.Game` can stand at. :class:`TurnRecord` keeps the
position at the start of the move in progress and the hops played since (the AEC and
Gymnasium environments feed it before every hop of theirs); from those,
:func:`action_text` names a hop the way PDN does:

>>> import damii_env
>>> env = damii_env.raw_env("international")
>>> env.reset(options={"fen": "W:W28,K47:B22,32,33,12"})
>>> hop = int(env.observe("player_0")["action_mask"].nonzero()[0][0])
>>> text = env.action_text(hop)
>>> text.hop, text.move
('28x17', '28x17x8')
>>> env.step(hop)
>>> env.action_text(int(env.observe("player_0")["action_mask"].nonzero()[0][0]))
ActionText(hop='17x8', move='28x17x8', moves=('28x17x8',), played=('28x17',))
>>> env.board.fen()          # the Game stands at the start of the move in progress
'W:W28,K47:B12,22,32,33'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from damii_env.engine import Engine, State
from damii_env.errors import IllegalActionError
from damii_env.game import Game, Move


@dataclass(frozen=True)
class ActionText:
    """PDN text of one hop and of the full move it is part of."""

    hop: str
    """The hop alone: ``32-28`` or ``28x17`` (square numbers of the game's orientation)."""
    move: str | None
    """The full move, hops already played this turn included, when only one legal move
    goes on this way (``28x17x8``); ``None`` when several do (see :attr:`moves`)."""
    moves: tuple[str, ...]
    """Every legal full move that begins with the hops played this turn and this hop."""
    played: tuple[str, ...] = field(default=())
    """The hops already played in this turn, before this one (``("28x17",)``)."""

    def __str__(self) -> str:
        return self.move or self.hop


@dataclass
class TurnRecord:
    """The position at the start of the move in progress, and its hops so far."""

    start: State | None = None
    hops: list[int] = field(default_factory=list)

    def before_hop(self, state: State, action: int) -> None:
        """Call before game 0 of `state` plays `action` (one hop)."""
        if int(state.continuing_square[0]) < 0:  # a new move starts
            self.start = state.copy() if bool(state.capturing[0]) else None
            self.hops = []
        self.hops.append(int(action))

    def turn_start(self, engine: Engine, state: State) -> tuple[Game, tuple[int, ...]]:
        """The game at the start of the move in progress and the hops played in it."""
        if int(state.continuing_square[0]) >= 0 and self.start is not None:
            return Game.at(engine, self.start), tuple(self.hops)
        return Game.at(engine, state), ()


def hop_text(move: Move, index: int) -> str:
    """PDN text of hop `index` of a full move."""
    sep = "x" if move.captured else "-"
    return f"{move.path[index]}{sep}{move.path[index + 1]}"


def action_text(game: Game, played: Sequence[int], action: int) -> ActionText:
    """Text of hop `action` after the hops `played` since `game`'s position (a turn's
    start). Raises :class:`IllegalActionError` if the hop is not legal there."""
    k = len(played)
    prefix = tuple(int(a) for a in played)
    moves = [m for m in game.legal_moves()
             if len(m.actions) > k and m.actions[:k] == prefix and m.actions[k] == action]
    if not moves:
        raise IllegalActionError(
            f"action {action} is not a legal hop here ({game.fen()}"
            f"{', after ' + str(len(played)) + ' hop(s) of this move' if played else ''})")
    first = moves[0]
    return ActionText(hop=hop_text(first, k), move=str(first) if len(moves) == 1 else None,
                      moves=tuple(str(m) for m in moves),
                      played=tuple(hop_text(first, i) for i in range(k)))

"""What the environments (PettingZoo, Gymnasium, vector) share about an episode:
how it starts, and what its end pays.

A finished game pays +1 to the winner and -1 to the loser; a draw, a truncated game
(turn limit) and a game still going pay 0.
"""

from __future__ import annotations

import numpy as np

from . import _kernels as K
from .engine import Engine, State
from .fen import format_damath_fen, format_fen, parse_damath_fen, parse_fen

WIN, LOSS, DRAW = 1.0, -1.0, 0.0


def start_state(engine: Engine, rng: np.random.Generator | None = None,
                fen: str | None = None) -> State:
    """One game at the start position (`rng` draws a random first player), or at `fen`."""
    if fen is None:
        return engine.init(1, rng)
    rules = engine.rules
    if engine.scoring:
        board, turn, chips, scores = parse_damath_fen(fen, engine.n_squares, rules.board_size,
                                                      rules.chip_set)
        return engine.from_boards(board[None, :], np.array([turn], dtype=np.int8),
                                  chips[None, :], np.array([[float(x) for x in scores]]))
    board, turn = parse_fen(fen, engine.n_squares, rules.board_size)
    return engine.from_boards(board[None, :], np.array([turn], dtype=np.int8))


def state_fen(engine: Engine, state: State, b: int = 0) -> str:
    """FEN of game `b` (Sci-Damath: chip values, and the float scores to 6 decimals)."""
    board = engine.absolute_boards(state)[b]
    turn = int(state.turn[b])
    if not engine.scoring:
        return format_fen(board, turn)
    from fractions import Fraction

    from .damath import Exact

    scores = [Exact.of(Fraction(round(float(x), 6)).limit_denominator(10**6))
              for x in state.scores[b, :2]]
    return format_damath_fen(board, turn, engine.absolute_chips(state)[b], scores,
                             engine.rules.chip_set)


def outcome_rewards(outcome: np.ndarray | int, colour: np.ndarray | int) -> np.ndarray:
    """float32 reward of `colour` (0 White, 1 Black) for each outcome code (broadcast)."""
    outcome = np.asarray(outcome)
    colour = np.asarray(colour)
    won = np.where(colour == 0, K.OUT_WHITE, K.OUT_BLACK)
    lost = np.where(colour == 0, K.OUT_BLACK, K.OUT_WHITE)
    return (WIN * (outcome == won) + LOSS * (outcome == lost)).astype(np.float32)


def outcome_reward(outcome: int, colour: int) -> float:
    """The reward of `colour` for one outcome code, as a Python float."""
    return float(outcome_rewards(outcome, colour))

"""What the environments (PettingZoo, Gymnasium, vector) share about an episode:
how it starts, and what its end pays.

A finished game pays +1 to the winner and -1 to the loser; a draw, a truncated game
(turn limit) and a game still going pay 0.
"""

from __future__ import annotations

import numpy as np

from . import _kernels as K
from .engine import Engine, State
from .fen import parse_fen

WIN, LOSS, DRAW = 1.0, -1.0, 0.0


def start_state(engine: Engine, rng: np.random.Generator | None = None,
                fen: str | None = None) -> State:
    """One game at the start position (`rng` draws a random first player), or at `fen`."""
    if fen is None:
        return engine.init(1, rng)
    board, turn = parse_fen(fen, engine.n_squares, engine.rules.board_size)
    return engine.from_boards(board[None, :], np.array([turn], dtype=np.int8))


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

"""What everything above the engine shares about an episode, in one place: what its end
pays, the shaping potentials that reward progress on the way, and Sci-Damath's totals.

Used by the PettingZoo, Gymnasium and vector environments, the ``Game`` API, the
players' searches and the trainers.

An episode starts at :meth:`Engine.start_state <damii_env.engine.Engine.start_state>`
(the start position, or a FEN).

- **End**: :func:`outcome_rewards`: +1 to the winner, -1 to the loser; a draw, a game cut
  by the turn limit and a game still going pay 0.
- **Shaping**: :func:`shaping_potential` is White's potential Phi of a position (Black's
  is -Phi): a weight times Sci-Damath's point lead, in units of the largest chip value,
  plus a weight times the material balance. Where the lower total wins, a point lead is
  bad, so its sign is flipped. A step rewards each side the change of its own potential
  (potential-based shaping: it leaves the best play unchanged).
- **Totals** (Sci-Damath): points scored plus the chips still on the board, damas
  doubled; :func:`totals` in floating point from the engine, :func:`exact_totals` exactly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from damii_env import _kernels as K
from damii_env import compiled as C
from damii_env.damath import Exact, chips_of
from damii_env.engine import Engine, State
from damii_env.observation import chip_scale
from damii_env.rules import Rules

WIN, LOSS, DRAW = 1.0, -1.0, 0.0


# --- end ----------------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def _outcome_rewards(outcome, colour, out):  # pragma: no cover - numba
    for i in range(out.shape[0]):
        out[i] = C.outcome_reward(outcome[i], colour[i])


def outcome_rewards(outcome: np.ndarray | int, colour: np.ndarray | int) -> np.ndarray:
    """float32 reward of `colour` (0 White, 1 Black) for each outcome code (broadcast;
    scalars give a scalar): :func:`damii_env.compiled.outcome_reward` of each pair."""
    outcome, colour = np.broadcast_arrays(np.asarray(outcome, dtype=np.int64),
                                          np.asarray(colour, dtype=np.int64))
    out = np.empty(outcome.shape, dtype=np.float32)
    _outcome_rewards(outcome.ravel(), colour.ravel(), out.reshape(-1))
    return out if out.ndim else out[()]


def outcome_reward(outcome: int, colour: int) -> float:
    """The reward of `colour` for one outcome code, as a Python float."""
    return float(outcome_rewards(outcome, colour))


def mover_rewards(state: State) -> np.ndarray:
    """float32 (B,): what each game's result pays the player to move there (0 if going on)."""
    return outcome_rewards(state.outcome, state.turn)


# --- shaping ------------------------------------------------------------------------------
def king_worth(rules: Rules) -> float:
    """Material worth of a king where a man is 1: 3 where kings fly, else 2."""
    return 3.0 if rules.king_range == "flying" else 2.0


def material_balance(engine: Engine, state: State) -> np.ndarray:
    """(B,) White's material minus Black's: men 1, kings :func:`king_worth`."""
    board = engine.absolute_boards(state).astype(np.int64)
    king = king_worth(engine.rules)
    worth = np.where(np.abs(board) == 2, king, np.abs(board).astype(float))
    return (np.sign(board) * worth).sum(axis=1)


def score_lead(engine: Engine, state: State) -> np.ndarray:
    """(B,) Sci-Damath: White's point lead in units of the largest chip value, from the
    side of the result (negated where the lower total wins); 0 in other variants."""
    if not engine.scoring:
        return np.zeros(state.batch_size)
    sign = -1.0 if engine.rules.lower_wins else 1.0
    return sign * (state.scores[:, 0] - state.scores[:, 1]) / chip_scale(engine)


def shaping_potential(engine: Engine, state: State, material: float = 0.0,
                      score: float = 0.0) -> np.ndarray:
    """(B,) White's shaping potential: ``score * score_lead + material * material_balance``.

    Black's potential is the negation. A critic trained on shaped returns values a
    position at the expected result minus the mover's potential."""
    phi = np.zeros(state.batch_size)
    if score and engine.scoring:
        phi += score * score_lead(engine, state)
    if material:
        phi += material * material_balance(engine, state)
    return phi


def for_colour(white_values: np.ndarray, colour: np.ndarray | int) -> np.ndarray:
    """White's values (B,) seen by `colour`: unchanged for White (0), negated for Black."""
    return np.where(np.asarray(colour) == 0, white_values, -white_values)


# --- Sci-Damath totals --------------------------------------------------------------------
def totals(engine: Engine, state: State) -> np.ndarray:
    """float64 (B, 2): White's and Black's totals now (the compiled rule kernel's own sum)."""
    out = np.zeros((state.batch_size, 2))
    if engine.scoring:
        K.final_totals_batch(engine.tables, state.arrays, out)
    return out


def exact_totals(engine: Engine, board: np.ndarray, chips: np.ndarray,
                 scores: tuple[Exact, Exact]) -> tuple[Exact, Exact]:
    """Exact totals of one game from its absolute board (S,), chip ids (S,) and exact
    scores: the same sum as :func:`totals`, in exact arithmetic."""
    geo, rules = engine.geometry, engine.rules
    result = list(scores)
    table = chips_of(rules.chip_set)
    for s, v in enumerate(board):
        if v == 0:
            continue
        r, c = (int(t) for t in geo.square_rc[s])
        value = table[int(chips[s])].value(c, rules.board_size - 1 - r)
        result[0 if v > 0 else 1] += value * (2 if abs(v) == 2 else 1)
    return result[0], result[1]

"""What everything above the engine shares about an episode, in one place: how it
starts, what its end pays, the shaping potentials that reward progress on the way, and
Sci-Damath's totals.

Used by the PettingZoo, Gymnasium and vector environments, the ``Game`` API, the
players' searches and the trainers.

- **Start**: :func:`start_state` (the start position, or a FEN).
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

from fractions import Fraction

import numpy as np

from damii_env import _kernels as K
from damii_env.damath import Exact, chips_of
from damii_env.engine import Engine, OutcomeCode, State
from damii_env.fen import format_damath_fen, format_fen, parse_damath_fen, parse_fen
from damii_env.observation import chip_scale
from damii_env.rules import Rules

WIN, LOSS, DRAW = 1.0, -1.0, 0.0


# --- start --------------------------------------------------------------------------------
def parse_start(engine: Engine, fen: str) -> tuple[State, tuple[Exact, Exact] | None]:
    """One game at the position `fen`, and (Sci-Damath) the exact scores the FEN gives."""
    rules = engine.rules
    if engine.scoring:
        board, turn, chips, scores = parse_damath_fen(fen, engine.n_squares, rules.board_size,
                                                      rules.chip_set)
        state = engine.from_boards(board[None, :], np.array([turn], dtype=np.int8),
                                   chips[None, :], np.array([[float(x) for x in scores]]))
        return state, (scores[0], scores[1])
    board, turn = parse_fen(fen, engine.n_squares, rules.board_size)
    return engine.from_boards(board[None, :], np.array([turn], dtype=np.int8)), None


def start_state(engine: Engine, rng: np.random.Generator | None = None,
                fen: str | None = None) -> State:
    """One game at the start position (`rng` draws a random first player), or at `fen`."""
    if fen is None:
        return engine.init(1, rng)
    return parse_start(engine, fen)[0]


def state_fen(engine: Engine, state: State, b: int = 0) -> str:
    """FEN of game `b` (Sci-Damath: chip values, and the float scores to 6 decimals)."""
    board = engine.absolute_boards(state)[b]
    turn = int(state.turn[b])
    if not engine.scoring:
        return format_fen(board, turn)
    return format_damath_fen(board, turn, engine.absolute_chips(state)[b],
                             exact_scores(state, b), engine.rules.chip_set)


def exact_scores(state: State, b: int = 0) -> list[Exact]:
    """Sci-Damath: White's and Black's points of game `b` as exact numbers (the engine
    keeps floats; they are read to 6 decimals)."""
    return [Exact.of(Fraction(round(float(x), 6)).limit_denominator(10**6))
            for x in state.scores[b, :2]]


# --- end ----------------------------------------------------------------------------------
def outcome_rewards(outcome: np.ndarray | int, colour: np.ndarray | int) -> np.ndarray:
    """float32 reward of `colour` (0 White, 1 Black) for each outcome code (broadcast)."""
    outcome = np.asarray(outcome)
    colour = np.asarray(colour)
    won = np.where(colour == 0, OutcomeCode.WHITE_WINS, OutcomeCode.BLACK_WINS)
    lost = np.where(colour == 0, OutcomeCode.BLACK_WINS, OutcomeCode.WHITE_WINS)
    return (WIN * (outcome == won) + LOSS * (outcome == lost)).astype(np.float32)


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

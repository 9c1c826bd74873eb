"""The evaluation seam of the compiled searches: how a position at the horizon is valued.

The search takes an :class:`Evaluation`, a named record of the arrays the evaluation
reads and its kind, and values every leaf by :func:`leaf_value`: the one place where the
evaluations meet the search. Two kinds are shipped:

* ``HANDWRITTEN`` (:func:`handwritten`): material, the men's advancement and mobility, and
  in Sci-Damath the lead in the totals, weighted by hand (:func:`default_weights`);
* ``LEARNED`` (:func:`learned`): the fitted tables of
  :class:`~damii_agents.search.patterns.PatternWeights`, read from the ply row's bit masks
  on boards up to 10x10 (``pattern_value_bits``) and from its board beyond
  (``pattern_value``, the reference that the tests and the trainer read).

A new evaluation is a kind, the fields it reads and a branch of :func:`leaf_value`; the
search does not change. Every kind shares one record type, so the search is compiled
once for all of them and the branch is taken at run time (the same one at every leaf, so
the processor predicts it). Functions passed as arguments or held in closures would keep
the kinds apart, but numba cannot cache a function compiled for them (every process would
compile the search again), and an ``@overload`` inlined into the search was miscompiled
by numba 0.68 (a ply row's outcome was lost; ``tests/players/test_alphabeta_search.py``
caught it).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from damii_agents.search import endgame as EG
from damii_agents.search import patterns as EV
from damii_env import compiled as C
from damii_env.errors import InvalidArgumentError

HANDWRITTEN = 0
LEARNED = 1

# the handwritten evaluation's weights, by index
E_MAN = 0
E_KING = 1
E_ADVANCE = 2
E_MOBILITY = 3
E_TOTALS = 4  # Damath: weight of (score + chips) difference
N_EVAL = 5


class Evaluation(NamedTuple):
    """An evaluation as the compiled search takes it: its kind and the arrays it reads
    (the other kinds' fields are empty)."""

    kind: int
    """``HANDWRITTEN`` or ``LEARNED``."""
    weights: np.ndarray
    """(N_EVAL,) the handwritten weights, by ``E_*`` index."""
    regions: np.ndarray
    """The learned tables, :attr:`PatternWeights.arrays` (regions, pattern, square, dense,
    square_end, dense_end, phase_pieces, kings) ..."""
    pattern: np.ndarray
    square: np.ndarray
    dense: np.ndarray
    square_end: np.ndarray
    dense_end: np.ndarray
    phase_pieces: float
    kings: np.ndarray
    rbits: np.ndarray
    """... and (R, 4) the regions' squares as bits of the board's masks
    (:func:`~damii_agents.search.patterns.region_bits`)."""
    endgame: tuple
    """The endgame database the search probes (:func:`with_endgame`: its
    ``EndgameDatabase.tables``, the values read-only int8), or :func:`no_endgame`'s
    tables, which hold no position."""


def default_weights(engine: Any) -> np.ndarray:
    """The handwritten evaluation's weights (by ``E_*`` index) for an engine's rules."""
    w = np.zeros(N_EVAL)
    w[E_MAN] = 100.0
    w[E_KING] = 300.0 if engine.rules.king_range == "flying" else 170.0
    w[E_ADVANCE] = 3.0
    w[E_MOBILITY] = 1.0
    w[E_TOTALS] = 10.0
    return w


def handwritten(weights: np.ndarray) -> Evaluation:
    """The handwritten evaluation with `weights` (:func:`default_weights`)."""
    none2, none1 = np.zeros((0, 0)), np.zeros(0)
    return Evaluation(HANDWRITTEN, np.ascontiguousarray(weights, dtype=np.float64),
                      np.zeros((0, 0), dtype=np.int64), none2, none2, none1, none2, none1,
                      1.0, np.zeros((0, 0), dtype=np.float32),
                      np.zeros((0, 4), dtype=np.int64), no_endgame())


def learned(weights: EV.PatternWeights, tables: C.Tables) -> Evaluation:
    """The learned evaluation `weights` for the rule tables `tables` (``Engine.tables``)
    of a board of their size."""
    regions, pattern, square, dense, square_end, dense_end, phase, kings = weights.arrays
    rbits = EV.region_bits(regions, C.bit_layout(tables))
    return Evaluation(LEARNED, np.zeros(N_EVAL), regions, pattern, square, dense,
                      square_end, dense_end, phase, kings, rbits, no_endgame())


def _read_only(values: np.ndarray) -> np.ndarray:
    a = np.asarray(values, dtype=np.int8)  # a memory map stays one (no copy)
    if a.flags.writeable:
        a = a.view()
        a.setflags(write=False)
    return a


def no_endgame() -> tuple:
    """Endgame tables that hold no position (their largest material is 0 pieces)."""
    i1, i2 = np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.int64)
    return (np.zeros((0, 0, 0, 0), dtype=np.int64), i2, i1,
            _read_only(np.zeros(0, dtype=np.int8)), i2, i2, np.zeros(3, dtype=np.int64))


def with_endgame(evaluation: Evaluation, database: EG.EndgameDatabase | None) -> Evaluation:
    """`evaluation` with the endgame `database` that the search probes (at every node but
    the root whose pieces it holds: the exact value replaces the search below it); None:
    no database."""
    if database is None:
        return evaluation._replace(endgame=no_endgame())
    if database.values.dtype != np.int8:
        raise InvalidArgumentError(
            f"the search reads endgame values of int8, this database's are "
            f"{database.values.dtype} (distances beyond 127 plies)")
    tables = database.tables
    return evaluation._replace(endgame=tables[:3] + (_read_only(tables[3]),) + tables[4:])


@njit(cache=True, inline="always")
def endgame_value(e, T, P, c):
    """The endgame database's verdict on ply row c for its player to move: (value,
    distance), value 1 won, 0 drawn, -1 lost, distance the plies to the next capture,
    promotion or man's move (or the end); (``EG.MISSING``, 0) where the database holds no
    such position (or there is none)."""
    if e.endgame[6][2] == 0 or not C.has_bits(T):
        return EG.MISSING, 0
    b = P.bits
    no_progress, since = C.ply_draw_counts(P.info, c)
    return EG.probe_bits(e.endgame, P.layout, b[c, C.B_MEN], b[c, C.B_KINGS],
                         b[c, C.B_ENEMY_MEN], b[c, C.B_ENEMY_KINGS], no_progress, since)


@njit(cache=True, inline="always")
def material(board, c, S, n, weights, mobility):
    """The handwritten terms of every variant (material, advancement, mobility: the number
    of legal moves) of board row c, for the player to move there."""
    half = n // 2
    value = 0.0
    for s in range(S):
        v = board[c, s]
        if v == 0:
            continue
        row = s // half
        if v == 1:
            value += weights[E_MAN] + weights[E_ADVANCE] * (n - 1 - row)
        elif v == 2:
            value += weights[E_KING]
        elif v == -1:
            value -= weights[E_MAN] + weights[E_ADVANCE] * row
        else:
            value -= weights[E_KING]
    return value + weights[E_MOBILITY] * mobility


@njit(cache=True, inline="always")
def with_totals(material_value, lead, weights):
    """Sci-Damath: the value from the material terms and the lead in the totals."""
    return 0.05 * material_value + weights[E_TOTALS] * lead


@njit(cache=True, inline="always")
def leaf_value(e, T, P, c, mobility, lead):
    """The value of ply-stack row c for its player to move, by the evaluation `e`;
    `mobility` is the row's number of legal moves and `lead` the mover's lead in the
    totals (Sci-Damath, else 0)."""
    S = C.n_squares(T)
    if e.kind == LEARNED:
        if C.has_bits(T):
            return EV.pattern_value_bits(P.bits, c, P.layout, S, e.rbits, e.pattern, e.square,
                                         e.dense, e.square_end, e.dense_end, e.phase_pieces,
                                         e.kings, mobility, lead)
        return EV.pattern_value(P.board, c, S, e.regions, e.pattern, e.square, e.dense,
                                e.square_end, e.dense_end, e.phase_pieces, e.kings, mobility,
                                lead)
    v = material(P.board, c, S, C.board_size(T), e.weights, mobility)
    return with_totals(v, lead, e.weights) if C.is_scoring(T) else v

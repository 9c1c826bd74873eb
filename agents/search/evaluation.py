"""The evaluation seam of the compiled searches: how a position at the horizon is valued.

An evaluation is a named record of the arrays it reads (a ``NamedTuple``); the search
takes one and calls :func:`leaf_value` on it at every leaf, and numba compiles the search
once for each kind of record, with that evaluation inlined. Two are shipped:

* :class:`Handwritten` (here): material, the men's advancement and mobility, and in
  Sci-Damath the lead in the totals, weighted by hand (:func:`default_weights`);
* :class:`~damii_agents.search.patterns.Learned` (``patterns.py``): the fitted tables of
  :class:`~damii_agents.search.patterns.PatternWeights`, read from the row's bit masks.

A new evaluation is a record class and an ``@overload(leaf_value, jit_options=LEAF_JIT)``
that returns its implementation for that class (and None for any other), as the two here
do; nothing in the search changes. Functions passed as arguments or held in closures would
do the same, but numba cannot cache a function compiled for them: every process would
compile the search again.

The implementations are compiled as functions of their own, without reference counts
(``LEAF_JIT``; they make no array), not inlined by numba (``inline="always"``): numba 0.68
miscompiled the search with the overload inlined into it (a ply row's outcome was lost, so
a won position was valued statically; ``tests/players/test_alphabeta_search.py`` caught it).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from damii_env import compiled as C

LEAF_JIT = {"_nrt": False, "cache": True}
"""How an evaluation's ``leaf_value`` is compiled (the module's docstring)."""


def leaf_value(evaluation, T, P, c, mobility, lead):  # noqa: ARG001
    """The value of ply-stack row c for its player to move, by `evaluation` (a record of
    a kind registered with ``@overload(leaf_value)``); `mobility` is the row's number of
    legal moves and `lead` the mover's lead in the totals (Sci-Damath, else 0). Compiled
    code only."""
    raise TypeError("leaf_value is called from compiled code (numba) only")


def is_record(evaluation_type: Any, record: type) -> bool:
    """Whether a numba type is the type of a `record` (an evaluation's NamedTuple class)."""
    return (isinstance(evaluation_type, types.BaseNamedTuple)
            and evaluation_type.instance_class is record)


# --- the handwritten evaluation ---------------------------------------------------------------
E_MAN = 0
E_KING = 1
E_ADVANCE = 2
E_MOBILITY = 3
E_TOTALS = 4  # Damath: weight of (score + chips) difference
N_EVAL = 5


class Handwritten(NamedTuple):
    """The handwritten evaluation: its weights by ``E_*`` index (:func:`default_weights`)."""

    weights: np.ndarray


def default_weights(engine: Any) -> np.ndarray:
    """The handwritten evaluation's weights (by ``E_*`` index) for an engine's rules."""
    w = np.zeros(N_EVAL)
    w[E_MAN] = 100.0
    w[E_KING] = 300.0 if engine.rules.king_range == "flying" else 170.0
    w[E_ADVANCE] = 3.0
    w[E_MOBILITY] = 1.0
    w[E_TOTALS] = 10.0
    return w


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


@overload(leaf_value, jit_options=LEAF_JIT)
def _handwritten_leaf(evaluation, T, P, c, mobility, lead):
    if not is_record(evaluation, Handwritten):
        return None

    def value(evaluation, T, P, c, mobility, lead):
        v = material(P.board, c, C.n_squares(T), C.board_size(T), evaluation.weights,
                     mobility)
        return with_totals(v, lead, evaluation.weights) if C.is_scoring(T) else v

    return value

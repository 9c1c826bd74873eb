"""Sci-Damath's arithmetic: a chip's value on a square, a jump's score and the final totals.

Rules stated here (docs/DAMATH.md): a jump scores ``taker OP taken``, OP the operation of
the landing square (+, -, x, /), doubled for a dama that jumps and again for a dama taken
(:func:`jump_score`); at the end each side's remaining chips are added to its total
(:func:`final_totals`), and the totals decide the game (the lower total in science games).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from damii_env._kernels.state import M_TURN, OP_ADD, OP_MUL, OP_SUB, P_S, SQ_X, SQ_Y


@njit(cache=True, inline="always")
def chip_value(chipval, c, x, y):
    """Value of chip c standing on Damath square (x, y): coef * x**xe * y**ye. The
    exponents are whole (0, 1 or 2), so the powers are products, not calls of pow (a
    leaf's totals read every chip: 430 ns with pow at the start position)."""
    px = 1.0
    for _ in range(np.int64(chipval[c, 1])):
        px *= x
    py = 1.0
    for _ in range(np.int64(chipval[c, 2])):
        py *= y
    return chipval[c, 0] * px * py


@njit(cache=True, inline="always")
def jump_score(op, taker, taken, multiplier):
    """Points of one jump: ``taker OP taken`` times the dama multiplier (x / 0 scores 0)."""
    if op == OP_ADD:
        r = taker + taken
    elif op == OP_SUB:
        r = taker - taken
    elif op == OP_MUL:
        r = taker * taken
    else:
        if taken == 0.0:
            return 0.0
        r = taker / taken
    return r * multiplier


@njit(cache=True, _nrt=False)
def final_totals(params, board, chip, scores, sqinfo, chipval, b, turn):
    """(White's, Black's) totals of game b: points scored plus the values of the chips
    still on the board, damas doubled (Sci-Damath). The one place they are computed."""
    S = params[P_S]
    white = scores[b, 0]
    black = scores[b, 1]
    for s in range(S):
        v = board[b, s]
        if v == 0:
            continue
        absq = s if turn == 0 else S - 1 - s
        val = chip_value(chipval, chip[b, s], sqinfo[absq, SQ_X], sqinfo[absq, SQ_Y])
        if v == 2 or v == -2:
            val *= 2.0
        if (v > 0) == (turn == 0):  # White's piece
            white += val
        else:
            black += val
    return white, black


@njit(cache=True, _nrt=False)
def final_totals_batch(T, G, out):
    """out[b] = (White's, Black's) totals of every game b (see :func:`final_totals`)."""
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, meta, hist, legal, chip, scores = G
    for b in range(board.shape[0]):
        out[b, 0], out[b, 1] = final_totals(params, board, chip, scores, sqinfo, chipval, b,
                                            meta[b, M_TURN])

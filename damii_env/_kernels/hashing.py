"""Position keys (Zobrist): the pieces from the mover's view, the colour to move and, in
Sci-Damath, the chips. The repetition rule counts positions by these keys.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from damii_env._kernels.state import MAX_CHIPS, P_S, P_SCORING


@njit(cache=True, inline="always")
def position_hash(params, zobrist, board, chip, b, turn):
    """Zobrist hash of the board (mover's view), chips (scoring games) and colour to move.

    Free of branches over the squares: an empty square's key is masked to 0 instead of
    skipped (over a batch of random positions a branch per square mispredicts, and the
    hash took 3x as long)."""
    S = params[P_S]
    h = np.uint64(0)
    for s in range(S):
        v = np.int64(board[b, s])
        code = v - 1 if v > 0 else 1 - v  # 1->0, 2->1, -1->2, -2->3 (0->1, masked out)
        keep = np.uint64(0) - np.uint64(v != 0)  # all ones on an occupied square, else 0
        h ^= zobrist[s * 4 + code] & keep
    if params[P_SCORING] == 1:
        for s in range(S):
            # a chip id, or -1 on an empty square: the index stays in the table
            c = np.int64(chip[b, s])
            keep = np.uint64(0) - np.uint64(board[b, s] != 0)
            h ^= _chip_key(zobrist, S, s, c) & keep
    if turn == 1:
        h ^= zobrist[S * 4]
    return h


@njit(cache=True, inline="always")
def _piece_key(zobrist, s, v):
    """The hash key of piece v (mover's view codes) on square s, 0 for an empty square
    (the terms :func:`position_hash` sums)."""
    v = np.int64(v)
    code = v - 1 if v > 0 else 1 - v
    keep = np.uint64(0) - np.uint64(v != 0)
    return zobrist[s * 4 + code] & keep


@njit(cache=True, inline="always")
def _chip_key(zobrist, S, s, c):
    """The hash key of chip c under a piece on square s (the chip terms of
    :func:`position_hash`, scoring games)."""
    return zobrist[S * 4 + 1 + s * MAX_CHIPS + np.int64(c)]


@njit(cache=True, _nrt=False)
def mirrored_board_hash(params, zobrist, board, chip, b):
    """:func:`position_hash` without the colour to move, of game b's position seen by the
    other player: square s is S - 1 - s, the owners swapped (in a scoring game the chips
    under the pieces too)."""
    S = params[P_S]
    h = np.uint64(0)
    for s in range(S):
        h ^= _piece_key(zobrist, S - 1 - s, -np.int64(board[b, s]))
    if params[P_SCORING] == 1:
        for s in range(S):
            if board[b, s] != 0:
                h ^= _chip_key(zobrist, S, S - 1 - s, chip[b, s])
    return h

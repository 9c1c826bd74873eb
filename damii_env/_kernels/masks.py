"""The board as bit masks (boards up to :data:`~.state.MAX_BITBOARD_SIZE` squares a side).

Rules stated here, a second time beside the square-by-square scan of :mod:`.hops` (which
boards over 10x10 use): **a man can capture** where the square next to it, in a direction
it may capture, holds a piece it may take and the one beyond is empty (:func:`men_jumpers`;
:func:`~.hops.jumps_from` on the board); **a king can capture** where an enemy piece lies
along a diagonal, flying kings past empty squares, with an empty square beyond
(:func:`kings_can_jump`); **quiet moves**: a man steps one square forwards onto an empty
square (:func:`men_steps`), a king one square or, flying, any number of empty squares in
each direction (:func:`kings_steps`). Square s of row r is bit ``s + (r + P_ROW_OFFSET) // 2``,
so that a step in each direction is a fixed shift (:func:`bit_layout`).

Held equal to the board scan by ``tests/rules/test_ply_stack.py`` (every row's moves counted
and listed against the engine's hops, kings' positions hop for hop, a 12x12 board).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from damii_env._bits import popcount
from damii_env._kernels.state import (
    B_ENEMY_KINGS,
    B_ENEMY_MEN,
    B_KINGS,
    B_MEN,
    BL_ALL,
    BL_MIRROR,
    BL_SIZE,
    BL_SQUARE,
    MAX_BITBOARD_SIZE,
    P_FLY,
    P_MEN_BACK,
    P_MEN_TAKE_KINGS,
    P_N,
    P_ROW_OFFSET,
    P_S,
)


@njit(cache=True, inline="always")
def _own_pieces(params, board, b, own):
    """List the squares of the own pieces of game b in `own`; return how many.

    Without a branch per square (a branch on each square's owner mispredicts on random
    positions). The environments' turns take this list and try every piece's jumps: over
    their random games that is faster than the bit masks of :func:`_own_squares` (which
    pay where moves are only counted, at the search's leaves and perft's last level)."""
    m = 0
    for s in range(params[P_S]):
        own[m] = s
        m += board[b, s] > 0
    return m


@njit(cache=True, inline="always")
def _own_squares(params, board, b, own, kings):
    """List the squares of the own pieces of game b in `own` and of the own kings in
    `kings`; return how many of each (boards without a bit layout, larger than
    :data:`MAX_BITBOARD_SIZE`; without a branch per square, which mispredicts on random
    positions)."""
    m = 0
    k = 0
    for s in range(params[P_S]):
        v = board[b, s]
        own[m] = s
        m += v > 0
        kings[k] = s
        k += v == 2
    return m, k


@njit(cache=True)
def bit_layout(params):
    """The board's bit layout as a table: entry s the bit of square s (square s of row r is
    bit ``s + (r + P_ROW_OFFSET) // 2``: a step in each direction is then a fixed shift,
    see :func:`_own_squares`), then (from S + BL_SQUARE) the square of each of 64 bits,
    -1 between squares, the mask of every square (S + BL_ALL) and the shift that mirrors
    a mask (S + BL_MIRROR). Boards larger than :data:`MAX_BITBOARD_SIZE`: all -1."""
    S = params[P_S]
    n = params[P_N]
    out = np.full(S + BL_SIZE, -1, dtype=np.int64)
    if n > MAX_BITBOARD_SIZE:
        return out
    half = n // 2
    every = np.int64(0)
    for s in range(S):
        x = s + (s // half + params[P_ROW_OFFSET]) // 2
        out[s] = x
        out[S + BL_SQUARE + x] = s
        every |= np.int64(1) << x
    out[S + BL_ALL] = every
    out[S + BL_MIRROR] = 63 - (out[0] + out[S - 1])
    return out


@njit(cache=True, inline="always")
def board_bits(params, layout, board, b, bits):
    """Write the bit masks of game b's board into bits[b] (B_* columns: the mover's men
    and kings, the enemy's men and kings) on a board of at most
    :data:`MAX_BITBOARD_SIZE` squares a side."""
    men = np.int64(0)
    kings = np.int64(0)
    enemy_men = np.int64(0)
    enemy_kings = np.int64(0)
    for s in range(params[P_S]):
        v = board[b, s]
        bit = np.int64(1) << layout[s]
        men |= bit & -np.int64(v == 1)
        kings |= bit & -np.int64(v == 2)
        enemy_men |= bit & -np.int64(v == -1)
        enemy_kings |= bit & -np.int64(v == -2)
    bits[b, B_MEN] = men
    bits[b, B_KINGS] = kings
    bits[b, B_ENEMY_MEN] = enemy_men
    bits[b, B_ENEMY_KINGS] = enemy_kings


@njit(cache=True, inline="always")
def men_jumpers(men, prey, empty, half, up, down):
    """The men of the mask `men` that can jump (bit masks of a board of at most
    :data:`MAX_BITBOARD_SIZE` squares a side, half = N / 2): the square next to a man holds
    a piece of `prey` and the one beyond is empty, in the up directions (towards lower
    bits: the player to move's forward) if `up`, the down ones if `down`."""
    out = np.int64(0)
    for d in range(4):
        step = half + 1 if d == 0 or d == 3 else half
        if d < 2:
            if up:
                out |= men & ((prey & (empty << step)) << step)
        elif down:
            out |= men & ((prey & (empty >> step)) >> step)
    return out


@njit(cache=True, inline="always")
def men_steps(men, empty, half):
    """The number of quiet steps of the men of the mask `men` onto the `empty` squares:
    forward, up-left and up-right (towards lower bits), all at once (half = N / 2)."""
    return popcount((men >> (half + 1)) & empty) + popcount((men >> half) & empty)


@njit(cache=True, inline="always")
def _shifted(x, d, half):
    """The mask x moved one square in direction d: 0 up-left, 1 up-right (towards lower
    bits), 2 down-left, 3 down-right (a step off the board lands on no square)."""
    if d == 0:
        return x >> (half + 1)
    if d == 1:
        return x >> half
    if d == 2:
        return x << half
    return x << (half + 1)


@njit(cache=True, inline="always")
def kings_steps(kings, empty, half, fly):
    """The number of quiet moves of the kings of the mask `kings` onto the `empty`
    squares, a direction at a time for all of them at once: a flying king's squares
    along the diagonal up to the first piece, a short king's next square. In one
    direction two kings' rays never share a square (the king behind is blocked by the
    one in front), so each square reached is one move."""
    m = 0
    for d in range(4):
        x = kings
        while True:
            x = _shifted(x, d, half) & empty
            if x == 0:
                break
            m += popcount(x)
            if not fly:
                break
    return m


@njit(cache=True, inline="always")
def kings_can_jump(kings, enemy, empty, half, fly):
    """Whether a king of the mask `kings` can jump: along a diagonal (over empty squares
    first if `fly`) an `enemy` piece, and the square beyond it empty (what
    :func:`jumps_from` finds for one king at the start of a turn)."""
    for d in range(4):
        reach = kings
        x = kings
        while fly and x != 0:
            x = _shifted(x, d, half) & empty
            reach |= x
        if _shifted(_shifted(reach, d, half) & enemy, d, half) & empty != 0:
            return True
    return False


@njit(cache=True, inline="always")
def turn_masks(params, bits, b, layout):
    """``(men, kings, empty, prey)`` of the player to move in game b from its bit masks:
    prey are the enemy pieces its men may take (kings too where men take kings)."""
    men = bits[b, B_MEN]
    kings = bits[b, B_KINGS]
    enemy = bits[b, B_ENEMY_MEN] | bits[b, B_ENEMY_KINGS]
    empty = layout[params[P_S] + BL_ALL] & ~(men | kings | enemy)
    prey = bits[b, B_ENEMY_MEN]
    if params[P_MEN_TAKE_KINGS] == 1:
        prey |= bits[b, B_ENEMY_KINGS]
    return men, kings, empty, prey


@njit(cache=True, inline="always")
def count_quiet(params, bits, b, layout):
    """The number of legal moves in game b when the player to move has nothing to
    capture: its men's steps and its kings' moves, what :func:`turn_moves` counts then,
    from the bit masks without calling it (a call passes its many arrays on the stack,
    which took longer than the count). -1 when a piece can capture: ask
    :func:`turn_moves`."""
    men, kings, empty, prey = turn_masks(params, bits, b, layout)
    half = params[P_N] // 2
    if men_jumpers(men, prey, empty, half, True, params[P_MEN_BACK] == 1) != 0:
        return -1
    m = men_steps(men, empty, half)
    if kings != 0:
        fly = params[P_FLY] == 1
        if kings_can_jump(kings, bits[b, B_ENEMY_MEN] | bits[b, B_ENEMY_KINGS], empty,
                          half, fly):
            return -1
        m += kings_steps(kings, empty, half, fly)
    return m

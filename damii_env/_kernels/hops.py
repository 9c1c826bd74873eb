"""One hop of one piece: the action code, the jumps and quiet steps found by scanning the
board, and a hop played and taken back.

Rules stated here: a piece's **jumps** (:func:`jumps_from`: men forwards, and backwards
where ``P_MEN_BACK``; a flying king past any number of empty squares to an enemy piece with
empty squares beyond, landing on any of them; a short king one square over; men take kings
only where ``P_MEN_TAKE_KINGS``; a piece captured this turn, ``pending``, is neither jumped
again nor passed), its **quiet steps** (:func:`quiet_from`), and **whether the player not
to move could capture** (:func:`enemy_can_capture`, the search's threat test).
An action is ``(s * 4 + d) * (N - 1) + k``: from square s in direction d (0 up-left,
1 up-right, 2 down-left, 3 down-right from the mover's side) to the (k + 1)-th square.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from damii_env._bits import lowest_bit
from damii_env._kernels.masks import men_jumpers
from damii_env._kernels.state import (
    B_ENEMY_KINGS,
    B_ENEMY_MEN,
    B_KINGS,
    B_MEN,
    BL_ALL,
    BL_SQUARE,
    MAX_BITBOARD_SIZE,
    P_FLY,
    P_MEN_BACK,
    P_MEN_TAKE_KINGS,
    P_N,
    P_S,
)


@njit(cache=True, inline="always")
def _action(s, d, k, n1):
    return (s * 4 + d) * n1 + k


@njit(cache=True, inline="always")
def jumps_from(params, ray, board, pending, b, s, is_king, out, row, n):
    """Append the jumps of the own piece on square s to out[row, n:]; return the new count.

    Inlined, and writing into a row of a 2-D array rather than into a slice of it: it runs
    once per own piece and turn, and a compiled call with a fresh slice cost about as
    much as the search itself (move generation was 1.4-1.8x slower with the call)."""
    n1 = params[P_N] - 1
    fly = params[P_FLY] == 1 and is_king
    for d in range(4):
        if d >= 2 and not is_king and params[P_MEN_BACK] == 0:
            continue
        # the flying king's scan is written out here and in enemy_can_capture on purpose:
        # one inlined helper for both (a15991a, reverted) made the engine's hop step 2.4x
        # slower on one thread (vector_env_throughput.py: 1.16 M -> 0.48 M hops/s)
        k = 0
        if fly:
            while k < n1:
                t = ray[s, d, k]
                if t < 0 or board[b, t] != 0:
                    break
                k += 1
            if k >= n1:
                continue
        t = ray[s, d, k]
        if t < 0:
            continue
        v = board[b, t]
        if v >= 0 or pending[b, t] != 0:
            continue
        if v == -2 and not is_king and params[P_MEN_TAKE_KINGS] == 0:
            continue
        k2 = k + 1
        while k2 < n1:
            land = ray[s, d, k2]
            if land < 0 or board[b, land] != 0:
                break
            out[row, n] = _action(s, d, k2, n1)
            n += 1
            if not fly:
                break
            k2 += 1
    return n


@njit(cache=True, inline="always")
def quiet_from(params, ray, board, b, s, is_king, out, row, n):
    """Append the non-capturing moves of the own piece on square s to out[row, n:]
    (inlined, as :func:`jumps_from`)."""
    n1 = params[P_N] - 1
    reach = n1 if (is_king and params[P_FLY] == 1) else 1
    for d in range(4):
        if d >= 2 and not is_king:
            continue
        for k in range(reach):
            t = ray[s, d, k]
            if t < 0 or board[b, t] != 0:
                break
            out[row, n] = _action(s, d, k, n1)
            n += 1
    return n


_N1_RECIPROCAL = np.array([0] + [(1 << 32) // d + 1 for d in range(1, 16)], dtype=np.uint64)


@njit(cache=True, inline="always")
def _over_n1(action, n1):
    """action // n1 for a hop action (never negative), as a multiplication by the
    divisor's reciprocal (:data:`_N1_RECIPROCAL`): a division instruction takes 10 to 20
    cycles, and a search divides several times a move (the start and the last landing
    square of each move's code). Constant divisors in branches do not stay: the compiler
    merges the branches' divisions back into one by a variable."""
    return np.int64((np.uint64(action) * _N1_RECIPROCAL[np.uint64(n1)]) >> np.uint64(32))


@njit(cache=True, inline="always")
def decode(action, n1):
    """(start square, direction, steps - 1) of hop `action` (``_action``'s inverse), with
    one integer division: ``action // (4 * n1), (action // n1) % 4, action % n1`` took
    three and a remainder, 5-8 ns a call against 2 (the same values for every integer)."""
    q = _over_n1(action, n1)
    return q >> 2, q & 3, action - q * n1


@njit(cache=True, inline="always")
def hop_start(action, n1):
    """The start square of hop `action` (``decode(action, n1)[0]``)."""
    return _over_n1(action, n1) >> 2


@njit(cache=True, inline="always")
def captured_square(ray, board, b, s, d, k):
    """The occupied square passed over by the hop (s, d, k), or -1 for a quiet move."""
    for j in range(k):
        t = ray[s, d, j]
        if board[b, t] != 0:
            return t
    return -1


@njit(cache=True, inline="always")
def do_hop(ray, board, pending, b, a, n1, immediate):
    """Play hop `a` on the board of game b: the piece on its start square moves to the
    landing square and the piece it jumps over (if any) is captured: lifted at once if
    `immediate` (captured pieces removed at once), else marked in `pending`. n1 is N - 1.
    Chips, scores and counters are left to the caller.

    Returns ``(s, land, cap, capv)``: start and landing squares, the captured square
    (-1 for a quiet move) and the captured piece (0 for a quiet move); for a capture,
    what :func:`undo_hop` needs to take the hop back.
    """
    s, d, k = decode(a, n1)
    land = ray[s, d, k]
    cap = captured_square(ray, board, b, s, d, k)
    piece = board[b, s]
    board[b, s] = 0
    capv = 0
    if cap >= 0:
        capv = board[b, cap]
        if immediate:
            board[b, cap] = 0
        else:
            pending[b, cap] = 1
    board[b, land] = piece
    return s, land, cap, capv


@njit(cache=True, inline="always")
def undo_hop(board, pending, b, s, land, cap, capv):
    """Take back a capture played by :func:`do_hop` (its returned values): the piece goes
    back from `land` to `s` and the captured piece returns to `cap`."""
    board[b, cap] = capv
    pending[b, cap] = 0
    board[b, s] = board[b, land]
    board[b, land] = 0


@njit(cache=True, inline="always")
def enemy_can_capture(params, ray, board, b, bits, layout):
    """Whether the player not to move in game b could capture if it were its turn (a
    threat against the player to move), from the bit masks bits[b] (:func:`board_bits`)
    on a board of at most :data:`MAX_BITBOARD_SIZE` squares a side (larger boards: False).
    The enemy's men jump forward (down, towards higher bits) and, where men capture
    backwards, back; its kings by their range, as :func:`jumps_from` for the mover."""
    if params[P_N] > MAX_BITBOARD_SIZE:
        return False
    S = params[P_S]
    n1 = params[P_N] - 1
    men = bits[b, B_MEN]
    kings = bits[b, B_KINGS]
    enemy_men = bits[b, B_ENEMY_MEN]
    enemy_kings = bits[b, B_ENEMY_KINGS]
    empty = layout[S + BL_ALL] & ~(men | kings | enemy_men | enemy_kings)
    prey = men
    if params[P_MEN_TAKE_KINGS] == 1:
        prey |= kings
    if men_jumpers(enemy_men, prey, empty, params[P_N] // 2, params[P_MEN_BACK] == 1,
                   True) != 0:
        return True
    fly = params[P_FLY] == 1
    x = enemy_kings
    while x != 0:
        s = layout[S + BL_SQUARE + lowest_bit(x)]
        x &= x - 1
        for d in range(4):
            k = 0
            if fly:
                while k < n1:
                    t = ray[s, d, k]
                    if t < 0 or board[b, t] != 0:
                        break
                    k += 1
                if k >= n1:
                    continue
            t = ray[s, d, k]
            if t < 0 or board[b, t] <= 0 or k + 1 >= n1:
                continue
            land = ray[s, d, k + 1]
            if land >= 0 and board[b, land] == 0:
                return True
    return False

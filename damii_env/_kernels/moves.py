"""Whole moves: the one move list, and a whole move played.

:func:`turn_moves` lists (or only counts) every legal whole move of a position: the
capture sequences of :mod:`.sequences` when there is a capture (captures are compulsory),
else the quiet moves. The pieces come from the bit masks (:mod:`.masks`) on boards up to
10x10 and from the board on larger ones, the moves in the same order either way.
:func:`play_move` plays a listed move (the board turned to the other player's view, the
masks made with it), :func:`arrived` is the crowning rule (a man that ends its move on the
far row is crowned), :func:`perft` counts the leaves of the move tree.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from damii_env._bits import lowest_bit, mirror
from damii_env._kernels.hops import _action, decode, hop_start, jumps_from, quiet_from
from damii_env._kernels.masks import (
    _own_squares,
    _shifted,
    bit_layout,
    board_bits,
    kings_can_jump,
    kings_steps,
    men_jumpers,
    men_steps,
    turn_masks,
)
from damii_env._kernels.sequences import _no_paths, _scratch, _sequences_from, new_frames
from damii_env._kernels.state import (
    B_ENEMY_KINGS,
    B_ENEMY_MEN,
    B_KINGS,
    B_MEN,
    BL_MIRROR,
    BL_SQUARE,
    M_OUTCOME,
    MAX_BITBOARD_SIZE,
    OUT_ONGOING,
    P_FLY,
    P_MEN_BACK,
    P_N,
    P_S,
    ROW0,
    YES,
)


@njit(cache=True, inline="always")
def _store_quiet(action, m, store, paths, pcaps, plen, q):
    """Quiet move `action` as move m of list q, where the list has room (`store` moves);
    returns m + 1 (moves past the room are counted, not stored)."""
    if m < store:
        paths[q, m, 0] = action
        pcaps[q, m, 0] = -1
        plen[q, m] = 1
    return m + 1


@njit(cache=True, inline="always")
def _store_man_steps(bit, s, empty, half, n1, m, store, paths, pcaps, plen, q):
    """The quiet steps of the man on square s (bit `bit` of the masks) onto the `empty`
    squares, up-left then up-right, stored from move m of list q (:func:`_store_quiet`).
    Returns the new count."""
    for d in range(2):  # up-left (d 0), up-right (d 1)
        to = bit - half - 1 + d
        if to >= 0 and (empty >> to) & 1:
            m = _store_quiet(_action(s, d, 0, n1), m, store, paths, pcaps, plen, q)
    return m


@njit(cache=True, inline="always")
def _store_steps(men, kings, empty, half, n1, fly, layout, S, m, store, paths, pcaps, plen,
                 q):
    """The quiet moves of the men and kings of the masks onto the `empty` squares, stored
    from move m of list q by square: a man's steps up-left then up-right, a king's moves
    direction by direction (0 to 3, as the geometry numbers them), nearest square first,
    along the diagonal up to the first piece if `fly`, else one square (what
    :func:`quiet_from` lists from the board). Returns the new count."""
    x = men | kings
    while x != 0:
        bit = lowest_bit(x)
        x &= x - 1
        s = layout[S + BL_SQUARE + bit]
        if (kings >> bit) & 1:
            for d in range(4):
                y = np.int64(1) << bit
                k = 0
                while True:
                    y = _shifted(y, d, half) & empty
                    if y == 0:
                        break
                    m = _store_quiet(_action(s, d, k, n1), m, store, paths, pcaps, plen, q)
                    k += 1
                    if not fly:
                        break
            continue
        m = _store_man_steps(bit, s, empty, half, n1, m, store, paths, pcaps, plen, q)
    return m


@njit(cache=True, inline="always")
def list_quiet(params, bits, b, layout, paths, pcaps, plen, q):
    """List the legal moves of game b into list q when the player to move has nothing to
    capture: its quiet moves by square, as :func:`turn_moves` lists them, from the bit
    masks without calling it (the call passes its many arrays on the stack). Returns the
    number of moves, or -1 when a piece can capture: ask :func:`turn_moves`."""
    men, kings, empty, prey = turn_masks(params, bits, b, layout)
    half = params[P_N] // 2
    if men_jumpers(men, prey, empty, half, True, params[P_MEN_BACK] == 1) != 0:
        return -1
    fly = params[P_FLY] == 1
    if kings != 0 and kings_can_jump(kings, bits[b, B_ENEMY_MEN] | bits[b, B_ENEMY_KINGS],
                                     empty, half, fly):
        return -1
    return _store_steps(men, kings, empty, half, params[P_N] - 1, fly, layout, params[P_S],
                        0, plen.shape[1], paths, pcaps, plen, q)


@njit(cache=True, _nrt=False)
def turn_moves(params, ray, board, pending, b, scratch, frames, paths, pcaps, plen, q,
               bits, layout, store_quiet):
    """Every legal whole move of the player to move in game b, at the start of a turn:
    list q of the move lists: hop actions in paths[q, i], captured squares (-1 for a quiet
    move) in pcaps[q, i], hops in plen[q, i] (whole arrays and an index, not views: a
    view costs a reference count on every call). Returns the number of moves (more than
    plen.shape[1]: they did not fit;
    with no room at all, they are only counted; without `store_quiet`, quiet moves are
    only counted, captures listed).

    On boards of at most :data:`MAX_BITBOARD_SIZE` squares a side the pieces come from the
    bit masks bits[b] (:func:`board_bits`, kept by the caller as it plays moves:
    :func:`play_move`) in the board's bit layout `layout` (:func:`bit_layout`), where a
    step in each direction is a fixed shift (one row up-left is ``-(N/2 + 1)``, up-right
    ``-N/2``, down-left ``+N/2``, down-right ``+N/2 + 1``, and no step off the board lands
    on a square): the men that can jump are found all at once (the square next to a man
    holds a piece it may take and the one beyond is empty: the test :func:`jumps_from`
    makes, which then lists them), and the men's quiet moves are shifts of the men onto
    the empty squares. The kings' moves and every capture sequence come from
    :func:`jumps_from`, :func:`capture_sequences` and :func:`quiet_from`. Larger boards
    list their pieces from the board. The moves come in the same order either way: the
    kings' captures, then the men's, by square; or the quiet moves by square."""
    if params[P_N] > MAX_BITBOARD_SIZE:
        return _turn_moves_listed(params, ray, board, pending, b, scratch, frames, paths,
                                  pcaps, plen, q, store_quiet)
    S = params[P_S]
    n1 = params[P_N] - 1
    half = params[P_N] // 2
    men, kings, empty, prey = turn_masks(params, bits, b, layout)
    row = S + 1
    m = 0
    best = -1
    # the kings' captures (where the masks show one), then the men's (those with a jump)
    x = np.int64(0)
    if kings != 0 and kings_can_jump(kings, bits[b, B_ENEMY_MEN] | bits[b, B_ENEMY_KINGS],
                                     empty, half, params[P_FLY] == 1):
        x = kings
    while x != 0:
        s = layout[S + BL_SQUARE + lowest_bit(x)]
        x &= x - 1
        if jumps_from(params, ray, board, pending, b, s, True, scratch, row, 0) > 0:
            m, best = _sequences_from(params, ray, board, pending, b, s, True, best, m,
                                      scratch, frames, paths, pcaps, plen, q)
    jumpers = men_jumpers(men, prey, empty, half, True, params[P_MEN_BACK] == 1)
    while jumpers != 0:
        s = layout[S + BL_SQUARE + lowest_bit(jumpers)]
        jumpers &= jumpers - 1
        m, best = _sequences_from(params, ray, board, pending, b, s, False, best, m,
                                  scratch, frames, paths, pcaps, plen, q)
    if m > 0:
        return m
    store = plen.shape[1] if store_quiet else 0
    if store == 0:
        # counted only: the men's steps up-left and up-right, and the kings' moves a
        # direction at a time, all at once
        return men_steps(men, empty, half) + kings_steps(kings, empty, half,
                                                         params[P_FLY] == 1)
    return _store_steps(men, kings, empty, half, n1, params[P_FLY] == 1, layout, S, m, store,
                        paths, pcaps, plen, q)


@njit(cache=True, _nrt=False)
def _turn_moves_listed(params, ray, board, pending, b, scratch, frames, paths, pcaps, plen,
                       q, store_quiet):
    """:func:`turn_moves` on a board without a bit layout: the pieces listed from the
    board, every piece's jumps tried."""
    own = scratch[params[P_S] + 2]
    kings = scratch[params[P_S]]
    m_own, m_kings = _own_squares(params, board, b, own, kings)
    row = params[P_S] + 1
    m = 0
    best = -1
    for i in range(m_kings):
        s = kings[i]
        if jumps_from(params, ray, board, pending, b, s, True, scratch, row, 0) > 0:
            m, best = _sequences_from(params, ray, board, pending, b, s, True, best, m,
                                      scratch, frames, paths, pcaps, plen, q)
    for i in range(m_own):
        s = own[i]
        if board[b, s] == 1:
            m, best = _sequences_from(params, ray, board, pending, b, s, False, best, m,
                                      scratch, frames, paths, pcaps, plen, q)
    if m > 0:
        return m
    store = plen.shape[1] if store_quiet else 0
    for i in range(m_own):
        s = own[i]
        n = quiet_from(params, ray, board, b, s, board[b, s] == 2, scratch, row, 0)
        if store == 0:
            m += n
            continue
        for j in range(n):
            m = _store_quiet(scratch[row, j], m, store, paths, pcaps, plen, q)
    return m


@njit(cache=True, inline="always")
def _turn_row(a, src, dst, S, negate):
    """a[dst, :S] = a[src, :S] turned to the other player's view (square t is S - 1 - t),
    negated if `negate` (a board: the owners swap). The indices are unsigned: numba then
    makes no test for a negative index, which halves the loop's time."""
    last = np.uint64(S - 1)
    d = np.uint64(dst)
    r = np.uint64(src)
    for t in range(np.uint64(S)):
        v = a[r, last - t]
        a[d, t] = -v if negate else v


@njit(cache=True, inline="always")
def arrived(params, piece, land):
    """The mover's piece `piece` (1 a man, 2 a king) after a whole move that ends on
    square `land` (mover's view): a man ending on the far row is crowned."""
    if piece == 1 and land < params[P_N] // 2:
        return 2
    return piece


@njit(cache=True, inline="always")
def play_move(params, ray, board, src, dst, paths, pcaps, plen, i, bits, layout):
    """Play whole move i of the board in row `src` (list `src` of :func:`turn_moves`'s
    lists) into row `dst`: the piece goes from its start to its last landing square, the captured
    pieces come off, a man ending on the far row is crowned, and the board is turned to
    the other player's view; on a board with a bit layout the bit masks of row `src`
    (:func:`board_bits`) likewise into row `dst` of `bits`. Only the board: counters,
    chips and scores are the caller's."""
    S = params[P_S]
    n1 = params[P_N] - 1
    a0 = paths[src, i, 0]
    s = hop_start(a0, n1)
    last = paths[src, i, plen[src, i] - 1]
    ls, ld, lk = decode(last, n1)
    land = ray[ls, ld, lk]
    piece = board[src, s]
    _turn_row(board, src, dst, S, True)
    for j in range(plen[src, i]):
        c = pcaps[src, i, j]
        if c >= 0:
            board[dst, S - 1 - c] = 0
    board[dst, S - 1 - s] = 0
    crowned = arrived(params, piece, land) != piece
    if crowned:
        piece = 2
    board[dst, S - 1 - land] = -piece
    if params[P_N] <= MAX_BITBOARD_SIZE:
        men = bits[src, B_MEN]
        kings = bits[src, B_KINGS]
        enemy_men = bits[src, B_ENEMY_MEN]
        enemy_kings = bits[src, B_ENEMY_KINGS]
        for j in range(plen[src, i]):
            c = pcaps[src, i, j]
            if c >= 0:
                off = ~(np.int64(1) << layout[c])
                enemy_men &= off
                enemy_kings &= off
        start = np.int64(1) << layout[s]
        end = np.int64(1) << layout[land]
        if piece == 1:
            men = (men & ~start) | end
        elif crowned:
            men &= ~start
            kings |= end
        else:
            kings = (kings & ~start) | end
        shift = layout[S + BL_MIRROR]
        bits[dst, B_MEN] = mirror(enemy_men, shift)
        bits[dst, B_KINGS] = mirror(enemy_kings, shift)
        bits[dst, B_ENEMY_MEN] = mirror(men, shift)
        bits[dst, B_ENEMY_KINGS] = mirror(kings, shift)


@njit(cache=True)
def perft(T, G, depth, capacity):
    """Number of whole-move paths of length `depth` from the game in row 0, at the start
    of its turn (the moves of :func:`turn_moves`, played by :func:`play_move`; the last
    level is counted, not played). `capacity`: room for the moves of one position to be
    played; returns -1 if one had more."""
    params, ray = T.params, T.ray
    board0, meta = G.board, G.meta
    if depth == 0:
        return 1
    if meta[0, M_OUTCOME] != OUT_ONGOING:
        return 0
    S = params[P_S]
    H = S + 1
    scratch = _scratch(params)
    frames = new_frames(params)
    board = np.zeros((depth + 1, S), dtype=np.int8)
    pending = np.zeros((depth + 1, S), dtype=np.int8)
    bits = np.zeros((depth + 1, 4), dtype=np.int64)
    layout = bit_layout(params)
    paths = np.zeros((depth, capacity, H), dtype=np.int16)
    pcaps = np.zeros((depth, capacity, H), dtype=np.int16)
    plen = np.zeros((depth, capacity), dtype=np.int16)
    no_paths, no_len = _no_paths(scratch)
    count = np.zeros(depth, dtype=np.int64)
    idx = np.zeros(depth, dtype=np.int64)
    for t in range(S):
        board[0, t] = board0[0, t]
    if params[P_N] <= MAX_BITBOARD_SIZE:
        board_bits(params, layout, board, 0, bits)
    return _perft_loop(params, ray, depth, capacity, scratch, frames, board, pending, bits,
                       layout, paths, pcaps, plen, no_paths, no_len, count, idx)


@njit(cache=True, _nrt=False)
def _perft_loop(params, ray, depth, capacity, scratch, frames, board, pending, bits, layout,
                paths, pcaps, plen, no_paths, no_len, count, idx):
    """The walk of :func:`perft` once its arrays are made (row 0 loaded), without
    reference counts (it makes no array)."""
    if depth == 1:
        return turn_moves(params, ray, board, pending, ROW0, scratch, frames, no_paths,
                          no_paths, no_len, ROW0, bits, layout, YES)
    m = turn_moves(params, ray, board, pending, ROW0, scratch, frames, paths, pcaps, plen,
                   ROW0, bits, layout, YES)
    if m > capacity:
        return -1
    count[0] = m
    total = 0
    ply = 0
    while ply >= 0:
        if idx[ply] >= count[ply]:
            ply -= 1
            continue
        i = idx[ply]
        idx[ply] += 1
        play_move(params, ray, board, ply, ply + 1, paths, pcaps, plen, i, bits, layout)
        if ply + 2 == depth:  # the last level is counted, not stored
            total += turn_moves(params, ray, board, pending, ply + 1, scratch, frames,
                                no_paths, no_paths, no_len, ROW0, bits, layout, YES)
            continue
        m = turn_moves(params, ray, board, pending, ply + 1, scratch, frames, paths, pcaps,
                       plen, ply + 1, bits, layout, YES)
        if m > capacity:
            return -1
        count[ply + 1] = m
        idx[ply + 1] = 0
        ply += 1
    return total

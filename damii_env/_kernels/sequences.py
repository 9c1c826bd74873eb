"""Which captures are legal: the one statement of the capture rules.

:func:`capture_sequences` walks every capture sequence of one piece depth-first (a piece
must go on capturing while it can; Triestine's and Sci-Damath's captured pieces leave at
once, the others' at the end of the move; a man crowned mid-capture stops where
``P_PROMO_ENDS``) and keeps those the precedence rule allows (:func:`precedence_key`):
free choice (Damii), the most pieces (International), Triestine's most pieces, then a
king capturing, then the most kings, then the earliest king, and Sci-Damath's most chips,
then a dama. Every caller takes its captures from here: the environments' first hops
(:mod:`.turns`), whole moves (:mod:`.moves`) and so the search and perft.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from damii_env._kernels.hops import do_hop, jumps_from, undo_hop
from damii_env._kernels.state import (
    F_CAP,
    F_CAPV,
    F_FIRST_KING,
    F_HOP,
    F_IX,
    F_KINGS,
    F_LAND,
    F_N,
    F_SQ,
    N_FRAME,
    P_IMMEDIATE,
    P_N,
    P_PRECEDENCE,
    P_PROMO_ENDS,
    P_S,
    PREC_DAMATH,
    PREC_MOST,
    PREC_TRIESTINE,
)


@njit(cache=True, _nrt=False)
def precedence_key(mode, count, king_mover, kings, first_king):
    """Integer that orders complete capture sequences; greater is preferred."""
    if mode == PREC_MOST:
        return count
    if mode == PREC_TRIESTINE:
        early = 0
        if kings > 0:
            early = 63 - first_king
        return ((count * 2 + king_mover) * 64 + kings) * 64 + early
    if mode == PREC_DAMATH:
        return count * 2 + king_mover
    return 0


@njit(cache=True)
def new_frames(params):
    """The frame stack of :func:`capture_sequences` (a sequence captures at most S pieces)."""
    return np.empty((params[P_S] + 2, N_FRAME), dtype=np.int64)


@njit(cache=True, inline="always")
def _keep_sequence(frames, level, key, best, m, m0, legal, b, paths, pcaps, plen, q):
    """Record the complete sequence frames[0..level] of precedence key `key` in the sink
    of :func:`capture_sequences`; return the new (m, best)."""
    if key < best:
        return m, best
    if key > best:  # every sequence kept so far is dropped
        m = m0
        best = key
    if plen.shape[1] > 0:
        if m < plen.shape[1]:
            for j in range(level + 1):
                paths[q, m, j] = frames[j, F_HOP]
                pcaps[q, m, j] = frames[j, F_CAP]
            plen[q, m] = level + 1
        return m + 1, best
    if legal.shape[0] == 0:  # counted only
        return m + 1, best
    a = frames[0, F_HOP]
    for i in range(m0, m):
        if legal[b, i] == a:
            return m, best
    legal[b, m] = a
    return m + 1, best


@njit(cache=True, inline="always")
def capture_sequences(params, ray, board, pending, b, s, is_king, count, kings, first_king,
                      king_mover, best, m, m0, scratch, frames, legal, paths, pcaps, plen, q):
    """Every complete capture sequence of the piece on square s of game b: the one
    statement of which captures are legal (the environments' hops, the whole moves of the
    search, perft and the ``Game`` API all come from here).

    The piece stands on s after `count` captures this turn (`kings` of them kings, the
    first at hop `first_king`, -1 if none; `king_mover`: it started the turn as a king).
    A sequence ends where the piece has no jump left (or, with ``promotion_mid_capture =
    crowns_and_ends``, where a man reaches the far row). Only the sequences of the
    greatest precedence key seen so far (`best`, -1 at first) are kept: the sink holds
    entries m0..m-1, and a greater key empties it. The sink is the whole paths when
    `plen` has room (list q: hop actions in paths[q, i], captured squares in pcaps[q, i],
    hops in plen[q, i]; m counts on past the room, so that the caller sees it overflow),
    else the
    distinct first hops, in legal[b], or, when `legal` has no rows either, only their
    number. An explicit stack (`frames`, one row a depth;
    `scratch`, the jumps of each depth) replaces recursion; board and pending are as
    they were when it returns. Returns ``(m, best)``.
    """
    mode = params[P_PRECEDENCE]
    half = params[P_N] // 2
    n1 = params[P_N] - 1
    immediate = params[P_IMMEDIATE] == 1
    promo_ends = params[P_PROMO_ENDS] == 1 and not is_king
    n = jumps_from(params, ray, board, pending, b, s, is_king, scratch, 0, 0)
    if n == 0:
        return m, best
    level = 0
    frames[0, F_SQ] = s
    frames[0, F_N] = n
    frames[0, F_IX] = 0
    frames[0, F_KINGS] = kings
    frames[0, F_FIRST_KING] = first_king
    while level >= 0:
        if frames[level, F_IX] >= frames[level, F_N]:
            level -= 1
            if level >= 0:  # undo the hop of this level
                undo_hop(board, pending, b, frames[level, F_SQ], frames[level, F_LAND],
                         frames[level, F_CAP], frames[level, F_CAPV])
            continue
        a = scratch[level, frames[level, F_IX]]
        frames[level, F_IX] += 1
        s0, land, cap, capv = do_hop(ray, board, pending, b, a, n1, immediate)
        frames[level, F_HOP] = a
        frames[level, F_CAP] = cap
        frames[level, F_CAPV] = capv
        frames[level, F_LAND] = land
        nk = frames[level, F_KINGS]
        nfk = frames[level, F_FIRST_KING]
        c = count + level + 1
        if capv == -2:
            if nk == 0:
                nfk = c - 1
            nk += 1
        n = 0
        if not (promo_ends and land < half):
            n = jumps_from(params, ray, board, pending, b, land, is_king, scratch, level + 1,
                           0)
        if n == 0:
            key = precedence_key(mode, c, king_mover, nk, nfk)
            m, best = _keep_sequence(frames, level, key, best, m, m0, legal, b, paths, pcaps,
                                     plen, q)
            undo_hop(board, pending, b, s0, land, cap, capv)
        else:
            level += 1
            frames[level, F_SQ] = land
            frames[level, F_N] = n
            frames[level, F_IX] = 0
            frames[level, F_KINGS] = nk
            frames[level, F_FIRST_KING] = nfk
    return m, best


@njit(cache=True, inline="always")
def _no_paths(scratch):
    """Move lists without room: (paths or pcaps, plen) of one list of 0 moves (empty views
    of `scratch`: nothing is allocated)."""
    empty = scratch[:0]
    return empty.reshape((1, 0, 0)), empty.reshape((1, 0))


@njit(cache=True, inline="always")
def _frames_in(params, scratch):
    """The frame stack of :func:`capture_sequences` in the scratch rows after the hop
    buffers (see :func:`_scratch`): no allocation in the environments' step."""
    return scratch[params[P_S] + 3:]


@njit(cache=True, inline="always")
def _sequences_from(params, ray, board, pending, b, s, is_king, best, m, scratch, frames,
                    paths, pcaps, plen, q):
    """A turn's capture sequences from the piece on s appended to list q (from move m on,
    :func:`capture_sequences` at the turn's start). Returns ``(m, best)``."""
    return capture_sequences(params, ray, board, pending, b, s, is_king, 0, 0, -1,
                             1 if is_king else 0, best, m, 0, scratch, frames, scratch[:0],
                             paths, pcaps, plen, q)


@njit(cache=True)
def _scratch(params):
    """Work rows of the move generation: per-depth hop buffers for the sequence search
    (a sequence captures at most S pieces; rows 0..S-1), the own kings (row S), a buffer
    of quiet moves (S + 1), the own pieces (S + 2), then the sequence search's frames
    (rows S + 3 on, :func:`_frames_in`)."""
    S = params[P_S]
    return np.empty((2 * S + 5, max(4 * S, N_FRAME)), dtype=np.int16)

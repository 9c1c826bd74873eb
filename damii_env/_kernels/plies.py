"""The search's positions: a stack of rows, one whole move a row.

:func:`ply_root` loads a game at the start of its turn into row 0; :func:`ply_play` plays
one of row p's whole moves into row p + 1 with the same move list, end rules and
Sci-Damath scoring as the engine (its key made at the move's squares only, its bit masks
with the move); a row played as a leaf only counts its quiet moves (:func:`ply_list` lists
them when the search goes on). ``tests/rules/test_ply_stack.py`` checks every row against
the engine's own hops: board, masks, key, number of moves and outcome.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from damii_env._bits import prefetch_row
from damii_env._kernels.damath import chip_value, jump_score
from damii_env._kernels.ends import end_outcome, end_reason, move_counters
from damii_env._kernels.hashing import _chip_key, _piece_key, mirrored_board_hash
from damii_env._kernels.hops import decode, hop_start
from damii_env._kernels.masks import bit_layout, board_bits, count_quiet
from damii_env._kernels.moves import _turn_row, arrived, list_quiet, play_move, turn_moves
from damii_env._kernels.sequences import _scratch, new_frames
from damii_env._kernels.state import (
    I_CAPTURING,
    I_ENDGAME,
    I_IRREV,
    I_N_MOVES,
    I_NO_PROGRESS,
    I_OUTCOME,
    I_PLY,
    I_REASON,
    I_ROOT_HIST,
    I_SEEN,
    I_TURN,
    M_ENDGAME,
    M_HIST_LEN,
    M_NO_PROGRESS,
    M_OUTCOME,
    M_PLY,
    M_TURN,
    MAX_BITBOARD_SIZE,
    N_INFO,
    OUT_ONGOING,
    P_HIST,
    P_N,
    P_S,
    P_SCORING,
    REASON_NONE,
    ROW0,
    SQ_OP,
    SQ_X,
    SQ_Y,
    YES,
    Plies,
)


@njit(cache=True)
def new_plies(params, rows, room, hist_cap):
    """A ply stack (:class:`~.state.Plies`) of `rows` rows, with room for `room` whole
    moves a row (bits: each row's bit masks, :func:`board_bits`; layout:
    :func:`bit_layout`; mirrored: each row's board key seen by the other player,
    :func:`mirrored_board_hash`, which makes the next row's key without a pass over the
    board)."""
    S = params[P_S]
    return Plies(np.zeros((rows, S), dtype=np.int8), np.zeros((rows, S), dtype=np.int8),
                 np.full((rows, S), -1, dtype=np.int8), np.zeros((rows, 4)),
                 np.zeros((rows, N_INFO), dtype=np.int64), np.zeros(rows, dtype=np.uint64),
                 np.empty((rows, room, S + 1), dtype=np.int16),
                 np.empty((rows, room, S + 1), dtype=np.int16),
                 np.zeros((rows, room), dtype=np.int16), np.zeros(hist_cap, dtype=np.uint64),
                 _scratch(params), new_frames(params), np.zeros((rows, 4), dtype=np.int64),
                 bit_layout(params), np.zeros(rows, dtype=np.uint64))


@njit(cache=True, _nrt=False)
def ply_root(T, G, b, P):
    """Load game b of the engine's state arrays, at the start of its turn, into row 0 of
    the ply stack P and generate its moves; return their number."""
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, meta, hist, legal, chip, scores = G
    pb, ppend, pchip, pscores = P.board, P.pending, P.chip, P.scores
    info, keys, paths, pcaps, plen = P.info, P.keys, P.paths, P.pcaps, P.plen
    root_hist = P.root_hist
    S = params[P_S]
    for s in range(S):
        pb[0, s] = board[b, s]
        ppend[0, s] = 0
        pchip[0, s] = chip[b, s]
    for j in range(4):
        pscores[0, j] = scores[b, j]
    info[0, I_TURN] = meta[b, M_TURN]
    info[0, I_PLY] = meta[b, M_PLY]
    info[0, I_NO_PROGRESS] = meta[b, M_NO_PROGRESS]
    info[0, I_ENDGAME] = meta[b, M_ENDGAME]
    info[0, I_IRREV] = -1
    H = params[P_HIST]
    hl = meta[b, M_HIST_LEN]
    kept = min(hl, H, root_hist.shape[0] + 1)
    # the record's last entry is the root itself (keys[0]); the ones before it
    for j in range(kept - 1):
        root_hist[j] = hist[b, (hl - kept + j) % H]
    info[0, I_ROOT_HIST] = kept - 1
    keys[0] = hist[b, (hl - 1) % H]
    seen = 1
    for j in range(kept - 1):
        if root_hist[j] == keys[0]:
            seen += 1
    info[0, I_SEEN] = seen
    P.mirrored[0] = mirrored_board_hash(params, zobrist, pb, pchip, 0)
    if params[P_N] <= MAX_BITBOARD_SIZE:
        board_bits(params, P.layout, pb, 0, P.bits)
    n = turn_moves(params, ray, pb, ppend, ROW0, P.scratch, P.frames, paths, pcaps, plen, ROW0,
                   P.bits, P.layout, YES)
    info[0, I_N_MOVES] = min(n, plen.shape[1])
    info[0, I_CAPTURING] = 1 if n > 0 and pcaps[0, 0, 0] >= 0 else 0
    info[0, I_REASON] = REASON_NONE
    info[0, I_OUTCOME] = meta[b, M_OUTCOME]
    return info[0, I_N_MOVES]


@njit(cache=True, inline="always")
def _score_move(params, ray, sqinfo, chipval, board, chip, scores, p, q, paths, pcaps, i,
                nhops, turn):
    """The points and chips of a whole move of row p (Damath scoring), into row q (the
    chips turned to its player's view): each jump scores ``taker OP taken`` on its landing square,
    doubled for a dama that moves and for a dama taken (as the engine's hops score)."""
    S = params[P_S]
    n1 = params[P_N] - 1
    _turn_row(chip, p, q, S, False)  # the chips turned; square t of row p is S - 1 - t
    for j in range(4):
        scores[q, j] = scores[p, j]
    s = hop_start(paths[p, i, 0], n1)
    mover_chip = chip[p, s]
    king_mover = board[p, s] == 2
    chip[q, S - 1 - s] = -1
    for j in range(nhops):
        hs, hd, hk = decode(paths[p, i, j], n1)
        land = ray[hs, hd, hk]
        cap = pcaps[p, i, j]
        if cap >= 0:
            absland = land if turn == 0 else S - 1 - land
            x = sqinfo[absland, SQ_X]
            y = sqinfo[absland, SQ_Y]
            mult = 2.0 if king_mover else 1.0
            if board[p, cap] == -2:
                mult *= 2.0
            scores[q, turn] += jump_score(sqinfo[absland, SQ_OP],
                                          chip_value(chipval, mover_chip, x, y),
                                          chip_value(chipval, chip[p, cap], x, y), mult)
            chip[q, S - 1 - cap] = -1
    hs, hd, hk = decode(paths[p, i, nhops - 1], n1)
    chip[q, S - 1 - ray[hs, hd, hk]] = mover_chip


@njit(cache=True, inline="always")
def ply_play(T, P, p, i, leaf=False, warm=None):
    """Play whole move i of row p of the ply stack into row p + 1: the board, chips and
    points, the draw counters, the position's key and how often it has occurred, then the
    new row's moves and whether the game ends there (the engine's rules: the same
    :func:`turn_moves`, :func:`move_counters`, :func:`end_reason` and
    :func:`end_outcome`). For a `leaf` (a row that will not be searched unless it must
    capture) quiet moves are counted, not listed. `warm`: a 2-D table of a power of 2
    rows indexed by the key's low bits (a search's transposition table), whose row for
    the new position is prefetched as soon as its key is known. Returns the new row's
    reason (REASON_NONE: it goes on)."""
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, chip, scores, info = P.board, P.pending, P.chip, P.scores, P.info
    keys, paths, pcaps, plen, root_hist = P.keys, P.paths, P.pcaps, P.plen, P.root_hist
    q = p + 1
    turn = info[p, I_TURN]
    nh = plen[p, i]
    S = params[P_S]
    n1 = params[P_N] - 1
    s = hop_start(paths[p, i, 0], n1)
    hs, hd, hk = decode(paths[p, i, nh - 1], n1)
    land = ray[hs, hd, hk]
    piece = board[p, s]
    final = arrived(params, piece, land)
    # the keys change where the move will (its start, captures and end, with the chips
    # under them in a scoring game), in row p's view (`own`: row p's board, then the board
    # after the move) and in the other player's (`seen`: those turned, which is row q's);
    # made before the move is played, so that the table's row is fetched meanwhile
    scoring = params[P_SCORING] == 1
    mirrored = P.mirrored
    own = keys[p]
    if turn == 1:  # row p is Black's: its key holds the colour's key
        own ^= zobrist[S * 4]
    seen = mirrored[p]
    own ^= _piece_key(zobrist, s, piece)
    seen ^= _piece_key(zobrist, S - 1 - s, -piece)
    mover_chip = chip[p, s]
    if scoring:
        own ^= _chip_key(zobrist, S, s, mover_chip)
        seen ^= _chip_key(zobrist, S, S - 1 - s, mover_chip)
    for j in range(nh):
        c = pcaps[p, i, j]
        if c >= 0:
            v = board[p, c]
            own ^= _piece_key(zobrist, c, v)
            seen ^= _piece_key(zobrist, S - 1 - c, -v)
            if scoring:
                own ^= _chip_key(zobrist, S, c, chip[p, c])
                seen ^= _chip_key(zobrist, S, S - 1 - c, chip[p, c])
    own ^= _piece_key(zobrist, land, final)
    seen ^= _piece_key(zobrist, S - 1 - land, -final)
    if scoring:
        own ^= _chip_key(zobrist, S, land, mover_chip)
        seen ^= _chip_key(zobrist, S, S - 1 - land, mover_chip)
    mirrored[q] = own
    key = seen
    if turn == 0:  # row q is Black's
        key ^= zobrist[S * 4]
    keys[q] = key
    if warm is not None:
        prefetch_row(warm, key & np.uint64(warm.shape[0] - 1))
    was_man = piece == 1
    captures = 0
    if pcaps[p, i, 0] >= 0:
        captures = nh
    if scoring:
        _score_move(params, ray, sqinfo, chipval, board, chip, scores, p, q, paths, pcaps,
                    i, nh, turn)
    play_move(params, ray, board, p, q, paths, pcaps, plen, i, P.bits, P.layout)
    promoted = was_man and final == 2
    no_progress, endgame, irreversible = move_counters(
        captures, promoted, was_man, info[p, I_NO_PROGRESS], info[p, I_ENDGAME])
    turn = 1 - turn
    info[q, I_TURN] = turn
    info[q, I_PLY] = info[p, I_PLY] + 1
    info[q, I_NO_PROGRESS] = no_progress
    info[q, I_ENDGAME] = endgame
    info[q, I_IRREV] = q if irreversible else info[p, I_IRREV]
    occurrences = 1
    first = info[q, I_IRREV]
    if first < 0:
        for j in range(info[0, I_ROOT_HIST]):
            if root_hist[j] == key:
                occurrences += 1
        first = 0
    for j in range(first, q):
        if keys[j] == key:
            occurrences += 1
    info[q, I_SEEN] = occurrences
    plen[q, 0] = 0  # a listed move sets it: a leaf's counted quiet moves leave it 0
    n = -1
    if params[P_N] <= MAX_BITBOARD_SIZE:
        if leaf:  # most leaves: nothing to take
            n = count_quiet(params, P.bits, q, P.layout)
        else:  # most inner rows: nothing to take
            n = list_quiet(params, P.bits, q, P.layout, paths, pcaps, plen, q)
    if n < 0:
        n = turn_moves(params, ray, board, pending, q, P.scratch, P.frames, paths, pcaps, plen, q,
                       P.bits, P.layout, not leaf)
    listed = min(n, plen.shape[1])
    info[q, I_CAPTURING] = 1 if listed > 0 and plen[q, 0] > 0 and pcaps[q, 0, 0] >= 0 else 0
    if leaf and info[q, I_CAPTURING] == 0:
        info[q, I_N_MOVES] = n  # counted only
    else:
        info[q, I_N_MOVES] = listed
    reason = end_reason(params, board, q, n, occurrences, no_progress, endgame,
                        info[q, I_PLY], P.bits)
    info[q, I_REASON] = reason
    info[q, I_OUTCOME] = OUT_ONGOING
    if reason != REASON_NONE:
        info[q, I_OUTCOME] = end_outcome(params, board, chip, scores, sqinfo, chipval, q,
                                         turn, reason)
    return reason


@njit(cache=True, _nrt=False)
def ply_list(T, P, q):
    """List the quiet moves of row q of the ply stack that :func:`ply_play` only counted
    (a `leaf` row that the search goes on from after all). Returns the number of moves."""
    params, ray = T.params, T.ray
    board, pending, info, paths, pcaps, plen = P.board, P.pending, P.info, P.paths, P.pcaps, P.plen
    n = turn_moves(params, ray, board, pending, q, P.scratch, P.frames, paths, pcaps, plen, q,
                   P.bits, P.layout, True)
    info[q, I_N_MOVES] = min(n, plen.shape[1])
    return info[q, I_N_MOVES]

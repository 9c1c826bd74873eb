"""The environments' engine: B games stepped one hop at a time.

A turn begins (:func:`begin_turn`: the end rules, the position recorded, the legal first
hops from :mod:`.sequences` or the quiet steps), hops are applied (:func:`apply_action`: a
capture goes on while the piece can capture more, scored in Sci-Damath), and the turn ends
(:func:`end_turn`: pending pieces lifted, :func:`~.moves.arrived` crowns, the counters).
The batch drivers at the bottom loop over games in compiled code, in parallel for large
batches.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from damii_env._kernels.damath import chip_value, jump_score
from damii_env._kernels.ends import end_outcome, end_reason, move_counters
from damii_env._kernels.hashing import position_hash
from damii_env._kernels.hops import do_hop, jumps_from, quiet_from
from damii_env._kernels.masks import _own_pieces
from damii_env._kernels.moves import arrived
from damii_env._kernels.sequences import _frames_in, _no_paths, _scratch, capture_sequences
from damii_env._kernels.state import (
    M_CAPTURING,
    M_CONT,
    M_ENDGAME,
    M_HIST_LEN,
    M_LAST_FROM,
    M_LAST_TO,
    M_N_LEGAL,
    M_NO_PROGRESS,
    M_OUTCOME,
    M_PLY,
    M_REASON,
    M_REQ_KEY,
    M_SEQ_COUNT,
    M_SEQ_FIRST_KING,
    M_SEQ_KING_MOVER,
    M_SEQ_KINGS,
    M_SEQ_START,
    M_TURN,
    OUT_ONGOING,
    P_HIST,
    P_IMMEDIATE,
    P_N,
    P_PRECEDENCE,
    P_PROMO_ENDS,
    P_S,
    P_SCORING,
    PREC_FREE,
    REASON_NO_ENEMY,
    REASON_NO_MOVES,
    REASON_NONE,
    SQ_OP,
    SQ_X,
    SQ_Y,
)


@njit(cache=True, inline="always")
def generate_turn(params, ray, board, pending, meta, legal, b, scratch):
    """Fill legal[b] with the legal first hops of the player to move; return their count.

    The jumps and, if there are none, the quiet moves are looked for from the own pieces'
    squares (:func:`_own_pieces`, in a row of `scratch`, see :func:`_scratch`). Under a
    precedence rule the first hops are those of the sequences :func:`capture_sequences`
    keeps; without one, every jump begins a complete sequence."""
    own = scratch[params[P_S] + 2]
    m = _own_pieces(params, board, b, own)
    n = 0
    for i in range(m):
        s = own[i]
        n = jumps_from(params, ray, board, pending, b, s, board[b, s] == 2, legal, b, n)
    if n > 0:
        meta[b, M_CAPTURING] = 1
        if params[P_PRECEDENCE] != PREC_FREE:
            # the pieces that can jump (their jumps are listed together), then their
            # sequences' first hops in place of the jumps
            starts = scratch[params[P_S] + 1]
            k = 0
            width = 4 * (params[P_N] - 1)
            for i in range(n):
                s = legal[b, i] // width
                if k == 0 or starts[k - 1] != s:
                    starts[k] = s
                    k += 1
            frames = _frames_in(params, scratch)
            paths, plen = _no_paths(scratch)
            best = -1
            n = 0
            for i in range(k):
                s = starts[i]
                king = board[b, s] == 2
                n, best = capture_sequences(params, ray, board, pending, b, s, king, 0, 0, -1,
                                            1 if king else 0, best, n, 0, scratch, frames,
                                            legal, paths, paths, plen, 0)
            meta[b, M_REQ_KEY] = best
    else:
        meta[b, M_CAPTURING] = 0
        for i in range(m):
            s = own[i]
            n = quiet_from(params, ray, board, b, s, board[b, s] == 2, legal, b, n)
    meta[b, M_N_LEGAL] = n
    return n


@njit(cache=True, inline="always")
def generate_continuation(params, ray, board, pending, meta, legal, b, scratch):
    """Fill legal[b] with the hops that continue the capture of the piece on M_CONT: the
    first hops of the sequences that complete it (under a precedence rule, those that
    reach the turn's required key)."""
    s = meta[b, M_CONT]
    if params[P_PRECEDENCE] == PREC_FREE:
        n = jumps_from(params, ray, board, pending, b, s, board[b, s] == 2, legal, b, 0)
    else:
        paths, plen = _no_paths(scratch)
        n, _ = capture_sequences(params, ray, board, pending, b, s, board[b, s] == 2,
                                 meta[b, M_SEQ_COUNT], meta[b, M_SEQ_KINGS],
                                 meta[b, M_SEQ_FIRST_KING], meta[b, M_SEQ_KING_MOVER],
                                 meta[b, M_REQ_KEY], 0, 0, scratch,
                                 _frames_in(params, scratch), legal, paths, paths, plen, 0)
    meta[b, M_N_LEGAL] = n
    meta[b, M_CAPTURING] = 1
    return n


@njit(cache=True, inline="always")
def begin_turn(T, G, b, irreversible, scratch):
    """Record the position, generate the moves and decide whether the game has ended."""
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, meta, hist, legal, chip, scores = G
    H = params[P_HIST]
    turn = meta[b, M_TURN]
    meta[b, M_CONT] = -1
    meta[b, M_SEQ_COUNT] = 0
    meta[b, M_SEQ_KINGS] = 0
    meta[b, M_SEQ_FIRST_KING] = -1
    meta[b, M_SEQ_KING_MOVER] = 0
    meta[b, M_REQ_KEY] = 0
    meta[b, M_SEQ_START] = -1
    if irreversible:
        meta[b, M_HIST_LEN] = 0
    h = position_hash(params, zobrist, board, chip, b, turn)
    hl = meta[b, M_HIST_LEN]
    seen = 0
    for i in range(min(hl, H)):
        if hist[b, i] == h:
            seen += 1
    hist[b, hl % H] = h
    meta[b, M_HIST_LEN] = hl + 1
    n = generate_turn(params, ray, board, pending, meta, legal, b, scratch)
    reason = end_reason(params, board, b, n, seen + 1, meta[b, M_NO_PROGRESS],
                        meta[b, M_ENDGAME], meta[b, M_PLY])
    if reason == REASON_NONE:
        return
    # a set-up position without enemy pieces is recorded as the loser's lack of moves
    meta[b, M_REASON] = REASON_NO_MOVES if reason == REASON_NO_ENEMY else reason
    meta[b, M_OUTCOME] = end_outcome(params, board, chip, scores, sqinfo, chipval, b, turn,
                                     reason)


@njit(cache=True, inline="always")
def end_turn(T, G, b, final_sq, was_man, scratch):
    """Lift captured pieces, crown, hand the board to the other player and begin their turn."""
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, meta, hist, legal, chip, scores = G
    S = params[P_S]
    captures = meta[b, M_SEQ_COUNT]
    for s in range(S):
        if pending[b, s] != 0:
            board[b, s] = 0
            chip[b, s] = -1
            pending[b, s] = 0
    piece = board[b, final_sq]
    promoted = arrived(params, piece, final_sq) != piece
    if promoted:
        board[b, final_sq] = 2
    meta[b, M_NO_PROGRESS], meta[b, M_ENDGAME], irreversible = move_counters(
        captures, promoted, was_man, meta[b, M_NO_PROGRESS], meta[b, M_ENDGAME])
    start = meta[b, M_SEQ_START]
    # record the move in absolute square indices
    if meta[b, M_TURN] == 0:
        meta[b, M_LAST_FROM] = start
        meta[b, M_LAST_TO] = final_sq
    else:
        meta[b, M_LAST_FROM] = S - 1 - start
        meta[b, M_LAST_TO] = S - 1 - final_sq
    # turn the board (and the chips of a scoring game) to the other player's view
    for s in range(S // 2):
        t = S - 1 - s
        v = board[b, s]
        board[b, s] = -board[b, t]
        board[b, t] = -v
    if params[P_SCORING] == 1:
        for s in range(S // 2):
            t = S - 1 - s
            c = chip[b, s]
            chip[b, s] = chip[b, t]
            chip[b, t] = c
    meta[b, M_TURN] = 1 - meta[b, M_TURN]
    meta[b, M_PLY] += 1
    begin_turn(T, G, b, irreversible, scratch)


@njit(cache=True, _nrt=False)
def apply_action(T, G, b, a, scratch):
    """Play one hop in game b. Returns 0, 1 if the game was already over, -1 if illegal."""
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, meta, hist, legal, chip, scores = G
    if meta[b, M_OUTCOME] != OUT_ONGOING:
        return 1
    n = meta[b, M_N_LEGAL]
    ok = False
    for i in range(n):
        if legal[b, i] == a:
            ok = True
            break
    if not ok:
        return -1
    n1 = params[P_N] - 1
    immediate = params[P_IMMEDIATE] == 1
    s, land, cap, capv = do_hop(ray, board, pending, b, a, n1, immediate)
    piece = board[b, land]
    if meta[b, M_SEQ_START] < 0:
        meta[b, M_SEQ_START] = s
    mover_chip = chip[b, s]
    chip[b, s] = -1
    chip[b, land] = mover_chip
    if cap >= 0 and _capture_hop(T, G, b, s, land, cap, capv, piece, mover_chip, scratch):
        return 0  # the capture goes on
    # the move is over (one end_turn site: it is inlined, with the turn it begins)
    end_turn(T, G, b, land, piece == 1, scratch)
    return 0


@njit(cache=True, inline="always")
def _capture_hop(T, G, b, s, land, cap, capv, piece, mover_chip, scratch):
    """The bookkeeping of a capture hop just played by :func:`apply_action`: points,
    chips, counters. Returns True if the capture goes on (its next hops are in legal[b]),
    False if the move is over."""
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, meta, hist, legal, chip, scores = G
    half = params[P_N] // 2
    S = params[P_S]
    immediate = params[P_IMMEDIATE] == 1
    count = meta[b, M_SEQ_COUNT]
    if count == 0:
        meta[b, M_SEQ_KING_MOVER] = 1 if piece == 2 else 0
    if params[P_SCORING] == 1:
        turn = meta[b, M_TURN]
        absland = land if turn == 0 else S - 1 - land
        x = sqinfo[absland, SQ_X]
        y = sqinfo[absland, SQ_Y]
        mult = 1.0
        if meta[b, M_SEQ_KING_MOVER] == 1:
            mult *= 2.0
        if capv == -2:
            mult *= 2.0
        scores[b, turn] += jump_score(
            sqinfo[absland, SQ_OP],
            chip_value(chipval, mover_chip, x, y),
            chip_value(chipval, chip[b, cap], x, y),
            mult,
        )
    if immediate:  # do_hop lifted the piece: its chip goes too
        chip[b, cap] = -1
    if capv == -2:
        if meta[b, M_SEQ_KINGS] == 0:
            meta[b, M_SEQ_FIRST_KING] = count
        meta[b, M_SEQ_KINGS] += 1
    meta[b, M_SEQ_COUNT] = count + 1
    meta[b, M_CONT] = land
    if piece == 1 and params[P_PROMO_ENDS] == 1 and land < half:
        return False  # crowned mid-capture: the move ends
    return generate_continuation(params, ray, board, pending, meta, legal, b, scratch) > 0


@njit(cache=True)
def step_games(T, G, actions, status, lo, hi):
    """One hop in each of the games lo..hi-1 (``status[b]`` as :func:`apply_action`
    returns it): the engine's step, for all the games on one thread, or per block of
    games by :func:`step_parallel`."""
    _step_rows(T, G, actions, status, lo, hi, _scratch(T.params))


@njit(cache=True, _nrt=False)
def _step_rows(T, G, actions, status, lo, hi, scratch):
    """The loop of :func:`step_games`, without reference counts (it makes no array)."""
    for b in range(lo, hi):
        status[b] = apply_action(T, G, b, actions[b], scratch)


@njit(cache=True, parallel=True)
def step_parallel(T, G, actions, status):
    """:func:`step_games` on numba's threads."""
    B = actions.shape[0]
    # blocks of games; with a parallel chunk size of 1 (set by the caller) the threads take
    # blocks as they free up, so a thread paused by the OS does not hold the step back
    block = 32
    for c in prange((B + block - 1) // block):
        step_games(T, G, actions, status, c * block, min(B, (c + 1) * block))


@njit(cache=True)
def expand(T, G, rows, counts, first, G2):
    """The children of the games rows[i]: their first counts[i] legal hops, each played
    in its own copy of the game, in rows first[i], first[i] + 1, ... of the arrays G2."""
    legal = G.legal
    scratch = _scratch(T.params)
    for i in range(rows.shape[0]):
        r = rows[i]
        for j in range(counts[i]):
            _copy_game(G, r, G2, first[i] + j)
            apply_action(T, G2, first[i] + j, np.int64(legal[r, j]), scratch)


@njit(cache=True)
def begin_serial(T, G, rows):
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, meta, hist, legal, chip, scores = G
    scratch = _scratch(params)
    for i in range(rows.shape[0]):
        begin_turn(T, G, rows[i], True, scratch)


@njit(cache=True, _nrt=False)
def find_illegal(meta, legal, actions):
    """Index of the first ongoing game whose action is not legal, and how many; (-1, 0) if none."""
    first = -1
    count = 0
    for b in range(meta.shape[0]):
        if meta[b, M_OUTCOME] != OUT_ONGOING:
            continue
        a = actions[b]
        ok = False
        for i in range(meta[b, M_N_LEGAL]):
            if legal[b, i] == a:
                ok = True
                break
        if not ok:
            count += 1
            if first < 0:
                first = b
    return first, count


@njit(cache=True, _nrt=False)
def fill_mask(meta, legal, mask):
    """mask[b, a] = 1 for each legal action a of game b (mask must be zeroed)."""
    for b in range(mask.shape[0]):
        if meta[b, M_OUTCOME] != OUT_ONGOING:
            continue
        for i in range(meta[b, M_N_LEGAL]):
            mask[b, legal[b, i]] = 1


@njit(cache=True, _nrt=False)
def sample_actions(meta, legal, uniforms, out):
    """A uniformly random legal action per game (-1 for finished games)."""
    for b in range(meta.shape[0]):
        n = meta[b, M_N_LEGAL]
        if meta[b, M_OUTCOME] != OUT_ONGOING or n == 0:
            out[b] = -1
        else:
            i = int(uniforms[b] * n)
            if i >= n:
                i = n - 1
            out[b] = legal[b, i]


@njit(cache=True, inline="always")
def _copy_game(G, src, G2, dst):
    """Copy game `src` of the state arrays G to row `dst` of the arrays G2."""
    board, pending, meta, hist, legal, chip, scores = G
    board2, pending2, meta2, hist2, legal2, chip2, scores2 = G2
    chip2[dst] = chip[src]
    scores2[dst] = scores[src]
    board2[dst] = board[src]
    pending2[dst] = pending[src]
    meta2[dst] = meta[src]
    hist2[dst] = hist[src]
    legal2[dst] = legal[src]


@njit(cache=True)
def _copy_row(G, src, dst):
    _copy_game(G, src, G, dst)

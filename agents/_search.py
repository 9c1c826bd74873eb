"""Compiled alpha-beta search over the engine's hop kernels (numba).

The search walks the same hops the environment steps: a node is a state row, a child
is the row after one legal hop. Depth counts full moves: a hop that keeps the same
player on move (a capture that goes on) costs no depth and its value is not negated.
At depth 0 the search goes on while the player to move must capture (captures are
compulsory, so this is the quiescence search). Rows of the stack state serve as the
search stack, as in :func:`damii_env._kernels.perft`; there is no recursion.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from damii_env import _kernels as K

WIN = 1.0e6
INF = 1.0e9

# evaluation weights, by index
E_MAN = 0
E_KING = 1
E_ADVANCE = 2
E_MOBILITY = 3
E_TOTALS = 4  # Damath: weight of (score + chips) difference
N_EVAL = 5

TT_EXACT = 0
TT_LOWER = 1
TT_UPPER = 2


@njit(cache=True)
def evaluate(T, G, c, weights):
    """Static value of row c for the player to move there (higher is better)."""
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, meta, hist, legal, chip, scores = G
    S = params[K.P_S]
    half = params[K.P_N] // 2
    n = params[K.P_N]
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
    value += weights[E_MOBILITY] * meta[c, K.M_N_LEGAL]
    if params[K.P_SCORING] == 1:
        turn = meta[c, K.M_TURN]
        diff = scores[c, turn] - scores[c, 1 - turn]
        for s in range(S):
            v = board[c, s]
            if v == 0:
                continue
            absq = s if turn == 0 else S - 1 - s
            val = K.chip_value(chipval, chip[c, s], sqinfo[absq, K.SQ_X], sqinfo[absq, K.SQ_Y])
            if v == 2 or v == -2:
                val *= 2.0
            diff += val if v > 0 else -val
        if params[K.P_LOWER_WINS] == 1:
            diff = -diff
        value = 0.05 * value + weights[E_TOTALS] * diff
    return value


@njit(cache=True)
def _terminal_value(meta, c):
    out = meta[c, K.M_OUTCOME]
    if out == K.OUT_DRAW or out == K.OUT_TRUNCATED:
        return 0.0
    winner = 0 if out == K.OUT_WHITE else 1
    v = WIN - c
    return v if winner == meta[c, K.M_TURN] else -v


@njit(cache=True)
def _position_key(params, meta, hist, c):
    H = params[K.P_HIST]
    return hist[c, (meta[c, K.M_HIST_LEN] - 1) % H]


@njit(cache=True)
def _back_up(c, v, same, best, bestmove, alpha, moves, idx):
    """Give node c's value v to its parent (negated unless the same player moves on)."""
    p = c - 1
    pv = v if same[c] else -v
    if pv > best[p]:
        best[p] = pv
        bestmove[p] = moves[p, idx[p] - 1]
        if pv > alpha[p]:
            alpha[p] = pv


@njit(cache=True)
def search(T, G, depth, weights, tt_key, tt_val, tt_depth, tt_flag, tt_move, max_nodes, result):
    """Alpha-beta from row 0 to `depth` full moves.

    Writes result[0] = value, result[1] = best hop, result[2] = nodes, result[3] = 1 if
    the node budget ran out (the value is then unreliable).
    """
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, meta, hist, legal, chip, scores = G
    L = board.shape[0]
    W = legal.shape[1]
    scratch = K._scratch(params)
    moves = np.empty((L, W), dtype=np.int64)
    nmov = np.zeros(L, dtype=np.int64)
    idx = np.zeros(L, dtype=np.int64)
    rem = np.zeros(L, dtype=np.int64)
    alpha = np.zeros(L)
    beta = np.zeros(L)
    alpha0 = np.zeros(L)
    best = np.zeros(L)
    bestmove = np.full(L, -1, dtype=np.int64)
    same = np.zeros(L, dtype=np.bool_)
    mask = tt_key.shape[0] - 1
    nodes = 0
    aborted = False

    alpha[0] = -INF
    beta[0] = INF
    rem[0] = depth
    top = 0
    # --- set up node 0 (never a leaf: the caller only searches ongoing games)
    c = 0
    while True:
        # `c` is a freshly entered node; decide whether it is a leaf
        nodes += 1
        leaf = False
        v = 0.0
        ttm = -1
        if nodes > max_nodes:
            aborted = True
        if meta[c, K.M_OUTCOME] != K.OUT_ONGOING:
            leaf = True
            v = _terminal_value(meta, c)
        elif c > 0 and (aborted or c >= L - 1):
            leaf = True
            v = evaluate(T, G, c, weights)
        elif rem[c] <= 0 and meta[c, K.M_CONT] < 0 and meta[c, K.M_CAPTURING] == 0 and c > 0:
            leaf = True
            v = evaluate(T, G, c, weights)
        elif meta[c, K.M_CONT] < 0:
            key = _position_key(params, meta, hist, c)
            slot = key & mask
            if tt_key[slot] == key:
                ttm = tt_move[slot]
                if c > 0 and tt_depth[slot] >= rem[c]:
                    tv = tt_val[slot]
                    f = tt_flag[slot]
                    if f == TT_EXACT or (f == TT_LOWER and tv >= beta[c]) or \
                            (f == TT_UPPER and tv <= alpha[c]):
                        leaf = True
                        v = tv
        if not leaf:
            n = meta[c, K.M_N_LEGAL]
            k = 0
            if ttm >= 0:
                for j in range(n):
                    if legal[c, j] == ttm:
                        moves[c, 0] = ttm
                        k = 1
                        break
            for j in range(n):
                a = legal[c, j]
                if k == 1 and a == ttm:
                    continue
                moves[c, k] = a
                k += 1
            nmov[c] = n
            idx[c] = 0
            best[c] = -INF
            bestmove[c] = -1
            alpha0[c] = alpha[c]
            top = c
        else:
            if c == 0:
                result[0] = v
                result[1] = -1
                result[2] = nodes
                result[3] = 1.0 if aborted else 0.0
                return
            _back_up(c, v, same, best, bestmove, alpha, moves, idx)
        # --- walk up/down until a new child is entered
        while True:
            i = top
            if idx[i] < nmov[i] and alpha[i] < beta[i]:
                a = moves[i, idx[i]]
                idx[i] += 1
                c = i + 1
                K._copy_row(G, i, c)
                K.apply_action(T, G, c, a, scratch)
                same[c] = meta[c, K.M_TURN] == meta[i, K.M_TURN]
                if same[c]:
                    rem[c] = rem[i]
                    alpha[c] = alpha[i]
                    beta[c] = beta[i]
                else:
                    rem[c] = rem[i] - 1
                    alpha[c] = -beta[i]
                    beta[c] = -alpha[i]
                break
            # node i is finished
            v = best[i]
            if meta[i, K.M_CONT] < 0 and not aborted:
                key = _position_key(params, meta, hist, i)
                slot = key & mask
                tt_key[slot] = key
                tt_val[slot] = v
                tt_depth[slot] = rem[i]
                tt_move[slot] = bestmove[i]
                if v <= alpha0[i]:
                    tt_flag[slot] = TT_UPPER
                elif v >= beta[i]:
                    tt_flag[slot] = TT_LOWER
                else:
                    tt_flag[slot] = TT_EXACT
            if i == 0:
                result[0] = v
                result[1] = bestmove[0]
                result[2] = nodes
                result[3] = 1.0 if aborted else 0.0
                return
            _back_up(i, v, same, best, bestmove, alpha, moves, idx)
            top = i - 1

"""Compiled alpha-beta search over the engine's hop kernels (numba).

The search walks the same hops the environment steps: a node is a state row, a child
is the row after one legal hop. Depth counts full moves: a hop that keeps the same
player on move (a capture that goes on) costs no depth and its value is not negated.
At depth 0 the search goes on while the player to move must capture (captures are
compulsory, so this is the quiescence search). Rows of the stack state serve as the
search stack (see :mod:`damii_env.compiled`); there is no recursion.

One pass of the search loop enters a node (:func:`_probe` decides whether it is a leaf;
if not, :func:`_order` lists its hops), then walks the stack until the next child is
entered: a finished node is stored in the transposition table (:func:`_store`) and its
value given to its parent (:func:`_back_up`). The helpers take arrays and numbers, not
the state tuples ``T`` and ``G``: a compiled function that takes those counts references
to every array in them on each call, a cost per node.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from damii_env import compiled as C

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


@njit(cache=True, inline="always")
def _material(board, meta, c, S, n, weights):
    """The evaluation terms of every variant (material, advancement, mobility) of row c,
    for the player to move there."""
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
    return value + weights[E_MOBILITY] * C.n_legal(meta, c)


@njit(cache=True, inline="always")
def _with_totals(material, lead, weights):
    """Sci-Damath: the value from the material terms and the lead in the totals."""
    return 0.05 * material + weights[E_TOTALS] * lead


@njit(cache=True)
def evaluate(T, G, c, weights):
    """Static value of row c for the player to move there (higher is better): material,
    advancement and mobility; in Sci-Damath, a twentieth of those plus the weighted lead
    in the totals that decide the game (:func:`damii_env.compiled.totals_lead`).

    The search computes the same from the same helpers without calling this function:
    a compiled function that takes the state tuples ``T`` and ``G`` counts references
    to each of their arrays on every call, a cost per leaf."""
    value = _material(G[0], G[2], c, C.n_squares(T), C.board_size(T), weights)
    if C.is_scoring(T):
        value = _with_totals(value, C.totals_lead(T, G, c), weights)
    return value


# what the leaf test (_probe) found
NODE = 0  # an inner node: search its hops
LEAF = 1  # a leaf whose value is known (game over, or decided by the table)
HORIZON = 2  # a leaf to be evaluated statically


@njit(cache=True, inline="always")
def _terminal_value(meta, c):
    """Value of the finished game in row c for the player to move there: 0 for a draw or
    a truncation, else +-(WIN - c), so that a nearer win (a shallower row) is preferred."""
    out = C.outcome(meta, c)
    if out == C.DRAW or out == C.TRUNCATED:
        return 0.0
    winner = 0 if out == C.WHITE_WINS else 1
    v = WIN - c
    return v if winner == C.turn(meta, c) else -v


@njit(cache=True, inline="always")
def _probe(meta, c, rem, alpha, beta, stop, key, tt_key, tt_val, tt_depth, tt_flag, tt_move):
    """Leaf test of the freshly entered node c (rem full moves left, window alpha..beta,
    `key` its position key, looked up only at the start of a turn). Returns
    ``(kind, value, tt_move)``.

    kind is LEAF (with its value) when the game is over or the transposition table holds
    a value deep enough that decides the node; HORIZON (to be evaluated) when the search
    must stop (`stop`: the node budget ran out, or the stack is full) or at the horizon
    (rem <= 0 at the start of a turn without a capture to make); else NODE. tt_move is
    the table's best hop for the position (-1 if none), to be searched first.
    """
    if C.outcome(meta, c) != C.ONGOING:
        return LEAF, _terminal_value(meta, c), -1
    if c > 0 and stop:
        return HORIZON, 0.0, -1
    cont = C.continuing_square(meta, c)
    if rem <= 0 and cont < 0 and not C.capturing(meta, c) and c > 0:
        return HORIZON, 0.0, -1
    if cont >= 0:  # mid-capture: not a position of the table
        return NODE, 0.0, -1
    mask = tt_key.shape[0] - 1
    slot = key & mask
    if tt_key[slot] != key:
        return NODE, 0.0, -1
    ttm = tt_move[slot]
    if c > 0 and tt_depth[slot] >= rem:
        tv = tt_val[slot]
        f = tt_flag[slot]
        if f == TT_EXACT or (f == TT_LOWER and tv >= beta) or (f == TT_UPPER and tv <= alpha):
            return LEAF, tv, ttm
    return NODE, 0.0, ttm


@njit(cache=True, inline="always")
def _order(legal, c, n, ttm, moves):
    """Write the n legal hops of row c to moves[c]: the table's move `ttm` first when it
    is among them, then the others in their order. Returns n."""
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
    return n


@njit(cache=True, inline="always")
def _store(tt_key, tt_val, tt_depth, tt_flag, tt_move, key, value, depth, move, alpha0, beta):
    """Record a finished node in the transposition table: its value, searched depth and
    best hop, with the bound flag of a value found in the window alpha0..beta (upper
    bound at or below alpha0, lower bound at or above beta, exact in between)."""
    mask = tt_key.shape[0] - 1
    slot = key & mask
    tt_key[slot] = key
    tt_val[slot] = value
    tt_depth[slot] = depth
    tt_move[slot] = move
    if value <= alpha0:
        tt_flag[slot] = TT_UPPER
    elif value >= beta:
        tt_flag[slot] = TT_LOWER
    else:
        tt_flag[slot] = TT_EXACT


@njit(cache=True, inline="always")
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
def _finish(result, value, hop, nodes, aborted):
    """Write the search's answer into result (see :func:`search`)."""
    result[0] = value
    result[1] = hop
    result[2] = nodes
    result[3] = 1.0 if aborted else 0.0


@njit(cache=True)
def search(T, G, depth, weights, tt_key, tt_val, tt_depth, tt_flag, tt_move, max_nodes, result):
    """Alpha-beta from row 0 to `depth` full moves.

    Writes result[0] = value, result[1] = best hop, result[2] = nodes, result[3] = 1 if
    the node budget ran out (the value is then unreliable).
    """
    board, _pending, meta, _hist, legal, _chip, _scores = G
    S = C.n_squares(T)
    n = C.board_size(T)
    scoring = C.is_scoring(T)
    L = board.shape[0]
    W = legal.shape[1]
    scratch = C.new_scratch(T)
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
    nodes = 0
    aborted = False

    alpha[0] = -INF
    beta[0] = INF
    rem[0] = depth
    top = 0
    c = 0  # node 0 is never a leaf: the caller only searches ongoing games
    while True:
        # `c` is a freshly entered node
        nodes += 1
        if nodes > max_nodes:
            aborted = True
        kind, v, ttm = _probe(meta, c, rem[c], alpha[c], beta[c], aborted or c >= L - 1,
                              C.position_key(T, G, c), tt_key, tt_val, tt_depth, tt_flag,
                              tt_move)
        if kind == NODE:
            nmov[c] = _order(legal, c, C.n_legal(meta, c), ttm, moves)
            idx[c] = 0
            best[c] = -INF
            bestmove[c] = -1
            alpha0[c] = alpha[c]
            top = c
        else:
            if kind == HORIZON:  # evaluate(T, G, c, weights), without the call
                v = _material(board, meta, c, S, n, weights)
                if scoring:
                    v = _with_totals(v, C.totals_lead(T, G, c), weights)
            if c == 0:
                _finish(result, v, -1, nodes, aborted)
                return
            _back_up(c, v, same, best, bestmove, alpha, moves, idx)
        # --- walk up/down until a new child is entered
        while True:
            i = top
            if idx[i] < nmov[i] and alpha[i] < beta[i]:
                # enter the child after the next hop: the same depth and window while the
                # same player moves on, else one move less and the window negated
                a = moves[i, idx[i]]
                idx[i] += 1
                c = i + 1
                C.copy_row(G, i, c)
                C.play_hop(T, G, c, a, scratch)
                same[c] = C.turn(meta, c) == C.turn(meta, i)
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
            if C.continuing_square(meta, i) < 0 and not aborted:
                _store(tt_key, tt_val, tt_depth, tt_flag, tt_move, C.position_key(T, G, i), v,
                       rem[i], bestmove[i], alpha0[i], beta[i])
            if i == 0:
                _finish(result, v, bestmove[0], nodes, aborted)
                return
            _back_up(i, v, same, best, bestmove, alpha, moves, idx)
            top = i - 1

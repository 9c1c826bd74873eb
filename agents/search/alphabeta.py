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
value given to its parent (:func:`_child_done`, for a leaf and an inner node alike). The
helpers take arrays and numbers, not the state tuples ``T`` and ``G``: a compiled function
that takes those counts references to every array in them on each call, a cost per node.

The parts of the search the strong engines use are options (:func:`make_options`, each
off by default; docs/SEARCH.md says what each gained): principal-variation search (a
hop after the first gets a null window at alpha, and is searched again with the full
window only if it lands inside), killer hops and a history table for move ordering
(after the table's hop), late-move reductions (a late quiet hop searched less deep with
a null window, again at full depth if it beats alpha), a root window (the aspiration
window of iterative deepening) and a deadline: the clock is read every few thousand
nodes and the search stops there. A node's `phase` says how its current hop is being
searched; a value from a probing search that is not conclusive makes the node search
the same hop again (`redo`) instead of taking the value.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numba import njit, objmode

from damii_agents.search import patterns as EV
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


def default_weights(engine: Any) -> np.ndarray:
    """The handwritten evaluation's weights (by ``E_*`` index) for an engine's rules."""
    w = np.zeros(N_EVAL)
    w[E_MAN] = 100.0
    w[E_KING] = 300.0 if engine.rules.king_range == "flying" else 170.0
    w[E_ADVANCE] = 3.0
    w[E_MOBILITY] = 1.0
    w[E_TOTALS] = 10.0
    return w


# --- search options ---------------------------------------------------------------------------
# The options array of :func:`search` (floats, by index); 0 switches a part off.
O_PVS = 0  # principal-variation search: hops after the first get a null window first
O_KILLERS = 1  # two killer hops a row (hops that cut off there), tried after the table's
O_HISTORY = 2  # the other hops by their history score (cut-offs, weighted by depth)
O_LMR = 3  # late-move reductions: full moves a late quiet hop is searched less (0 off)
O_LMR_DEPTH = 4  # ... only at nodes with at least this many full moves left
O_LMR_MOVES = 5  # ... only for hops after this many were searched at the node
O_ALPHA = 6  # the root's window (an aspiration window, or -INF..INF)
O_BETA = 7
O_DEADLINE = 8  # time.perf_counter() at which the search stops (0: no clock)
O_CHECK = 9  # the clock is read every O_CHECK nodes (a power of 2)
N_OPTIONS = 10

NULL_WINDOW = 1e-4
"""Width of a null window: the search asks only whether a value beats alpha."""

LINE = 64
"""Room for the hops of the best move's capture line in the result array."""
R_LINE_LEN = 7  # result[R_LINE_LEN]: number of hops of the best line, result[8:] the hops
RESULT_SIZE = 8 + LINE


def make_options(pvs: bool = False, killers: bool = False, history: bool = False,
                 lmr: int = 0, lmr_depth: int = 3, lmr_moves: int = 3,
                 alpha: float = -INF, beta: float = INF, deadline: float = 0.0,
                 check: int = 1024) -> np.ndarray:
    """The options array of :func:`search` (all parts off by default: the plain search)."""
    if check < 1 or check & (check - 1):
        raise ValueError(f"check must be a power of 2, got {check}")
    o = np.zeros(N_OPTIONS)
    o[O_PVS] = float(pvs)
    o[O_KILLERS] = float(killers)
    o[O_HISTORY] = float(history)
    o[O_LMR] = float(lmr)
    o[O_LMR_DEPTH] = float(lmr_depth)
    o[O_LMR_MOVES] = float(lmr_moves)
    o[O_ALPHA] = alpha
    o[O_BETA] = beta
    o[O_DEADLINE] = deadline
    o[O_CHECK] = float(check)
    return o


@njit(cache=True)
def _plain_options():
    """make_options() in compiled code: every part off, the full window, no clock."""
    o = np.zeros(N_OPTIONS)
    o[O_ALPHA] = -INF
    o[O_BETA] = INF
    o[O_CHECK] = 1024.0
    return o


@njit(cache=True)
def _now():
    """time.perf_counter(), from compiled code (about a microsecond)."""
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


# what the leaf test (_probe) found
NODE = 0  # an inner node: search its hops
LEAF = 1  # a leaf whose value is known (game over, or decided by the table)
HORIZON = 2  # a leaf to be evaluated statically

# how a node searches its current hop (its `phase`)
FULL = 0  # the node's window, the full depth
SCOUT = 1  # a null window at alpha, the full depth (PVS); re-searched if it lands inside
REDUCED = 2  # a null window, less depth (LMR); re-searched if it beats alpha


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
    must stop (`stop`: the node budget or the time ran out, or the stack is full) or at
    the horizon (rem <= 0 at the start of a turn without a capture to make); else NODE.
    tt_move is the table's best hop for the position (-1 if none), to be searched first.
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
def _order(legal, c, n, ttm, moves, k1, k2, hist, side, score):
    """Write the n legal hops of row c to moves[c]: the table's move `ttm` first when it
    is among them, then the killer hops k1, k2 that are legal here (-1: none), then the
    others by their history score hist[side, hop], highest first (ties in their order;
    a table of width 1 scores nothing). Returns n."""
    k = 0
    if ttm >= 0:
        for j in range(n):
            if legal[c, j] == ttm:
                moves[c, 0] = ttm
                k = 1
                break
    for kill in (k1, k2):
        if kill >= 0 and kill != ttm:
            for j in range(n):
                if legal[c, j] == kill:
                    moves[c, k] = kill
                    k += 1
                    break
    fixed = k
    use_hist = hist.shape[1] > 1
    for j in range(n):
        a = legal[c, j]
        skip = False
        for q in range(fixed):
            if moves[c, q] == a:
                skip = True
                break
        if skip:
            continue
        if use_hist:  # insertion into the sorted tail
            s = hist[side, a]
            q = k
            while q > fixed and score[c, q - 1] < s:
                moves[c, q] = moves[c, q - 1]
                score[c, q] = score[c, q - 1]
                q -= 1
            moves[c, q] = a
            score[c, q] = s
        else:
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
def _back_up(c, v, same, best, bestmove, alpha, beta, moves, idx, phase, redo, pvs, settled,
             line, line_len):
    """Give node c's value v to its parent p (negated unless the same player moves on).
    Returns True when the value cut off at p (a killer / history event).

    A value from a probing search is not taken: a reduced search that beats alpha is
    searched again at the full depth, a null-window search that lands inside the window
    again with the full window (phase and redo of p say how; `settled`: the search was
    stopped, take every value as it is). The best hop's capture line (the hops while the
    same player moves on) is kept in line[p]."""
    p = c - 1
    pv = v if same[c] else -v
    if not settled:
        mode = phase[p]
        if mode == REDUCED and pv > alpha[p]:
            phase[p] = SCOUT if pvs and beta[p] - alpha[p] > NULL_WINDOW else FULL
            redo[p] = True
            idx[p] -= 1
            return False
        if mode == SCOUT and alpha[p] < pv < beta[p]:
            phase[p] = FULL
            redo[p] = True
            idx[p] -= 1
            return False
    if pv > best[p]:
        best[p] = pv
        a = moves[p, idx[p] - 1]
        bestmove[p] = a
        line[p, 0] = a
        k = 1
        if same[c]:
            for q in range(line_len[c]):
                if k < line.shape[1]:
                    line[p, k] = line[c, q]
                    k += 1
        line_len[p] = k
        if pv > alpha[p]:
            alpha[p] = pv
            return alpha[p] >= beta[p]
    return False


@njit(cache=True, inline="always")
def _reward(p, a, depth, meta, killers, use_killers, hist, use_hist):
    """Hop a cut off at node p (depth full moves left): make it p's first killer and add
    (depth + 1)**2 to its history score."""
    if use_killers and killers[p, 0] != a:
        killers[p, 1] = killers[p, 0]
        killers[p, 0] = a
    if use_hist:
        d = max(depth, 0) + 1
        hist[C.turn(meta, p), a] += d * d


@njit(cache=True, inline="always")
def _child_done(c, v, aborted, same, best, bestmove, alpha, beta, moves, idx, phase, redo, pvs,
                line, line_len, rem, meta, kill, use_killers, hist, use_hist, clean_value,
                clean_hop, clean_done):
    """Node c (not the root) is done with value v: back it up to its parent (a hop that
    cuts off there is rewarded) and, for a root child searched to the end, keep the root's
    best hop so far. Returns the new (clean_value, clean_hop, clean_done)."""
    if _back_up(c, v, same, best, bestmove, alpha, beta, moves, idx, phase, redo, pvs,
                aborted, line, line_len) and not aborted:
        _reward(c - 1, bestmove[c - 1], rem[c - 1], meta, kill, use_killers, hist, use_hist)
    if c == 1 and not aborted and not redo[0]:
        clean_value = best[0]
        clean_hop = bestmove[0]
        clean_done += 1
    return clean_value, clean_hop, clean_done


@njit(cache=True)
def _finish(result, value, hop, nodes, aborted, clean_value, clean_hop, clean_done, line,
            line_len):
    """Write the search's answer into result (see :func:`search`)."""
    result[0] = value
    result[1] = hop
    result[2] = nodes
    result[3] = 1.0 if aborted else 0.0
    if result.shape[0] >= 8:
        result[4] = clean_value
        result[5] = clean_hop
        result[6] = clean_done
        k = min(line_len, result.shape[0] - 8)
        result[R_LINE_LEN] = k
        for q in range(k):
            result[8 + q] = line[q]


@njit(cache=True)
def search(T, G, depth, weights, tt_key, tt_val, tt_depth, tt_flag, tt_move, max_nodes, result,
           options=None, history=None, killers=None, learned=None):
    """Alpha-beta from row 0 to `depth` full moves.

    Writes result[0] = value, result[1] = best hop, result[2] = nodes, result[3] = 1 if
    the node budget or the time ran out (the value is then unreliable). A result of
    :data:`RESULT_SIZE` also gets the best root hop found before the search was stopped
    (result[4] its value, result[5] the hop, -1 if none, result[6] how many root hops
    were searched to the end) and the best move's whole capture line (result[7] hops,
    then the hops).

    `options` (:func:`make_options`; none: the plain search) switches on PVS, killers,
    history ordering and late-move reductions, sets the root window and the deadline.
    `history` (2 x number of actions, by side to move and hop) and `killers` (rows x 2)
    keep the move-ordering scores between calls; without them the search keeps none.
    `learned` (the tables of :class:`~damii_agents.search.patterns.PatternWeights`,
    ``weights.arrays``) values the leaves by the learned evaluation instead of the
    handwritten one (`weights`).
    """
    board, _pending, meta, _hist, legal, _chip, _scores = G
    S = C.n_squares(T)
    n = C.board_size(T)
    scoring = C.is_scoring(T)
    L = board.shape[0]
    W = legal.shape[1]
    if options is None:
        opts = _plain_options()
    else:
        opts = options
    if history is None:
        hist = np.zeros((2, 1))
    else:
        hist = history
    if killers is None:
        kill = np.full((1, 1), -1, dtype=np.int64)
    else:
        kill = killers
    pvs = opts[O_PVS] > 0
    use_killers = opts[O_KILLERS] > 0 and kill.shape[0] >= L and kill.shape[1] >= 2
    use_hist = opts[O_HISTORY] > 0 and hist.shape[1] > 1
    no_hist = np.zeros((2, 1))
    order_hist = hist if use_hist else no_hist
    lmr = int(opts[O_LMR])
    lmr_depth = int(opts[O_LMR_DEPTH])
    lmr_moves = int(opts[O_LMR_MOVES])
    deadline = opts[O_DEADLINE]
    check_mask = max(int(opts[O_CHECK]), 1) - 1
    scratch = C.new_scratch(T)
    moves = np.empty((L, W), dtype=np.int64)
    score = np.empty((L, W))
    nmov = np.zeros(L, dtype=np.int64)
    idx = np.zeros(L, dtype=np.int64)
    rem = np.zeros(L, dtype=np.int64)
    alpha = np.zeros(L)
    beta = np.zeros(L)
    alpha0 = np.zeros(L)
    best = np.zeros(L)
    bestmove = np.full(L, -1, dtype=np.int64)
    same = np.zeros(L, dtype=np.bool_)
    phase = np.zeros(L, dtype=np.int64)
    redo = np.zeros(L, dtype=np.bool_)
    line = np.empty((L, LINE), dtype=np.int64)
    line_len = np.zeros(L, dtype=np.int64)
    nodes = 0
    aborted = False
    clean_value = -INF
    clean_hop = -1
    clean_done = 0

    alpha[0] = opts[O_ALPHA]
    beta[0] = opts[O_BETA]
    rem[0] = depth
    top = 0
    c = 0  # node 0 is never a leaf: the caller only searches ongoing games
    while True:
        # `c` is a freshly entered node
        nodes += 1
        if nodes > max_nodes:
            aborted = True
        if deadline > 0.0 and (nodes & check_mask) == 0 and not aborted:
            if _now() >= deadline:
                aborted = True
        kind, v, ttm = _probe(meta, c, rem[c], alpha[c], beta[c], aborted or c >= L - 1,
                              C.position_key(T, G, c), tt_key, tt_val, tt_depth, tt_flag,
                              tt_move)
        line_len[c] = 0
        if kind == NODE:
            k1 = kill[c, 0] if use_killers else -1
            k2 = kill[c, 1] if use_killers else -1
            nmov[c] = _order(legal, c, C.n_legal(meta, c), ttm, moves, k1, k2, order_hist,
                             C.turn(meta, c), score)
            idx[c] = 0
            best[c] = -INF
            bestmove[c] = -1
            alpha0[c] = alpha[c]
            redo[c] = False
            top = c
        else:
            if kind == HORIZON:  # the evaluation, inlined (no call with T and G)
                if learned is not None:
                    lead = C.totals_lead(T, G, c) if scoring else 0.0
                    v = EV.pattern_value(board, c, S, learned[0], learned[1], learned[2],
                                         learned[3], learned[4], learned[5], learned[6],
                                         C.n_legal(meta, c), lead)
                else:
                    v = _material(board, meta, c, S, n, weights)
                    if scoring:
                        v = _with_totals(v, C.totals_lead(T, G, c), weights)
            if c == 0:
                _finish(result, v, -1, nodes, aborted, clean_value, clean_hop, clean_done,
                        line[0], 0)
                return
            clean_value, clean_hop, clean_done = _child_done(
                c, v, aborted, same, best, bestmove, alpha, beta, moves, idx, phase, redo, pvs,
                line, line_len, rem, meta, kill, use_killers, hist, use_hist, clean_value,
                clean_hop, clean_done)
        # --- walk up/down until a new child is entered
        while True:
            i = top
            if idx[i] < nmov[i] and alpha[i] < beta[i]:
                # enter the child after the next hop: the same depth and window while the
                # same player moves on, else one move less and the window negated; a
                # probing search (phase) narrows the window to a null one at alpha and a
                # reduced one searches less deep
                a = moves[i, idx[i]]
                if redo[i]:
                    redo[i] = False
                    mode = phase[i]
                else:
                    mode = FULL
                    if idx[i] > 0:
                        if (lmr > 0 and i > 0 and rem[i] >= lmr_depth and idx[i] >= lmr_moves
                                and not C.capturing(meta, i)
                                and not (use_killers and (a == kill[i, 0] or a == kill[i, 1]))):
                            mode = REDUCED
                        elif pvs and beta[i] - alpha[i] > NULL_WINDOW:
                            mode = SCOUT
                    phase[i] = mode
                idx[i] += 1
                c = i + 1
                C.copy_row(G, i, c)
                C.play_hop(T, G, c, a, scratch)
                lo = alpha[i]
                hi = beta[i]
                r = rem[i]
                if mode != FULL:
                    hi = min(lo + NULL_WINDOW, hi)
                    if mode == REDUCED:
                        r -= lmr
                same[c] = C.turn(meta, c) == C.turn(meta, i)
                if same[c]:
                    rem[c] = r
                    alpha[c] = lo
                    beta[c] = hi
                else:
                    rem[c] = r - 1
                    alpha[c] = -hi
                    beta[c] = -lo
                break
            # node i is finished
            v = best[i]
            if C.continuing_square(meta, i) < 0 and not aborted:
                _store(tt_key, tt_val, tt_depth, tt_flag, tt_move, C.position_key(T, G, i), v,
                       rem[i], bestmove[i], alpha0[i], beta[i])
            if i == 0:
                _finish(result, v, bestmove[0], nodes, aborted, clean_value, clean_hop,
                        clean_done, line[0], line_len[0])
                return
            clean_value, clean_hop, clean_done = _child_done(
                i, v, aborted, same, best, bestmove, alpha, beta, moves, idx, phase, redo, pvs,
                line, line_len, rem, meta, kill, use_killers, hist, use_hist, clean_value,
                clean_hop, clean_done)
            top = i - 1

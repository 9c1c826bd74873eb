"""Compiled alpha-beta search over whole moves (numba).

A node is a position at the start of a turn, a row of the engine's ply stack
(:mod:`damii_env.compiled`: ``ply_root`` loads the game, ``ply_play`` plays one whole
move into the next row, with the engine's move generation and end rules); a child is
the position after one legal whole move (a capture sequence is one move). Depth counts
moves. At depth 0 the search goes on while the player to move must capture (captures are
compulsory, so this is the quiescence search). There is no recursion: the rows are the
search stack.

One pass of the search loop enters a node (:func:`_probe` decides whether it is a leaf;
if not, :func:`_order` lists its moves), then walks the stack until the next child is
entered: a finished node is stored in the transposition table (:func:`_store`) and its
value given to its parent (:func:`_child_done`, for a leaf and an inner node alike). The
helpers take arrays and numbers, not the tuples ``T`` and ``P``: a compiled function that
takes those counts references to every array in them on each call, a cost per node.

The parts of the search the strong engines use are options (:func:`make_options`, each
off by default; docs/SEARCH.md says what each gained): principal-variation search (a
move after the first gets a null window at alpha, and is searched again with the full
window only if it lands inside), killer moves and a history table for move ordering
(after the table's move), late-move reductions (a late quiet move searched less deep with
a null window, again at full depth if it beats alpha), a root window (the aspiration
window of iterative deepening), a deadline (the clock is read every few thousand
nodes and the search stops there), a position seen before scored as a draw, an
ending term added to the evaluation (:func:`_ending`) and a threat extension (a quiet
position at the horizon that the opponent could capture from is searched one move
more). A node's `phase` says how its current move is being searched; a value from a
probing search that is not conclusive makes the node search the same move again (`redo`)
instead of taking the value.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from numba import njit, objmode

from damii_agents.search.endgame import MISSING
from damii_agents.search.evaluation import (  # noqa: F401  (the handwritten one's names)
    E_ADVANCE,
    E_KING,
    E_MAN,
    E_MOBILITY,
    E_TOTALS,
    N_EVAL,
    Evaluation,
    default_weights,
    endgame_value,
    handwritten,
    leaf_value,
)
from damii_env import compiled as C

WIN = 1.0e6
KNOWN_WIN = 0.75 * WIN
"""A win the endgame database knows is ``KNOWN_WIN`` less the plies to the node and its
distance (to the next zeroing move): below every win the search sees to its end (``WIN``
less the plies), above ``WIN / 2``, the bound of a forced result."""
INF = 1.0e9

TT_EXACT = 0
TT_LOWER = 1
TT_UPPER = 2

# The transposition table: one int64 row of TT_WIDTH a slot, so that a probe reads one
# cache line (five arrays side by side cost a miss each): the position's key (its bits),
# the value (float64 bits, read through a float64 view of the table), the searched depth,
# and the bound flag with the best move ((move + 1) << 2 | flag: a zeroed row has none).
TT_KEY = 0
TT_VALUE = 1
TT_DEPTH = 2
TT_FLAG_MOVE = 3
TT_WIDTH = 4


def new_table(bits: int) -> np.ndarray:
    """An empty transposition table of 2**bits slots (:data:`TT_WIDTH` int64 a slot)."""
    if not 0 <= bits <= 40:
        raise ValueError(f"a table of 2**{bits} slots: expected 0 to 40 bits")
    return np.zeros((1 << bits, TT_WIDTH), dtype=np.int64)


@njit(cache=True, inline="always")
def _ending(board, bits, c, S, ray, trade, trap, bitboard):
    """The ending term of row c for the player to move: where at most
    :data:`ENDING_MEN` men are left and one side is ahead (a king counted as two men),
    that side gains `trade` for each piece fewer than 20 on the board (exchanges bring a
    won ending closer) and loses `trap` for each empty square next to a king of the side
    behind (short kings are won by taking their squares away)."""
    om = 0
    em = 0
    ok = 0
    ek = 0
    if bitboard:
        om = C.popcount(bits[c, C.B_MEN])
        em = C.popcount(bits[c, C.B_ENEMY_MEN])
        if om + em > ENDING_MEN:
            return 0.0
        ok = C.popcount(bits[c, C.B_KINGS])
        ek = C.popcount(bits[c, C.B_ENEMY_KINGS])
    else:
        for s in range(S):
            v = board[c, s]
            if v == 1:
                om += 1
            elif v == -1:
                em += 1
            elif v == 2:
                ok += 1
            elif v == -2:
                ek += 1
        if om + em > ENDING_MEN:
            return 0.0
    lead = (om - em) + 2 * (ok - ek)
    if lead == 0:
        return 0.0
    behind = -2 if lead > 0 else 2  # the kings of the side behind, in row c's view
    free = 0
    if trap != 0.0:
        for s in range(S):
            if board[c, s] == behind:
                for d in range(4):
                    t = ray[s, d, 0]
                    if t >= 0 and board[c, t] == 0:
                        free += 1
    value = trade * (20 - om - em - ok - ek) - trap * free
    return value if lead > 0 else -value


# --- search options ---------------------------------------------------------------------------
# The options array of :func:`search` (floats, by index); 0 switches a part off.
O_PVS = 0  # principal-variation search: moves after the first get a null window first
O_KILLERS = 1  # two killer moves a row (moves that cut off there), after the table's
O_HISTORY = 2  # the other moves by their history score (cut-offs, weighted by depth)
O_LMR = 3  # late-move reductions: moves a late quiet move is searched less (0 off)
O_LMR_DEPTH = 4  # ... only at nodes with at least this many full moves left
O_LMR_MOVES = 5  # ... only for moves after this many were searched at the node
O_ALPHA = 6  # the root's window (an aspiration window, or -INF..INF)
O_BETA = 7
O_DEADLINE = 8  # time.perf_counter() at which the search stops (0: no clock)
O_CHECK = 9  # the clock is read every O_CHECK nodes (a power of 2)
O_TWOFOLD = 10  # a position seen before (game or line) is a draw below the root
O_ENDING_TRADE = 11  # ending: the side ahead's bonus a piece off the board (0 off)
O_ENDING_TRAP = 12  # ending: its bonus a square the weaker side's kings cannot step to
O_THREAT = 13  # a quiet node at the horizon that the opponent could capture from: one move more
N_OPTIONS = 14

ENDING_MEN = 2
"""The ending term counts where at most this many men are left (kings decide)."""
ENDING_TRADE = 5.0
"""The shipped ending weights (search units; chosen on won king endings of Triestine,
docs/SEARCH.md): the side ahead gains this for each piece fewer on the board ..."""
ENDING_TRAP = 8.0
"""... and loses this for each empty square next to a king of the side behind."""

NULL_WINDOW = 1e-4
"""Width of a null window: the search asks only whether a value beats alpha."""

LINE = 64
"""Room for the hops of a whole move in the result array."""
R_LINE_LEN = 7  # result[R_LINE_LEN]: number of hops of the best move, result[8:] the hops
R_CLEAN_LINE = 8 + LINE  # result[R_CLEAN_LINE]: hops of the clean root move, then the hops
RESULT_SIZE = 8 + 2 * LINE + 1

ROWS = 128
"""Rows of the search's ply stack: the deepest line it follows (plies from the root)."""
ROOM = 256
"""Whole moves a position's list holds (a position with more is searched on these)."""


def make_options(pvs: bool = False, killers: bool = False, history: bool = False,
                 lmr: int = 0, lmr_depth: int = 3, lmr_moves: int = 3,
                 alpha: float = -INF, beta: float = INF, deadline: float = 0.0,
                 check: int = 1024, twofold: bool = False, ending_trade: float = 0.0,
                 ending_trap: float = 0.0, threat: bool = False) -> np.ndarray:
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
    o[O_TWOFOLD] = float(twofold)
    o[O_ENDING_TRADE] = ending_trade
    o[O_ENDING_TRAP] = ending_trap
    o[O_THREAT] = float(threat)
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
NODE = 0  # an inner node: search its moves
LEAF = 1  # a leaf whose value is known (game over, or decided by the table)
HORIZON = 2  # a leaf to be evaluated statically

# how a node searches its current move (its `phase`)
FULL = 0  # the node's window, the full depth
SCOUT = 1  # a null window at alpha, the full depth (PVS); re-searched if it lands inside
REDUCED = 2  # a null window, less depth (LMR); re-searched if it beats alpha




@njit(cache=True, inline="always")
def _terminal_value(outcome, turn, c):
    """Value of a finished game (outcome code `outcome`) at row c for the player to move
    there (`turn`): 0 for a draw or a truncation, else +-(WIN - c), so that a nearer win
    (a shallower row) is preferred."""
    if outcome == C.DRAW or outcome == C.TRUNCATED:
        return 0.0
    v = WIN - c
    return v if C.winner(outcome) == turn else -v


@njit(cache=True, inline="always")
def _known_value(known, distance, c):
    """The value at row c of the endgame database's verdict `known` (1 won, 0 drawn, -1
    lost) with `distance` plies to the next zeroing move: the winner prefers the shorter
    way, the loser the longer (:data:`KNOWN_WIN`)."""
    if known == 0:
        return 0.0
    v = KNOWN_WIN - c - distance
    return v if known > 0 else -v


@njit(cache=True, inline="always")
def _probe(info, c, rem, alpha, beta, stop, key, table, values, twofold, extend, evaluation,
           T, P):
    """Leaf test of the freshly entered node c (rem moves left, window alpha..beta, `key`
    its position key). Returns ``(kind, value, tt_move)``.

    kind is LEAF (with its value) when the game is over or the transposition table holds
    a value deep enough that decides the node; HORIZON (to be evaluated) when the search
    must stop (`stop`: the node budget or the time ran out, or the stack is full) or at
    the horizon (rem <= 0 without a capture to make, unless `extend`: a threat extension);
    else NODE. A position the endgame database of `evaluation` holds is a LEAF with its
    value (:func:`_known_value`). tt_move is the table's best move for the position (its
    index in the position's list, -1 if none), to be searched first. `values` is the
    table's float64 view.
    """
    out = C.ply_outcome(info, c)
    if out != C.ONGOING:
        return LEAF, _terminal_value(out, C.ply_turn(info, c), c), -1
    if twofold and c > 0 and C.ply_seen(info, c) >= 2:
        return LEAF, 0.0, -1
    if c > 0:
        known, distance = endgame_value(evaluation, T, P, c)
        if known != MISSING:
            return LEAF, _known_value(known, distance, c), -1
    if c > 0 and stop:
        return HORIZON, 0.0, -1
    if rem <= 0 and not C.ply_capturing(info, c) and c > 0 and not extend:
        return HORIZON, 0.0, -1
    slot = key & np.uint64(table.shape[0] - 1)  # unsigned: no negative-index test
    if np.uint64(table[slot, TT_KEY]) != key:
        return NODE, 0.0, -1
    packed = table[slot, TT_FLAG_MOVE]
    ttm = (packed >> 2) - 1
    if c > 0 and table[slot, TT_DEPTH] >= rem:
        tv = values[slot, TT_VALUE]
        f = packed & 3
        if f == TT_EXACT or (f == TT_LOWER and tv >= beta) or (f == TT_UPPER and tv <= alpha):
            return LEAF, tv, ttm
    return NODE, 0.0, ttm


@njit(cache=True, inline="always")
def _order(c, n, ttm, moves, codes, k1, k2, hist, side, score, shuffled):
    """Write the order of the n moves of row c to moves[c] (indices into the row's list):
    the table's move `ttm` first when it is among them, then the killer moves k1, k2 (move
    codes, -1: none) that are legal here, then the others by their history score
    hist[side, code], highest first (ties in the order of `shuffled`, a permutation of
    0..n-1; a table of width 1 scores nothing). codes[c, j] is move j's code. Returns n."""
    k = 0
    if 0 <= ttm < n:
        moves[c, 0] = ttm
        k = 1
    for kill in (k1, k2):
        if kill >= 0:
            for j in range(n):
                if codes[c, j] == kill and j != ttm:
                    moves[c, k] = j
                    k += 1
                    break
    fixed = k
    use_hist = hist.shape[1] > 1
    for jj in range(n):
        j = shuffled[jj]
        skip = False
        for q in range(fixed):
            if moves[c, q] == j:
                skip = True
                break
        if skip:
            continue
        if use_hist:  # insertion into the sorted tail
            s = hist[side, codes[c, j]]
            q = k
            while q > fixed and score[c, q - 1] < s:
                moves[c, q] = moves[c, q - 1]
                score[c, q] = score[c, q - 1]
                q -= 1
            moves[c, q] = j
            score[c, q] = s
        else:
            moves[c, k] = j
        k += 1
    return n


@njit(cache=True, inline="always")
def _store(table, values, key, value, depth, move, alpha0, beta):
    """Record a finished node in the transposition table (`values`: its float64 view):
    its value, searched depth and best move, with the bound flag of a value found in the
    window alpha0..beta (upper bound at or below alpha0, lower bound at or above beta,
    exact in between)."""
    slot = key & np.uint64(table.shape[0] - 1)  # unsigned: no negative-index test
    if value <= alpha0:
        flag = TT_UPPER
    elif value >= beta:
        flag = TT_LOWER
    else:
        flag = TT_EXACT
    table[slot, TT_KEY] = np.int64(key)
    values[slot, TT_VALUE] = value
    table[slot, TT_DEPTH] = depth
    table[slot, TT_FLAG_MOVE] = ((move + 1) << 2) | flag


@njit(cache=True, inline="always")
def _back_up(c, v, best, bestmove, alpha, beta, moves, idx, phase, redo, pvs, settled):
    """Give node c's value v to its parent p (negated). Returns True when the value cut
    off at p (a killer / history event).

    A value from a probing search is not taken: a reduced search that beats alpha is
    searched again at the full depth, a null-window search that lands inside the window
    again with the full window (phase and redo of p say how; `settled`: the search was
    stopped, take every value as it is)."""
    p = c - 1
    pv = -v
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
        bestmove[p] = moves[p, idx[p] - 1]
        if pv > alpha[p]:
            alpha[p] = pv
            return alpha[p] >= beta[p]
    return False


@njit(cache=True, inline="always")
def _reward(p, code, depth, side, killers, use_killers, hist, use_hist):
    """The move of code `code` cut off at node p (depth moves left): make it p's first
    killer and add (depth + 1)**2 to its history score."""
    if use_killers and killers[p, 0] != code:
        killers[p, 1] = killers[p, 0]
        killers[p, 0] = code
    if use_hist:
        d = max(depth, 0) + 1
        hist[side, code] += d * d


@njit(cache=True, inline="always")
def _child_done(c, v, aborted, w, s, info, kill, hist, clean_value, clean_move, clean_done):
    """Node c (not the root) is done with value v: back it up to its parent (a move that
    cuts off there is rewarded) and, for a root child searched to the end, keep the root's
    best move so far. Returns the new (clean_value, clean_move, clean_done)."""
    if _back_up(c, v, w.best, w.bestmove, w.alpha, w.beta, w.moves, w.idx, w.phase, w.redo,
                s.pvs, aborted) and not aborted:
        p = c - 1
        _reward(p, w.codes[p, w.bestmove[p]], w.rem[p], C.ply_turn(info, p), kill,
                s.use_killers, hist, s.use_hist)
    if c == 1 and not aborted and not w.redo[0]:
        clean_value = w.best[0]
        clean_move = w.bestmove[0]
        clean_done += 1
    return clean_value, clean_move, clean_done


@njit(cache=True, _nrt=False)
def _finish(result, value, move, nodes, aborted, clean_value, clean_move, clean_done, paths,
            plen):
    """Write the search's answer into result (see :func:`search`); `paths` and `plen` are
    the root's move lists."""
    result[0] = value
    result[1] = move
    result[2] = nodes
    result[3] = 1.0 if aborted else 0.0
    if result.shape[0] < RESULT_SIZE:
        return
    result[4] = clean_value
    result[5] = clean_move
    result[6] = clean_done
    for at, i in ((R_LINE_LEN, move), (R_CLEAN_LINE, clean_move)):
        k = 0
        if i >= 0:
            k = min(int(plen[i]), LINE)
            for q in range(k):
                result[at + 1 + q] = paths[i, q]
        result[at] = k


@njit(cache=True, _nrt=False)
def _move_codes(ray, n1, S, paths, plen, c, n, codes):
    """codes[c, j] = start x S + end square of each move j of row c (killer and history
    keys)."""
    for j in range(n):
        start, end = C.move_ends(ray, n1, paths, plen, c, j)
        codes[c, j] = start * S + end


@njit(cache=True, _nrt=False)
def _shuffle(n, seed, out):
    """out[:n] = 0..n-1, shuffled by `seed` (seed < 0: in order)."""
    for j in range(n):
        out[j] = j
    if seed >= 0:
        np.random.seed(seed)
        for j in range(n - 1, 0, -1):
            i = np.random.randint(j + 1)
            out[i], out[j] = out[j], out[i]


class Work(NamedTuple):
    """The search's work arrays, a row (node) each: its ordered moves and their codes and
    ordering scores, its window, best value and move, and how its current move is
    searched."""

    moves: np.ndarray
    """int64 (L, W): the row's moves in the order they are searched (indices in its list)."""
    codes: np.ndarray
    """int64 (L, W): each listed move's code, start x S + end (killers, history)."""
    score: np.ndarray
    """float64 (L, W): the ordering scores of the sorted tail of `moves`."""
    shuffled: np.ndarray
    """int64 (W,): the root's moves in the order of the seed."""
    identity: np.ndarray
    """int64 (W,): 0, 1, 2, ... (the other rows' tie order)."""
    nmov: np.ndarray
    """int64 (L,): the row's number of moves to search."""
    idx: np.ndarray
    """int64 (L,): the next of them."""
    rem: np.ndarray
    """int64 (L,): whole moves left to the horizon."""
    alpha: np.ndarray
    """float64 (L,): the window's lower end ..."""
    beta: np.ndarray
    """float64 (L,): ... and upper end."""
    alpha0: np.ndarray
    """float64 (L,): alpha when the row was entered (the table's bound flag)."""
    best: np.ndarray
    """float64 (L,): the best value found so far."""
    bestmove: np.ndarray
    """int64 (L,): its move (-1: none yet)."""
    phase: np.ndarray
    """int64 (L,): how the current move is searched (FULL, SCOUT, REDUCED)."""
    redo: np.ndarray
    """bool (L,): the current move is searched again (a probe was not conclusive)."""
    no_hist: np.ndarray
    """float64 (2, 1): the history table of a search without one."""


class Settings(NamedTuple):
    """The search's options (:func:`make_options`) as typed values."""

    pvs: bool
    use_killers: bool
    use_hist: bool
    lmr: int
    lmr_depth: int
    lmr_moves: int
    deadline: float
    check_mask: int
    twofold: bool
    trade: float
    trap: float
    ending: bool
    threat: bool


@njit(cache=True)
def search(T, G, depth, evaluation, table, max_nodes, result, options=None, history=None,
           killers=None, seed=-1, plies=None):
    """Alpha-beta from game 0 of the state arrays G (at the start of its turn) to `depth`
    moves, the leaves valued by `evaluation` (an
    :class:`~damii_agents.search.evaluation.Evaluation`: :func:`handwritten` or
    :func:`~damii_agents.search.evaluation.learned`).

    Writes result[0] = value, result[1] = the best move (its index in the root's list of
    whole moves), result[2] = nodes, result[3] = 1 if the node budget or the time ran out
    (the value is then unreliable). A result of :data:`RESULT_SIZE` also gets the best root
    move found before the search was stopped (result[4] its value, result[5] the move, -1
    if none, result[6] how many root moves were searched to the end), and the hops of both
    moves: result[R_LINE_LEN] hops then the hops of the best, result[R_CLEAN_LINE] hops
    then the hops of the clean one. `table` is the transposition table (:func:`new_table`),
    kept between calls.

    `options` (:func:`make_options`; none: the plain search) switches on PVS, killers,
    history ordering, late-move reductions, `twofold`, the ending term and the threat
    extension, sets the root window and the deadline.
    `history` (2 x squares**2, by side to move and move code) and `killers` (rows x 2)
    keep the move-ordering scores between calls; without them the search keeps none.
    `seed` >= 0 shuffles the root's moves (equal moves are then chosen at random); `plies`
    is a ply stack to reuse (``C.new_plies``).
    """
    values = table.view(np.float64)
    if plies is None:
        P = C.new_plies(T, ROWS, ROOM, 256)
    else:
        P = plies
    L = P.board.shape[0]
    W = P.plen.shape[1]
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
    work = Work(np.empty((L, W), dtype=np.int64), np.empty((L, W), dtype=np.int64),
                np.empty((L, W)), np.empty(W, dtype=np.int64), np.arange(W),
                np.zeros(L, dtype=np.int64), np.zeros(L, dtype=np.int64),
                np.zeros(L, dtype=np.int64), np.zeros(L), np.zeros(L), np.zeros(L),
                np.zeros(L), np.full(L, -1, dtype=np.int64), np.zeros(L, dtype=np.int64),
                np.zeros(L, dtype=np.bool_), np.zeros((2, 1)))
    _search_loop(T, G, depth, evaluation, table, values, max_nodes, result, opts, hist, kill,
                 seed, P, work)


@njit(cache=True, inline="always")
def _settings(T, opts, hist, kill, L):
    """The options array read once into typed values (killers and history only where
    their tables have room)."""
    trade = opts[O_ENDING_TRADE]
    trap = opts[O_ENDING_TRAP]
    return Settings(opts[O_PVS] > 0, opts[O_KILLERS] > 0 and kill.shape[0] >= L
                    and kill.shape[1] >= 2,
                    opts[O_HISTORY] > 0 and hist.shape[1] >= C.n_squares(T) ** 2,
                    int(opts[O_LMR]), int(opts[O_LMR_DEPTH]), int(opts[O_LMR_MOVES]),
                    opts[O_DEADLINE], max(int(opts[O_CHECK]), 1) - 1, opts[O_TWOFOLD] > 0,
                    trade, trap, trade != 0.0 or trap != 0.0,
                    opts[O_THREAT] > 0 and C.has_bits(T))


@njit(cache=True, _nrt=False)
def _search_loop(T, G, depth, evaluation, table, values, max_nodes, result, opts, hist, kill,
                 seed, P, w):
    """The search of :func:`search` once its arrays are made (`w`: :class:`Work`).
    Compiled without reference counts (``_nrt=False``): numba counts a reference on every
    array a function takes or names, an atomic instruction each, and in a function this
    large its pruning pass leaves them in the loop; this function makes no array, so it
    needs none (they took about two thirds of a node's time)."""
    info, keys, paths, plen = P.info, P.keys, P.paths, P.plen
    L = P.board.shape[0]
    s = _settings(T, opts, hist, kill, L)
    order_hist = hist if s.use_hist else w.no_hist
    nodes = 0
    aborted = False
    clean_value = -INF
    clean_move = -1
    clean_done = 0
    C.ply_root(T, G, 0, P)
    _shuffle(C.ply_n_moves(info, 0), seed, w.shuffled)
    w.alpha[0] = opts[O_ALPHA]
    w.beta[0] = opts[O_BETA]
    w.rem[0] = depth
    top = 0
    c = 0  # node 0 is never a leaf: the caller only searches ongoing games
    while True:
        # `c` is a freshly entered node
        nodes += 1
        if nodes > max_nodes:
            aborted = True
        if s.deadline > 0.0 and (nodes & s.check_mask) == 0 and not aborted:
            if _now() >= s.deadline:
                aborted = True
        # threat extension: a quiet row at the horizon (not one reached by quiescence
        # captures) that the opponent could capture from is searched one move more
        extend = (s.threat and w.rem[c] == 0 and c > 0 and c < L - 2
                  and not C.ply_capturing(info, c) and C.ply_threat(T, P, c))
        kind, v, ttm = _probe(info, c, w.rem[c], w.alpha[c], w.beta[c],
                              aborted or c >= L - 1, keys[c], table, values, s.twofold,
                              extend, evaluation, T, P)
        if kind == NODE:
            if extend:  # the row was played as a leaf: its quiet moves were only counted
                C.ply_list(T, P, c)
            _open_node(T, P, c, ttm, w, kill, order_hist, s)
            top = c
        else:
            if kind == HORIZON:
                v = _horizon_value(evaluation, T, P, c, s)
            if c == 0:
                _finish(result, v, -1, nodes, aborted, clean_value, clean_move, clean_done,
                        paths[0], plen[0])
                return
            clean_value, clean_move, clean_done = _child_done(
                c, v, aborted, w, s, info, kill, hist, clean_value, clean_move, clean_done)
        # --- walk up/down until a new child is entered
        while True:
            i = top
            if w.idx[i] < w.nmov[i] and w.alpha[i] < w.beta[i]:
                # a child at the horizon is searched only if it must capture: its quiet
                # moves are counted (the evaluation's mobility), not listed (the child's
                # table slot, read when it is entered, is prefetched as soon as its key is
                # made: the table is larger than the cache, and waiting for memory took
                # about a sixth of a node)
                a, r, lo, hi = _next_move(P, i, w, kill, s)
                c = i + 1
                C.ply_play(T, P, i, a, r - 1 <= 0, table)
                w.rem[c] = r - 1
                w.alpha[c] = -hi
                w.beta[c] = -lo
                break
            # node i is finished
            v = w.best[i]
            if not aborted:
                _store(table, values, keys[i], v, w.rem[i], w.bestmove[i], w.alpha0[i],
                       w.beta[i])
            if i == 0:
                _finish(result, v, w.bestmove[0], nodes, aborted, clean_value, clean_move,
                        clean_done, paths[0], plen[0])
                return
            clean_value, clean_move, clean_done = _child_done(
                i, v, aborted, w, s, info, kill, hist, clean_value, clean_move, clean_done)
            top = i - 1


@njit(cache=True, inline="always")
def _horizon_value(evaluation, T, P, c, s):
    """The static value of row c for its player to move: the evaluation's (the one seam,
    :func:`~damii_agents.search.evaluation.leaf_value`), and the ending term where it is
    on."""
    lead = C.ply_totals_lead(T, P, c) if C.is_scoring(T) else 0.0
    v = leaf_value(evaluation, T, P, c, C.ply_n_moves(P.info, c), lead)
    if s.ending:
        v += _ending(P.board, P.bits, c, C.n_squares(T), T.ray, s.trade, s.trap,
                     C.has_bits(T))
    return v


@njit(cache=True, inline="always")
def _open_node(T, P, c, ttm, w, kill, order_hist, s):
    """Node c is searched: its moves' codes made and its moves ordered, its window kept."""
    S = C.n_squares(T)
    nm = C.ply_n_moves(P.info, c)
    _move_codes(T.ray, C.board_size(T) - 1, S, P.paths, P.plen, c, nm, w.codes)
    k1 = kill[c, 0] if s.use_killers else -1
    k2 = kill[c, 1] if s.use_killers else -1
    w.nmov[c] = _order(c, nm, ttm, w.moves, w.codes, k1, k2, order_hist,
                       C.ply_turn(P.info, c), w.score, w.shuffled if c == 0 else w.identity)
    w.idx[c] = 0
    w.best[c] = -INF
    w.bestmove[c] = -1
    w.alpha0[c] = w.alpha[c]
    w.redo[c] = False


@njit(cache=True, inline="always")
def _next_move(P, i, w, kill, s):
    """Node i's next move and how it is searched: returns (move, depth left, window).

    The child has one move less and the window negated; a probing search (phase) narrows
    the window to a null one at alpha and a reduced one searches less deep."""
    a = w.moves[i, w.idx[i]]
    if w.redo[i]:
        w.redo[i] = False
        mode = w.phase[i]
    else:
        mode = FULL
        if w.idx[i] > 0:
            code = w.codes[i, a]
            if (s.lmr > 0 and i > 0 and w.rem[i] >= s.lmr_depth and w.idx[i] >= s.lmr_moves
                    and not C.ply_capturing(P.info, i)
                    and not (s.use_killers and (code == kill[i, 0] or code == kill[i, 1]))):
                mode = REDUCED
            elif s.pvs and w.beta[i] - w.alpha[i] > NULL_WINDOW:
                mode = SCOUT
        w.phase[i] = mode
    w.idx[i] += 1
    lo = w.alpha[i]
    hi = w.beta[i]
    r = w.rem[i]
    if mode != FULL:
        hi = min(lo + NULL_WINDOW, hi)
        if mode == REDUCED:
            r -= s.lmr
    return a, r, lo, hi

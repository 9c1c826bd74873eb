"""Compiled kernels of the rules core (numba).

Every function here works on one game, row ``b`` of the batched state arrays, and
the batch drivers at the bottom loop over rows in compiled code (in parallel for
large batches). All rule differences between variants come in through the
``params`` vector (built from :class:`damii_env.rules.Rules` by
:mod:`damii_env.engine`); there is no per-variant code path.

The kernels that play whole turns take two tuples: ``T = (params, ray, zobrist,
sqinfo, chipval)``, the rule tables, and ``G = (board, pending, meta, hist, legal,
chip, scores)``, the state arrays of B games (leading batch axis B; boards from the
point of view of the player to move, who always moves "up", towards row 0):

* ``board`` int8 (B, S): 0 empty, 1 own man, 2 own king, -1 enemy man, -2 enemy king;
* ``pending`` uint8 (B, S): enemy pieces captured this turn and not yet removed;
* ``meta`` int32 (B, M): the per-game counters named by the ``M_*`` constants;
* ``hist`` uint64 (B, H): position hashes since the last irreversible move;
* ``legal`` int16 (B, L): the legal hops of the player to move, ``meta[M_N_LEGAL]`` of them;
* ``chip`` int8 (B, S): Damath chip id on each square (mover's view), -1 where none;
* ``scores`` float64 (B, 4): points scored by White and Black, then their final totals.

The kernels run once a hop, a move or a node make no array and are compiled without
reference counts (``_nrt=False``): numba's count on each array argument is an atomic
instruction, left in large functions by its pruning pass (docs/ARCHITECTURE.md). The few
that need arrays make them and hand them to such a loop (:func:`perft`, :func:`step_games`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from damii_env._bits import lowest_bit, mirror, popcount, prefetch_row

# --- params vector -------------------------------------------------------------------------
P_N = 0  # board size N
P_S = 1  # number of squares S
P_MEN_BACK = 2  # men capture backwards
P_FLY = 3  # kings fly
P_MEN_TAKE_KINGS = 4  # men may capture kings
P_IMMEDIATE = 5  # captured pieces removed at once
P_PROMO_ENDS = 6  # a man reaching the far row mid-capture is crowned and stops
P_PRECEDENCE = 7  # 0 free, 1 most pieces, 2 triestine, 3 damath
P_REPETITION = 8  # occurrences for a repetition draw (0 off)
P_NO_PROGRESS = 9  # plies of king-only non-capture moves for a draw (0 off)
P_TURN_LIMIT = 10  # plies before truncation (0 off)
P_HIST = 11  # history capacity H
P_SCORING = 12  # Damath scoring: jumps score points, every end is decided by the totals
P_LOWER_WINS = 13  # scoring games: the lower total wins (Sci-Dama science games)
P_ENDGAME_THREE = 14  # plies before the FMJD draw of 3 pieces (a king among them) v a lone king
P_ENDGAME_TWO = 15  # plies before the FMJD draw of 2 pieces or fewer (a king) v a lone king
P_ROW_OFFSET = 16  # bit layout of a board: square s of row r is bit s + (r + offset) // 2
N_PARAMS = 17
MAX_BITBOARD_SIZE = 10  # the largest board whose bit layout fits a 64-bit word
# Constant arguments of one compiled function's call to another, typed as the callee's other
# callers type them: numba compiles a function once for each distinct literal argument (a
# call with 0 or True besides one with an int64 or bool variable compiles turn_moves twice,
# a minute each on a cold cache), while a numpy scalar is a plain int64 or bool.
ROW0 = np.int64(0)
YES = np.bool_(True)

# --- scoring tables (Damath) ---------------------------------------------------------------
MAX_CHIPS = 24  # chip ids 0..23: 0..11 the first player's set, 12..23 the second's
SQ_OP = 0  # sqinfo columns, by absolute square: operation, Damath column x, Damath row y
SQ_X = 1
SQ_Y = 2
OP_ADD = 0
OP_SUB = 1
OP_MUL = 2
OP_DIV = 3

PREC_FREE = 0
PREC_MOST = 1
PREC_TRIESTINE = 2
PREC_DAMATH = 3

# --- meta columns --------------------------------------------------------------------------
M_TURN = 0  # colour to move: 0 White, 1 Black
M_CONT = 1  # square of the piece that must continue capturing, -1 if none
M_SEQ_COUNT = 2  # pieces captured so far this turn
M_SEQ_KINGS = 3  # kings captured so far this turn
M_SEQ_FIRST_KING = 4  # hop index of the first king captured this turn, -1 if none
M_SEQ_KING_MOVER = 5  # 1 if the capturing piece started the turn as a king
M_REQ_KEY = 6  # precedence key every legal sequence of this turn reaches
M_PLY = 7  # completed moves (plies) since the start
M_NO_PROGRESS = 8  # consecutive plies of king moves without capture
M_HIST_LEN = 9  # positions recorded in hist since the last irreversible move
M_OUTCOME = 10  # 0 ongoing, 1 White won, 2 Black won, 3 draw, 4 truncated
M_REASON = 11  # why it ended: 0 -, 1 no legal move, 2 repetition, 3 no progress, 4 turn limit
M_N_LEGAL = 12  # number of legal actions in `legal`
M_CAPTURING = 13  # 1 when the legal actions are jumps
M_SEQ_START = 14  # square where the current move started, -1 at turn start
M_LAST_FROM = 15  # last completed move: start square (absolute), -1 if none
M_LAST_TO = 16  # last completed move: end square (absolute), -1 if none
M_ENDGAME = 17  # plies since the last capture or promotion (the FMJD endgame draw count)
N_META = 18

OUT_ONGOING = 0
OUT_WHITE = 1
OUT_BLACK = 2
OUT_DRAW = 3
OUT_TRUNCATED = 4

REASON_NONE = 0
REASON_NO_MOVES = 1
REASON_REPETITION = 2
REASON_NO_PROGRESS = 3
REASON_TURN_LIMIT = 4
REASON_ENDGAME = 5
REASON_NO_ENEMY = 6  # a set-up position where the player not to move has no pieces


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
"""Entry n1 (1 to 15: boards of 4 to 16 squares a side, Rules' limits): ``2**32 // n1 + 1``,
with which ``(x * entry) >> 32`` is ``x // n1`` for every 0 <= x < 2**28 (hop actions are
below 2**15). A constant of the compiled code."""


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


F_SQ = 0  # frame columns of the capture-sequence search: square of the capturing piece
F_N = 1  # its jumps at this depth (in the scratch row of the depth)
F_IX = 2  # the next of them to try
F_CAP = 3  # the hop played at this depth: captured square
F_CAPV = 4  # ... captured piece
F_LAND = 5  # ... landing square
F_KINGS = 6  # kings captured before this depth
F_FIRST_KING = 7  # hop index of the first king captured, -1 if none
F_HOP = 8  # ... the hop's action
N_FRAME = 9


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


# the columns of a bit-layout table (:func:`bit_layout`) after its S square-to-bit entries
BL_SQUARE = 0  # S + bit: the square of a bit (-1 between squares)
BL_ALL = 64  # S + BL_ALL: the mask of every square
BL_MIRROR = 65  # S + BL_MIRROR: the shift of :func:`damii_env._bits.mirror`
BL_SIZE = 66
# the columns of a row of bit masks, from the player to move
B_MEN = 0
B_KINGS = 1
B_ENEMY_MEN = 2
B_ENEMY_KINGS = 3


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
def _sequences_from(params, ray, board, pending, b, s, is_king, best, m, scratch, frames,
                    paths, pcaps, plen, q):
    """A turn's capture sequences from the piece on s appended to list q (from move m on,
    :func:`capture_sequences` at the turn's start). Returns ``(m, best)``."""
    return capture_sequences(params, ray, board, pending, b, s, is_king, 0, 0, -1,
                             1 if is_king else 0, best, m, 0, scratch, frames, scratch[:0],
                             paths, pcaps, plen, q)


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
def position_hash(params, zobrist, board, chip, b, turn):
    """Zobrist hash of the board (mover's view), chips (scoring games) and colour to move.

    Free of branches over the squares: an empty square's key is masked to 0 instead of
    skipped (over a batch of random positions a branch per square mispredicts, and the
    hash took 3x as long)."""
    S = params[P_S]
    h = np.uint64(0)
    for s in range(S):
        v = np.int64(board[b, s])
        code = v - 1 if v > 0 else 1 - v  # 1->0, 2->1, -1->2, -2->3 (0->1, masked out)
        keep = np.uint64(0) - np.uint64(v != 0)  # all ones on an occupied square, else 0
        h ^= zobrist[s * 4 + code] & keep
    if params[P_SCORING] == 1:
        for s in range(S):
            # a chip id, or -1 on an empty square: the index stays in the table
            c = np.int64(chip[b, s])
            keep = np.uint64(0) - np.uint64(board[b, s] != 0)
            h ^= _chip_key(zobrist, S, s, c) & keep
    if turn == 1:
        h ^= zobrist[S * 4]
    return h


@njit(cache=True, inline="always")
def _piece_key(zobrist, s, v):
    """The hash key of piece v (mover's view codes) on square s, 0 for an empty square
    (the terms :func:`position_hash` sums)."""
    v = np.int64(v)
    code = v - 1 if v > 0 else 1 - v
    keep = np.uint64(0) - np.uint64(v != 0)
    return zobrist[s * 4 + code] & keep


@njit(cache=True, inline="always")
def _chip_key(zobrist, S, s, c):
    """The hash key of chip c under a piece on square s (the chip terms of
    :func:`position_hash`, scoring games)."""
    return zobrist[S * 4 + 1 + s * MAX_CHIPS + np.int64(c)]


@njit(cache=True, _nrt=False)
def mirrored_board_hash(params, zobrist, board, chip, b):
    """:func:`position_hash` without the colour to move, of game b's position seen by the
    other player: square s is S - 1 - s, the owners swapped (in a scoring game the chips
    under the pieces too)."""
    S = params[P_S]
    h = np.uint64(0)
    for s in range(S):
        h ^= _piece_key(zobrist, S - 1 - s, -np.int64(board[b, s]))
    if params[P_SCORING] == 1:
        for s in range(S):
            if board[b, s] != 0:
                h ^= _chip_key(zobrist, S, S - 1 - s, chip[b, s])
    return h


@njit(cache=True, inline="always")
def chip_value(chipval, c, x, y):
    """Value of chip c standing on Damath square (x, y): coef * x**xe * y**ye. The
    exponents are whole (0, 1 or 2), so the powers are products, not calls of pow (a
    leaf's totals read every chip: 430 ns with pow at the start position)."""
    px = 1.0
    for _ in range(np.int64(chipval[c, 1])):
        px *= x
    py = 1.0
    for _ in range(np.int64(chipval[c, 2])):
        py *= y
    return chipval[c, 0] * px * py


@njit(cache=True, inline="always")
def jump_score(op, taker, taken, multiplier):
    """Points of one jump: ``taker OP taken`` times the dama multiplier (x / 0 scores 0)."""
    if op == OP_ADD:
        r = taker + taken
    elif op == OP_SUB:
        r = taker - taken
    elif op == OP_MUL:
        r = taker * taken
    else:
        if taken == 0.0:
            return 0.0
        r = taker / taken
    return r * multiplier


@njit(cache=True, _nrt=False)
def final_totals(params, board, chip, scores, sqinfo, chipval, b, turn):
    """(White's, Black's) totals of game b: points scored plus the values of the chips
    still on the board, damas doubled (Sci-Damath). The one place they are computed."""
    S = params[P_S]
    white = scores[b, 0]
    black = scores[b, 1]
    for s in range(S):
        v = board[b, s]
        if v == 0:
            continue
        absq = s if turn == 0 else S - 1 - s
        val = chip_value(chipval, chip[b, s], sqinfo[absq, SQ_X], sqinfo[absq, SQ_Y])
        if v == 2 or v == -2:
            val *= 2.0
        if (v > 0) == (turn == 0):  # White's piece
            white += val
        else:
            black += val
    return white, black


@njit(cache=True, _nrt=False)
def final_totals_batch(T, G, out):
    """out[b] = (White's, Black's) totals of every game b (see :func:`final_totals`)."""
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, meta, hist, legal, chip, scores = G
    for b in range(board.shape[0]):
        out[b, 0], out[b, 1] = final_totals(params, board, chip, scores, sqinfo, chipval, b,
                                            meta[b, M_TURN])


@njit(cache=True, _nrt=False)
def endgame_limit(params, board, b, bits=None):
    """Plies the FMJD endgame draw allows in game b's material, 0 if none applies.

    One side has a lone king; the other three pieces with a king among them
    (``P_ENDGAME_THREE``) or two pieces or fewer with a king (``P_ENDGAME_TWO``). The
    pieces are counted from the bit masks bits[b] where they are given (a ply stack's
    rows, :func:`board_bits`), else from the board.
    """
    if bits is not None and params[P_N] <= MAX_BITBOARD_SIZE:
        own_kings = popcount(bits[b, B_KINGS])
        own = popcount(bits[b, B_MEN]) + own_kings
        enemy_kings = popcount(bits[b, B_ENEMY_KINGS])
        enemy = popcount(bits[b, B_ENEMY_MEN]) + enemy_kings
    else:
        own = 0
        own_kings = 0
        enemy = 0
        enemy_kings = 0
        for s in range(params[P_S]):
            v = board[b, s]
            if v > 0:
                own += 1
                if v == 2:
                    own_kings += 1
            elif v < 0:
                enemy += 1
                if v == -2:
                    enemy_kings += 1
            if own > 3 and enemy > 3:
                return 0
    if own == 1 and own_kings == 1:
        n, kings = enemy, enemy_kings
    elif enemy == 1 and enemy_kings == 1:
        n, kings = own, own_kings
    else:
        return 0
    if kings == 0:
        return 0
    if n == 3:
        return params[P_ENDGAME_THREE]
    if n <= 2:
        return params[P_ENDGAME_TWO]
    return 0


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
def end_reason(params, board, b, n, occurrences, no_progress, endgame, ply, bits=None):
    """Why the game b ends at the start of this turn, REASON_NONE if it goes on: the mover
    has `n` legal moves, the position has occurred `occurrences` times (this one
    included), `no_progress` plies of king moves without capture, `endgame` plies since
    the last capture or promotion, `ply` moves played. The one statement of the game's
    ends (the engine's turns and the search's nodes both ask here). A ply stack passes
    its rows' bit masks `bits` (:func:`board_bits`): the pieces are then counted from
    them, not from the board."""
    if bits is not None and params[P_N] <= MAX_BITBOARD_SIZE:
        enemy = (bits[b, B_ENEMY_MEN] | bits[b, B_ENEMY_KINGS]) != 0
    else:
        enemy = False
        for s in range(params[P_S]):
            if board[b, s] < 0:
                enemy = True
                break
    if not enemy:  # only reachable from a set-up position
        return REASON_NO_ENEMY
    if n == 0:
        return REASON_NO_MOVES
    if params[P_REPETITION] > 0 and occurrences >= params[P_REPETITION]:
        return REASON_REPETITION
    if params[P_NO_PROGRESS] > 0 and no_progress >= params[P_NO_PROGRESS]:
        return REASON_NO_PROGRESS
    if (params[P_ENDGAME_THREE] > 0 or params[P_ENDGAME_TWO] > 0) and endgame > 0:
        limit = endgame_limit(params, board, b, bits)
        if limit > 0 and endgame >= limit:
            return REASON_ENDGAME
    if params[P_TURN_LIMIT] > 0 and ply >= params[P_TURN_LIMIT]:
        return REASON_TURN_LIMIT
    return REASON_NONE


@njit(cache=True, inline="always")
def end_outcome(params, board, chip, scores, sqinfo, chipval, b, turn, reason):
    """The outcome code of game b ended for `reason` with `turn` to move. In a scoring
    game the totals decide every end (written to scores[b, 2:4])."""
    if params[P_SCORING] == 1:
        white, black = final_totals(params, board, chip, scores, sqinfo, chipval, b, turn)
        scores[b, 2] = white
        scores[b, 3] = black
        diff = white - black
        if params[P_LOWER_WINS] == 1:
            diff = -diff
        if abs(diff) < 1e-9:
            return OUT_DRAW
        return OUT_WHITE if diff > 0 else OUT_BLACK
    if reason == REASON_NO_MOVES:  # the mover has lost
        return OUT_BLACK if turn == 0 else OUT_WHITE
    if reason == REASON_NO_ENEMY:  # the other player has lost
        return OUT_WHITE if turn == 0 else OUT_BLACK
    if reason == REASON_TURN_LIMIT:
        return OUT_TRUNCATED
    return OUT_DRAW


@njit(cache=True, inline="always")
def move_counters(captures, promoted, was_man, no_progress, endgame):
    """The draw counters after a move: ``(no_progress, endgame, irreversible)``. A capture
    or a promotion resets the endgame count; a capture or a man's move is irreversible
    and resets the no-progress count (and the repetition record)."""
    if captures > 0 or promoted:
        endgame = 0
    else:
        endgame += 1
    irreversible = captures > 0 or was_man
    if irreversible:
        no_progress = 0
    else:
        no_progress += 1
    return no_progress, endgame, irreversible


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
def _scratch(params):
    """Work rows of the move generation: per-depth hop buffers for the sequence search
    (a sequence captures at most S pieces; rows 0..S-1), the own kings (row S), a buffer
    of quiet moves (S + 1), the own pieces (S + 2), then the sequence search's frames
    (rows S + 3 on, :func:`_frames_in`)."""
    S = params[P_S]
    return np.empty((2 * S + 5, max(4 * S, N_FRAME)), dtype=np.int16)


# --- batch drivers -------------------------------------------------------------------------


@njit(cache=True)
def step_games(T, G, actions, status, lo, hi):
    """One hop in each of the games lo..hi-1 (``status[b]`` as :func:`apply_action`
    returns it): the engine's step, for all the games on one thread, or per block of
    games by :func:`step_parallel`."""
    _step_rows(T, G, actions, status, lo, hi, _scratch(T[0]))


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
    legal = G[4]
    scratch = _scratch(T[0])
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


# --- whole-move enumeration and perft, on the same hop kernels -----------------------------


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


@njit(cache=True)
def enumerate_moves(T, G, out_actions, out_caps, out_len):
    """List every complete move of the game in row 0 as its hop actions.

    Rows 1.. of the arrays are used as the search stack. Writes up to
    out_actions.shape[0] moves; returns the number of moves, or -1 if they did not fit.
    """
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, meta, hist, legal, chip, scores = G
    scratch = _scratch(params)
    n1 = params[P_N] - 1
    depth_cap = board.shape[0] - 1
    idx = np.zeros(board.shape[0], dtype=np.int64)
    top = 0
    m = 0
    turn0 = meta[0, M_TURN]
    if meta[0, M_OUTCOME] != OUT_ONGOING:
        return 0
    while top >= 0:
        if idx[top] >= meta[top, M_N_LEGAL]:
            top -= 1
            continue
        a = np.int64(legal[top, idx[top]])
        idx[top] += 1
        child = top + 1
        if child > depth_cap:
            return -2
        _copy_row(G, top, child)
        s, d, k = decode(a, n1)
        cap = captured_square(ray, board, child, s, d, k)
        apply_action(T, G, child, a, scratch)
        if top >= out_actions.shape[1]:
            return -2
        out_actions[m, top] = a
        out_caps[m, top] = cap
        if meta[child, M_TURN] != turn0 or meta[child, M_CONT] < 0:
            if m + 1 >= out_actions.shape[0]:
                return -1
            out_len[m] = top + 1
            # the next move shares the prefix of this one
            for j in range(top + 1):
                out_actions[m + 1, j] = out_actions[m, j]
                out_caps[m + 1, j] = out_caps[m, j]
            m += 1
        else:
            idx[child] = 0
            top = child
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
    params, ray = T[0], T[1]
    board0, meta = G[0], G[2]
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


# --- the ply stack: whole moves played one ply a row (the search's positions) -------------
I_TURN = 0  # colour to move: 0 White, 1 Black
I_PLY = 1  # moves played in the game
I_NO_PROGRESS = 2  # plies of king moves without capture
I_ENDGAME = 3  # plies since the last capture or promotion
I_IRREV = 4  # the last row entered by an irreversible move, -1: none since the root
I_N_MOVES = 5  # legal whole moves of the row (at most the lists' room)
I_REASON = 6  # why the game is over at this row (REASON_*), REASON_NONE if it goes on
I_OUTCOME = 7  # its outcome code (OUT_*)
I_CAPTURING = 8  # 1 when the row's moves are captures
I_ROOT_HIST = 9  # (row 0 only) keys of the game's record in plies[9] before the root
I_SEEN = 10  # how often the row's position has occurred since the last irreversible move
N_INFO = 11


@njit(cache=True)
def new_plies(params, rows, room, hist_cap):
    """The arrays of a ply stack of `rows` rows, with room for `room` whole moves a row:
    ``(board, pending, chip, scores, info, keys, paths, pcaps, plen, root_hist, scratch,
    frames, bits, layout, mirrored)`` (bits: each row's bit masks, :func:`board_bits`;
    layout: :func:`bit_layout`; mirrored: each row's board key seen by the other player,
    :func:`mirrored_board_hash`, which makes the next row's key without a pass over the
    board)."""
    S = params[P_S]
    return (np.zeros((rows, S), dtype=np.int8), np.zeros((rows, S), dtype=np.int8),
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
    pb, ppend, pchip, pscores, info, keys, paths, pcaps, plen, root_hist = P[:10]
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
    P[14][0] = mirrored_board_hash(params, zobrist, pb, pchip, 0)
    if params[P_N] <= MAX_BITBOARD_SIZE:
        board_bits(params, P[13], pb, 0, P[12])
    n = turn_moves(params, ray, pb, ppend, ROW0, P[10], P[11], paths, pcaps, plen, ROW0,
                   P[12], P[13], YES)
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
    board, pending, chip, scores, info, keys, paths, pcaps, plen, root_hist = P[:10]
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
    mirrored = P[14]
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
    play_move(params, ray, board, p, q, paths, pcaps, plen, i, P[12], P[13])
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
            n = count_quiet(params, P[12], q, P[13])
        else:  # most inner rows: nothing to take
            n = list_quiet(params, P[12], q, P[13], paths, pcaps, plen, q)
    if n < 0:
        n = turn_moves(params, ray, board, pending, q, P[10], P[11], paths, pcaps, plen, q,
                       P[12], P[13], not leaf)
    listed = min(n, plen.shape[1])
    info[q, I_CAPTURING] = 1 if listed > 0 and plen[q, 0] > 0 and pcaps[q, 0, 0] >= 0 else 0
    if leaf and info[q, I_CAPTURING] == 0:
        info[q, I_N_MOVES] = n  # counted only
    else:
        info[q, I_N_MOVES] = listed
    reason = end_reason(params, board, q, n, occurrences, no_progress, endgame,
                        info[q, I_PLY], P[12])
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
    params, ray = T[0], T[1]
    board, pending, info, paths, pcaps, plen = P[0], P[1], P[4], P[6], P[7], P[8]
    n = turn_moves(params, ray, board, pending, q, P[10], P[11], paths, pcaps, plen, q,
                   P[12], P[13], True)
    info[q, I_N_MOVES] = min(n, plen.shape[1])
    return info[q, I_N_MOVES]

"""The engine's compiled building blocks, for searches written with numba outside
``damii_env`` (the alpha-beta player in ``agents`` is one).

A compiled search works on the same arrays as :class:`damii_env.engine.State`: the rule
tables ``T = engine.tables`` and the state arrays ``G = state.arrays`` of B games (one
game a row; boards seen from the player to move). Rows of a large state serve as the
search stack: :func:`copy_row` copies a position to a deeper row, :func:`play_hop`
plays one legal hop there. The accessors below name the per-game counters, so that no
caller depends on how they are packed.

>>> from numba import njit
>>> from damii_env import Engine, compiled as C
>>> @njit
... def first_child_turn(T, G):
...     C.copy_row(G, 0, 1)
...     C.play_hop(T, G, 1, G.legal[0, 0], C.new_scratch(T))
...     return C.turn(G.meta, 1)
>>> eng = Engine("damii"); stack = eng.empty_state(2); stack.put(0, eng.init(1))
>>> int(first_child_turn(eng.tables, stack.arrays))   # White moved: Black to play
1
"""

from __future__ import annotations

import numpy as np
from numba import njit

from damii_env import _kernels as K

Tables = K.Tables
"""The rule tables of one rule set (``Engine.tables``), a named record."""
Games = K.Games
"""The state arrays of B games (``State.arrays``), a named record."""
Plies = K.Plies
"""A ply stack (:func:`new_plies`), a named record."""

# Outcome codes (the values of :class:`damii_env.engine.OutcomeCode`), for compiled code.
ONGOING = K.OUT_ONGOING
WHITE_WINS = K.OUT_WHITE
BLACK_WINS = K.OUT_BLACK
DRAW = K.OUT_DRAW
TRUNCATED = K.OUT_TRUNCATED

play_hop = K.apply_action
"""``play_hop(T, G, row, action, scratch) -> int``: play one hop in game `row`, in place;
0 if played, 1 if that game was already over, -1 if the hop is not legal there."""

copy_row = K._copy_row
"""``copy_row(G, src, dst)``: copy the game in row `src` to row `dst`."""

chip_value = K.chip_value
"""``chip_value(chipval, chip, x, y)``: value of a Sci-Damath chip on square (x, y)."""


@njit(cache=True, inline="always")
def winner(outcome):
    """The colour that won a game of outcome code `outcome` (0 White, 1 Black), -1 for a
    draw, a truncated game and a game going on."""
    if outcome == K.OUT_WHITE:
        return 0
    if outcome == K.OUT_BLACK:
        return 1
    return -1


@njit(cache=True, inline="always")
def outcome_reward(outcome, colour):
    """What a game of outcome code `outcome` pays `colour` (0 White, any other Black): 1.0
    to the winner, -1.0 to the loser, 0.0 for a draw, a truncated game and a game going
    on. The one statement of an episode's end rewards
    (:func:`damii_env.episode.outcome_rewards` applies it to arrays)."""
    won = winner(outcome)
    if won < 0:
        return 0.0
    return 1.0 if (won == 0) == (colour == 0) else -1.0


@njit(cache=True)
def new_scratch(T):
    """Work space that :func:`play_hop` needs (one per thread)."""
    return K._scratch(T.params)


# --- the rule set ---------------------------------------------------------------------------
@njit(cache=True, inline="always")
def board_size(T):
    """N of the N x N board."""
    return T.params[K.P_N]


@njit(cache=True, inline="always")
def n_squares(T):
    """Number of playable squares S (N * N / 2)."""
    return T.params[K.P_S]


@njit(cache=True, inline="always")
def is_scoring(T):
    """Whether jumps score points and the totals decide the game (Sci-Damath)."""
    return T.params[K.P_SCORING] == 1


@njit(cache=True, inline="always")
def lower_wins(T):
    """Whether the lower total wins (scoring games with ``lower_wins``)."""
    return T.params[K.P_LOWER_WINS] == 1


# --- one game of the state arrays -----------------------------------------------------------
@njit(cache=True, inline="always")
def turn(meta, c):
    """Colour to move in row c: 0 White, 1 Black."""
    return meta[c, K.M_TURN]


@njit(cache=True, inline="always")
def outcome(meta, c):
    """Outcome code of row c (:data:`ONGOING`, :data:`WHITE_WINS`, ...)."""
    return meta[c, K.M_OUTCOME]


@njit(cache=True, inline="always")
def n_legal(meta, c):
    """Number of legal hops of row c (the first entries of its ``legal`` row)."""
    return meta[c, K.M_N_LEGAL]


@njit(cache=True, inline="always")
def continuing_square(meta, c):
    """Square of the piece that must go on capturing in row c, -1 at a turn's start."""
    return meta[c, K.M_CONT]


@njit(cache=True, inline="always")
def capturing(meta, c):
    """Whether the legal hops of row c are captures (compulsory)."""
    return meta[c, K.M_CAPTURING] == 1


@njit(cache=True, inline="always")
def position_key(T, G, c):
    """Zobrist hash of the position in row c at the start of its turn (a transposition
    key; only meaningful where :func:`continuing_square` is -1)."""
    meta, hist = G.meta, G.hist
    return hist[c, (meta[c, K.M_HIST_LEN] - 1) % T.params[K.P_HIST]]


@njit(cache=True, _nrt=False)
def totals_lead(T, G, c):
    """The mover's lead in the totals that decide a Sci-Damath game (points plus the
    chips on the board, damas doubled), sign flipped where the lower total wins."""
    params, _ray, _zobrist, sqinfo, chipval = T
    board, _pending, meta, _hist, _legal, chip, scores = G
    mover = meta[c, K.M_TURN]
    white, black = K.final_totals(params, board, chip, scores, sqinfo, chipval, c, mover)
    lead = white - black if mover == 0 else black - white
    return -lead if params[K.P_LOWER_WINS] == 1 else lead


# --- the ply stack: whole moves, one ply a row (for searches) ------------------------------
# A ply stack P (:func:`new_plies`) holds one position a row: row 0 loaded from a game of
# the state arrays by :func:`ply_root`, row p + 1 made by :func:`ply_play` from row p and
# one of its whole moves. Each row keeps its legal whole moves (their hops and captured
# squares), its draw counters and position key, and whether the game ends there, all by
# the engine's rules (the same move generation and end rules as its hops).
REASON_NONE = K.REASON_NONE

ply_root = K.ply_root
"""``ply_root(T, G, b, P) -> int``: load game b (at the start of its turn) into row 0 of
the ply stack P; returns the number of its whole moves."""

ply_play = K.ply_play
"""``ply_play(T, P, p, i, leaf=False, warm=None) -> int``: play whole move i of row p into
row p + 1; returns why the game ends there (:data:`REASON_NONE` if it goes on). A `leaf`
row lists its moves only if they are captures; else it only counts them
(:func:`ply_n_moves`). `warm` (a 2-D table of 2**k rows, e.g. a transposition table):
its row ``key & (2**k - 1)`` for the new position is prefetched once the key is made."""

ply_list = K.ply_list
"""``ply_list(T, P, q) -> int``: list the quiet moves of a `leaf` row q that
:func:`ply_play` only counted (the search goes on from it after all); returns the number
of moves."""


@njit(cache=True, inline="always")
def ply_threat(T, P, p):
    """Whether the player not to move in row p could capture if it were its turn (a threat
    against the player to move; boards of at most 10 x 10, else False)."""
    return K.enemy_can_capture(T.params, T.ray, P.board, p, P.bits, P.layout)


@njit(cache=True)
def new_plies(T, rows, room=256, hist_cap=256):
    """A ply stack of `rows` rows with room for `room` whole moves a row (a position with
    more is searched on its first `room`) and `hist_cap` positions of the game's record."""
    return K.new_plies(T.params, rows, room, hist_cap)


@njit(cache=True, inline="always")
def ply_turn(info, p):
    """Colour to move in row p (0 White, 1 Black); `info` is ``P.info``."""
    return info[p, K.I_TURN]


@njit(cache=True, inline="always")
def ply_n_moves(info, p):
    """Number of whole moves of row p."""
    return info[p, K.I_N_MOVES]


@njit(cache=True, inline="always")
def ply_capturing(info, p):
    """Whether the moves of row p are captures (compulsory)."""
    return info[p, K.I_CAPTURING] == 1


@njit(cache=True, inline="always")
def ply_seen(info, p):
    """How often the position of row p has occurred (1: the first time), counted over the
    game's record and the line since the last irreversible move, as the repetition rule
    counts."""
    return info[p, K.I_SEEN]


@njit(cache=True, inline="always")
def ply_draw_counts(info, p):
    """The draw counts of row p: (plies of king moves without a capture, plies since the
    last capture or promotion), as the no-progress and the endgame draw rules count."""
    return info[p, K.I_NO_PROGRESS], info[p, K.I_ENDGAME]


@njit(cache=True, inline="always")
def ply_outcome(info, p):
    """Outcome code of row p (:data:`ONGOING` while the game goes on there)."""
    return info[p, K.I_OUTCOME]


@njit(cache=True, inline="always")
def move_ends(ray, n1, paths, plen, p, i):
    """(start, end) squares of whole move i of row p (mover's view); `ray` is ``T.ray``,
    n1 the board size - 1, `paths` and `plen` are ``P.paths`` and ``P.plen``."""
    start = K.hop_start(paths[p, i, 0], n1)
    s, d, k = K.decode(paths[p, i, plen[p, i] - 1], n1)
    return start, ray[s, d, k]


@njit(cache=True, _nrt=False)
def ply_totals_lead(T, P, p):
    """:func:`totals_lead` of row p of a ply stack: the mover's lead in the Sci-Damath
    totals (points plus chips on the board, damas doubled), flipped where lower wins."""
    params, _ray, _zobrist, sqinfo, chipval = T
    board, chip, scores, info = P.board, P.chip, P.scores, P.info
    mover = info[p, K.I_TURN]
    white, black = K.final_totals(params, board, chip, scores, sqinfo, chipval, p, mover)
    lead = white - black if mover == 0 else black - white
    return -lead if params[K.P_LOWER_WINS] == 1 else lead


# --- bit masks of the ply stack's rows (boards of at most 10 x 10) ------------------------
# Each row p of a ply stack keeps its board as four int64 masks in ``P.bits[p]`` (the
# mover's men and kings, the enemy's men and kings: the B_* columns) in the board's bit
# layout ``P.layout`` (:func:`bit_layout`): square s of row r is bit s + (r + offset) // 2,
# so that a step in each direction is a fixed shift. Larger boards keep no masks
# (:func:`has_bits` is false).
B_MEN = K.B_MEN
B_KINGS = K.B_KINGS
B_ENEMY_MEN = K.B_ENEMY_MEN
B_ENEMY_KINGS = K.B_ENEMY_KINGS
popcount = K.popcount
"""``popcount(x)``: the number of set bits (one machine instruction)."""
lowest_bit = K.lowest_bit
"""``lowest_bit(x)``: the index of the lowest set bit of x != 0 (one machine instruction)."""


@njit(cache=True, inline="always")
def has_bits(T):
    """Whether the ply stack keeps bit masks for these rules' board."""
    return T.params[K.P_N] <= K.MAX_BITBOARD_SIZE


@njit(cache=True)
def bit_layout(T):
    """The board's bit layout (``P.layout`` of a ply stack): the bit of each square, then
    the square of each bit; boards over 10 x 10 have none (all -1)."""
    return K.bit_layout(T.params)


@njit(cache=True, inline="always")
def square_bit(layout, s):
    """The bit of square s in the layout ``P.layout``."""
    return layout[s]


@njit(cache=True, inline="always")
def bit_square(layout, S, bit):
    """The square of a bit in the layout ``P.layout`` of a board of S squares (-1 between
    squares). The index is unsigned: numba then adds no test for a negative index."""
    return layout[np.uint64(S + K.BL_SQUARE + bit)]

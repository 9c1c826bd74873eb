"""The compiled state, named: the rule tables, the engine's games and the search's plies,
and the columns of their packed arrays.

Every kernel works on one game, row ``b`` of batched arrays. Boards are seen from the player
to move, who always moves "up", towards row 0: ``board`` int8, 0 empty, 1 own man, 2 own
king, -1 enemy man, -2 enemy king. Three named records carry the arrays (``NamedTuple``s,
which numba compiles as tuples; callers read them by name):

* :class:`Tables` the rule tables of one rule set (built by :class:`damii_env.engine.Engine`);
* :class:`Games` the state of B games stepped one hop at a time (the environments);
* :class:`Plies` the search's stack of positions, one whole move a row (:mod:`.plies`).

The integer columns below name the packed vectors: the rule set's ``params`` (``P_*``), a
game's counters ``meta`` (``M_*``), a ply row's ``info`` (``I_*``), the capture search's
frames (``F_*``), a bit layout (``BL_*``) and a row of bit masks (``B_*``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Tables(NamedTuple):
    """The rule tables of one rule set."""

    params: np.ndarray
    """int64 (N_PARAMS,): the rule set as numbers, the ``P_*`` columns."""
    ray: np.ndarray
    """int16 (S, 4, N - 1): the square k + 1 steps from s in direction d, -1 off the board."""
    zobrist: np.ndarray
    """uint64: the position-key terms (pieces, colour to move, Sci-Damath chips)."""
    sqinfo: np.ndarray
    """int16 (S, 3): by absolute square, Sci-Damath's operation and coordinates (``SQ_*``)."""
    chipval: np.ndarray
    """float64 (MAX_CHIPS, 3): Sci-Damath's chip values by chip id."""


class Games(NamedTuple):
    """The state of B games, one a row, stepped one hop at a time: the arrays of
    :class:`damii_env.engine.State` (whose fields say what each holds), in its order."""

    board: np.ndarray
    pending: np.ndarray
    meta: np.ndarray
    hist: np.ndarray
    legal: np.ndarray
    chip: np.ndarray
    scores: np.ndarray


class Plies(NamedTuple):
    """The search's positions: row p + 1 is row p after one of p's whole moves."""

    board: np.ndarray
    """int8 (rows, S): each row's board from its player to move."""
    pending: np.ndarray
    """int8 (rows, S): work space of the capture search (nothing pending between moves)."""
    chip: np.ndarray
    """int8 (rows, S): Sci-Damath chips, mover's view."""
    scores: np.ndarray
    """float64 (rows, 4): Sci-Damath points, as :attr:`Games.scores`."""
    info: np.ndarray
    """int64 (rows, N_INFO): each row's counters and outcome, ``I_*`` columns."""
    keys: np.ndarray
    """uint64 (rows,): each row's position key."""
    paths: np.ndarray
    """int16 (rows, room, S + 1): each row's whole moves, as hop actions."""
    pcaps: np.ndarray
    """int16 (rows, room, S + 1): the squares each move's hops capture, -1 for a quiet move."""
    plen: np.ndarray
    """int16 (rows, room): each move's number of hops."""
    root_hist: np.ndarray
    """uint64 (H,): the game's position keys before the root (repetitions)."""
    scratch: np.ndarray
    """int64: work rows of the move generator."""
    frames: np.ndarray
    """int64: frames of the capture-sequence search (``F_*`` columns)."""
    bits: np.ndarray
    """int64 (rows, 4): each row's bit masks (``B_*`` columns)."""
    layout: np.ndarray
    """int64 (S + BL_SIZE,): the board's bit layout (``BL_*`` columns)."""
    mirrored: np.ndarray
    """uint64 (rows,): each row's board key as the other player sees it."""


# --- the rule set: params columns ----------------------------------------------------------
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

# --- Sci-Damath's scoring tables -----------------------------------------------------------
MAX_CHIPS = 24  # chip ids 0..23: 0..11 the first player's set, 12..23 the second's
SQ_OP = 0  # sqinfo columns, by absolute square: operation, Damath column x, Damath row y
SQ_X = 1
SQ_Y = 2
OP_ADD = 0
OP_SUB = 1
OP_MUL = 2
OP_DIV = 3

# the capture precedence rules (P_PRECEDENCE)
PREC_FREE = 0
PREC_MOST = 1
PREC_TRIESTINE = 2
PREC_DAMATH = 3

# --- a game's counters: meta columns -------------------------------------------------------
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

# outcome codes (M_OUTCOME, I_OUTCOME) and why a game ended (M_REASON, I_REASON)
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

# --- a search's ply row: info columns ------------------------------------------------------
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

# --- the capture-sequence search's frames ----------------------------------------------------
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

# --- bit masks -----------------------------------------------------------------------------
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

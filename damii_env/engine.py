"""The vectorized rules engine: B games as numpy arrays, stepped one hop at a time.

>>> from damii_env.engine import Engine
>>> eng = Engine("damii")
>>> state = eng.init(batch_size=4)
>>> mask = eng.legal_action_mask(state)          # (4, 1800) int8
>>> actions = eng.sample_actions(state, rng=0)   # one legal hop per game
>>> eng.step(state, actions)                     # in place

An action is one hop of one piece, seen from the player to move (see
:mod:`damii_env.geometry`). A capture of several pieces is several consecutive
actions by the same player; ``state.turn`` changes only when the move is complete.
The mask only allows hops that lie on a legal complete move under the variant's
capture precedence.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import IntEnum
from typing import Any

import numba
import numpy as np

from . import _kernels as K
from . import damath
from .errors import IllegalActionError
from .geometry import Geometry, geometry
from .rules import Rules, make_rules

PRECEDENCE_CODES = {"free": K.PREC_FREE, "most_pieces": K.PREC_MOST,
                    "triestine": K.PREC_TRIESTINE, "damath": K.PREC_DAMATH}

WHITE = 0
BLACK = 1


class OutcomeCode(IntEnum):
    """How a game stands, as :attr:`State.outcome` gives it per game."""

    ONGOING = K.OUT_ONGOING
    WHITE_WINS = K.OUT_WHITE
    BLACK_WINS = K.OUT_BLACK
    DRAW = K.OUT_DRAW
    TRUNCATED = K.OUT_TRUNCATED
    """Cut by the turn limit: neither a result nor a draw."""


class EndReason(IntEnum):
    """Why a game ended, as :attr:`State.reason` gives it per game."""

    NONE = K.REASON_NONE
    NO_MOVES = K.REASON_NO_MOVES
    """The player to move has no piece or no legal move."""
    REPETITION = K.REASON_REPETITION
    NO_PROGRESS = K.REASON_NO_PROGRESS
    TURN_LIMIT = K.REASON_TURN_LIMIT


OUTCOME_NAMES = {OutcomeCode.ONGOING: "ongoing", OutcomeCode.WHITE_WINS: "white wins",
                 OutcomeCode.BLACK_WINS: "black wins", OutcomeCode.DRAW: "draw",
                 OutcomeCode.TRUNCATED: "truncated"}
REASON_NAMES = {EndReason.NONE: "", EndReason.NO_MOVES: "no legal move",
                EndReason.REPETITION: "threefold repetition",
                EndReason.NO_PROGRESS: "no-progress rule", EndReason.TURN_LIMIT: "turn limit"}

PARALLEL_MIN_BATCH = 256
"""Batches of at least this many games are stepped on all of numba's threads."""
_PARALLEL_CHUNK = 1  # blocks of 32 games (see step_parallel) handed out one at a time


@dataclass
class State:
    """The state of B games. Boards are from the point of view of the player to move."""

    board: np.ndarray
    """int8 (B, S): 0 empty, 1 own man, 2 own king, -1 enemy man, -2 enemy king."""
    pending: np.ndarray
    """uint8 (B, S): enemy pieces captured this turn, still on the board until the move ends."""
    meta: np.ndarray
    """int32 (B, M): counters, see the ``M_*`` constants of :mod:`damii_env._kernels`."""
    hist: np.ndarray
    """uint64 (B, H): position hashes since the last capture or man move."""
    legal: np.ndarray
    """int16 (B, L): legal actions, the first ``n_legal`` of each row."""
    chip: np.ndarray
    """int8 (B, S): Damath chip id on each square (mover's view), -1 where none."""
    scores: np.ndarray
    """float64 (B, 4): points of White and Black, then their final totals (Damath)."""

    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays in the order the kernels take them."""
        return (self.board, self.pending, self.meta, self.hist, self.legal, self.chip,
                self.scores)

    @property
    def batch_size(self) -> int:
        return int(self.board.shape[0])

    def copy(self) -> State:
        """An independent copy (cheap: a handful of array copies)."""
        return State(**{f.name: getattr(self, f.name).copy() for f in fields(self)})

    def take(self, rows: Any) -> State:
        """A new state holding the games at `rows` (an index array or slice)."""
        return State(**{f.name: np.ascontiguousarray(getattr(self, f.name)[rows])
                        for f in fields(self)})

    def put(self, rows: Any, other: State) -> None:
        """Overwrite the games at `rows` with the games of `other`."""
        for f in fields(self):
            getattr(self, f.name)[rows] = getattr(other, f.name)

    # Named views of the counters.
    @property
    def turn(self) -> np.ndarray:
        """Colour to move per game: 0 White (``player_0``), 1 Black."""
        return self.meta[:, K.M_TURN]

    @property
    def outcome(self) -> np.ndarray:
        """:class:`OutcomeCode` per game: 0 ongoing, 1 White won, 2 Black won, 3 draw,
        4 truncated (turn limit)."""
        return self.meta[:, K.M_OUTCOME]

    @property
    def reason(self) -> np.ndarray:
        """:class:`EndReason` per game: 1 no legal move, 2 repetition, 3 no progress,
        4 turn limit."""
        return self.meta[:, K.M_REASON]

    @property
    def done(self) -> np.ndarray:
        return self.meta[:, K.M_OUTCOME] != K.OUT_ONGOING

    @property
    def terminated(self) -> np.ndarray:
        o = self.meta[:, K.M_OUTCOME]
        return (o != K.OUT_ONGOING) & (o != K.OUT_TRUNCATED)

    @property
    def truncated(self) -> np.ndarray:
        return self.meta[:, K.M_OUTCOME] == K.OUT_TRUNCATED

    @property
    def n_legal(self) -> np.ndarray:
        return self.meta[:, K.M_N_LEGAL]

    @property
    def continuing_square(self) -> np.ndarray:
        """Square (mover's view) of the piece that must continue capturing, -1 if none."""
        return self.meta[:, K.M_CONT]

    @property
    def capturing(self) -> np.ndarray:
        """Whether the legal hops of each game are captures (compulsory)."""
        return self.meta[:, K.M_CAPTURING] == 1

    @property
    def ply(self) -> np.ndarray:
        """Complete moves played since the start."""
        return self.meta[:, K.M_PLY]

    @property
    def no_progress_plies(self) -> np.ndarray:
        """Consecutive plies of king moves without a capture (the no-progress draw count)."""
        return self.meta[:, K.M_NO_PROGRESS]

    @property
    def move_start(self) -> np.ndarray:
        """Square (mover's view) where the move in progress started, -1 at a turn's start."""
        return self.meta[:, K.M_SEQ_START]

    @property
    def last_move(self) -> np.ndarray:
        """(B, 2) absolute start and end squares of the last complete move, -1 if none."""
        return self.meta[:, [K.M_LAST_FROM, K.M_LAST_TO]]


class Engine:
    """Rules core for one rule set; stateless apart from its tables."""

    def __init__(self, variant: str | Rules = "damii", **options: Any) -> None:
        self.rules: Rules = make_rules(variant, **options)
        r = self.rules
        self.geometry: Geometry = geometry(r.board_size, r.orientation)
        self.n_squares = r.n_squares
        self.n_actions = r.n_actions
        if r.no_progress_moves > 0:
            hist_cap = 2 * r.no_progress_moves + 2
        else:
            hist_cap = 256
        if r.repetition == 0:
            hist_cap = 1
        p = np.zeros(K.N_PARAMS, dtype=np.int32)
        p[K.P_N] = r.board_size
        p[K.P_S] = r.n_squares
        p[K.P_MEN_BACK] = r.men_capture_backward
        p[K.P_FLY] = r.king_range == "flying"
        p[K.P_MEN_TAKE_KINGS] = r.men_capture_kings
        p[K.P_IMMEDIATE] = r.removal == "immediate"
        p[K.P_PROMO_ENDS] = r.promotion_mid_capture == "crowns_and_ends"
        p[K.P_PRECEDENCE] = PRECEDENCE_CODES[r.precedence]
        p[K.P_REPETITION] = r.repetition
        p[K.P_NO_PROGRESS] = 2 * r.no_progress_moves
        p[K.P_TURN_LIMIT] = r.turn_limit
        p[K.P_HIST] = hist_cap
        p[K.P_SCORING] = r.scoring == "damath"
        p[K.P_LOWER_WINS] = r.lower_wins
        self.params = p
        self.ray = np.ascontiguousarray(self.geometry.ray, dtype=np.int16)
        rng = np.random.default_rng(0xDA11)
        self.zobrist = rng.integers(1, 2**63, size=r.n_squares * (4 + K.MAX_CHIPS) + 1,
                                    dtype=np.uint64)
        self.scoring = r.scoring == "damath"
        if self.scoring:
            self.square_info = damath.square_table(self.geometry.square_rc)
            self.chip_values = damath.chip_table(r.chip_set)
        else:
            self.square_info = np.zeros((r.n_squares, 3), dtype=np.int16)
            self.chip_values = np.zeros((K.MAX_CHIPS, 3), dtype=np.float64)
        self.tables = (self.params, self.ray, self.zobrist, self.square_info, self.chip_values)
        self._start_states: dict[int, State] = {}

    # --- creating states ---------------------------------------------------------------
    def start_board(self) -> np.ndarray:
        """The starting position as an absolute board (S,) int8: +1 White man, -1 Black man."""
        n, rows = self.rules.board_size, self.rules.men_rows
        board = np.zeros(self.n_squares, dtype=np.int8)
        for s, (r, _c) in enumerate(self.geometry.square_rc):
            if r < rows:
                board[s] = -1
            elif r >= n - rows:
                board[s] = 1
        return board

    def empty_state(self, batch_size: int) -> State:
        B, S = batch_size, self.n_squares
        return State(
            board=np.zeros((B, S), dtype=np.int8),
            pending=np.zeros((B, S), dtype=np.uint8),
            meta=np.zeros((B, K.N_META), dtype=np.int32),
            hist=np.zeros((B, int(self.params[K.P_HIST])), dtype=np.uint64),
            legal=np.zeros((B, 4 * S), dtype=np.int16),
            chip=np.full((B, S), -1, dtype=np.int8),
            scores=np.zeros((B, 4), dtype=np.float64),
        )

    def start_chips(self) -> np.ndarray:
        """Chip ids of the starting position (S,) int8 (-1 everywhere without scoring)."""
        if not self.scoring:
            return np.full(self.n_squares, -1, dtype=np.int8)
        return damath.start_chips(self.geometry.square_rc, self.geometry.rc_square)

    def first_turns(self, batch_size: int, rng: np.random.Generator | int | None = None
                    ) -> np.ndarray:
        """Colour to move first in each game, by the ``first_player`` rule."""
        who = self.rules.first_player
        if who == "random":
            return np.random.default_rng(rng).integers(0, 2, batch_size).astype(np.int8)
        return np.full(batch_size, 0 if who == "first" else 1, dtype=np.int8)

    def init(self, batch_size: int = 1, rng: np.random.Generator | int | None = None) -> State:
        """B games at the starting position (`rng` only draws the first player if random)."""
        if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        shape = (batch_size, self.n_squares)
        return self.from_boards(np.broadcast_to(self.start_board(), shape),
                                self.first_turns(batch_size, rng),
                                np.broadcast_to(self.start_chips(), shape))

    def from_boards(self, boards: np.ndarray, turns: np.ndarray, chips: np.ndarray | None = None,
                    scores: np.ndarray | None = None) -> State:
        """States from absolute boards (B, S) (+ White, - Black; 1 man, 2 king) and turns.

        Damath games also take the chip id on each square (B, S) and the points
        scored so far by White and Black (B, 2).
        """
        boards = np.asarray(boards, dtype=np.int8)
        turns = np.asarray(turns, dtype=np.int8).reshape(-1)
        B = boards.shape[0]
        state = self.empty_state(B)
        black = turns[:, None] == BLACK
        state.board[:] = np.where(black, -boards[:, ::-1], boards)
        if chips is not None:
            chips = np.asarray(chips, dtype=np.int8)
            state.chip[:] = np.where(black, chips[:, ::-1], chips)
        if scores is not None:
            state.scores[:, :2] = scores
        state.meta[:, K.M_TURN] = turns
        state.meta[:, K.M_LAST_FROM] = -1
        state.meta[:, K.M_LAST_TO] = -1
        K.begin_serial(self.tables, state.arrays, np.arange(B, dtype=np.int64))
        return state

    def reset_where(self, state: State, done: np.ndarray | None = None,
                    rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Restart the finished games (or those where `done` is true); return their rows."""
        rows = np.flatnonzero(state.done if done is None else done)
        if rows.size:
            turns = self.first_turns(rows.size, rng)
            for turn in np.unique(turns):
                # copies of a cached start state, one per colour to move first
                if turn not in self._start_states:
                    self._start_states[int(turn)] = self.from_boards(
                        self.start_board()[None], np.array([turn], dtype=np.int8),
                        self.start_chips()[None])
                state.put(rows[turns == turn], self._start_states[int(turn)])
        return rows

    # --- reading states ----------------------------------------------------------------
    def absolute_boards(self, state: State) -> np.ndarray:
        """Boards (B, S) in absolute terms: + White, - Black (1 man, 2 king)."""
        black = state.meta[:, K.M_TURN] == BLACK
        return np.where(black[:, None], -state.board[:, ::-1], state.board).astype(np.int8)

    def absolute_chips(self, state: State) -> np.ndarray:
        """Chip ids (B, S) by absolute square (-1 where none)."""
        black = state.meta[:, K.M_TURN] == BLACK
        return np.where(black[:, None], state.chip[:, ::-1], state.chip).astype(np.int8)

    def legal_actions(self, state: State, b: int = 0) -> np.ndarray:
        """The legal actions of game b (empty when it is over)."""
        if state.meta[b, K.M_OUTCOME] != K.OUT_ONGOING:
            return np.zeros(0, dtype=np.int64)
        return state.legal[b, : state.meta[b, K.M_N_LEGAL]].astype(np.int64)

    def legal_action_mask(self, state: State, out: np.ndarray | None = None) -> np.ndarray:
        """int8 (B, A): 1 where the action is legal for the player to move (all 0 when over)."""
        if out is None:
            out = np.zeros((state.batch_size, self.n_actions), dtype=np.int8)
        else:
            out.fill(0)
        K.fill_mask(state.meta, state.legal, out)
        return out

    def sample_actions(self, state: State, rng: np.random.Generator | int | None = None
                       ) -> np.ndarray:
        """One uniformly random legal action per game (-1 where the game is over)."""
        rng = np.random.default_rng(rng)
        out = np.empty(state.batch_size, dtype=np.int64)
        K.sample_actions(state.meta, state.legal, rng.random(state.batch_size), out)
        return out

    # --- stepping ----------------------------------------------------------------------
    def step(self, state: State, actions: np.ndarray | int) -> None:
        """Play one hop in every game, in place. Finished games are left as they are.

        Raises :class:`IllegalActionError` (and leaves every game unchanged) if an
        action is not legal in an ongoing game.
        """
        actions = np.asarray(actions, dtype=np.int64).reshape(-1)
        B = state.batch_size
        if actions.shape[0] != B:
            raise IllegalActionError(f"expected {B} actions (one per game), got {actions.shape[0]}")
        self._check_actions(state, actions)
        status = np.empty(B, dtype=np.int8)
        if B >= PARALLEL_MIN_BATCH and numba.get_num_threads() > 1:
            # small chunks handed out as threads free up: a thread that the OS pauses
            # (another process on the core) does not hold the whole step back
            old = numba.set_parallel_chunksize(_PARALLEL_CHUNK)
            try:
                K.step_parallel(self.tables, state.arrays, actions, status)
            finally:
                numba.set_parallel_chunksize(old)
        else:
            K.step_serial(self.tables, state.arrays, actions, status)

    def _check_actions(self, state: State, actions: np.ndarray) -> None:
        first, count = K.find_illegal(state.meta, state.legal, actions)
        if first >= 0:
            b = int(first)
            a = int(actions[b])
            legal = sorted(int(x) for x in self.legal_actions(state, b))
            what = self.describe_action(a) if 0 <= a < self.n_actions else "out of range"
            raise IllegalActionError(
                f"action {a} ({what}) is not legal in game {b}"
                f"{f' (and {count - 1} more games)' if count > 1 else ''}; "
                f"legal actions there: {legal}"
            )

    def describe_action(self, action: int) -> str:
        """Human-readable text of an action index (mover's view)."""
        from .geometry import DIRECTION_NAMES

        s, d, k = self.geometry.decode(int(action))
        return f"from square {s + 1} {DIRECTION_NAMES[d]} {k} (mover's view)"

    def perft(self, state: State, depth: int, b: int = 0) -> int:
        """Number of complete-move sequences of length `depth` from game b (draw rules off)."""
        if depth < 0:
            raise ValueError(f"depth must be >= 0, got {depth}")
        quiet = Engine(self.rules.replace(repetition=0, no_progress_moves=0, turn_limit=0))
        rows = depth * (self.n_squares // 2 + 1) + 2
        stack = quiet.empty_state(rows)
        for name in ("board", "pending", "meta", "legal", "chip", "scores"):
            getattr(stack, name)[0] = getattr(state, name)[b]
        stack.meta[0, K.M_OUTCOME] = K.OUT_ONGOING if state.meta[b, K.M_N_LEGAL] else \
            state.meta[b, K.M_OUTCOME]
        return int(K.perft(quiet.tables, stack.arrays, depth))

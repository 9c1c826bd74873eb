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

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from fractions import Fraction
from typing import Any

import numba
import numpy as np

from damii_env import _kernels as K
from damii_env import damath
from damii_env.damath import Exact
from damii_env.errors import ForeignStateError, IllegalActionError, InvalidArgumentError
from damii_env.fen import format_damath_fen, format_fen, parse_damath_fen, parse_fen
from damii_env.geometry import Geometry, geometry
from damii_env.rules import OPTION_NAMES, PRESETS, Rules, make_rules

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
    ENDGAME = K.REASON_ENDGAME
    """An FMJD endgame draw: a lone king held out long enough (International)."""


OUTCOME_NAMES = {OutcomeCode.ONGOING: "ongoing", OutcomeCode.WHITE_WINS: "white wins",
                 OutcomeCode.BLACK_WINS: "black wins", OutcomeCode.DRAW: "draw",
                 OutcomeCode.TRUNCATED: "truncated"}
REASON_NAMES = {EndReason.NONE: "", EndReason.NO_MOVES: "no legal move",
                EndReason.REPETITION: "threefold repetition",
                EndReason.NO_PROGRESS: "no-progress rule", EndReason.TURN_LIMIT: "turn limit",
                EndReason.ENDGAME: "endgame draw rule"}

MAX_BATCH = 1 << 24
"""The most games one State holds."""
MAX_PERFT_DEPTH = 20
"""The deepest perft the engine accepts (depth 11 of International already takes hours)."""

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
    """int32 (B, M): counters, the ``M_*`` columns of :mod:`damii_env._kernels.state`."""
    hist: np.ndarray
    """uint64 (B, H): position hashes since the last capture or man move."""
    legal: np.ndarray
    """int16 (B, L): legal actions, the first ``n_legal`` of each row."""
    chip: np.ndarray
    """int8 (B, S): Damath chip id on each square (mover's view), -1 where none."""
    scores: np.ndarray
    """float64 (B, 4): points of White and Black, then their final totals (Damath)."""
    tag: int = field(default=-1, repr=False, compare=False)
    """Which rule set made these games (see :attr:`Engine.tag`); -1: made by hand."""

    @property
    def arrays(self) -> K.Games:
        """The arrays as the kernels take them (a named record)."""
        return K.Games(self.board, self.pending, self.meta, self.hist, self.legal, self.chip,
                       self.scores)

    @property
    def batch_size(self) -> int:
        return int(self.board.shape[0])

    def copy(self) -> State:
        """An independent copy (cheap: a handful of array copies)."""
        return State(**{name: getattr(self, name).copy() for name in _ARRAYS}, tag=self.tag)

    def take(self, rows: Any) -> State:
        """A new state holding copies of the games at `rows` (an index array or slice)."""
        return State(**{name: np.array(getattr(self, name)[rows], order="C")
                        for name in _ARRAYS}, tag=self.tag)

    def put(self, rows: Any, other: State) -> None:
        """Overwrite the games at `rows` with the games of `other` (same rule set)."""
        if other.tag != self.tag:
            raise ForeignStateError(
                f"cannot copy games of {describe_tag(other.tag)} into a state of "
                f"{describe_tag(self.tag)}")
        for name in _ARRAYS:
            getattr(self, name)[rows] = getattr(other, name)

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
    def legal_padded(self) -> np.ndarray:
        """(B, L) each game's legal hops (``legal``), -1 past its ``n_legal`` (a new array)."""
        cols = np.arange(self.legal.shape[1])[None, :]
        return np.where(cols < self.n_legal[:, None], self.legal, -1)

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
    def repetitions(self) -> np.ndarray:
        """(B,) how often each game's position at this turn's start (the same side to
        move) stood on the board before, since the last capture or man move; 0 when new.
        The repetition draw comes when this reaches the rule's count minus one."""
        hist, n = self.hist, self.meta[:, K.M_HIST_LEN].astype(np.int64)
        H = hist.shape[1]
        rows = np.arange(len(n))
        last = (n - 1) % H
        now = hist[rows, last]
        earlier = np.arange(H)[None, :] < np.minimum(n, H)[:, None]
        earlier[rows, last] = False
        return np.where(n > 0, ((hist == now[:, None]) & earlier).sum(axis=1), 0)

    @property
    def last_move(self) -> np.ndarray:
        """(B, 2) absolute start and end squares of the last complete move, -1 if none."""
        return self.meta[:, [K.M_LAST_FROM, K.M_LAST_TO]]


_ARRAYS = ("board", "pending", "meta", "hist", "legal", "chip", "scores")
_TAGS: dict[Rules, int] = {}
_TAG_RULES: list[Rules] = []


def _rules_tag(rules: Rules) -> int:
    """A small number per distinct rule set (the same for equal rules)."""
    tag = _TAGS.get(rules)
    if tag is None:
        tag = _TAGS[rules] = len(_TAG_RULES)
        _TAG_RULES.append(rules)
    return tag


def describe_tag(tag: int) -> str:
    """Text naming the rule set of a state tag (for error messages)."""
    if not 0 <= tag < len(_TAG_RULES):
        return "no engine (a State built by hand)"
    r = _TAG_RULES[tag]
    base = PRESETS.get(r.name)
    changed = [f"{f}={getattr(r, f)!r}" for f in OPTION_NAMES
               if base is not None and getattr(r, f) != getattr(base, f)]
    return f"the {r.name} engine" + (f" ({', '.join(changed)})" if changed else "")


def _check_array(name: str, value: Any, shape: tuple[int, ...], dtype: Any) -> None:
    """Refuse an output array the compiled code would write out of bounds or misread."""
    if (not isinstance(value, np.ndarray) or value.shape != shape or value.dtype != dtype
            or not value.flags.c_contiguous or not value.flags.writeable):
        got = (f"{value.dtype} {value.shape}" + ("" if value.flags.c_contiguous
                                                else " not C-contiguous")
               if isinstance(value, np.ndarray) else type(value).__name__)
        raise InvalidArgumentError(
            f"{name} must be a writeable C-contiguous {np.dtype(dtype)} array of shape "
            f"{shape}, got {got}")


def _int_array(name: str, value: Any, ndim: int, low: int, high: int) -> np.ndarray:
    """`value` as an int64 array of `ndim` dimensions with every entry in [low, high]."""
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise InvalidArgumentError(f"{name} must be an array of integers: {exc}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.integer)
                                   or arr.dtype == np.bool_):
        if arr.dtype.kind == "f" and arr.size and np.all(np.isfinite(arr)) \
                and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise InvalidArgumentError(
                f"{name} must hold integers from {low} to {high}, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        raise InvalidArgumentError(
            f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if arr.size and (arr.min() < low or arr.max() > high):
        bad = arr[(arr < low) | (arr > high)].reshape(-1)[0]
        raise InvalidArgumentError(
            f"{name} must hold integers from {low} to {high}, got {int(bad)}")
    return arr.astype(np.int64, copy=False)


def _actions(actions: Any) -> np.ndarray:
    """Actions as a flat int64 array; floats, overflowing and non-numeric values refused."""
    arr = actions if isinstance(actions, np.ndarray) else None
    if arr is None:
        try:
            arr = np.asarray(actions)
        except (ValueError, TypeError) as exc:
            raise IllegalActionError(f"actions must be integers: {exc}") from None
    if arr.dtype.kind not in "iu":
        if arr.dtype == object:
            try:
                arr = np.asarray(arr, dtype=np.int64)
            except (OverflowError, TypeError, ValueError):
                raise IllegalActionError(
                    f"actions must be integers that fit in 64 bits, got {actions!r:.200}"
                ) from None
            if any(not isinstance(a, (int, np.integer)) for a in np.asarray(actions,
                                                                           dtype=object).flat):
                raise IllegalActionError(f"actions must be integers, got {actions!r:.200}")
        else:
            raise IllegalActionError(
                f"actions must be integers (action indices), got {arr.dtype} values "
                f"{np.ravel(arr)[:8].tolist()!r:.200}")
    if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise IllegalActionError("actions must be integers that fit in 64 bits")
    return np.asarray(arr, dtype=np.int64).reshape(-1)


class Engine:
    """Rules core for one rule set; stateless apart from its tables."""

    def __init__(self, variant: str | Rules = "damii", **options: Any) -> None:
        self.rules: Rules = make_rules(variant, **options)
        r = self.rules
        self.tag: int = _rules_tag(r)
        """Stamped on every :class:`State` this engine makes; states of other rule sets
        are refused (:class:`~damii_env.errors.ForeignStateError`)."""
        self.geometry: Geometry = geometry(r.board_size, r.orientation)
        self.n_squares = r.n_squares
        self.n_actions = r.n_actions
        if r.no_progress_moves > 0:
            hist_cap = 2 * r.no_progress_moves + 2
        else:
            hist_cap = 256
        if r.turn_limit > 0:  # a game records at most turn_limit + 1 positions
            hist_cap = min(hist_cap, r.turn_limit + 1)
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
        p[K.P_ENDGAME_THREE] = 2 * r.endgame_three_moves
        p[K.P_ENDGAME_TWO] = 2 * r.endgame_two_moves
        p[K.P_ROW_OFFSET] = r.orientation == "mirrored"
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
        self.tables = K.Tables(self.params, self.ray, self.zobrist, self.square_info,
                               self.chip_values)
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
        """B blank games (no pieces, no legal moves): rows to fill, a search stack."""
        B, S = self._batch_size(batch_size), self.n_squares
        return State(
            board=np.zeros((B, S), dtype=np.int8),
            pending=np.zeros((B, S), dtype=np.uint8),
            meta=np.zeros((B, K.N_META), dtype=np.int32),
            hist=np.zeros((B, int(self.params[K.P_HIST])), dtype=np.uint64),
            legal=np.zeros((B, 4 * S), dtype=np.int16),
            chip=np.full((B, S), -1, dtype=np.int8),
            scores=np.zeros((B, 4), dtype=np.float64),
            tag=self.tag,
        )

    @staticmethod
    def _batch_size(batch_size: Any) -> int:
        if (isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer))
                or not 1 <= batch_size <= MAX_BATCH):
            raise InvalidArgumentError(
                f"batch_size must be an integer from 1 to {MAX_BATCH}, got {batch_size!r}")
        return int(batch_size)

    def check_state(self, state: State) -> None:
        """Raise :class:`ForeignStateError` unless this engine's rule set made `state`."""
        if getattr(state, "tag", None) != self.tag:
            if not isinstance(state, State):
                raise InvalidArgumentError(
                    f"expected a damii_env State, got {type(state).__name__}")
            raise ForeignStateError(
                f"this State was made by {describe_tag(state.tag)}, not by "
                f"{describe_tag(self.tag)}; step a state with the engine that made it")

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
        batch_size = self._batch_size(batch_size)
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
        boards = _int_array("boards", boards, 2, -2, 2)
        B = boards.shape[0]
        if boards.shape[1] != self.n_squares:
            raise InvalidArgumentError(
                f"boards must have shape (B, {self.n_squares}), got {boards.shape}")
        turns = _int_array("turns", turns, max(1, np.ndim(turns)), 0, 1).reshape(-1)
        if turns.shape != (B,):
            raise InvalidArgumentError(f"turns must hold {B} values (one per board), "
                                       f"got {turns.shape[0]}")
        state = self.empty_state(B)
        black = turns[:, None] == BLACK
        state.board[:] = np.where(black, -boards[:, ::-1], boards)
        if chips is not None:
            chips = _int_array("chips", chips, 2, -1, K.MAX_CHIPS - 1 if self.scoring else -1)
            if chips.shape != boards.shape:
                raise InvalidArgumentError(
                    f"chips must have the boards' shape {boards.shape}, got {chips.shape}")
            state.chip[:] = np.where(black, chips[:, ::-1], chips)
        if scores is not None:
            try:
                scores = np.asarray(scores, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise InvalidArgumentError(f"scores must be numbers: {exc}") from None
            if scores.shape != (B, 2) or not np.all(np.isfinite(scores)):
                raise InvalidArgumentError(
                    f"scores must be finite numbers of shape ({B}, 2), got shape {scores.shape}")
            state.scores[:, :2] = scores
        state.meta[:, K.M_TURN] = turns
        state.meta[:, K.M_LAST_FROM] = -1
        state.meta[:, K.M_LAST_TO] = -1
        K.begin_serial(self.tables, state.arrays, np.arange(B, dtype=np.int64))
        return state

    def reset_where(self, state: State, done: np.ndarray | None = None,
                    rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Restart the finished games (or those where `done` is true); return their rows."""
        self.check_state(state)
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

    # --- FEN -----------------------------------------------------------------------------
    def read_fen(self, fen: str) -> tuple[State, tuple[Exact, Exact] | None]:
        """One game at the position `fen`, and (Sci-Damath) the exact scores the FEN gives
        (None in other variants)."""
        rules = self.rules
        if self.scoring:
            board, turn, chips, scores = parse_damath_fen(fen, self.n_squares, rules.board_size,
                                                          rules.chip_set)
            state = self.from_boards(board[None, :], np.array([turn], dtype=np.int8),
                                     chips[None, :], np.array([[float(x) for x in scores]]))
            return state, (scores[0], scores[1])
        board, turn = parse_fen(fen, self.n_squares, rules.board_size)
        return self.from_boards(board[None, :], np.array([turn], dtype=np.int8)), None

    def from_fen(self, fen: str) -> State:
        """One game at the position `fen` (:meth:`read_fen` without the exact scores)."""
        return self.read_fen(fen)[0]

    def start_state(self, rng: np.random.Generator | None = None,
                    fen: str | None = None) -> State:
        """One game at the start position (`rng` draws a random first player), or at `fen`."""
        if fen is None:
            return self.init(1, rng)
        return self.from_fen(fen)

    def fen(self, state: State, b: int = 0, scores: Sequence[Exact] | None = None) -> str:
        """FEN of game `b` (Sci-Damath: chip values, and the exact `scores`, by default
        the state's float scores to 6 decimals, :meth:`exact_scores`)."""
        board = self.absolute_boards(state)[b]
        turn = int(state.turn[b])
        if not self.scoring:
            return format_fen(board, turn)
        return format_damath_fen(board, turn, self.absolute_chips(state)[b],
                                 self.exact_scores(state, b) if scores is None else scores,
                                 self.rules.chip_set)

    @staticmethod
    def exact_scores(state: State, b: int = 0) -> list[Exact]:
        """Sci-Damath: White's and Black's points of game `b` as exact numbers (the engine
        keeps floats; they are read to 6 decimals)."""
        return [Exact.of(Fraction(round(float(x), 6)).limit_denominator(10**6))
                for x in state.scores[b, :2]]

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
        self.check_state(state)
        if out is None:
            out = np.zeros((state.batch_size, self.n_actions), dtype=np.int8)
        else:
            _check_array("out", out, (state.batch_size, self.n_actions), np.int8)
            out.fill(0)
        K.fill_mask(state.meta, state.legal, out)
        return out

    def sample_actions(self, state: State, rng: np.random.Generator | int | None = None
                       ) -> np.ndarray:
        """One uniformly random legal action per game (-1 where the game is over)."""
        self.check_state(state)
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
        self.check_state(state)
        actions = _actions(actions)
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
            K.step_games(self.tables, state.arrays, actions, status, 0, B)

    def children(self, state: State, rows: Any = None) -> tuple[State, np.ndarray]:
        """Every legal hop of the games at `rows` (default: all), each played in its own
        copy of its game: the level below them in a search tree.

        Returns the children, a new state of one game per hop (grouped by parent in the
        order of `rows`, each parent's hops in the order of its legal list), and the row
        of `state` each child came from; finished games have none. The same games as
        ``state.take(parent)`` stepped with those hops, made in one compiled pass on one
        thread: a search alternates its levels with valuing their leaves, and a parallel
        region per level costs more to start and to wait for than it saves (10x slower
        than one thread for a level of 400 children on a 2-core machine under load).
        """
        self.check_state(state)
        B = state.batch_size
        rows = np.arange(B) if rows is None else _int_array("rows", rows, 1, 0, B - 1)
        counts = np.where(state.done[rows], 0, state.n_legal[rows]).astype(np.int64)
        children = State(**{name: np.empty((int(counts.sum()), *getattr(state, name).shape[1:]),
                                           dtype=getattr(state, name).dtype)
                            for name in _ARRAYS}, tag=self.tag)
        K.expand(self.tables, state.arrays, rows, counts, np.cumsum(counts) - counts,
                 children.arrays)
        return children, np.repeat(rows, counts)

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
        from damii_env.geometry import DIRECTION_NAMES

        s, d, k = self.geometry.decode(int(action))
        return f"from square {s + 1} {DIRECTION_NAMES[d]} {k} (mover's view)"

    def perft(self, state: State, depth: int, b: int = 0) -> int:
        """Number of complete-move sequences of length `depth` from game b (draw rules off)."""
        self.check_state(state)
        if (isinstance(depth, bool) or not isinstance(depth, (int, np.integer))
                or not 0 <= depth <= MAX_PERFT_DEPTH):
            raise InvalidArgumentError(
                f"perft depth must be an integer from 0 to {MAX_PERFT_DEPTH}, got {depth!r}")
        if state.meta[b, K.M_CONT] >= 0:
            raise InvalidArgumentError(
                f"perft counts from the start of a turn; game {b} is in the middle of a "
                "capture (play the rest of its hops first)")
        quiet = Engine(self.rules.without_draw_rules())
        stack = quiet.empty_state(1)
        for name in ("board", "pending", "meta", "legal", "chip", "scores"):
            getattr(stack, name)[0] = getattr(state, name)[b]
        stack.meta[0, K.M_OUTCOME] = K.OUT_ONGOING if state.meta[b, K.M_N_LEGAL] else \
            state.meta[b, K.M_OUTCOME]
        capacity = 256
        while True:
            total = int(K.perft(quiet.tables, stack.arrays, depth, capacity))
            if total >= 0:
                return total
            capacity *= 4

"""Single-game API on the batched engine, in the spirit of python-chess.

>>> from damii_env import Game
>>> g = Game("international")
>>> [str(m) for m in g.legal_moves()][:3]
['31-26', '31-27', '32-27']
>>> move = g.push("32-28")
>>> g.fen()[:12]
'B:W28,31,33,'

A :class:`Game` is one row of an :class:`~damii_env.engine.Engine` state; its
full moves are found by playing hops through the same kernels, so there is one
rules implementation only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from damii_env import _kernels as K
from damii_env.damath import OPS, Exact, chips_of, jump_score
from damii_env.engine import OUTCOME_NAMES, REASON_NAMES, Engine, OutcomeCode, State
from damii_env.episode import exact_totals
from damii_env.errors import GameOverError, IllegalMoveError, InvalidOptionError
from damii_env.rules import Rules

_MOVE_TEXT = re.compile(r"^[ \t]*[0-9]{1,4}([ \t]*[-x][ \t]*[0-9]{1,4}){1,64}[ \t]*$")
"""Move text: ASCII square numbers (at most 4 digits) joined by ``-`` or ``x``."""
_COORD = re.compile(r"\([ \t]*([0-9]{1,2})[ \t]*,[ \t]*([0-9]{1,2})[ \t]*\)")
"""One Sci-Damath square as Damath (x, y) coordinates: ``(3,2)``."""
_COORD_TEXT = re.compile(r"^[ \t]*" + _COORD.pattern + r"([ \t]*[-x][ \t]*" + _COORD.pattern
                         + r"){1,64}[ \t]*$")
"""A Sci-Damath move in coordinates: ``(3,2)-(2,3)``, ``(2,1)x(4,3)x(6,5)``."""


@dataclass(frozen=True)
class Jump:
    """One jump of a Sci-Damath capture: the operation of the square it lands on, the
    values of the taking and the taken chip there, the multiplier (2 for a dama that jumps,
    2 again for a dama taken) and the points it scores, ``taker OP taken x multiplier``."""

    op: str
    taker: Exact
    taken: Exact
    multiplier: int
    points: Exact


@dataclass(frozen=True)
class Move:
    """A full move: the squares it visits and the enemy squares it captures.

    Squares are 1-based PDN numbers for the game's orientation. Two moves are the
    same move when their paths are the same.
    """

    path: tuple[int, ...]
    """Start square, then every landing square."""
    captured: tuple[int, ...] = field(default=(), compare=False)
    """Squares of the captured pieces, in the order they were jumped."""
    actions: tuple[int, ...] = field(default=(), compare=False, repr=False)
    """The engine actions (hops) that play this move from its position."""
    score: Exact | None = field(default=None, compare=False)
    """Damath: the exact points this move scores for the mover (None in other variants)."""
    crowns: bool = field(default=False, compare=False)
    """Whether the move crowns the piece that makes it (a man ending on the far row)."""
    jumps: tuple[Jump, ...] = field(default=(), compare=False, repr=False)
    """Damath: each jump's operation, operands and points (their sum is :attr:`score`)."""

    @property
    def is_capture(self) -> bool:
        return bool(self.captured)

    def __str__(self) -> str:
        return ("x" if self.captured else "-").join(str(s) for s in self.path)

    @classmethod
    def parse(cls, text: str) -> Move:
        """Read PDN move text: ``32-28``, ``28x19x10`` (or a short ``28x10``)."""
        if not isinstance(text, str) or not _MOVE_TEXT.match(text):
            raise IllegalMoveError(
                f"cannot read move {text!r}; expected PDN such as '32-28' or '28x19x10'"
            )
        capture = "x" in text
        squares = tuple(int(t) for t in re.split(r"[-x]", text))
        if not capture and len(squares) != 2:
            raise IllegalMoveError(
                f"cannot read move {text!r}: a quiet move has two squares ('32-28'); "
                f"captures use 'x' ('28x19x10')"
            )
        # the captured squares are not written in PDN; a non-empty marker keeps is_capture
        return cls(path=squares, captured=(0,) if capture else ())


@dataclass(frozen=True)
class Outcome:
    """How a game ended."""

    winner: int | None
    """0 White, 1 Black, None for a draw or a truncated game."""
    termination: str
    """``no legal move``, ``threefold repetition``, ``no-progress rule``, ``endgame draw
    rule`` or ``turn limit``."""
    truncated: bool = False

    def result(self) -> str:
        if self.truncated:
            return "*"
        return {0: "1-0", 1: "0-1", None: "1/2-1/2"}[self.winner]


class Game:
    """One game: the position, its legal full moves, and the moves played so far."""

    def __init__(self, variant: str | Rules = "damii", orientation: str | None = None,
                 **options: Any) -> None:
        self.engine = Engine(variant, orientation=orientation, **options)
        self.rules: Rules = self.engine.rules
        self._state: State = self.engine.init(1)
        self._scores: list[Exact] = [Exact(), Exact()]
        self._start_fen = self.fen()
        self._history: list[tuple[State, Move]] = []
        self._moves_cache: list[Move] | None = None
        self._plies: K.Plies | None = None  # the move list's work space (_enumerate)
        self._claimed = False

    @classmethod
    def from_fen(cls, fen: str, variant: str | Rules = "damii", orientation: str | None = None,
                 **options: Any) -> Game:
        """A game starting from a FEN position (square numbers of the chosen orientation)."""
        game = cls(variant, orientation=orientation, **options)
        game._state, scores = game.engine.read_fen(fen)
        if scores is not None:
            game._scores = list(scores)
        game._start_fen = game.fen()
        return game

    @classmethod
    def at(cls, engine: Engine, state: State, b: int = 0) -> Game:
        """A game that starts at game `b` of an engine state, at the start of a turn
        (its counters and repetition history come along; Sci-Damath scores are taken
        from the state's floating-point points, as exact fractions)."""
        if int(state.continuing_square[b]) >= 0:
            raise InvalidOptionError(
                f"game {b} is in the middle of a capture; a Game starts at a turn's start")
        game = cls.__new__(cls)
        game.engine, game.rules = engine, engine.rules
        game._state = state.take(slice(b, b + 1))
        game._scores = engine.exact_scores(state, b)
        game._history = []
        game._moves_cache = None
        game._plies = None
        game._start_fen = game.fen()
        game._claimed = False
        return game

    # --- position ----------------------------------------------------------------------
    @property
    def turn(self) -> int:
        """Colour to move: 0 White (moves first), 1 Black."""
        return int(self._state.turn[0])

    @property
    def ply(self) -> int:
        """Moves (plies) played since this game's start position (a FEN starts at 0)."""
        return int(self._state.ply[0])

    @property
    def move_stack(self) -> list[Move]:
        return [m for _, m in self._history]

    @property
    def start_fen(self) -> str:
        """The FEN of the position this game started from (before its move stack)."""
        return self._start_fen

    @property
    def state(self) -> State:
        """The engine state (batch of one); do not modify."""
        return self._state

    def board(self) -> np.ndarray:
        """Absolute board (S,): + White, - Black; 1 man, 2 king; index = square number - 1."""
        return self.engine.absolute_boards(self._state)[0]

    def fen(self) -> str:
        """The position as PDN FEN (Damath: with chip values and scores, see docs/DAMATH.md)."""
        return self.engine.fen(self._state, 0, self._scores)

    def chips(self) -> np.ndarray:
        """Damath chip id on each square (S,) (-1 where none); ids 12..23 are the second set."""
        return self.engine.absolute_chips(self._state)[0]

    def scores(self) -> tuple[Exact, Exact]:
        """Damath: exact points scored so far by White (first set) and Black."""
        return self._scores[0], self._scores[1]

    def totals(self) -> tuple[Exact, Exact]:
        """Damath: scores plus the remaining chips' values (damas doubled), as at the end."""
        return exact_totals(self.engine, self.board(), self.chips(), self.scores())

    def copy(self) -> Game:
        other = Game.__new__(Game)
        other.engine, other.rules = self.engine, self.rules
        other._state = self._state.copy()
        other._start_fen = self._start_fen
        other._scores = list(self._scores)
        other._history = list(self._history)
        other._moves_cache = self._moves_cache
        other._plies = None
        other._claimed = self._claimed
        return other

    # --- moves -------------------------------------------------------------------------
    def legal_moves(self) -> list[Move]:
        """Every legal full move (empty when the game is over)."""
        if self._moves_cache is None:
            self._moves_cache = self._enumerate()
        return list(self._moves_cache)

    def _enumerate(self) -> list[Move]:
        """The legal moves from the engine's one move list (``turn_moves``, through the
        ply stack's root), in the order of their hop actions: the order in which the
        engine offers a turn's hops, so the first hops' order and then each next hop's."""
        if self.is_over():
            return []
        eng = self.engine
        room = 256 if self._plies is None else self._plies.plen.shape[1]
        while True:
            if self._plies is None or self._plies.plen.shape[1] < room:
                self._plies = K.new_plies(eng.params, 1, room, 1)
            n = int(K.ply_root(eng.tables, self._state.arrays, 0, self._plies))
            if n < room:  # (n == room: the list may have been cut)
                break
            room *= 4
        paths, pcaps, plen = self._plies.paths[0], self._plies.pcaps[0], self._plies.plen[0]
        listed = [(tuple(int(a) for a in paths[i, :plen[i]]),
                   tuple(int(c) for c in pcaps[i, :plen[i]] if c >= 0)) for i in range(n)]
        listed.sort()
        S = eng.n_squares
        black = self.turn == 1
        n1 = eng.rules.board_size - 1
        board = self._state.board[0]
        moves = []
        for hops, captured in listed:
            path = [hops[0] // (4 * n1)]
            for a in hops:
                s, d, k = eng.geometry.decode(a)
                path.append(int(eng.ray[s, d, k - 1]))
            to_num = (lambda x: S - x) if black else (lambda x: x + 1)
            path_n = tuple(to_num(x) for x in path)
            captured_n = tuple(to_num(x) for x in captured)
            piece = int(board[path[0]])
            jumps = self._move_jumps(path_n, captured_n)
            moves.append(Move(path=path_n, captured=captured_n, actions=hops,
                              score=self._move_score(jumps), jumps=jumps,
                              crowns=int(K.arrived(eng.params, piece, path[-1])) != piece))
        return moves

    def _move_jumps(self, path: tuple[int, ...], captured: tuple[int, ...]) -> tuple[Jump, ...]:
        """Damath: the exact arithmetic of each jump of a move, on the position before it
        (the one statement above the kernels, which score in floats; ``tests/rules``
        holds the two equal)."""
        if not self.engine.scoring or not captured:
            return ()
        board, chips = self.board(), self.chips()
        info = self.engine.square_info
        table = chips_of(self.rules.chip_set)
        taker = table[int(chips[path[0] - 1])]
        taker_dama = abs(int(board[path[0] - 1])) == 2
        jumps = []
        for land, cap in zip(path[1:], captured, strict=True):
            op, x, y = (int(t) for t in info[land - 1])
            taken = table[int(chips[cap - 1])]
            mult = (2 if taker_dama else 1) * (2 if abs(int(board[cap - 1])) == 2 else 1)
            a, b = taker.value(x, y), taken.value(x, y)
            jumps.append(Jump(OPS[op], a, b, mult, jump_score(OPS[op], a, b, mult)))
        return tuple(jumps)

    def _move_score(self, jumps: tuple[Jump, ...]) -> Exact | None:
        """Damath: the exact points of a move (its jumps' sum); None in other variants."""
        if not self.engine.scoring:
            return None
        total = Exact()
        for jump in jumps:
            total += jump.points
        return total

    def parse_move(self, move: Move | str) -> Move:
        """The legal move that `move` (a Move or PDN text) names; raises IllegalMoveError."""
        if self.is_over():
            raise GameOverError(
                f"the game is over ({self.outcome().termination}); no move is legal"
            )
        if isinstance(move, str) and "(" in move and self.engine.scoring:
            move = self._from_coordinates(move)
            if isinstance(move, Move):
                return move
        wanted = Move.parse(move) if isinstance(move, str) else move
        if not isinstance(wanted, Move):
            raise IllegalMoveError(f"expected a Move or PDN text, got {type(move).__name__}")
        legal = self.legal_moves()
        for m in legal:
            if m.path == wanted.path:
                if isinstance(move, str) and m.is_capture != wanted.is_capture:
                    kinds = {True: "capture", False: "quiet move"}
                    raise IllegalMoveError(
                        f"move {move!r} is written as a {kinds[wanted.is_capture]} but {m} "
                        f"is a {kinds[m.is_capture]}; write {m}"
                    )
                return m
        if len(wanted.path) == 2 and wanted.is_capture:
            short = [m for m in legal
                     if m.is_capture and (m.path[0], m.path[-1]) == wanted.path]
            if len(short) == 1:
                return short[0]
            if len(short) > 1:
                raise IllegalMoveError(
                    f"move {wanted} is ambiguous; write every landing square: "
                    f"{', '.join(str(m) for m in short)}"
                )
        raise IllegalMoveError(
            f"move {move if isinstance(move, str) else str(move)!s} is not legal in {self.fen()}; "
            f"legal moves: {', '.join(str(m) for m in legal)}"
        )

    def square_at(self, x: int, y: int) -> int | None:
        """Sci-Damath: the square number (1-based) at Damath coordinates (x, y), or None
        where (x, y) is off the board or a light square."""
        info = self.engine.square_info
        hits = np.flatnonzero((info[:, 1] == x) & (info[:, 2] == y))
        return int(hits[0]) + 1 if self.engine.scoring and len(hits) else None

    def _from_coordinates(self, text: str) -> Move | str:
        """Sci-Damath move text in (x, y) coordinates, ``(1,2)-(0,3)`` or
        ``(2,1)x(4,3)x(6,5)``: the legal move along those squares (whichever separator was
        written), else the same move in square numbers (for parse_move's error messages)."""
        if len(text) > 400 or not _COORD_TEXT.match(text):
            raise IllegalMoveError(
                f"cannot read move {text!r:.60}; expected square numbers ('22-18') or Damath "
                f"(x, y) coordinates joined by - or x, e.g. '(3,2)-(2,3)'")
        squares = []
        for x, y in _COORD.findall(text):
            square = self.square_at(int(x), int(y))
            if square is None:
                raise IllegalMoveError(
                    f"({x},{y}) is not a dark square of the board: x and y go from 0 to "
                    f"{self.rules.board_size - 1} and x + y is odd on the dark squares "
                    f"(move {text!r:.60})")
            squares.append(square)
        path = tuple(squares)
        for m in self.legal_moves():
            if m.path == path:
                return m
        sep = "x" if "x" in _COORD.sub("", text) else "-"
        return sep.join(str(s) for s in squares)

    def push(self, move: Move | str) -> Move:
        """Play a legal move (a Move or PDN text); returns the move as played."""
        legal_move = self.parse_move(move)
        before = self._state.copy()
        mover = self.turn
        for a in legal_move.actions:
            self.engine.step(self._state, np.array([a], dtype=np.int64))
        self._history.append((before, legal_move))
        if legal_move.score is not None:
            self._scores[mover] += legal_move.score
        self._moves_cache = None
        return legal_move

    def pop(self) -> Move:
        """Take back the last move and return it."""
        if not self._history:
            raise IllegalMoveError("no move to take back: the move stack is empty")
        before, move = self._history.pop()
        self._state = before.copy()  # copies share the history's states: never step them
        if move.score is not None:
            self._scores[self.turn] -= move.score
        self._moves_cache = None
        self._claimed = False
        return move

    # --- end of game -------------------------------------------------------------------
    def is_over(self) -> bool:
        return self._claimed or bool(self._state.done[0])

    def _position_key(self, state: State) -> bytes:
        """What makes two positions the same: the side to move, the pieces and (Damath)
        the chips on them."""
        key = bytes([int(state.turn[0])]) + self.engine.absolute_boards(state)[0].tobytes()
        if self.engine.scoring:
            key += self.engine.absolute_chips(state)[0].tobytes()
        return key

    def repetition_count(self) -> int:
        """How many times the position now on the board (pieces, chips, side to move) has
        stood in this game, this time included (positions before the game's start
        position, e.g. of :meth:`at`, are not known)."""
        now = self._position_key(self._state)
        return 1 + sum(self._position_key(before) == now for before, _ in self._history)

    def can_claim_draw(self) -> bool:
        """Whether either player may claim a draw now: the rule option
        ``repetition_claim`` is on and the position has occurred that many times."""
        claim = self.rules.repetition_claim
        return bool(claim) and not self.is_over() and self.repetition_count() >= claim

    def claim_draw(self) -> Outcome:
        """A player claims the draw of a repeated position (:meth:`can_claim_draw`); the
        game is over (Sci-Damath: decided by the totals, as every end). :meth:`pop` takes
        the claim back with the last move."""
        claim = self.rules.repetition_claim
        if not claim:
            raise InvalidOptionError(
                "no draw can be claimed in this game: its rule option repetition_claim is 0 "
                "(a repeated position ends the game by itself when 'repetition' says)")
        if self.is_over():
            raise GameOverError(f"the game is over ({self.outcome().termination}); "
                                f"no draw can be claimed")
        count = self.repetition_count()
        if count < claim:
            raise IllegalMoveError(
                f"no draw to claim: the position on the board has occurred {count} "
                f"time{'s' if count != 1 else ''}; a claim needs {claim}")
        self._claimed = True
        self._moves_cache = None
        outcome = self.outcome()
        assert outcome is not None
        return outcome

    def _claimed_outcome(self) -> Outcome:
        """The outcome of a claimed draw: a draw, or in Sci-Damath the greater total wins
        (the lower with ``lower_wins``)."""
        claim = self.rules.repetition_claim
        fold = {2: "twofold", 3: "threefold"}.get(claim, f"{claim}-fold")
        winner = None
        if self.engine.scoring:
            tw, tb = self.totals()
            if tw != tb:
                winner = 0 if (float(tw) > float(tb)) != self.rules.lower_wins else 1
        return Outcome(winner=winner, termination=f"{fold} repetition claimed")

    def outcome(self) -> Outcome | None:
        """How the game ended, or None while it goes on."""
        if self._claimed:
            return self._claimed_outcome()
        code = OutcomeCode(int(self._state.outcome[0]))
        if code == OutcomeCode.ONGOING:
            return None
        reason = REASON_NAMES[int(self._state.reason[0])]
        winner = {OutcomeCode.WHITE_WINS: 0, OutcomeCode.BLACK_WINS: 1}.get(code)
        return Outcome(winner=winner, termination=reason,
                       truncated=code == OutcomeCode.TRUNCATED)

    def result(self) -> str:
        """PDN result: ``1-0``, ``0-1``, ``1/2-1/2``, or ``*`` while ongoing or truncated."""
        o = self.outcome()
        return "*" if o is None else o.result()

    def status(self) -> str:
        if self._claimed:
            return {0: "white wins", 1: "black wins", None: "draw"}[self.outcome().winner]
        return OUTCOME_NAMES[OutcomeCode(int(self._state.outcome[0]))]

    # --- text --------------------------------------------------------------------------
    def board_text(self, numbers: bool = False) -> str:
        """The board as text: w/W White man/king, b/B Black man/king, . empty dark square.

        With ``numbers=True`` every dark square shows its square number, the number that
        moves are written with: an empty square in its cell, and each row ends with the
        numbers of its dark squares, occupied or not. Sci-Damath boards show each chip's
        value after its letter, the operation of each empty square and Damath's (x, y)
        axes; with ``numbers=True`` each cell also starts with its square number.
        """
        if self.engine.scoring:
            return self._damath_text(numbers)
        geo = self.engine.geometry
        board = self.board()
        n = self.rules.board_size
        glyph = {1: "w", 2: "W", -1: "b", -2: "B"}
        cell = 3 if numbers else 2
        lines = []
        for r in range(n):
            row, squares = [], []
            for c in range(n):
                s = int(geo.rc_square[r, c])
                if s < 0:
                    row.append(" " * cell)
                    continue
                squares.append(str(s + 1).rjust(2))
                if board[s] != 0:
                    row.append(glyph[int(board[s])].rjust(cell))
                elif numbers:
                    row.append(str(s + 1).rjust(cell))
                else:
                    row.append(".".rjust(cell))
            lines.append("".join(row) + ("    " + " ".join(squares) if numbers else ""))
        return "\n".join(lines) + f"\n{self.rules.name} ({self.rules.orientation}), " \
            f"{self._status_line()}"

    def _status_line(self) -> str:
        side = "White" if self.turn == 0 else "Black"
        if not self.is_over():
            return f"{side} to move"
        return f"game over: {self.result()} ({self.outcome().termination})"

    def _damath_text(self, numbers: bool = False) -> str:
        geo, board, chips = self.engine.geometry, self.board(), self.chips()
        info = self.engine.square_info
        table = chips_of(self.rules.chip_set)
        n = self.rules.board_size
        width = max(len(c.label) for c in table) + 2 + (3 if numbers else 0)
        glyph = {1: "w", 2: "W", -1: "b", -2: "B"}
        lines = []
        for r in range(n):
            row = [f"{n - 1 - r} "]
            for c in range(n):
                s = int(geo.rc_square[r, c])
                if s < 0:
                    row.append(" " * width)
                    continue
                if board[s] != 0:
                    text = glyph[int(board[s])] + table[int(chips[s])].label
                else:
                    text = f"({OPS[int(info[s, 0])]})"
                if numbers:
                    text = f"{s + 1:>2} {text}"
                row.append(text.center(width))
            lines.append("|".join(row) + "|")
        lines.append("  " + "|".join(str(c).center(width) for c in range(n)))
        if numbers:
            lines.append("each cell: square number, then the piece or the operation; moves "
                         "read as 22-18 or as (x,y): (3,2)-(2,3)")
        sw, sb = self.scores()
        lines.append(f"scores: White {sw} ({float(sw):.2f}), Black {sb} ({float(sb):.2f})")
        lines.append(f"{self.rules.name} ({self.rules.chip_set} chips), {self._status_line()}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.board_text()

    def __repr__(self) -> str:
        return f"Game({self.rules.name!r}, fen={self.fen()!r})"

    def _repr_svg_(self) -> str:
        """The board as SVG, which Jupyter and IPython notebooks show for a ``Game``
        (the picture of :func:`damii_env.render.to_svg`)."""
        from damii_env.render import to_svg

        return to_svg(self, square=40)


def perft(depth: int, variant: str | Rules = "damii", fen: str | None = None,
          orientation: str | None = None, **options: Any) -> int:
    """Count complete-move sequences of length `depth` (draw rules are not applied)."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise InvalidOptionError(f"perft depth must be a non-negative integer, got {depth!r}")
    game = Game.from_fen(fen, variant, orientation, **options) if fen else \
        Game(variant, orientation, **options)
    return game.engine.perft(game.state, depth)

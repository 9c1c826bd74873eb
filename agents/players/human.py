"""A person at the terminal as a player (``damii play``, run by :mod:`damii_app.play`).

The human is an :class:`~damii_env.player.Player` whose ``choose`` reads the terminal, so a
game against a person runs through the same
:func:`~damii_agents.match.game_loop.play_game` as a match:
the same clock, resignation and draw rules. Input and output are injectable functions,
which is how the tests script a game.

Input at the prompt: a move in PDN (``32-28``, ``28x19x10``, or an unambiguous short
capture ``28x10``), a number from the list of legal moves, or a command: ``resign``,
``draw`` (offer a draw; the agent's ``accepts_draw`` decides), ``board``, ``help``,
``quit`` (leave the game unfinished). In Sci-Damath a move may also be written in
Damath's (x, y) coordinates, ``(3,2)-(2,3)``; the board shows every square's number.

With a clock (``move_seconds``) the prompt shows the time left for the move. Read through a
:class:`TimedInput` (``damii play`` on a terminal: :class:`TerminalInput`), the prompt
counts down in place and the turn ends the moment the time is up ("time is up", a
:class:`~damii_agents.base.Forfeit` that the referee scores as a time forfeit); read
through a plain `input_fn`, a move typed after the time is up is told so (the referee
then scores the time forfeit). The board marks the last move, and the legal moves are
listed wrapped to the terminal's width, between moves.
"""

from __future__ import annotations

import math
import os
import select
import shutil
import sys
import time
from collections.abc import Callable
from typing import IO, Protocol

from damii_agents.base import Abandon, BaseAgent, Forfeit, OfferDraw, Resign
from damii_env import Game, Move
from damii_env.errors import DamiiError

InputFn = Callable[[str], str]
OutputFn = Callable[[str], None]
COLOURS = ("white", "black")

HELP = """Enter a move in PDN (32-28, 28x19x10, or a short capture 28x10 when only one
capture goes from 28 to 10), or the number of a move in the list; in Sci-Damath also
(x,y) coordinates, e.g. (3,2)-(2,3). Commands:
  resign   give up the game
  draw     offer a draw (the opponent decides)
  board    show the board and the legal moves again
  help     this text
  quit     leave; the game is saved unfinished"""


def move_label(move: Move) -> str:
    """A move as listed to the player (Damath: with the points it scores)."""
    if move.score is not None and move.is_capture:
        sign = "" if str(move.score).startswith("-") else "+"
        return f"{move} ({sign}{move.score})"
    return str(move)


def numbered(moves: list[Move], prefix: str = "", width: int | None = None) -> str:
    """The legal moves as a numbered list after `prefix`, wrapped to `width` columns
    between moves (never inside one); continuation lines are indented two spaces."""
    items = [f"{i}) {move_label(m)}" for i, m in enumerate(moves, 1)]
    if width is None:
        return prefix + "  ".join(items)
    lines, line, bare = [], prefix, True
    for item in items:
        if len(line) + (0 if bare else 2) + len(item) > width and line.strip():
            lines.append(line.rstrip())
            line, bare = "  ", True
        line += item if bare else "  " + item
        bare = False
    return "\n".join([*lines, line])


def marked_board(game: Game, move: Move | None) -> str:
    """The board with numbers (:meth:`~damii_env.Game.board_text`), the squares of `move`
    (where it started, landed and ended) between brackets: ``[ b]``, ``[16]``."""
    text = game.board_text(numbers=True)
    if move is None:
        return text
    lines = text.split("\n")
    geo = game.engine.geometry
    for square in move.path:
        hits = [(int(r), int(c)) for r, c in zip(*(geo.rc_square == square - 1).nonzero(),
                                                strict=True)]
        if not hits or hits[0][0] >= len(lines):
            continue
        r, c = hits[0]
        lines[r] = _bracket(lines[r], c, game.engine.scoring)
    return "\n".join(lines)


def _bracket(line: str, c: int, damath: bool) -> str:
    """`line` with its cell of column `c` between brackets (unchanged if the cell is not
    where the board text puts it)."""
    if damath:  # cells between bars: "7 |  1 b2  |        |"
        bars = [i for i, ch in enumerate(line) if ch == "|"]
        if c + 1 >= len(bars):
            return line
        a, b = bars[c], bars[c + 1]
    else:  # cells 3 wide, a blank (light) cell or the key's margin to the right
        a, b = 3 * c, 3 * c + 3
        if b >= len(line) or line[a] != " " or line[b] != " ":
            return line
    return line[:a] + "[" + line[a + 1:b] + "]" + line[b + 1:]


class TimedInput(Protocol):
    """Lines read with a timeout, so that the clock runs while the person thinks."""

    def prompt(self, text: str) -> None:
        """Show a prompt."""

    def poll(self, timeout: float | None) -> str | None:
        """The next line typed within `timeout` seconds (None: wait), or None when none
        was; EOFError at the end of the input."""

    def update(self, text: str) -> None:
        """Show the prompt `text` in place of the one shown, keeping what is typed."""

    def interrupt(self) -> None:
        """End the prompt's line (the time is up) and drop a half-typed line."""


class TerminalInput:
    """A :class:`TimedInput` on a terminal or pipe (POSIX: ``select`` on the file
    descriptor); the prompt is redrawn in place when the output is a terminal."""

    def __init__(self, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> None:
        self.fd = (stdin or sys.stdin).fileno()
        self.out = stdout or sys.stdout
        self.live = _isatty(self.out)
        self._buffer = b""

    @staticmethod
    def usable(stdin: IO[str] | None = None) -> bool:
        """Whether `stdin` (default sys.stdin) can be read with a timeout here."""
        if os.name != "posix":
            return False
        try:
            (stdin or sys.stdin).fileno()
        except (AttributeError, OSError, ValueError):
            return False
        return True

    def prompt(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def poll(self, timeout: float | None) -> str | None:
        if b"\n" not in self._buffer:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(self.fd, 4096)
            if not chunk:
                if not self._buffer:
                    raise EOFError
                chunk = b"\n"
            self._buffer += chunk
            if b"\n" not in self._buffer:
                return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace")

    def update(self, text: str) -> None:
        if self.live:  # save the cursor, rewrite the prompt at the line's start, restore
            self.out.write(f"\x1b7\r{text}\x1b8")
            self.out.flush()

    def interrupt(self) -> None:
        self.out.write("\n")
        self.out.flush()
        self._buffer = b""
        if os.isatty(self.fd):
            import termios

            termios.tcflush(self.fd, termios.TCIFLUSH)


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class HumanAgent(BaseAgent):
    """A person at the terminal: reads moves and commands through `input_fn`, or with a
    countdown through `terminal` (a :class:`TimedInput`)."""

    def __init__(self, name: str = "human", input_fn: InputFn | None = None,
                 output_fn: OutputFn | None = None, move_seconds: float | None = None,
                 captures_exempt: bool = False,
                 clock: Callable[[], float] = time.monotonic,
                 terminal: TimedInput | None = None, width: int | None = None) -> None:
        self.name = name
        self.read: InputFn = input_fn or input
        self.write: OutputFn = output_fn or print
        self.move_seconds = move_seconds
        """The clock's seconds a move (None: no clock), shown at the prompt."""
        self.captures_exempt = captures_exempt
        """Sci-Damath: a capture may take any time."""
        self.terminal = terminal
        """Where lines are read with a timeout (the prompt counts down); None: `input_fn`."""
        self.width = width
        """Columns the legal-move list is wrapped to (None: the terminal's width)."""
        self._now = clock
        self._started = 0.0
        self._limit: float | None = None
        self.quit = False
        """Whether the person typed quit (rather than the input ending)."""

    def _columns(self) -> int:
        return self.width or shutil.get_terminal_size((80, 24)).columns

    def _prompt(self) -> str:
        if self.move_seconds is None:
            return "your move> "
        if self._limit is None:
            return "your move (a capture: no clock)> "
        left = self._limit - (self._now() - self._started)
        digits = len(f"{self._limit:.0f}") if self.terminal is not None else 1  # redrawn
        return f"your move ({max(math.ceil(left - 1e-9), 0):{digits}d} s left)> "

    def _warn_if_late(self, move: Move) -> None:
        if self.move_seconds is not None and not (self.captures_exempt and move.is_capture):
            took = self._now() - self._started
            if took > self.move_seconds:
                self.write(f"time is up: this move took {took:.0f} s of "
                           f"{self.move_seconds:g} s")

    def _ask(self, prompt: str) -> str:
        try:
            if self.terminal is None:
                return self.read(prompt).strip()
            self.terminal.prompt(prompt)
            line = self.terminal.poll(None)
            while line is None:
                line = self.terminal.poll(None)
            return line.strip()
        except (EOFError, KeyboardInterrupt):
            raise Abandon from None

    def _read_move_text(self) -> str:
        """One line at the move prompt; through `terminal` with a clock, the prompt counts
        down and the time running out ends the turn at once (Forfeit: time forfeit)."""
        if self.terminal is None or self._limit is None:
            return self._ask(self._prompt())
        shown = self._prompt()
        self.terminal.prompt(shown)
        while True:
            left = self._limit - (self._now() - self._started)
            if left <= 0:
                self.terminal.interrupt()
                self.write(f"time is up: you had {self._limit:g} s for this move")
                raise Forfeit("time forfeit")
            try:
                line = self.terminal.poll((left - math.floor(left - 1e-9)) + 0.001)
            except (EOFError, KeyboardInterrupt):
                raise Abandon from None
            if line is not None:
                return line.strip()
            prompt = self._prompt()
            if prompt != shown:
                self.terminal.update(prompt)
                shown = prompt

    def show(self, game: Game) -> None:
        last = game.move_stack[-1] if game.move_stack else None
        self.write(marked_board(game, last))
        if last is not None:
            self.write(f"last move: {last}, in [brackets] on the board")
        self.write(numbered(game.legal_moves(), "legal moves: ", self._columns()))

    def choose(self, game: Game) -> Move:
        self._started = self._now()
        moves = game.legal_moves()
        exempt = self.captures_exempt and any(m.is_capture for m in moves)
        self._limit = None if exempt else self.move_seconds
        self.show(game)
        while True:
            text = self._read_move_text()
            command = text.lower()
            if not command:
                continue
            if command == "help":
                self.write(HELP)
            elif command == "board":
                self.show(game)
            elif command == "resign":
                raise Resign
            elif command == "draw":
                self.write("you offer a draw")
                raise OfferDraw
            elif command in ("quit", "exit"):
                self.quit = True
                raise Abandon
            elif command.isascii() and command.isdigit():
                k = int(command) if len(command) <= 9 else 0
                if 1 <= k <= len(moves):
                    self._warn_if_late(moves[k - 1])
                    return moves[k - 1]
                self.write(numbered(moves, f"there is no move {k}; pick 1 to {len(moves)}: ",
                                    self._columns()))
            else:
                try:
                    move = game.parse_move(text)
                except DamiiError as exc:
                    reason = str(exc).split(";")[0].replace(f" in {game.fen()}", "")
                    self.write(numbered(moves, f"{reason}. Legal moves: ", self._columns()))
                else:
                    self._warn_if_late(move)
                    return move

    def accepts_draw(self, game: Game) -> bool:
        while True:
            answer = self._ask("your opponent offers a draw; accept? [y/n] ").lower()
            if answer in ("y", "yes", "n", "no"):
                return answer.startswith("y")

    def draw_declined(self, game: Game) -> bool:
        self.write("draw declined; play on")
        return False

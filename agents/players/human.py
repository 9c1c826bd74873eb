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

With a clock (``move_seconds``) the prompt shows the time left for the move, and a move
typed after the time is up is told so (the referee then scores the time forfeit).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from damii_agents.base import Abandon, BaseAgent, OfferDraw, Resign
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


def numbered(moves: list[Move]) -> str:
    """The legal moves as a numbered list."""
    return "  ".join(f"{i}) {move_label(m)}" for i, m in enumerate(moves, 1))


class HumanAgent(BaseAgent):
    """A person at the terminal: reads moves and commands through `input_fn`."""

    def __init__(self, name: str = "human", input_fn: InputFn | None = None,
                 output_fn: OutputFn | None = None, move_seconds: float | None = None,
                 captures_exempt: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.read: InputFn = input_fn or input
        self.write: OutputFn = output_fn or print
        self.move_seconds = move_seconds
        """The clock's seconds a move (None: no clock), shown at the prompt."""
        self.captures_exempt = captures_exempt
        """Sci-Damath: a capture may take any time."""
        self._now = clock
        self._started = 0.0
        self.quit = False
        """Whether the person typed quit (rather than the input ending)."""

    def _prompt(self) -> str:
        if self.move_seconds is None:
            return "your move> "
        left = self.move_seconds - (self._now() - self._started)
        return f"your move ({max(left, 0):.0f} s left)> "

    def _warn_if_late(self, move: Move) -> None:
        if self.move_seconds is not None and not (self.captures_exempt and move.is_capture):
            took = self._now() - self._started
            if took > self.move_seconds:
                self.write(f"time is up: this move took {took:.0f} s of "
                           f"{self.move_seconds:g} s")

    def _ask(self, prompt: str) -> str:
        try:
            return self.read(prompt).strip()
        except (EOFError, KeyboardInterrupt):
            raise Abandon from None

    def show(self, game: Game) -> None:
        self.write(game.board_text(numbers=True))
        self.write("legal moves: " + numbered(game.legal_moves()))

    def choose(self, game: Game) -> Move:
        self._started = self._now()
        self.show(game)
        moves = game.legal_moves()
        while True:
            text = self._ask(self._prompt())
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
                self.write(f"there is no move {k}; pick 1 to {len(moves)}: {numbered(moves)}")
            else:
                try:
                    move = game.parse_move(text)
                except DamiiError as exc:
                    reason = str(exc).split(";")[0].replace(f" in {game.fen()}", "")
                    self.write(f"{reason}. Legal moves: {numbered(moves)}")
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

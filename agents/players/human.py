"""A person at the terminal as a player (``damii play``, run by :mod:`damii_app.play`).

The human is an :class:`~damii_agents.base.Agent` whose ``choose`` reads the terminal, so a
game against a person runs through the same
:func:`~damii_agents.match.game_loop.play_game` as a match:
the same clock, resignation and draw rules. Input and output are injectable functions,
which is how the tests script a game.

Input at the prompt: a move in PDN (``32-28``, ``28x19x10``, or an unambiguous short
capture ``28x10``), a number from the list of legal moves, or a command: ``resign``,
``draw`` (offer a draw; the agent's ``accepts_draw`` decides), ``board``, ``help``,
``quit`` (leave the game unfinished).
"""

from __future__ import annotations

from collections.abc import Callable

from damii_agents.base import Abandon, BaseAgent, OfferDraw, Resign

from damii_env import Game, Move
from damii_env.errors import DamiiError

InputFn = Callable[[str], str]
OutputFn = Callable[[str], None]
COLOURS = ("white", "black")

HELP = """Enter a move in PDN (32-28, 28x19x10, or a short capture 28x10 when only one
capture goes from 28 to 10), or the number of a move in the list. Commands:
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
                 output_fn: OutputFn | None = None) -> None:
        self.name = name
        self.read: InputFn = input_fn or input
        self.write: OutputFn = output_fn or print

    def _ask(self, prompt: str) -> str:
        try:
            return self.read(prompt).strip()
        except (EOFError, KeyboardInterrupt):
            raise Abandon from None

    def show(self, game: Game) -> None:
        self.write(game.board_text(numbers=True))
        self.write("legal moves: " + numbered(game.legal_moves()))

    def choose(self, game: Game) -> Move:
        self.show(game)
        moves = game.legal_moves()
        while True:
            text = self._ask("your move> ")
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
                raise Abandon
            elif command.isascii() and command.isdigit():
                k = int(command) if len(command) <= 9 else 0
                if 1 <= k <= len(moves):
                    return moves[k - 1]
                self.write(f"there is no move {k}; pick 1 to {len(moves)}: {numbered(moves)}")
            else:
                try:
                    return game.parse_move(text)
                except DamiiError as exc:
                    reason = str(exc).split(";")[0].replace(f" in {game.fen()}", "")
                    self.write(f"{reason}. Legal moves: {numbered(moves)}")

    def accepts_draw(self, game: Game) -> bool:
        while True:
            answer = self._ask("your opponent offers a draw; accept? [y/n] ").lower()
            if answer in ("y", "yes", "n", "no"):
                return answer.startswith("y")

    def draw_declined(self, game: Game) -> bool:
        self.write("draw declined; play on")
        return False

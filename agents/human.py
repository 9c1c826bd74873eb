"""Play against an agent in the terminal (``damii play``).

The human is an :class:`~agents.base.Agent` whose ``choose`` reads the terminal, so a
game against a person runs through the same :func:`~agents.game_loop.play_game` as a match:
the same clock, resignation and draw rules. Input and output are injectable functions,
which is how the tests script a game.

Input at the prompt: a move in PDN (``32-28``, ``28x19x10``, or an unambiguous short
capture ``28x10``), a number from the list of legal moves, or a command: ``resign``,
``draw`` (offer a draw; the agent's ``accepts_draw`` decides), ``board``, ``help``,
``quit`` (leave the game unfinished).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from damii_env import Game, Move
from damii_env.errors import DamiiError, InvalidOptionError

from .base import BaseAgent
from .game_loop import Abandon, Clock, GameEnd, OfferDraw, Resign, game_options, play_game
from .pdn import record, write_file
from .registry import make_agent
from .reports import check_writable

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


@dataclass
class PlayResult:
    """A finished human game: how it ended, the game, and where its PDN was saved."""

    end: GameEnd
    game: Game
    pdn_path: Path


def default_pdn_path() -> Path:
    return Path("runs") / "play" / f"{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.pdn"


def play_human(variant: str, opponent: str, clock: str | float | None = "standard",
               colour: str = "white", pdn_path: str | Path | None = None,
               seed: int | None = None, name: str = "human", input_fn: InputFn | None = None,
               output_fn: OutputFn | None = None, **rule_options: Any) -> PlayResult:
    """Play one game, a person against the agent `opponent` (a spec), and save it as PDN."""
    if colour not in COLOURS:
        raise InvalidOptionError(f"colour must be white or black, got {colour!r}")
    pdn_path = check_writable(pdn_path or default_pdn_path())
    options = game_options(variant, **rule_options)
    the_clock = Clock.parse(clock, variant, **rule_options)
    agent = make_agent(opponent, variant, seed=seed, **options)
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset(seed)
    human = HumanAgent(name, input_fn, output_fn)
    output_fn = human.write
    players = (human, agent) if colour == "white" else (agent, human)
    game = Game(variant, **options)
    output_fn(f"{game.rules.name}: you play {colour} against {opponent}; clock {the_clock}. "
              f"Type help for commands.")

    def announce(g: Game, move: Move, side: int) -> None:
        if players[side] is agent:
            output_fn(f"{COLOURS[side]} ({opponent}) plays {move_label(move)}")

    end = play_game(game, players, the_clock, on_move=announce)
    output_fn(game.board_text())
    output_fn(f"result {end.result} ({end.termination})")
    white, black = (name, opponent) if colour == "white" else (opponent, name)
    pdn = record(game, white=white, black=black, result=end.result, event="damii-env play",
                 extra_tags={"Termination": end.termination, "Clock": str(the_clock)})
    try:
        path = write_file(pdn_path, [pdn])
    except OSError as exc:  # the place broke during the game: keep the game anyway
        path = write_file(default_pdn_path(), [pdn])
        output_fn(f"cannot write {str(pdn_path)!r} ({exc.strerror or exc}); "
                  f"saved the game to {path} instead")
    else:
        output_fn(f"game saved to {path}")
    return PlayResult(end, game, path)

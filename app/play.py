"""``damii play``: one game in the terminal, a person (:class:`HumanAgent`) against an
agent, played by the match's own referee (:func:`~damii_agents.match.game_loop.play_game`)
and saved as PDN.

On a terminal the person's clock counts down at the prompt and the game ends the moment the
time is up (:class:`~damii_agents.players.human.TerminalInput`); while the agent works the
terminal says it is thinking (the first move of a searching agent also compiles)."""

from __future__ import annotations

import datetime as _dt
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from damii_agents.match.game_loop import Clock, GameEnd, game_options, play_game
from damii_agents.match.reports import check_writable
from damii_agents.players.human import (
    COLOURS,
    HumanAgent,
    InputFn,
    OutputFn,
    TerminalInput,
    marked_board,
    move_label,
)
from damii_agents.registry import PlayerSpec
from damii_env import Game, Move
from damii_env.errors import InvalidOptionError
from damii_env.pdn import record, write_file


@dataclass
class PlayResult:
    """A finished human game: how it ended, the game, and where its PDN was saved."""

    end: GameEnd
    game: Game
    pdn_path: Path
    quit: bool = False
    """Whether the person left with ``quit`` (an unfinished game they chose to end)."""


def default_pdn_path() -> Path:
    return Path("runs") / "play" / f"{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.pdn"


COMPILING_KINDS = ("alphabeta", "ckpt", "pretrained")
"""Player kinds whose first move also compiles the search (then it is cached)."""


def thinking_line(who: str, kind: str, first: bool) -> str:
    """What the terminal says while the agent `who` (of `kind`) chooses its move."""
    if first and kind in COMPILING_KINDS:
        return f"{who} is thinking… (compiling: the first move takes a while, up to a " \
               f"minute the first time, then it is cached)"
    if first and kind == "hub":
        return f"{who} is thinking… (starting the engine)"
    return f"{who} is thinking…"


class Thinking:
    """The agent's turn on the terminal: ``thinking…`` before its move; on a terminal
    (`live`) the seconds tick on that line, which the move's line then replaces."""

    def __init__(self, line: str, write: OutputFn, live: bool = False,
                 raw: Callable[[str], None] | None = None) -> None:
        self.line, self.write, self.live = line, write, live
        self.raw = raw or (lambda text: (sys.stdout.write(text), sys.stdout.flush()))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Thinking:
        if not self.live:
            self.write(self.line)
            return self
        self.raw(self.line)
        self._thread = threading.Thread(target=self._tick, daemon=True)
        self._thread.start()
        return self

    def _tick(self) -> None:
        start = time.monotonic()
        while not self._stop.wait(1.0):
            self.raw(f"\r\x1b[K{self.line} {time.monotonic() - start:.0f} s")

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self.raw("\r\x1b[K")


class AnnouncedAgent:
    """The agent, saying on the terminal that it is thinking while it chooses (every other
    attribute is the agent's own)."""

    def __init__(self, agent: Any, who: str, kind: str, write: OutputFn,
                 live: bool = False) -> None:
        self._agent, self._who, self._kind, self._write = agent, who, kind, write
        self._live, self._first = live, True

    def choose(self, game: Game) -> Move:
        line = thinking_line(self._who, self._kind, self._first)
        self._first = False
        with Thinking(line, self._write, self._live):
            return self._agent.choose(game)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # not yet set (copy, pickle): no endless lookup
            raise AttributeError(name)
        return getattr(self._agent, name)


def play_human(variant: str, opponent: str, clock: str | float | None = "none",
               colour: str = "white", pdn_path: str | Path | None = None,
               seed: int | None = None, name: str = "human", input_fn: InputFn | None = None,
               output_fn: OutputFn | None = None, **rule_options: Any) -> PlayResult:
    """Play one game, a person against the agent `opponent` (a spec), and save it as PDN."""
    if colour not in COLOURS:
        raise InvalidOptionError(f"colour must be white or black, got {colour!r}")
    pdn_path = check_writable(pdn_path or default_pdn_path())
    options = game_options(variant, **rule_options)
    the_clock = Clock.parse(clock, variant, **rule_options)
    spec = PlayerSpec.parse(opponent)
    agent = spec.build(variant, seed, **options)
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset(seed)
    terminal = TerminalInput() if input_fn is None and TerminalInput.usable() else None
    human = HumanAgent(name, input_fn, output_fn, move_seconds=the_clock.seconds,
                       captures_exempt=the_clock.captures_exempt, terminal=terminal)
    output_fn = human.write
    other = 1 if colour == "white" else 0
    live = output_fn is print and terminal is not None and terminal.live
    announced = AnnouncedAgent(agent, f"{COLOURS[other]} ({opponent})", spec.kind, output_fn,
                               live)
    players = (human, announced) if colour == "white" else (announced, human)
    game = Game(variant, **options)
    timing = "no clock (casual)" if the_clock.seconds is None else \
        f"clock {the_clock}: a move that takes longer loses the game on time (the prompt " \
        f"counts down the time left)"
    output_fn(f"{game.rules.name}: you play {colour} against {opponent}; {timing}. "
              f"Type help for commands.")

    def announce(g: Game, move: Move, side: int) -> None:
        if players[side] is announced:
            output_fn(f"{COLOURS[side]} ({opponent}) plays {move_label(move)}")

    end = play_game(game, players, the_clock, on_move=announce)
    output_fn(marked_board(game, game.move_stack[-1] if game.move_stack else None))
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
    return PlayResult(end, game, path, quit=human.quit)

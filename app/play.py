"""``damii play``: one game in the terminal, a person (:class:`HumanAgent`) against an
agent, played by the match's own referee (:func:`~damii_agents.match.game_loop.play_game`)
and saved as PDN."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from damii_agents.match.game_loop import Clock, GameEnd, game_options, play_game
from damii_agents.match.reports import check_writable
from damii_agents.players.human import COLOURS, HumanAgent, InputFn, OutputFn, move_label
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
    agent = PlayerSpec.parse(opponent).build(variant, seed, **options)
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset(seed)
    human = HumanAgent(name, input_fn, output_fn, move_seconds=the_clock.seconds,
                       captures_exempt=the_clock.captures_exempt)
    output_fn = human.write
    players = (human, agent) if colour == "white" else (agent, human)
    game = Game(variant, **options)
    timing = "no clock (casual)" if the_clock.seconds is None else \
        f"clock {the_clock}: a move that takes longer loses the game on time (the prompt " \
        f"shows the time left)"
    output_fn(f"{game.rules.name}: you play {colour} against {opponent}; {timing}. "
              f"Type help for commands.")

    def announce(g: Game, move: Move, side: int) -> None:
        if players[side] is agent:
            output_fn(f"{COLOURS[side]} ({opponent}) plays {move_label(move)}")

    end = play_game(game, players, the_clock, on_move=announce)
    output_fn(game.board_text(numbers=True))
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

"""Matches between agents: round robins with clocks, results tables, Elo ratings and a PDN
file of every game (:func:`run_match`).

>>> from agents.arena import MatchConfig, run_match
>>> result = run_match(MatchConfig("damii", ("random", "greedy"), games=4, workers=1),
...                    progress=False)                                    # doctest: +SKIP
>>> print(result.to_text())                                               # doctest: +SKIP

A match is put together from modules that each read alone; this one is the entry point
and re-exports their public names, so ``from agents.arena import ...`` keeps working:

- :mod:`agents.game_loop`: one game with clocks, resignation and agreed draws
  (:func:`play_game`, :class:`Clock`, :class:`GameEnd`, :class:`Resign`,
  :class:`OfferDraw`, :class:`Abandon`, :func:`game_options`).
- :mod:`agents.scheduling`: the match set-up (:class:`MatchConfig`), the opening ballots,
  the list of games (:func:`schedule`) and the players of those games, in this process or
  in worker processes.
- :mod:`agents.results`: each game, the tallies of each pairing and the Elo ratings
  (:class:`MatchResult`, via :mod:`agents.elo`).
- :mod:`agents.reports`: the output formats (plain text, Markdown, JSON) and the files a
  match saves (``results.json``, ``results.md``, ``games.pdn``).

A player can be given as a spec (``"alphabeta:depth=2"``, built in each worker) or as a
ready-made object through ``MatchConfig.players`` (a network in training); a match with
ready-made players is played in this process.

Rules of a match (see ``docs/RULES.md``):

- **Clock**: a player whose move takes longer than the per-move clock loses on time
  (``standard`` 60 s, ``blitz`` 15 s); in Damath capturing moves are exempt.
- **Resignation and draws**: before each move the player is asked ``wants_resign`` and
  ``offers_draw`` (the opponent's ``accepts_draw`` decides). A player's ``choose`` may
  also raise :class:`Resign`, :class:`OfferDraw` or :class:`Abandon` (human play).
- **Game end**: the variant's own rules; a turn limit of 400 plies is added for safety
  where the variant has none (Damath keeps its own 100). A game cut by the turn limit is
  recorded with result ``*`` and scores as a draw.
- **Ballots**: for each pair of games one random opening of ``opening_plies`` plies is
  played once with each player on each seat.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from tqdm import tqdm

from .game_loop import (
    CLOCK_PRESETS,
    SAFETY_TURN_LIMIT,
    Abandon,
    Clock,
    GameEnd,
    MoveCallback,
    OfferDraw,
    Resign,
    game_options,
    play_game,
)
from .results import GameResult, MatchResult, PairingStats
from .scheduling import (
    GameTask,
    MatchConfig,
    MatchWorker,
    _play_all,
    anchor_index,
    ballots,
    player_names,
    schedule,
)

__all__ = [
    "CLOCK_PRESETS", "SAFETY_TURN_LIMIT", "Abandon", "Clock", "GameEnd", "GameResult",
    "GameTask", "MatchConfig", "MatchResult", "MatchWorker", "MoveCallback", "OfferDraw",
    "PairingStats", "Resign", "anchor_index", "ballots", "default_out_dir", "game_options",
    "play_game", "player_names", "run_match", "schedule",
]


def default_out_dir() -> Path:
    """``runs/eval/<date>-<time>``: where ``damii eval`` saves a match by default."""
    return Path("runs") / "eval" / _dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def run_match(config: MatchConfig, progress: bool = True, elo_samples: int = 1000,
              ray_address: str | None = None) -> MatchResult:
    """Play the round robin (a tqdm bar on stderr when `progress`) and tally it.

    Seats listed in ``config.players`` are played by those ready-made objects and the
    whole match then runs in this process (objects cannot go to worker processes).
    With `ray_address` (``auto``, ``HOST:PORT`` or ``local``) the games are played by
    ``config.workers`` actors on that Ray cluster (:mod:`agents.distributed`), with the
    same results.
    """
    tasks = schedule(config)
    games: list[GameResult] = []
    with tqdm(total=len(tasks), desc=f"eval {config.variant}", unit="game",
              disable=not progress) as bar:
        for result in _play_all(config, tasks, ray_address):
            games.append(result)
            bar.update(1)
    return MatchResult.from_games(config, games, elo_samples=elo_samples)

"""Which games a match plays and who plays them: the opening ballots, the list of games
(:func:`schedule`), and the whole match (:func:`run_match`), played in this process, in a
pool of worker processes or on a Ray cluster.

A round robin pairs every two players (a gauntlet only the first with each other one).
For each pairing ``ballots`` random openings of ``opening_plies`` plies are drawn once
for the whole match, and each opening is played twice, once with each player on each seat.
Every game has its own seed, so the games do not depend on which worker plays them.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tqdm import tqdm

from damii_agents.match.config import GameTask, MatchConfig
from damii_agents.match.game_loop import game_options
from damii_agents.match.results import GameResult, MatchResult
from damii_agents.match.worker import MatchWorker, init_worker, play_task
from damii_agents.process_pool import unordered_map
from damii_env import Game


def ballots(variant: str, count: int, plies: int, seed: int, **options: Any
            ) -> list[tuple[str, ...]]:
    """`count` random openings of `plies` plies (shorter if a game ends first)."""
    rng = random.Random(seed)
    openings = []
    for _ in range(count):
        game = Game(variant, **options)
        moves = []
        for _ in range(plies):
            if game.is_over():
                break
            moves.append(str(game.push(rng.choice(game.legal_moves()))))
        openings.append(tuple(moves))
    return openings


def schedule(config: MatchConfig) -> list[GameTask]:
    """Every game of the round robin: pairings x ballots x both seats."""
    options = game_options(config.variant, **config.rule_options)
    openings = ballots(config.variant, config.openings_per_pairing, config.opening_plies,
                       config.seed, **options)
    tasks = []
    if config.gauntlet:
        pairs = [(0, j) for j in range(1, len(config.specs))]
    else:
        pairs = list(itertools.combinations(range(len(config.specs)), 2))
    for a, b in pairs:
        for opening in openings:
            for white, black in ((a, b), (b, a)):
                i = len(tasks)
                tasks.append(GameTask(i, white, black, opening, config.seed * 1_000_003 + i))
    return tasks


def play_all(config: MatchConfig, tasks: list[GameTask], ray_address: str | None = None
              ) -> Iterator[GameResult]:
    """The games of `tasks`, as they finish (in any order when there are workers); on the
    Ray cluster at `ray_address` when given (``damii_agents.match.ray``)."""
    if ray_address is not None:
        from damii_agents.match.ray import play_on_ray

        yield from play_on_ray(config, tasks, ray_address)
        return
    workers = min(config.n_workers(), len(tasks))
    if workers <= 1:
        worker = MatchWorker(config)
        yield from map(worker.play, tasks)
        return
    yield from unordered_map(play_task, tasks, workers, initializer=init_worker,
                             initargs=(config,))


def default_out_dir() -> Path:
    """``runs/eval/<date>-<time>``: where ``damii eval`` saves a match by default."""
    return Path("runs") / "eval" / _dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def run_match(config: MatchConfig, progress: bool = True, elo_samples: int = 1000,
              ray_address: str | None = None) -> MatchResult:
    """Play the round robin (a tqdm bar on stderr when `progress`) and tally it.

    Seats listed in ``config.players`` are played by those ready-made objects and the
    whole match then runs in this process (objects cannot go to worker processes).
    With `ray_address` (``auto``, ``HOST:PORT`` or ``local``) the games are played by
    ``config.workers`` actors on that Ray cluster (:mod:`damii_agents.match.ray`), with the
    same results.
    """
    tasks = schedule(config)
    games: list[GameResult] = []
    with tqdm(total=len(tasks), desc=f"eval {config.variant}", unit="game",
              disable=not progress) as bar:
        for result in play_all(config, tasks, ray_address):
            games.append(result)
            bar.update(1)
    return MatchResult.from_games(config, games, elo_samples=elo_samples)

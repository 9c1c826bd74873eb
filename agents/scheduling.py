"""Which games a match plays and who plays them: the match set-up (:class:`MatchConfig`),
the opening ballots, the list of games (:func:`schedule`) and the players of those games,
in this process or in a pool of worker processes (``_play_all``).

A round robin pairs every two players (a gauntlet only the first with each other one).
For each pairing ``ballots`` random openings of ``opening_plies`` plies are drawn once
for the whole match, and each opening is played twice, once with each player on each seat.
Every game has its own seed, so the games do not depend on which worker plays them.
"""

from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from damii_env import Game
from damii_env.errors import InvalidOptionError

from .base import Agent
from .game_loop import Clock, game_options, play_game
from .pdn import record
from .registry import AgentSpecError, make_agent, parse_spec
from .results import GameResult


def player_names(specs: Sequence[str]) -> list[str]:
    """Unique names for the specs (a repeated spec gets ``#2``, ``#3``)."""
    seen: Counter[str] = Counter()
    names = []
    for spec in specs:
        seen[spec] += 1
        names.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    return names


def anchor_index(specs: Sequence[str], skip: Collection[int] = ()) -> int:
    """The player rated 0: the first ``random`` agent, else the first spec.

    Seats in `skip` (ready-made players, whose spec is only a label) are never taken
    for a ``random`` agent; neither is a label that is not a spec.
    """
    for i, spec in enumerate(specs):
        if i in skip:
            continue
        try:
            if parse_spec(spec)[0] == "random":
                return i
        except AgentSpecError:
            continue
    return 0


@dataclass(frozen=True)
class MatchConfig:
    """A round robin: every pair of specs plays ``games`` games (rounded up to even)."""

    variant: str
    specs: tuple[str, ...]
    """Agent specs (see :func:`agents.registry.make_agent`), one a seat; for a seat in
    ``players`` only the label under which that player appears in tables and PDN."""
    games: int = 2
    clock: str | float | None = "standard"
    workers: int | None = None
    """Worker processes (None: min(2, CPUs)); 1 plays in this process."""
    seed: int = 0
    opening_plies: int = 2
    rule_options: Mapping[str, Any] = field(default_factory=dict)
    event: str = "damii-env eval"
    gauntlet: bool = False
    """Only the first spec meets every other one (a checkpoint against the baselines)."""
    players: Mapping[int, Agent] = field(default_factory=dict, compare=False, repr=False)
    """Ready-made player objects by seat (an index into ``specs``), used instead of
    building those seats from their specs, e.g. ``{0: NeuralAgent(net, ...)}`` for a
    network in training. Objects cannot be sent to worker processes, so a match with
    ready-made players is played in this process whatever ``workers`` says. Their
    ``reset(seed)`` is called before each game as for any player."""

    def __post_init__(self) -> None:
        if len(self.specs) < 2:
            raise InvalidOptionError(f"a match needs at least two agents, got {list(self.specs)}")
        for i, player in self.players.items():
            if not (isinstance(i, int) and 0 <= i < len(self.specs)):
                raise InvalidOptionError(
                    f"ready-made player seat {i!r} is not an index into {list(self.specs)}")
            if not callable(getattr(player, "choose", None)):
                raise InvalidOptionError(f"ready-made player {player!r} has no choose(game)")
        for i, spec in enumerate(self.specs):
            if i not in self.players:
                parse_spec(spec)
        if self.games < 1 or self.opening_plies < 0:
            raise InvalidOptionError("games must be >= 1 and opening plies >= 0")
        self.make_clock()

    @property
    def names(self) -> list[str]:
        """The players' unique names, one a seat (see :func:`player_names`)."""
        return player_names(self.specs)

    @property
    def anchor(self) -> int:
        """The seat rated 0 (see :func:`anchor_index`)."""
        return anchor_index(self.specs, skip=self.players.keys())

    @property
    def ballots(self) -> int:
        """Openings per pairing; each is played twice, once from each seat."""
        return (self.games + 1) // 2

    def make_clock(self) -> Clock:
        """The per-move clock of the match's games."""
        return Clock.parse(self.clock, self.variant, **self.rule_options)

    def n_workers(self) -> int:
        """Worker processes to use: 1 (this process) when there are ready-made players."""
        if self.players:
            return 1
        return max(1, self.workers if self.workers else min(2, os.cpu_count() or 1))


@dataclass(frozen=True)
class GameTask:
    """One game of a match, as sent to a worker."""

    index: int
    white: int
    black: int
    opening: tuple[str, ...]
    seed: int


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
    openings = ballots(config.variant, config.ballots, config.opening_plies, config.seed, **options)
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


class MatchWorker:
    """Plays games of a match; builds each agent once from its spec (or takes the
    ready-made one of ``config.players``)."""

    def __init__(self, config: MatchConfig) -> None:
        self.config = config
        self.options = game_options(config.variant, **config.rule_options)
        self.clock = config.make_clock()
        self.names = config.names
        self._agents: dict[int, Agent] = dict(config.players)

    def agent(self, i: int) -> Agent:
        """The player of seat `i`."""
        if i not in self._agents:
            self._agents[i] = make_agent(self.config.specs[i], self.config.variant,
                                         seed=self.config.seed, **self.options)
        return self._agents[i]

    def play(self, task: GameTask) -> GameResult:
        """Play one game from its opening and record it."""
        game = Game(self.config.variant, **self.options)
        for text in task.opening:
            game.push(text)
        players = (self.agent(task.white), self.agent(task.black))
        for side, player in enumerate(players):
            reset = getattr(player, "reset", None)
            if callable(reset):
                reset(2 * task.seed + side)
        start = time.perf_counter()
        end = play_game(game, players, self.clock)
        seconds = time.perf_counter() - start
        white, black = self.names[task.white], self.names[task.black]
        pdn = record(game, white=white, black=black, result=end.result, event=self.config.event,
                     round=str(task.index + 1),
                     extra_tags={"Termination": end.termination, "Clock": str(self.clock)})
        return GameResult(task.index, white, black, end, len(game.move_stack), game.fen(),
                          seconds, pdn)


_WORKER: MatchWorker | None = None


def _init_worker(config: MatchConfig) -> None:
    """A worker process: one thread each (the workers are the parallelism; several
    threads per process over tiny per-move tensors spin against each other), then its
    players."""
    global _WORKER
    os.environ["OMP_NUM_THREADS"] = "1"
    _WORKER = MatchWorker(config)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    import numba

    numba.set_num_threads(1)


def _play_task(task: GameTask) -> GameResult:
    assert _WORKER is not None, "worker not initialised"
    return _WORKER.play(task)


def _play_all(config: MatchConfig, tasks: list[GameTask], ray_address: str | None = None
              ) -> Iterator[GameResult]:
    """The games of `tasks`, as they finish (in any order when there are workers); on the
    Ray cluster at `ray_address` when given (``agents.distributed``)."""
    if ray_address is not None:
        from .distributed import play_on_ray

        yield from play_on_ray(config, tasks, ray_address)
        return
    workers = min(config.n_workers(), len(tasks))
    if workers <= 1:
        worker = MatchWorker(config)
        yield from map(worker.play, tasks)
        return
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers, initializer=_init_worker, initargs=(config,)) as pool:
        yield from pool.imap_unordered(_play_task, tasks)

"""The player of a match's games, in this process or in a worker process
(:class:`MatchWorker`, :func:`init_worker`, :func:`play_task`); the local process pool and
the Ray actors (:mod:`damii_agents.match.ray`) both run games through it."""

from __future__ import annotations

import os
import signal
import sys
import time

from damii_agents.match.config import GameTask, MatchConfig
from damii_agents.match.game_loop import game_options, play_game
from damii_agents.match.results import GameResult
from damii_env import Game
from damii_env.pdn import record
from damii_env.player import Player


class MatchWorker:
    """Plays games of a match; builds each player once from its parsed spec (or takes the
    ready-made one of ``config.players``)."""

    def __init__(self, config: MatchConfig) -> None:
        self.config = config
        self.options = game_options(config.variant, **config.rule_options)
        self.clock = config.make_clock()
        self.names = config.names
        self._agents: dict[int, Player] = dict(config.players)

    def agent(self, i: int) -> Player:
        """The player of seat `i`."""
        if i not in self._agents:
            self._agents[i] = self.config.parsed[i].build(self.config.variant,
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


def single_threaded() -> None:
    """Set up a worker process with one thread for OpenMP, torch and numba: the workers
    are the parallelism (several threads per process over tiny per-move tensors spin
    against each other). Used by the match workers and by ``damii serve``'s pool."""
    os.environ["OMP_NUM_THREADS"] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    import numba

    numba.set_num_threads(1)


def init_worker(config: MatchConfig) -> None:
    """A worker process: one thread each (:func:`single_threaded`), then its players. Ctrl-C
    is the parent's to handle (it saves the games played and stops the pool): a worker
    ignores SIGINT, so a terminal's Ctrl-C prints no traceback of each worker."""
    global _WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ["OMP_NUM_THREADS"] = "1"
    _WORKER = MatchWorker(config)
    single_threaded()


def play_task(task: GameTask) -> GameResult:
    assert _WORKER is not None, "worker not initialised"
    return _WORKER.play(task)

"""A network with minimax (``ckpt:PATH,depth=D``): a full-width search D full moves deep,
extended through every capture sequence (quiescence), with the value network at the
leaves (:mod:`damii_agents.search.minimax`); or (``time=T``) that search deepened one
full move at a time while the next depth is expected to end within T seconds a move."""

from __future__ import annotations

import math
import time

import numpy as np

from damii_agents.base import CLOCK_SHARE
from damii_agents.players.network_player import NetworkPlayer, on_legal
from damii_agents.search import minimax
from damii_agents.search.evaluator import NetworkEvaluator
from damii_env.engine import Engine, State

MAX_TIME_DEPTH = 12
"""The deepest a time-limited (``time=T``) search goes."""
MAX_NODES = 50_000
"""Positions one search may make by default; past them the rest are leaves."""


class MinimaxPlayer(NetworkPlayer):
    """Plays the hop of the best minimax value (``depth`` full moves, or deepened within
    ``time_limit`` seconds a move up to ``depth`` or :data:`MAX_TIME_DEPTH`)."""

    def __init__(self, evaluator: NetworkEvaluator, depth: int = 0,
                 time_limit: float | None = None, max_nodes: int = MAX_NODES,
                 mode: str = "argmax", seed: int | None = None, name: str = "neural") -> None:
        super().__init__(evaluator, mode=mode, seed=seed, name=name)
        self.depth = depth
        self.time_limit = time_limit
        self.max_nodes = max_nodes
        self._clock: float | None = None
        self._deadline: float | None = None
        self.last_depth = 0
        self.last_nodes = 0
        """The depth and the positions of the last search."""

    def set_clock(self, seconds: float | None) -> None:
        """With ``time=T``: keep within :data:`CLOCK_SHARE` of the match clock too."""
        self._clock = seconds if seconds is not None and math.isfinite(seconds) else None

    def begin_move(self) -> None:
        seconds = self._move_seconds()
        self._deadline = None if seconds is None else time.perf_counter() + seconds

    def _move_seconds(self) -> float | None:
        if self.time_limit is None:
            return None
        clock = None if self._clock is None else CLOCK_SHARE * self._clock
        return min(t for t in (self.time_limit, clock) if t is not None)

    def hop_weights(self, state: State, evaluator: NetworkEvaluator) -> np.ndarray:
        values = self.hop_values(state, evaluator.engine, evaluator)
        best = np.flatnonzero(values >= values.max() - 1e-9)
        weights = np.zeros(len(values))
        weights[best] = 1.0 / len(best)
        return on_legal(state, evaluator.engine, weights)

    def hop_values(self, state: State, engine: Engine,
                   evaluator: NetworkEvaluator | None = None) -> np.ndarray:
        """Minimax values (n_legal,) of the legal hops of game 0 for its mover: `depth`
        full moves (a capture that goes on costs none), then on while captures are
        compulsory, the leaves valued by the evaluator (by default the player's for
        `engine`); past `max_nodes` the rest are leaves."""
        if state.done[0]:
            raise ValueError("the game is over: no hop to value")
        evaluator = evaluator or self.evaluator.for_engine(engine)
        root = state.take(slice(0, 1))

        def search(depth: int) -> minimax.SearchResult:
            return minimax.search(engine, root, depth, evaluator, self.max_nodes)

        if self._deadline is None:
            result = search(self.depth)
            self.last_nodes, self.last_depth = result.nodes, self.depth
            return result.values
        # iterative deepening: go one full move deeper while the next depth, expected to
        # cost what the last did times its growth (at least 4x), ends before the deadline
        cap = self.depth or MAX_TIME_DEPTH
        depth, spent, growth = 1, 0.0, 8.0
        start = time.perf_counter()
        result = search(1)
        while depth < cap:
            took = time.perf_counter() - start
            if spent > 0:
                growth = max(4.0, took / spent)
            if time.perf_counter() + took * growth > self._deadline:
                break
            depth, spent, start = depth + 1, took, time.perf_counter()
            deeper = search(depth)
            if deeper.nodes >= self.max_nodes:  # cut short by the node budget: stop here
                result = deeper
                break
            result = deeper
        self.last_nodes, self.last_depth = result.nodes, depth
        return result.values

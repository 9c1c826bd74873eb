"""Alpha-beta player: negamax with alpha-beta, iterative deepening, a transposition table
on the engine's Zobrist hashes, TT-move ordering and a capture quiescence search, all
compiled (:mod:`damii_agents.search.alphabeta`). Depth- or time-limited.

Evaluation per variant (from the mover's view): material (men, kings; a flying king is
worth more than a short one), advancement of men, mobility; Sci-Damath: the difference
of the totals that decide the game (score plus remaining chips, damas doubled).
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

import numpy as np
from damii_agents.base import CLOCK_SHARE, BaseAgent
from damii_agents.search import alphabeta as S

from damii_env import Game, Move
from damii_env.engine import Engine


def default_weights(engine: Engine) -> np.ndarray:
    """Evaluation weights for a rule set."""
    w = np.zeros(S.N_EVAL)
    w[S.E_MAN] = 100.0
    w[S.E_KING] = 300.0 if engine.rules.king_range == "flying" else 170.0
    w[S.E_ADVANCE] = 3.0
    w[S.E_MOBILITY] = 1.0
    w[S.E_TOTALS] = 10.0
    return w


class AlphaBetaAgent(BaseAgent):
    """Alpha-beta search to a depth in full moves, or within a time per move."""

    def __init__(self, variant: str = "damii", depth: int | None = 4,
                 time_limit: float | None = None, max_nodes: int | None = None,
                 seed: int | None = None, name: str | None = None, tt_bits: int = 18,
                 **rule_options: Any) -> None:
        if depth is None and time_limit is None and max_nodes is None:
            raise ValueError("give a depth, a time limit or a node budget")
        self.variant = variant
        self.rule_options = rule_options
        self.depth = depth
        self.time_limit = time_limit
        self.max_nodes = max_nodes
        limit = f"depth={depth}" if depth else f"time={time_limit}"
        self.name = name or f"alphabeta:{limit}"
        self.rng = random.Random(seed)
        size = 1 << tt_bits
        self._tt = (np.zeros(size, dtype=np.uint64), np.zeros(size), np.zeros(size, dtype=np.int64),
                    np.zeros(size, dtype=np.int64), np.full(size, -1, dtype=np.int64))
        self._engine: Engine | None = None
        self._clock: float | None = None
        self._stack = None
        self._last_fen: str | None = None
        self._last_move: Move | None = None
        self.last_value = 0.0
        self.last_depth = 0
        self.nodes = 0
        self.search_time = 0.0

    def set_clock(self, seconds: float | None) -> None:
        """Search within :data:`CLOCK_SHARE` of the match clock's seconds a move."""
        self._clock = seconds if seconds is not None and math.isfinite(seconds) else None

    def reset(self, seed: int | None = None) -> None:
        """A new game: reseed, clear the transposition table and forget the last verdict."""
        if seed is not None:
            self.rng.seed(seed)
        for arr in self._tt:
            arr.fill(0)
        self._tt[4].fill(-1)
        self.last_value = 0.0
        self._last_fen = None

    def _prepare(self, engine: Engine) -> None:
        if self._engine is None or self._engine.rules != engine.rules:
            self._engine = engine
            self._stack = engine.empty_state(256)
            self.weights = default_weights(engine)

    def _load_root(self, row: Any) -> None:
        """Put a one-game state in stack row 0, its legal hops shuffled (seeded) so that
        equally good moves are chosen at random."""
        stack = self._stack
        stack.put(0, row)
        n = int(stack.n_legal[0])
        order = list(range(n))
        self.rng.shuffle(order)
        stack.legal[0, :n] = stack.legal[0, order]

    def _search_row0(self, depth: int, max_nodes: int) -> tuple[float, int, int, bool]:
        result = np.zeros(4)
        S.search(self._engine.tables, self._stack.arrays, depth, self.weights, *self._tt,
                 max_nodes, result)
        return float(result[0]), int(result[1]), int(result[2]), bool(result[3])

    def best_hop(self, state_row: Any, deadline: float | None) -> tuple[int, float]:
        """Iterative deepening from the position in stack row 0; returns (hop, value)."""
        best, value = -1, 0.0
        max_depth = self.depth if self.depth is not None else 64
        budget = self.max_nodes if self.max_nodes is not None else 1 << 62
        depth = 1
        while depth <= max_depth:
            nodes_left = budget - self.nodes
            if deadline is not None:
                remaining = deadline - time.perf_counter()
                if remaining <= 0 and best >= 0:
                    break
                rate = self.nodes / self.search_time if self.search_time > 0 else 2e5
                nodes_left = min(nodes_left, max(1000, int(remaining * rate)))
            if nodes_left <= 0 and best >= 0:
                break
            t0 = time.perf_counter()
            v, hop, nodes, aborted = self._search_row0(depth, max(nodes_left, 1))
            self.search_time += time.perf_counter() - t0
            self.nodes += nodes
            if aborted and best >= 0:
                break
            if hop >= 0:
                best, value = hop, v
                self.last_depth = depth
            if abs(v) >= S.WIN / 2:  # a forced result is found: deeper search won't change it
                break
            depth += 1
        return best, value

    def choose(self, game: Game) -> Move:
        moves = game.legal_moves()
        if not moves:
            raise ValueError("no legal move: the game is over")
        fen = game.fen()
        if fen == self._last_fen and self._last_move in moves:
            return self._last_move  # already searched (for a match hook)
        self._last_fen = fen
        self._last_move = moves[0]
        self._prepare(game.engine)  # a forced move is searched too: the hooks use its value
        deadline = time.perf_counter() + self.time_limit if self.time_limit else None
        if self._clock is not None:  # a match clock: use at most half a move's time
            clock_end = time.perf_counter() + CLOCK_SHARE * self._clock
            deadline = clock_end if deadline is None else min(deadline, clock_end)
        self.nodes = 0
        self.search_time = 0.0
        stack = self._stack
        self._load_root(game.state.take(slice(0, 1)))
        hops: list[int] = []
        turn = int(stack.turn[0])
        value = 0.0
        engine = self._engine
        while True:
            hop, v = self.best_hop(stack, deadline)
            if not hops:
                value = v
            hops.append(hop)
            row = stack.take(slice(0, 1))
            engine.step(row, np.array([hop]))
            stack.put(0, row)
            if int(stack.turn[0]) != turn or row.done[0]:
                break
        self.last_value = value
        for m in moves:
            if m.actions == tuple(hops):
                self._last_move = m
                return m
        raise RuntimeError(f"search returned hops {hops} that form no legal move")

    def hop(self, engine: Engine, state: Any, b: int) -> int:
        """The hop this agent plays next in game `b` of a batched engine state (for
        trainers that step games hop by hop); a fresh search from that position."""
        self._prepare(engine)
        for arr in self._tt:  # no memory between calls: the same position, the same hop
            arr.fill(0)
        self._tt[4].fill(-1)
        self.nodes = 0
        self.search_time = 0.0
        self._load_root(state.take(slice(b, b + 1)))
        hop, _ = self.best_hop(self._stack, None)
        return hop

    # --- match hooks -------------------------------------------------------------------
    def _verdict(self, game: Game) -> float:
        """The search value of this position (searched now if the last search was elsewhere)."""
        if game.is_over():
            return 0.0
        self.choose(game)  # cached when this position was just searched
        return self.last_value

    def wants_resign(self, game: Game) -> bool:
        return self._verdict(game) <= -S.WIN / 2

    def accepts_draw(self, game: Game) -> bool:
        return self._verdict(game) < -50.0

    def offers_draw(self, game: Game) -> bool:
        return game.ply > 150 and abs(self._verdict(game)) < 5.0

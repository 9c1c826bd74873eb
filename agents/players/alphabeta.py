"""Alpha-beta player: negamax with alpha-beta, iterative deepening, a transposition table
on the engine's Zobrist hashes, TT-move ordering and a capture quiescence search, all
compiled (:mod:`damii_agents.search.alphabeta`), with principal-variation search,
killer/history ordering, late-move reductions, aspiration windows and a clock read inside
the search as options (docs/SEARCH.md). Depth- or time-limited.

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

from damii_agents.base import BaseAgent
from damii_agents.search import alphabeta as S
from damii_agents.search import patterns as EV
from damii_env import Game, Move
from damii_env.engine import Engine
from damii_env.rules import make_rules

MATCH_CLOCK_SHARE = 0.8
"""Share of a match clock's seconds a move that the search uses: it reads the clock
itself (every :data:`CLOCK_CHECK` nodes) and stops at its deadline, so it needs a smaller
margin than :data:`damii_agents.base.CLOCK_SHARE`."""

CLOCK_CHECK = 1024
"""Nodes between two readings of the clock inside the search (about 1.5 ms)."""

class AlphaBetaAgent(BaseAgent):
    """Alpha-beta search to a depth in full moves, or within a time per move.

    Iterative deepening searches until the deadline (read inside the search) and keeps
    the last finished iteration's move, or a better root hop the stopped one proved.
    Parts of the search, on by default as shipped (docs/SEARCH.md says what each gains;
    keyword arguments for experiments, not player-spec options): `pvs`
    principal-variation search, `killers` and `history` move ordering, `lmr` late-move
    reductions (full moves a late quiet hop is reduced by, 0 off), `aspiration` the
    half-width of the root window around the last iteration's value (0 off).
    """

    def __init__(self, variant: str = "damii", depth: int | None = 4,
                 time_limit: float | None = None, max_nodes: int | None = None,
                 seed: int | None = None, name: str | None = None, tt_bits: int = 18,
                 pvs: bool = True, killers: bool = True, history: bool = True, lmr: int = 1,
                 aspiration: float = 0.0, evaluation: str = "handwritten",
                 **rule_options: Any) -> None:
        if depth is None and time_limit is None and max_nodes is None:
            raise ValueError("give a depth, a time limit or a node budget")
        if lmr < 0 or aspiration < 0:
            raise ValueError(f"lmr and aspiration must be >= 0, got {lmr}, {aspiration}")
        self.variant = variant
        self.rule_options = rule_options
        self.depth = depth
        self.time_limit = time_limit
        self.max_nodes = max_nodes
        self.pvs, self.killers, self.history = bool(pvs), bool(killers), bool(history)
        self.lmr, self.aspiration = int(lmr), float(aspiration)
        if evaluation not in EV.EVALUATIONS and not str(evaluation).endswith(".npz"):
            raise ValueError(f"evaluation must be one of {', '.join(EV.EVALUATIONS)} or a "
                             f".npz weights file, got {evaluation!r}")
        self.evaluation = evaluation
        self._learned: tuple[np.ndarray, ...] | None = None
        if evaluation != "handwritten":  # say now, not at the first move, if there is none
            EV.learned_weights(make_rules(variant, **rule_options), self._weights_file)
        limit = f"depth={depth}" if depth else f"time={time_limit}"
        self.name = name or f"alphabeta:{limit}"
        self.rng = random.Random(seed)
        size = 1 << tt_bits
        self._tt = (np.zeros(size, dtype=np.uint64), np.zeros(size), np.zeros(size, dtype=np.int64),
                    np.zeros(size, dtype=np.int64), np.full(size, -1, dtype=np.int64))
        self._engine: Engine | None = None
        self._clock: float | None = None
        self._stack = None
        self._history = np.zeros((2, 2))
        self._killers = np.full((1, 2), -1, dtype=np.int64)
        self._result = np.zeros(S.RESULT_SIZE)
        self._searched = False
        """Whether a search wrote into the tables since they were made or cleared (a
        fresh player's reset then costs nothing: the server builds one per game seat)."""
        self._last_fen: str | None = None
        self._last_move: Move | None = None
        self._line: list[int] = []
        self.last_value = 0.0
        self.last_depth = 0
        self.nodes = 0
        self.search_time = 0.0

    @property
    def _weights_file(self) -> str | None:
        return None if self.evaluation in EV.EVALUATIONS else self.evaluation

    def set_clock(self, seconds: float | None) -> None:
        """Search within a share of the match clock's seconds a move
        (:data:`MATCH_CLOCK_SHARE`)."""
        self._clock = seconds if seconds is not None and math.isfinite(seconds) else None

    def _clear_memory(self) -> None:
        if not self._searched:
            return  # nothing written since the tables were made or last cleared
        self._searched = False
        for arr in self._tt:
            arr.fill(0)
        self._tt[4].fill(-1)
        self._history.fill(0.0)
        self._killers.fill(-1)

    def reset(self, seed: int | None = None) -> None:
        """A new game: reseed, clear the transposition table and the move-ordering scores
        and forget the last verdict."""
        if seed is not None:
            self.rng.seed(seed)
        self._clear_memory()
        self.last_value = 0.0
        self._last_fen = None

    def _prepare(self, engine: Engine) -> None:
        if self._engine is None or self._engine.rules != engine.rules:
            self._engine = engine
            self._stack = engine.empty_state(256)
            self.weights = S.default_weights(engine)
            self._learned = (None if self.evaluation == "handwritten"
                             else EV.learned_weights(engine.rules, self._weights_file).arrays)
            self._history = np.zeros((2, max(engine.n_actions, 2)))
            self._killers = np.full((256, 2), -1, dtype=np.int64)

    def _load_root(self, row: Any) -> None:
        """Put a one-game state in stack row 0, its legal hops shuffled (seeded) so that
        equally good moves are chosen at random."""
        stack = self._stack
        stack.put(0, row)
        n = int(stack.n_legal[0])
        order = list(range(n))
        self.rng.shuffle(order)
        stack.legal[0, :n] = stack.legal[0, order]

    def _search_row0(self, depth: int, max_nodes: int, alpha: float = -S.INF,
                     beta: float = S.INF, deadline: float = 0.0) -> tuple[float, int, int, bool]:
        result = self._result
        result.fill(0.0)
        options = S.make_options(pvs=self.pvs, killers=self.killers, history=self.history,
                                 lmr=self.lmr, alpha=alpha, beta=beta, deadline=deadline,
                                 check=CLOCK_CHECK)
        self._history *= 0.5  # older cut-offs count less (an iteration, a move ago)
        t0 = time.perf_counter()
        self._searched = True
        S.search(self._engine.tables, self._stack.arrays, depth, self.weights, *self._tt,
                 max_nodes, result, options, self._history, self._killers, self._learned)
        self.search_time += time.perf_counter() - t0
        self.nodes += int(result[2])
        return float(result[0]), int(result[1]), int(result[2]), bool(result[3])

    def best_hop(self, deadline: float | None) -> tuple[int, float]:
        """Iterative deepening from the position in stack row 0 until the deadline or the
        depth; returns (hop, value) and leaves the best move's capture line in ``_line``.
        The first iteration always runs to its end; one that is stopped gives only a root
        hop it proved better than the last iteration's move (searched first, from the
        table)."""
        best, value = -1, 0.0
        self._line = []
        max_depth = self.depth if self.depth is not None else 64
        budget = self.max_nodes if self.max_nodes is not None else 1 << 62
        result = self._result
        for depth in range(1, max_depth + 1):
            nodes_left = budget - self.nodes
            if best >= 0 and (nodes_left <= 0 or (deadline is not None
                                                  and time.perf_counter() >= deadline)):
                break
            clock = deadline if deadline is not None and best >= 0 else 0.0
            width = self.aspiration
            if width > 0 and depth >= 3 and abs(value) < S.WIN / 2:
                lo, hi = value - width, value + width
            else:
                lo, hi = -S.INF, S.INF
            while True:
                v, hop, _nodes, aborted = self._search_row0(depth, max(nodes_left, 1), lo, hi,
                                                            clock)
                if aborted or lo < v < hi or (lo == -S.INF and hi == S.INF):
                    break
                width *= 4  # outside the aspiration window: widen that side, then open it
                if v <= lo:
                    lo = v - width if width <= 16 * self.aspiration else -S.INF
                else:
                    hi = v + width if width <= 16 * self.aspiration else S.INF
                nodes_left = budget - self.nodes
            if aborted and best >= 0:
                proved, proved_value = int(result[5]), float(result[4])
                if result[6] >= 1 and proved >= 0 and proved != best and proved_value > lo:
                    best, value, self._line = proved, proved_value, [proved]
                break
            if hop >= 0:
                best, value = hop, v
                self._line = [int(h) for h in result[8:8 + int(result[S.R_LINE_LEN])]]
                self.last_depth = depth
            if abs(v) >= S.WIN / 2:  # a forced result is found: deeper search won't change it
                break
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
        if self._clock is not None:  # a match clock: use at most a share of a move's time
            clock_end = time.perf_counter() + MATCH_CLOCK_SHARE * self._clock
            deadline = clock_end if deadline is None else min(deadline, clock_end)
        self.nodes = 0
        self.search_time = 0.0
        stack = self._stack
        self._load_root(game.state.take(slice(0, 1)))
        hops: list[int] = []
        turn = int(stack.turn[0])
        value = 0.0
        engine = self._engine
        line: list[int] = []  # the rest of the searched move's capture line
        while True:
            legal = stack.legal[0, :int(stack.n_legal[0])]
            if line and line[0] in legal:
                hop = line.pop(0)
            else:
                hop, v = self.best_hop(deadline)
                if not hops:
                    value = v
                line = self._line[1:] if self._line[:1] == [hop] else []
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
        self._clear_memory()  # no memory between calls: the same position, the same hop
        self.nodes = 0
        self.search_time = 0.0
        self._load_root(state.take(slice(b, b + 1)))
        hop, _ = self.best_hop(None)
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

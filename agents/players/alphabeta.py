"""Alpha-beta player: negamax over whole moves with alpha-beta, iterative deepening, a
transposition table on the engine's Zobrist hashes, TT-move ordering and a capture
quiescence search, all compiled (:mod:`damii_agents.search.alphabeta`), with
principal-variation search, killer/history ordering, late-move reductions, aspiration
windows, a threat extension and a clock read inside the search as options
(docs/SEARCH.md). Depth- or time-limited.

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
from damii_agents.search import endgame as EG
from damii_agents.search import patterns as EV
from damii_agents.search.evaluation import learned, with_endgame
from damii_env import Game, Move
from damii_env import compiled as C
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
    the last finished iteration's move, or a better root move the stopped one proved.
    Parts of the search, on by default as shipped (docs/SEARCH.md says what each gains;
    keyword arguments for experiments, not player-spec options): `pvs`
    principal-variation search, `killers` and `history` move ordering, `lmr` late-move
    reductions (moves a late quiet move is reduced by, 0 off), `aspiration` the
    half-width of the root window around the last iteration's value (0 off), `twofold`
    a position seen before scored as a draw below the root (where the rules draw a
    repetition: :meth:`twofold_in_search`), `ending` the ending term of the evaluation
    (the side ahead trades down and takes the squares of the other side's kings; where
    kings are short: :meth:`ending_in_search`), `threat` the threat extension (a quiet
    position at the horizon that the opponent could capture from is searched one move
    more; where kings are short: :meth:`threat_in_search`), `endgame` the endgame
    database of the rules probed where one is made (``damii endgame make``,
    docs/ENDGAME.md: a position it holds is valued exactly, not searched).
    """

    def __init__(self, variant: str = "damii", depth: int | None = 4,
                 time_limit: float | None = None, max_nodes: int | None = None,
                 seed: int | None = None, name: str | None = None, tt_bits: int = 18,
                 pvs: bool = True, killers: bool = True, history: bool = True, lmr: int = 1,
                 aspiration: float = 0.0, evaluation: str = "handwritten",
                 twofold: bool = True, ending: bool = True, threat: bool = True,
                 endgame: bool = True, **rule_options: Any) -> None:
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
        self.twofold = bool(twofold)
        self._twofold = False
        self.ending = bool(ending)
        self._ending = False
        self.threat = bool(threat)
        self._threat = False
        self.endgame = bool(endgame)
        if evaluation not in EV.EVALUATIONS and not str(evaluation).endswith(".npz"):
            raise ValueError(f"evaluation must be one of {', '.join(EV.EVALUATIONS)} or a "
                             f".npz weights file, got {evaluation!r}")
        self.evaluation = evaluation
        self._evaluation: Any = None
        if evaluation != "handwritten":  # say now, not at the first move, if there is none
            EV.learned_weights(make_rules(variant, **rule_options), self._weights_file)
        limit = f"depth={depth}" if depth else f"time={time_limit}"
        self.name = name or f"alphabeta:{limit}"
        self.rng = random.Random(seed)
        self._tt = S.new_table(tt_bits)
        self._engine: Engine | None = None
        self._clock: float | None = None
        self._plies: tuple[np.ndarray, ...] | None = None
        self._seed = -1
        self._plan: tuple[Any, list[int]] | None = None
        """The last move :meth:`hop` chose: its position and hops."""
        self._history = np.zeros((2, 2))
        self._killers = np.full((1, 2), -1, dtype=np.int64)
        self._result = np.zeros(S.RESULT_SIZE)
        self._searched = False
        """Whether a search wrote into the tables since they were made or cleared (a
        fresh player's reset then costs nothing: the server builds one per game seat)."""
        self._last_fen: str | None = None
        self._last_move: Move | None = None
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
        self._tt.fill(0)
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
            self._plies = C.new_plies(engine.tables, S.ROWS, S.ROOM, 256)
            self.weights = S.default_weights(engine)
            self._evaluation = (
                S.handwritten(self.weights) if self.evaluation == "handwritten"
                else learned(EV.learned_weights(engine.rules, self._weights_file),
                             engine.tables))
            if self.endgame:
                self._evaluation = with_endgame(self._evaluation,
                                                EG.database_for(engine.rules))
            self._history = np.zeros((2, engine.n_squares ** 2))
            self._killers = np.full((S.ROWS, 2), -1, dtype=np.int64)
            self._twofold = self.twofold_in_search()
            self._ending = self.ending_in_search()
            self._threat = self.threat_in_search()

    def _rules(self) -> Any:
        """The rules this player searches: its engine's, or its variant's before a move."""
        if self._engine is not None:
            return self._engine.rules
        return make_rules(self.variant, **self.rule_options)

    def twofold_in_search(self) -> bool:
        """Whether the search scores a position seen before as a draw: `twofold` asked
        for, and a repetition is a draw by the rules (repetition on, no scoring by totals,
        where a repeated game is decided by the totals)."""
        rules = self._rules()
        return self.twofold and rules.repetition > 0 and rules.scoring == "none"

    def ending_in_search(self) -> bool:
        """Whether the evaluation adds the ending term (:data:`S.ENDING_TRADE`,
        :data:`S.ENDING_TRAP`): `ending` asked for, kings that move one square (where
        they can be trapped; measured in Triestine) and no scoring by totals."""
        rules = self._rules()
        return self.ending and rules.king_range == "short" and rules.scoring == "none"

    def threat_in_search(self) -> bool:
        """Whether the search extends a quiet horizon position that the opponent could
        capture from by one move: `threat` asked for, kings that move one square and no
        scoring by totals (measured to gain in Triestine, to gain nothing in Sci-Damath,
        Damii and International: docs/SEARCH.md)."""
        rules = self._rules()
        return self.threat and rules.king_range == "short" and rules.scoring == "none"

    def _search(self, root: Any, depth: int, max_nodes: int, alpha: float = -S.INF,
                beta: float = S.INF, deadline: float = 0.0) -> tuple[float, int, int, bool]:
        """One search of the one-game state arrays `root` (a game at the start of its
        turn); its root moves in the order of this move's seed."""
        result = self._result
        result.fill(0.0)
        options = S.make_options(pvs=self.pvs, killers=self.killers, history=self.history,
                                 lmr=self.lmr, alpha=alpha, beta=beta, deadline=deadline,
                                 check=CLOCK_CHECK, twofold=self._twofold,
                                 ending_trade=S.ENDING_TRADE if self._ending else 0.0,
                                 ending_trap=S.ENDING_TRAP if self._ending else 0.0,
                                 threat=self._threat)
        self._history *= 0.5  # older cut-offs count less (an iteration, a move ago)
        t0 = time.perf_counter()
        self._searched = True
        S.search(self._engine.tables, root, depth, self._evaluation, self._tt, max_nodes,
                 result, options, self._history, self._killers, self._seed,
                 self._plies)
        self.search_time += time.perf_counter() - t0
        self.nodes += int(result[2])
        return float(result[0]), int(result[1]), int(result[2]), bool(result[3])

    def _hops(self, at: int) -> tuple[int, ...]:
        """The hops the result array holds at `at` (:data:`S.R_LINE_LEN` or
        :data:`S.R_CLEAN_LINE`)."""
        result = self._result
        return tuple(int(h) for h in result[at + 1:at + 1 + int(result[at])])

    def best_move(self, root: Any, deadline: float | None) -> tuple[tuple[int, ...], float]:
        """Iterative deepening from the game in the state arrays `root` until the deadline
        or the depth; returns the best move's hops and its value. The first iteration
        always runs to its end; one that is stopped gives only a root move it proved
        better than the last iteration's move (searched first, from the table)."""
        best: tuple[int, ...] = ()
        value = 0.0
        max_depth = self.depth if self.depth is not None else S.ROWS // 2
        budget = self.max_nodes if self.max_nodes is not None else 1 << 62
        result = self._result
        for depth in range(1, max_depth + 1):
            nodes_left = budget - self.nodes
            if best and (nodes_left <= 0 or (deadline is not None
                                             and time.perf_counter() >= deadline)):
                break
            clock = deadline if deadline is not None and best else 0.0
            width = self.aspiration
            if width > 0 and depth >= 3 and abs(value) < S.WIN / 2:
                lo, hi = value - width, value + width
            else:
                lo, hi = -S.INF, S.INF
            while True:
                v, move, _nodes, aborted = self._search(root, depth, max(nodes_left, 1), lo,
                                                        hi, clock)
                if aborted or lo < v < hi or (lo == -S.INF and hi == S.INF):
                    break
                width *= 4  # outside the aspiration window: widen that side, then open it
                if v <= lo:
                    lo = v - width if width <= 16 * self.aspiration else -S.INF
                else:
                    hi = v + width if width <= 16 * self.aspiration else S.INF
                nodes_left = budget - self.nodes
            if aborted and best:
                proved = self._hops(S.R_CLEAN_LINE)
                if result[6] >= 1 and proved and proved != best and result[4] > lo:
                    best, value = proved, float(result[4])
                break
            if move >= 0:
                best, value = self._hops(S.R_LINE_LEN), v
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
        self._seed = self.rng.randrange(1 << 31)  # equal moves are chosen at random
        hops, value = self.best_move(game.state.take(slice(0, 1)).arrays, deadline)
        self.last_value = value
        for m in moves:
            if m.actions == hops:
                self._last_move = m
                return m
        raise RuntimeError(f"search returned hops {hops} that form no legal move")

    def principal_line(self, game: Game, plies: int = 8,
                       seconds: float = 0.05) -> list[Move]:
        """The engine's line from `game`: the move :meth:`choose` picks there (searched
        now unless it was just searched), then each next position's best move by a search
        one move shallower than the last (the root's depth less one a ply, on the warm
        table, without randomness, at most `seconds` each), up to `plies` moves or the
        game's end. :attr:`last_value` and :attr:`last_depth` stay the root's."""
        if plies < 1:
            raise ValueError(f"a line of at least one move, got plies={plies}")
        first = self.choose(game)
        root_value, root_depth, nodes = self.last_value, self.last_depth, self.nodes
        saved = self.depth, self._seed
        line, at = [first], game.copy()
        at.push(first)
        try:
            self._seed = -1
            for depth in range(root_depth - 1, max(root_depth - plies, 0), -1):
                if at.is_over():
                    break
                self.depth = depth
                hops, _ = self.best_move(at.state.take(slice(0, 1)).arrays,
                                         time.perf_counter() + seconds)
                move = next((m for m in at.legal_moves() if m.actions == hops), None)
                if move is None:
                    break
                line.append(move)
                at.push(move)
        finally:
            self.depth, self._seed = saved
            self.last_value, self.last_depth, self.nodes = root_value, root_depth, nodes
        return line

    def hop(self, engine: Engine, state: Any, b: int) -> int:
        """The hop this agent plays next in game `b` of a batched engine state (for
        trainers that step games hop by hop, a teacher's hop included). At a turn's start,
        the first hop of a fresh search's move (no memory between calls: the same position,
        the same hop); in the middle of a capture, the next hop of the move it chose
        there, or, in a capture it did not begin, the hop whose best completion the
        search values most (each completed position searched as a root)."""
        self._prepare(engine)
        row = state.take(slice(b, b + 1))
        if int(row.continuing_square[0]) >= 0:
            planned = self._planned_hop(row)
            return planned if planned is not None else self._best_completion(engine, row)
        self._clear_memory()
        self.nodes = 0
        self.search_time = 0.0
        self._seed = self.rng.randrange(1 << 31)
        hops, _ = self.best_move(row.arrays, None)
        self._plan = (row, list(hops))
        return hops[0]

    def _planned_hop(self, row: Any) -> int | None:
        """The next hop of the move :meth:`hop` chose, if `row` is where it leads."""
        if self._plan is None:
            return None
        start, hops = self._plan
        replay = start.take(slice(0, 1))
        for i, h in enumerate(hops):
            if (np.array_equal(replay.board, row.board)
                    and np.array_equal(replay.pending, row.pending)
                    and int(replay.continuing_square[0]) == int(row.continuing_square[0])
                    and i > 0):
                return h
            self._engine.step(replay, np.array([h]))
        return None

    def _best_completion(self, engine: Engine, row: Any) -> int:
        """Mid-capture: the legal hop that begins the completion the search values most
        (each completion's position searched from the other side)."""
        mover = int(row.turn[0])
        best_hop, best_value = -1, -math.inf
        frontier = [(row, -1)]
        while frontier:
            at, first = frontier.pop()
            for h in engine.legal_actions(at, 0):
                child = at.take(slice(0, 1))
                engine.step(child, np.array([int(h)]))
                lead = int(h) if first < 0 else first
                if int(child.continuing_square[0]) >= 0:
                    frontier.append((child, lead))
                    continue
                if child.done[0]:  # the capture ended the game (1: White won, 2: Black)
                    winner = {1: 0, 2: 1}.get(int(child.outcome[0]))
                    value = 0.0 if winner is None else (S.WIN if winner == mover else -S.WIN)
                else:
                    self._seed = -1
                    value = -self.best_move(child.arrays, None)[1]
                if value > best_value:
                    best_hop, best_value = lead, value
        return best_hop

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

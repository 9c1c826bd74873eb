"""A player from a training checkpoint (``ckpt:path``): the policy network picks hops,
by argmax or by sampling; or (``sims=N``) the visit counts of N simulations of the
AlphaZero trainer's PUCT search (:mod:`damii_agents.search.puct`) pick them, or with
``mcts=gumbel`` Gumbel AlphaZero's search (:mod:`damii_agents.search.gumbel`, no Gumbel
noise at play); or (``depth=D``) a full-width minimax search
D full moves deep, extended through every capture sequence (quiescence), with the value
network at the leaves; or (``time=T``) that minimax deepened one full move at a time while
the next depth is expected to end within T seconds a move. Needs torch (the ``train`` extra).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from damii_agents.base import CLOCK_SHARE, BaseAgent
from damii_agents.checkpoint import CheckpointError, load_network
from damii_agents.network import PolicyValueNet, masked_logits
from damii_agents.search import minimax
from damii_agents.search.gumbel import GumbelSearch
from damii_agents.search.puct import BatchedSearch

from damii_env import Game, Move
from damii_env.engine import EndReason, Engine, State
from damii_env.episode import for_colour, mover_rewards, shaping_potential
from damii_env.observation import observe

MAX_TIME_DEPTH = 12
"""The deepest a time-limited (``time=T``) search goes."""


class NeuralAgent(BaseAgent):
    """Plays the moves a policy-value network prefers."""

    def __init__(self, net: PolicyValueNet, variant: str, rule_options: dict, mode: str = "argmax",
                 simulations: int = 0, seed: int | None = None, device: str = "cpu",
                 name: str = "neural", depth: int = 0, max_nodes: int = 50_000,
                 value_potential: dict[str, float] | None = None, mcts: str = "puct",
                 time_limit: float | None = None, avoid_rule_draws: bool = True) -> None:
        if mode not in ("argmax", "sample"):
            raise ValueError(f"mode must be 'argmax' or 'sample', got {mode!r}")
        if mcts not in ("puct", "gumbel"):
            raise ValueError(f"mcts must be 'puct' or 'gumbel', got {mcts!r}")
        self.mcts = mcts
        self.avoid_rule_draws = avoid_rule_draws
        """Policy alone (argmax), ahead by its value head: play the policy's best quiet hop
        that neither repeats a position nor lets the game be drawn by a rule (repetition,
        no progress, endgame) at once or by a reply (see ``_no_rule_draw_first``)."""
        if time_limit is not None and not (math.isfinite(time_limit) and time_limit > 0):
            raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit}")
        if time_limit is not None and simulations:
            raise ValueError("give a time per move (minimax) or a number of simulations, not both")
        self.time_limit = time_limit
        self._clock: float | None = None
        self._deadline: float | None = None
        self.last_depth = 0
        if depth and simulations:
            raise ValueError("give a search depth or a number of simulations, not both")
        self.depth = depth
        self.max_nodes = max_nodes
        self.value_potential = dict(value_potential or {})
        self.net = net.to(device).eval()
        self.variant = variant
        self.rule_options = dict(rule_options)
        self.engine = Engine(variant, **self.rule_options)
        self.mode = mode
        self.simulations = simulations
        self.device = device
        self.name = name
        self.torch_rng = torch.Generator().manual_seed(seed if seed is not None else 0)
        self.np_rng = np.random.default_rng(seed)

    @classmethod
    def load(cls, path: str | Path, mode: str = "argmax", simulations: int = 0,
             seed: int | None = None, device: str = "cpu", name: str | None = None,
             depth: int = 0, mcts: str = "puct",
             time_limit: float | None = None, avoid_rule_draws: bool = True) -> NeuralAgent:
        """The agent of a checkpoint file; raises CheckpointError with the reason."""
        net, data = load_network(path, device)
        return cls(net, data["variant"], data["rule_options"], mode=mode, simulations=simulations,
                   seed=seed, device=device, name=name or f"ckpt:{path}", depth=depth,
                   value_potential=data.get("value_potential"), mcts=mcts,
                   time_limit=time_limit, avoid_rule_draws=avoid_rule_draws)

    def set_clock(self, seconds: float | None) -> None:
        """With ``time=T``: keep within :data:`CLOCK_SHARE` of the match clock too."""
        self._clock = seconds if seconds is not None and math.isfinite(seconds) else None

    def _move_seconds(self) -> float | None:
        limits = [t for t in (self.time_limit,
                              None if self._clock is None else CLOCK_SHARE * self._clock)
                  if t is not None]
        return min(limits) if self.time_limit is not None and limits else None

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.np_rng = np.random.default_rng(seed)
            self.torch_rng.manual_seed(seed)

    @torch.no_grad()
    def evaluate(self, state: State, engine: Engine | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Action probabilities (B, A) over legal hops and values (B,) for the movers."""
        engine = engine or self.engine
        obs = torch.from_numpy(observe(engine, state)).to(self.device)
        mask = torch.from_numpy(engine.legal_action_mask(state)).to(self.device)
        logits, value = self.net(obs)
        probs = torch.softmax(masked_logits(logits, mask), dim=-1)
        return probs.cpu().numpy(), value.cpu().numpy()

    def _check_game(self, game: Game) -> None:
        # the turn limit only cuts games short; every other rule must match the training's
        if game.rules.replace(turn_limit=0) != self.engine.rules.replace(turn_limit=0):
            raise CheckpointError(
                f"{self.name} was trained for {self.engine.rules.name} with options "
                f"{self.rule_options}; it cannot play {game.rules.name} ({game.rules})"
            )

    def choose(self, game: Game) -> Move:
        self._check_game(game)
        moves = game.legal_moves()
        if not moves:
            raise ValueError("no legal move: the game is over")
        if len(moves) == 1:
            return moves[0]
        state = game.state.copy()
        turn = int(state.turn[0])
        hops: list[int] = []
        seconds = self._move_seconds()
        self._deadline = None if seconds is None else time.perf_counter() + seconds
        while int(state.turn[0]) == turn and not state.done[0]:
            if self.depth > 0 or self._deadline is not None:
                p = np.zeros(game.engine.n_actions)
                k = int(state.n_legal[0])
                values = self.hop_values(state, game.engine)
                best = np.flatnonzero(values >= values.max() - 1e-9)
                p[state.legal[0, :k].astype(np.int64)[best]] = 1.0 / len(best)
            elif self.simulations > 0 and self.mcts == "gumbel":
                # the trainer's Gumbel search, without the Gumbel draws, hop by hop
                found = GumbelSearch(game.engine, self.net, self.simulations,
                                     torch.device(self.device), self.np_rng,
                                     gumbel_scale=0.0).run(state)
                p = np.zeros(game.engine.n_actions)
                k = int(state.n_legal[0])
                legal = state.legal[0, :k].astype(np.int64)
                if self.mode == "argmax":
                    p[legal[found.choice[0]]] = 1.0
                else:
                    p[legal] = found.policy[0, :k]
            elif self.simulations > 0:
                # the trainer's batched PUCT search, on a batch of one, hop by hop
                search = BatchedSearch(game.engine, self.net, self.simulations,
                                       torch.device(self.device), self.np_rng)
                visits, _ = search.run(state, noise=False)
                p = np.zeros(game.engine.n_actions)
                k = int(state.n_legal[0])
                p[state.legal[0, :k].astype(np.int64)] = visits[0, :k]
            else:
                probs, value = self.evaluate(state, game.engine)
                p = probs[0]
                if (self.avoid_rule_draws and self.mode == "argmax" and value[0] > 0
                        and not state.capturing[0]):
                    p = self._no_rule_draw_first(state, game.engine, p)
            if self.mode == "argmax":
                a = int(np.argmax(p))
            else:
                a = int(torch.multinomial(torch.from_numpy(p / p.sum()), 1,
                                          generator=self.torch_rng))
            hops.append(a)
            game.engine.step(state, np.array([a]))
        for m in moves:
            if m.actions == tuple(hops):
                return m
        raise RuntimeError(f"hops {hops} form no legal move")  # unreachable: mask is sound

    @staticmethod
    def _no_rule_draw_first(state: State, engine: Engine, p: np.ndarray) -> np.ndarray:
        """`p` as is when its best hop leads to a position not seen before in this game
        (since the last capture or man move), does not end the game drawn by a rule, and
        leaves the opponent no reply that does; else one-hot on the policy's best hop
        that does all three (`p` as is when none does). A policy sees no history, and
        it misreads the no-progress counter: without this, a side that is ahead shuffles
        its kings into a repetition or no-progress draw where a man move was at hand. It
        looks at most two plies ahead, at the positions' identity and the game's rules
        only, never at their value."""
        k = int(state.n_legal[0])
        legal = state.legal[0, :k].astype(np.int64)
        children = state.take(np.zeros(k, dtype=np.int64))  # every hop played at once
        engine.step(children, legal)
        new = (children.repetitions == 0) & ~_drawn_by_rule(children)
        order = np.argsort(-p[legal], kind="stable")
        for i in order[new[order]]:
            if not _reply_draws(engine, children.take(slice(i, i + 1))):
                if i == order[0]:
                    return p
                one = np.zeros_like(p)
                one[legal[i]] = 1.0
                return one
        return p

    # --- minimax with the value network at the leaves --------------------------------
    def leaf_values(self, state: State, engine: Engine,
                    rows: np.ndarray | None = None) -> np.ndarray:
        """Values (B,) for the movers of the games at `rows` (default: all): results where
        games are over, else the value head plus the shaping potential its training
        subtracted (see ``shaping_potential``)."""
        rows = np.arange(state.batch_size) if rows is None else rows
        return self.search_leaf_values([(state, rows)], engine)

    @torch.no_grad()
    def search_leaf_values(self, levels: Sequence[tuple[State, np.ndarray]],
                           engine: Engine) -> np.ndarray:
        """:meth:`leaf_values` of every level of a search at once
        (:data:`damii_agents.search.minimax.LeafValues`): the live leaves of all levels go
        through the network together, 1,024 at a time."""
        out = (np.concatenate([mover_rewards(state)[rows].astype(np.float64)
                               for state, rows in levels]) if levels else np.zeros(0))
        material = self.value_potential.get("material", 0.0)
        score = self.value_potential.get("score", 0.0)
        for batch in minimax.leaf_batches(levels, 1024):
            subs = [state.take(rows) for state, rows, _at in batch]
            obs = np.concatenate([observe(engine, sub) for sub in subs])
            phi = np.concatenate([for_colour(shaping_potential(engine, sub, material, score),
                                             sub.turn) for sub in subs])
            v = self.net.value(torch.from_numpy(obs).to(self.device)).cpu().numpy()
            out[np.concatenate([at for _s, _rows, at in batch])] = v + phi
        return out

    def hop_values(self, state: State, engine: Engine) -> np.ndarray:
        """Minimax values (n_legal,) of the legal hops of game 0 for its mover: `depth`
        full moves (a capture that goes on costs none), then on while captures are
        compulsory, the leaves valued by :meth:`leaf_values` (:mod:`damii_agents.search.minimax`);
        past `max_nodes` the rest are leaves."""
        if state.done[0]:
            raise ValueError("the game is over: no hop to value")
        root = state.take(slice(0, 1))

        def search(depth: int) -> minimax.SearchResult:
            return minimax.search(engine, root, depth,
                                  lambda levels: self.search_leaf_values(levels, engine),
                                  self.max_nodes)

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


RULE_DRAWS = (EndReason.REPETITION, EndReason.NO_PROGRESS, EndReason.ENDGAME)
"""The ways a game is drawn by a rule (not by the players' moves running out)."""


def _drawn_by_rule(state: State) -> np.ndarray:
    """(B,) whether each game is over, drawn by one of :data:`RULE_DRAWS`."""
    return state.done & np.isin(state.reason, RULE_DRAWS)


def _reply_draws(engine: Engine, state: State) -> bool:
    """Whether a reply of the side to move in game 0 ends the game drawn by a rule (a
    capture or a man move draws by none, but it is tried as well: cheap)."""
    if state.done[0] or state.capturing[0]:
        return False
    k = int(state.n_legal[0])
    replies = state.take(np.zeros(k, dtype=np.int64))
    engine.step(replies, state.legal[0, :k].astype(np.int64))
    return bool(np.any(_drawn_by_rule(replies)))

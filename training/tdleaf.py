"""Self-play that learns from search: TD-leaf(lambda) values and a policy distilled from
the search's choices.

Every move of every game is chosen by the same batched minimax search the
``ckpt:PATH,depth=D`` player plays with (:mod:`damii_agents.search.minimax`): ``search_depth`` full
moves, extended through every capture sequence, the value network at the leaves. Each
decision gives two targets:

- **value**: the lambda-return of the search values along the player's own decisions,
  ending at the game's result. With search values ``S_0, S_1, ..., S_m`` of one player's
  decisions in one game and the result ``z`` for that player, the target of decision i
  is ``T_i = (1 - lambda) S_i + lambda T_(i+1)``, with ``T_(m+1) = z``. lambda = 0
  learns the search's own value (the leaf values backed up by minimax), lambda = 1 the
  result alone; draughts programs learn their evaluation this way (TD-leaf).
- **policy**: the softmax of the searched hop values at ``policy_temperature`` (by
  default ``temperature``), so that the network alone plays what the search would.

The first ``explore_plies`` plies of each game sample their hop from that softmax (the
openings vary), later ones take the best hop. Positions with one legal hop teach
nothing and are not kept.

With a ``teacher`` (an alpha-beta player's spec, such as the compiled search with the
learned evaluation) that player's hop is each decision's policy target (one-hot) and, past the
explore plies (a uniformly random hop there), the hop played; no search values are
made, so the value targets are the games' results.

With ``opponents`` (player specs) one seat of the last ``opponent_play`` share of the
games is theirs: their hops are played as they choose them and teach nothing, and the
other seat's decisions teach in the positions those players lead to.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from damii_agents.registry import PlayerSpec
from damii_agents.search import minimax
from damii_agents.search.evaluator import NetworkEvaluator
from damii_agents.seats import HopSeat
from damii_env.engine import State
from damii_env.episode import outcome_rewards
from damii_env.observation import observation_shape, observe
from damii_training.config import TrainConfig
from damii_training.replay import Pending, ReplayTrainer, legal_logits

LEAF_BATCH = 4096
"""Leaves valued per network call (the trainer's evaluator's batch)."""


def lambda_returns(search_values: np.ndarray, result: float, lam: float) -> np.ndarray:
    """TD-leaf targets of one player's decisions in one game (see the module doc)."""
    targets = np.empty(len(search_values), dtype=np.float32)
    following = float(result)
    for i in range(len(search_values) - 1, -1, -1):
        following = (1.0 - lam) * float(search_values[i]) + lam * following
        targets[i] = following
    return targets


def softmax(values: np.ndarray, temperature: float, lengths: np.ndarray | None = None
            ) -> np.ndarray:
    """The softmax of `values` at `temperature` along the last axis (of each row of a
    matrix on its own). With `lengths`, of each row's first lengths[i] entries (the rest
    -inf, 0 in the result): the same numbers as the softmax of each row alone, the rows
    of equal length summed together as one matrix (a float sum's rounding depends on
    its length)."""
    z = (values - values.max(axis=-1, keepdims=True)) / max(temperature, 1e-6)
    e = np.exp(z)
    if lengths is None:
        return e / e.sum(axis=-1, keepdims=True)
    sums = np.empty(len(e))
    for n in np.unique(lengths).tolist():
        at = np.flatnonzero(lengths == n)
        sums[at] = e[at, :n].sum(axis=-1)
    return e / sums[:, None]


class PendingDecisions:
    """The decisions of games still running, in the order they were made, as columns:
    a step adds its decisions at once and a finished game takes its own out without a
    loop over the others. Taken decisions leave gaps, closed when the columns are full.

    Columns: ``row`` (of `n_games`) and ``colour`` of the game, ``obs`` (float32),
    ``legal`` (int16, -1 past the legal hops), ``policy`` (float32, zero past the legal
    hops), ``n_hops`` and the search ``value``."""

    def __init__(self, n_games: int, obs_shape: tuple[int, ...], width: int) -> None:
        self.n_games = n_games
        self.shapes = {"row": (), "colour": (), "n_hops": (), "value": (), "obs": obs_shape,
                       "legal": (width,), "policy": (width,)}
        self.dtypes = {"row": np.int64, "colour": np.int64, "n_hops": np.int64,
                       "value": np.float64, "obs": np.float32, "legal": np.int16,
                       "policy": np.float32}
        self.columns = self._allocate(0)
        self.live = np.zeros(0, dtype=bool)
        self.size = 0  # rows in use, gaps included

    def _allocate(self, capacity: int) -> dict[str, np.ndarray]:
        return {name: np.empty((capacity, *shape), dtype=self.dtypes[name])
                for name, shape in self.shapes.items()}

    def add(self, **columns: np.ndarray) -> None:
        """Append decisions (every column, leading axis N, in order)."""
        n = len(columns["row"])
        if self.size + n > len(self.live):
            self._make_room(n)
        end = self.size + n
        for name, values in columns.items():
            self.columns[name][self.size:end] = values
        self.live[self.size:end] = True
        self.size = end

    def _make_room(self, n: int) -> None:
        """Close the gaps; grow to at least twice the decisions kept plus `n`."""
        keep = np.flatnonzero(self.live[:self.size])
        capacity = max(len(self.live), 1024, 2 * (len(keep) + n))
        columns = self._allocate(capacity) if capacity > len(self.live) else self.columns
        for name, column in self.columns.items():
            columns[name][:len(keep)] = column[keep]
        self.columns = columns
        self.live = np.zeros(capacity, dtype=bool)
        self.live[:len(keep)] = True
        self.size = len(keep)

    def take(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """The decisions of the games at `rows` (copies, in order), taken out."""
        finished = np.zeros(self.n_games, dtype=bool)
        finished[rows] = True
        at = np.flatnonzero(self.live[:self.size] & finished[self.columns["row"][:self.size]])
        self.live[at] = False
        return {name: column[at] for name, column in self.columns.items()}

    def items(self) -> list[Pending]:
        """The decisions as :class:`~damii_training.replay.ReplayTrainer` checkpoints them:
        (row, observation, legal hops, policy over them, colour, search value)."""
        at = np.flatnonzero(self.live[:self.size])
        c = {name: column[at] for name, column in self.columns.items()}
        return [(r, obs, legal, policy[:k], colour, value)
                for r, obs, legal, policy, k, colour, value in zip(
                    c["row"].tolist(), c["obs"], c["legal"], c["policy"], c["n_hops"].tolist(),
                    c["colour"].tolist(), c["value"].tolist(), strict=True)]


class TDLeafTrainer(ReplayTrainer):
    """Search-driven self-play with a replay buffer of search targets."""

    PENDING_VALUE = True  # decisions of games still running carry their search value

    def __init__(self, config: TrainConfig) -> None:
        super().__init__(config)
        self.nodes = 0
        self.leaves = 0
        """Positions generated, and valued by the network, by the searches so far."""
        self.evaluator = NetworkEvaluator(self.net, self.engine, self.device, batch=LEAF_BATCH)
        """The searches' leaf values: results where games are over, else the value head
        as it is (the targets are learned without shaping)."""
        self.teacher = HopSeat(PlayerSpec.parse(config.teacher).build(config.variant,
                                          **config.rule_options), self.engine) \
            if config.teacher else None
        """The player whose hops teach the policy and play (``teacher``), or None: the
        network's own search."""
        self.opponents = [HopSeat(PlayerSpec.parse(spec).build(config.variant,
                                                               **config.rule_options),
                                  self.engine) for spec in config.opponents]
        """The players of one seat in the last ``opponent_play`` games (``opponents``)."""

    @property
    def pending(self) -> list[Pending]:
        """The decisions of games still running, as the replay trainers checkpoint them
        (made on each read; the trainer keeps them in ``self.decisions``)."""
        return self.decisions.items()

    @pending.setter
    def pending(self, items: list[Pending]) -> None:
        self.decisions = PendingDecisions(self.config.num_envs,
                                          observation_shape(self.engine.rules), self.L)
        if items:
            policy = np.zeros((len(items), self.L), np.float32)
            for row, it in zip(policy, items, strict=True):
                row[: len(it[3])] = it[3]
            self.decisions.add(row=[it[0] for it in items], obs=[it[1] for it in items],
                               legal=[it[2] for it in items], policy=policy,
                               n_hops=[len(it[3]) for it in items],
                               colour=[it[4] for it in items], value=[it[5] for it in items])

    def _finish_games(self, state: State, rows: np.ndarray) -> None:
        """Turn the decisions of the finished games in `rows` into replay samples: each
        player's decisions in each game (a chain, the chains in the order of their first
        decisions) with their TD-leaf targets."""
        taken = self.decisions.take(rows)
        if not len(taken["row"]):
            return
        key = taken["row"] * 2 + taken["colour"]
        chain_keys, first, chain = np.unique(key, return_index=True, return_inverse=True)
        by_first = np.argsort(first)
        rank = np.empty(len(first), dtype=np.int64)
        rank[by_first] = np.arange(len(first))
        chain = rank[chain]  # chains numbered in the order of their first decisions
        order = np.argsort(chain, kind="stable")
        counts = np.bincount(chain)
        chain_keys = chain_keys[by_first]
        results = outcome_rewards(state.outcome[chain_keys // 2], chain_keys % 2)
        values = taken["value"][order]
        lam = 1.0 if self.teacher is not None else self.config.td_lambda  # no search values
        targets = [lambda_returns(values[end - n:end], float(z), lam)
                   for end, n, z in zip(np.cumsum(counts).tolist(), counts.tolist(), results,
                                        strict=True)]
        self._add_samples(taken["obs"][order], taken["legal"][order],
                          taken["policy"][order], np.concatenate(targets))

    def play(self) -> dict[str, float]:
        """`rollout_steps` searched hops in every game."""
        cfg, eng, state = self.config, self.engine, self.state
        self.net.eval()
        finished = new = 0
        for _ in range(cfg.rollout_steps):
            k = state.n_legal.astype(np.int64)
            games = np.flatnonzero(~state.done & (k > 0))
            opponent = self._opponent_seats(state, games)
            learner = games[~opponent]  # the decisions that teach
            if self.teacher is not None:
                hop, policy, best = self._taught(state, learner, k[learner])
            else:
                result = minimax.search(eng, state, cfg.search_depth, self.evaluator,
                                        max_nodes=cfg.search_nodes * state.batch_size)
                self.nodes += result.nodes
                self.leaves += result.leaves
                hop, policy, best = self._decide(result, games, k[games], state.ply[games])
                hop, policy, best = hop[~opponent], policy[~opponent], best[~opponent]
            obs = observe(eng, state)
            if cfg.policy_play:
                self._policy_moves(state, obs, learner, hop)
            choice = np.zeros(state.batch_size, dtype=np.int64)
            choice[learner] = state.legal[learner, hop]
            for rows in self._by_opponent(games[opponent]):
                choice[rows] = self.opponents[rows[0] % len(self.opponents)].hops(
                    state, rows, self.rng)
            games = learner
            kept = np.flatnonzero(k[games] > 1)  # one legal hop teaches nothing
            rows = games[kept]
            self.decisions.add(row=rows, obs=obs[rows], policy=policy[kept],
                               legal=state.legal_padded[rows],
                               n_hops=k[rows], colour=state.turn[rows], value=best[kept])
            new += len(kept)
            eng.step(state, choice)
            done = np.flatnonzero(state.done)
            if done.size:
                self._finish_games(state, done)
                finished += done.size
                eng.reset_where(state, rng=self.rng)
        return {"rollout_samples": new, "episodes": finished}

    def _opponent_seats(self, state: State, games: np.ndarray) -> np.ndarray:
        """Which of `games` an ``opponents`` player is to move in (bool, as `games`): in
        the last ``round(opponent_play * B)`` rows, row ``r``'s opponent plays colour
        ``(r // len(opponents)) % 2``."""
        n = len(self.opponents)
        if not n:
            return np.zeros(len(games), dtype=bool)
        first = state.batch_size - round(self.config.opponent_play * state.batch_size)
        return (games >= first) & ((games // n) % 2 == state.turn[games])

    def _by_opponent(self, rows: np.ndarray) -> list[np.ndarray]:
        """`rows` grouped by the opponent that plays them (``row % len(opponents)``)."""
        n = len(self.opponents)
        return [group for i in range(n) if len(group := rows[rows % n == i])]

    def _decide(self, result: minimax.SearchResult, games: np.ndarray, n_hops: np.ndarray,
                ply: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The searched games' decisions: the index of the hop each plays (sampled from
        the softmax of its hop values in the first `explore_plies` plies, else the best),
        its policy target (float32 (len(games), L), over its legal hops, zero past them)
        and its best search value.

        `games` are the search's roots with hops, in order, `n_hops` their hop counts.
        Their hop values are taken as the rows of one matrix (-inf past each row's
        hops); the exploring games draw from ``self.rng`` in order, one uniform number
        each, as ``Generator.choice`` does."""
        cfg = self.config
        policy = np.zeros((len(games), self.L), np.float32)
        if not len(games):
            return np.zeros(0, np.int64), policy, np.zeros(0)
        hops = np.arange(n_hops.max()) < n_hops[:, None]
        values = np.full(hops.shape, -np.inf)
        values[hops] = result.values
        hop, best = values.argmax(axis=1), values.max(axis=1)
        explore = softmax(values, cfg.temperature, n_hops)
        policy[:, :hops.shape[1]] = softmax(values, cfg.policy_temperature, n_hops) \
            if cfg.policy_temperature else explore
        sampled = np.flatnonzero(ply < cfg.explore_plies)
        if len(sampled):  # the inverse of each softmax's distribution function
            cdf = explore[sampled].cumsum(axis=1)
            cdf /= cdf[np.arange(len(sampled)), n_hops[sampled] - 1][:, None]
            u = self.rng.random(len(sampled))
            hop[sampled] = (cdf <= u[:, None]).sum(axis=1)  # past the hops: 1 > u
        return hop, policy, best

    def _taught(self, state: State, games: np.ndarray, n_hops: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The decisions of `games` with a ``teacher``: as :meth:`_decide` returns them,
        the policy target one-hot on the teacher's hop, the hop played the teacher's
        (uniformly random in the first `explore_plies` plies), the search value 0."""
        policy = np.zeros((len(games), self.L), np.float32)
        taught = self.teacher.hops(state, games, self.rng)
        legal = state.legal_padded[games]
        index = (legal == taught[:, None]).argmax(axis=1)
        if len(games) and not (legal[np.arange(len(games)), index] == taught).all():
            raise RuntimeError(f"teacher {self.config.teacher!r} played a hop that is not "
                               f"legal")
        policy[np.arange(len(games)), index] = 1.0
        hop = index.copy()
        sampled = np.flatnonzero(state.ply[games] < self.config.explore_plies)
        if len(sampled):
            hop[sampled] = (self.rng.random(len(sampled)) * n_hops[sampled]).astype(np.int64)
        return hop, policy, np.zeros(len(games))

    @torch.no_grad()
    def _policy_moves(self, state: State, obs: np.ndarray, games: np.ndarray,
                      hop: np.ndarray) -> None:
        """In the policy's games (``policy_play``) past their explore plies, put in `hop`
        the legal hop the policy network ranks first."""
        cfg = self.config
        policy_rows = round(cfg.policy_play * state.batch_size)
        at = np.flatnonzero((games < policy_rows) & (state.ply[games] >= cfg.explore_plies))
        if not at.size:
            return
        rows = games[at]
        logits, _value = self.net(torch.from_numpy(obs[rows]).to(self.device))
        legal = torch.from_numpy(state.legal_padded[rows].astype(np.int64)).to(self.device)
        hop[at] = legal_logits(logits, legal).argmax(axis=1).cpu().numpy()

    # --- checkpointing -------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        data = {**super().state_dict(), "nodes": self.nodes, "leaves": self.leaves}
        if self.teacher is not None:
            data["teacher"] = self.teacher.state_dict()
        if self.opponents:
            data["opponents"] = [seat.state_dict() for seat in self.opponents]
        return data

    def load_state_dict(self, data: dict[str, Any]) -> None:
        super().load_state_dict(data)
        if self.teacher is not None:
            self.teacher.load_state_dict(data.get("teacher", {}))
        for seat, seat_data in zip(self.opponents, data.get("opponents", []), strict=False):
            seat.load_state_dict(seat_data)
        self.nodes = int(data["nodes"])
        self.leaves = int(data.get("leaves", 0))

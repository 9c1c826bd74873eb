"""Self-play that learns from search: TD-leaf(lambda) values and a policy distilled from
the search's choices.

Every move of every game is chosen by the same batched minimax search the
``ckpt:PATH,depth=D`` player plays with (:mod:`agents.minimax`): ``search_depth`` full
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
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents import minimax
from damii_env.engine import State
from damii_env.episode import outcome_rewards
from damii_env.observation import observe

from .config import TrainConfig
from .replay import ReplayTrainer

LEAF_BATCH = 4096
"""Leaves valued per network call."""


def lambda_returns(search_values: np.ndarray, result: float, lam: float) -> np.ndarray:
    """TD-leaf targets of one player's decisions in one game (see the module doc)."""
    targets = np.empty(len(search_values), dtype=np.float32)
    following = float(result)
    for i in range(len(search_values) - 1, -1, -1):
        following = (1.0 - lam) * float(search_values[i]) + lam * following
        targets[i] = following
    return targets


def softmax(values: np.ndarray, temperature: float) -> np.ndarray:
    """The softmax of `values` at `temperature` along the last axis (of each row of a
    matrix on its own)."""
    z = (values - values.max(axis=-1, keepdims=True)) / max(temperature, 1e-6)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


class TDLeafTrainer(ReplayTrainer):
    """Search-driven self-play with a replay buffer of search targets."""

    PENDING_VALUE = True  # decisions of games still running carry their search value

    def __init__(self, config: TrainConfig) -> None:
        super().__init__(config)
        self.nodes = 0
        self.leaves = 0
        """Positions generated, and valued by the network, by the searches so far."""

    # --- the search ----------------------------------------------------------------------
    @torch.no_grad()
    def leaf_values(self, states: State, rows: np.ndarray) -> np.ndarray:
        """Values of the games at `rows` for their movers: results where games are over,
        else the value head (see :data:`agents.minimax.LeafValues`)."""
        values = outcome_rewards(states.outcome[rows], states.turn[rows]).astype(np.float64)
        live = np.flatnonzero(~states.done[rows])
        for start in range(0, len(live), LEAF_BATCH):
            batch = live[start:start + LEAF_BATCH]
            obs = observe(self.engine, states, rows=rows[batch])
            values[batch] = self.net.value(torch.from_numpy(obs).to(self.device)).cpu().numpy()
        return values

    def _finish_games(self, state: State, rows: np.ndarray) -> None:
        """Turn the decisions of the finished games in `rows` into replay samples."""
        done = set(int(b) for b in rows)
        keep, chains = [], {}
        for item in self.pending:
            if item[0] in done:
                chains.setdefault((item[0], item[4]), []).append(item)
            else:
                keep.append(item)
        self.pending = keep
        if not chains:
            return
        lam = self.config.td_lambda
        targets = [lambda_returns(np.array([it[5] for it in items]),
                                  float(outcome_rewards(state.outcome[b], colour)), lam)
                   for (b, colour), items in chains.items()]
        samples = [it for items in chains.values() for it in items]
        policy = np.zeros((len(samples), self.L), np.float16)
        for row, it in zip(policy, samples, strict=True):
            row[: len(it[3])] = it[3]
        self._add_samples(np.stack([it[1] for it in samples]),
                          np.stack([it[2] for it in samples]), policy, np.concatenate(targets))

    def play(self) -> dict[str, float]:
        """`rollout_steps` searched hops in every game."""
        cfg, eng, state = self.config, self.engine, self.state
        self.net.eval()
        finished = new = 0
        cols = np.arange(self.L)[None, :]
        for _ in range(cfg.rollout_steps):
            result = minimax.search(eng, state, cfg.search_depth, self.leaf_values,
                                    max_nodes=cfg.search_nodes * state.batch_size)
            self.nodes += result.nodes
            self.leaves += result.leaves
            k = state.n_legal.astype(np.int64)
            obs = observe(eng, state)
            legal_rows = np.where(cols < k[:, None], state.legal, -1).astype(np.int16)
            games = np.flatnonzero(~state.done & (k > 0))
            hop, policies, best = self._decide(result, games, k[games], state.ply[games])
            choice = np.zeros(state.batch_size, dtype=np.int64)
            choice[games] = state.legal[games, hop]
            kept = np.flatnonzero(k[games] > 1)  # one legal hop teaches nothing
            rows = games[kept]
            self.pending.extend(zip(rows.tolist(), obs[rows], legal_rows[rows],
                                    [policies[i] for i in kept], state.turn[rows].tolist(),
                                    best[kept].tolist(), strict=True))
            new += len(kept)
            eng.step(state, choice)
            done = np.flatnonzero(state.done)
            if done.size:
                self._finish_games(state, done)
                finished += done.size
                eng.reset_where(state, rng=self.rng)
        return {"rollout_samples": new, "episodes": finished}

    def _decide(self, result: minimax.SearchResult, games: np.ndarray, n_hops: np.ndarray,
                ply: np.ndarray) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
        """The searched games' decisions: the index of the hop each plays (sampled from
        the softmax of its hop values in the first `explore_plies` plies, else the best),
        its policy target (float32, over its legal hops) and its best search value.

        The softmaxes of all games with the same number of hops are taken together, as
        the rows of one matrix; the exploring games draw from ``self.rng`` in order."""
        cfg = self.config
        starts = np.searchsorted(result.root, games)
        hop = np.empty(len(games), dtype=np.int64)
        best = np.empty(len(games))
        policies: list[np.ndarray] = [np.empty(0, np.float32)] * len(games)
        explore_p: dict[int, np.ndarray] = {}
        exploring = ply < cfg.explore_plies
        for n in np.unique(n_hops):
            at = np.flatnonzero(n_hops == n)
            values = result.values[starts[at, None] + np.arange(n)]
            explore = softmax(values, cfg.temperature)
            policy = softmax(values, cfg.policy_temperature) if cfg.policy_temperature \
                else explore
            hop[at] = values.argmax(axis=1)
            best[at] = values.max(axis=1)
            for i, p in zip(at.tolist(), policy.astype(np.float32), strict=True):
                policies[i] = p
            for j in np.flatnonzero(exploring[at]).tolist():
                explore_p[int(at[j])] = explore[j]
        for i in np.flatnonzero(exploring).tolist():
            hop[i] = int(self.rng.choice(n_hops[i], p=explore_p[i]))
        return hop, policies, best

    # --- checkpointing -------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "nodes": self.nodes, "leaves": self.leaves}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        super().load_state_dict(data)
        self.nodes = int(data["nodes"])
        self.leaves = int(data.get("leaves", 0))

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
from damii_env.episode import mover_rewards, outcome_rewards
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
    z = (values - values.max()) / max(temperature, 1e-6)
    e = np.exp(z)
    return e / e.sum()


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
    def leaf_values(self, states: State) -> np.ndarray:
        """Values for the movers: results where games are over, else the value head."""
        values = mover_rewards(states).astype(np.float64)
        live = np.flatnonzero(~states.done)
        for start in range(0, len(live), LEAF_BATCH):
            rows = live[start:start + LEAF_BATCH]
            whole = len(rows) == states.batch_size  # observe in place, no copy of the games
            obs = observe(self.engine, states if whole else states.take(rows))
            values[rows] = self.net.value(torch.from_numpy(obs).to(self.device)).cpu().numpy()
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
        lam = self.config.td_lambda
        for (b, colour), items in chains.items():
            z = float(outcome_rewards(state.outcome[b], colour))
            targets = lambda_returns(np.array([it[5] for it in items]), z, lam)
            for it, target in zip(items, targets, strict=True):
                policy = np.zeros(self.L, np.float16)
                policy[: len(it[3])] = it[3]
                self._add_to_replay(it[1], it[2], policy, float(target))

    def play(self) -> dict[str, float]:
        """`rollout_steps` searched hops in every game."""
        cfg, eng, state = self.config, self.engine, self.state
        self.net.eval()
        finished = new = 0
        B = state.batch_size
        cols = np.arange(self.L)[None, :]
        for _ in range(cfg.rollout_steps):
            result = minimax.search(eng, state, cfg.search_depth, self.leaf_values,
                                    max_nodes=cfg.search_nodes * B)
            self.nodes += result.nodes
            self.leaves += result.leaves
            k = state.n_legal.astype(np.int64)
            obs = observe(eng, state)
            legal_rows = np.where(cols < k[:, None], state.legal, -1).astype(np.int16)
            choice = np.zeros(B, dtype=np.int64)
            starts = np.searchsorted(result.root, np.arange(B))
            for b in np.flatnonzero(~state.done & (k > 0)):
                values = result.values[starts[b]:starts[b] + k[b]]
                explore = softmax(values, cfg.temperature)
                policy = (softmax(values, cfg.policy_temperature) if cfg.policy_temperature
                          else explore)
                if state.ply[b] < cfg.explore_plies:
                    i = int(self.rng.choice(k[b], p=explore))
                else:
                    i = int(np.argmax(values))
                choice[b] = state.legal[b, i]
                if k[b] > 1:
                    self.pending.append((int(b), obs[b], legal_rows[b], policy.astype(np.float32),
                                         int(state.turn[b]), float(values.max())))
                    new += 1
            eng.step(state, choice)
            done = np.flatnonzero(state.done)
            if done.size:
                self._finish_games(state, done)
                finished += done.size
                eng.reset_where(state, rng=self.rng)
        return {"rollout_samples": new, "episodes": finished}

    # --- checkpointing -------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "nodes": self.nodes, "leaves": self.leaves}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        super().load_state_dict(data)
        self.nodes = int(data["nodes"])
        self.leaves = int(data.get("leaves", 0))

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
- **policy**: the softmax of the searched hop values at temperature ``temperature``,
  so that the network alone plays what the search would.

The first ``explore_plies`` plies of each game sample their hop from that softmax (the
openings vary), later ones take the best hop. Positions with one legal hop teach
nothing and are not kept.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents import minimax
from agents.network import masked_logits
from damii_env.engine import State
from damii_env.episode import mover_rewards, outcome_rewards
from damii_env.observation import observation_shape, observe

from .config import TrainConfig
from .selfplay import SelfPlayTrainer

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


class TDLeafTrainer(SelfPlayTrainer):
    """Search-driven self-play with a replay buffer of search targets."""

    def __init__(self, config: TrainConfig) -> None:
        super().__init__(config, weight_decay=1e-4)
        c, n, _ = observation_shape(self.engine.rules)
        self.L = self.engine.empty_state(1).legal.shape[1]
        R = config.replay_size
        self.replay = {
            "obs": np.zeros((R, c, n, n), np.float16),
            "legal": np.full((R, self.L), -1, np.int16),
            "policy": np.zeros((R, self.L), np.float16),
            "z": np.zeros(R, np.float32),
        }
        self.replay_len = 0
        self.replay_pos = 0
        # decisions of games still running: (row, obs, legal, policy, colour, search value)
        self.pending: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, int, float]] = []
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
            obs = torch.from_numpy(observe(self.engine, states.take(rows))).to(self.device)
            values[rows] = self.net.value(obs).cpu().numpy()
        return values

    def _add_to_replay(self, obs: np.ndarray, legal: np.ndarray, policy: np.ndarray,
                       z: float) -> None:
        i = self.replay_pos
        self.replay["obs"][i] = obs
        self.replay["legal"][i] = legal
        self.replay["policy"][i] = policy
        self.replay["z"][i] = z
        self.replay_pos = (i + 1) % self.config.replay_size
        self.replay_len = min(self.replay_len + 1, self.config.replay_size)

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
                policy = softmax(values, cfg.temperature)
                if state.ply[b] < cfg.explore_plies:
                    i = int(self.rng.choice(k[b], p=policy))
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

    # --- learning ------------------------------------------------------------------------
    def learn(self, steps: int) -> dict[str, float]:
        """Gradient steps on minibatches of the replay buffer: value MSE to the TD-leaf
        targets, cross-entropy to the search's policy."""
        cfg = self.config
        if self.replay_len == 0:
            return {"policy_loss": float("nan"), "value_loss": float("nan")}
        self.net.train()
        ploss_sum = vloss_sum = 0.0
        for _ in range(steps):
            idx = torch.randint(0, self.replay_len, (min(cfg.minibatch_size, self.replay_len),),
                                generator=self.torch_rng).numpy()
            obs = torch.from_numpy(self.replay["obs"][idx].astype(np.float32)).to(self.device)
            legal = torch.from_numpy(self.replay["legal"][idx].astype(np.int64)).to(self.device)
            target = torch.from_numpy(self.replay["policy"][idx].astype(np.float32)).to(self.device)
            z = torch.from_numpy(self.replay["z"][idx]).to(self.device)
            logits, value = self.net(obs)
            mask = torch.zeros_like(logits)
            mask.scatter_(1, legal.clamp_min(0), (legal >= 0).float())
            logp = torch.log_softmax(masked_logits(logits, mask), -1)
            logp_legal = logp.gather(1, legal.clamp_min(0))
            ploss = -(target * torch.where(legal >= 0, logp_legal, 0.0)).sum(1).mean()
            vloss = ((value - z) ** 2).mean()
            loss = ploss + cfg.value_coef * vloss
            self.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), cfg.max_grad_norm)
            self.optimizer.step()
            ploss_sum += float(ploss.detach())
            vloss_sum += float(vloss.detach())
        return {"policy_loss": ploss_sum / steps, "value_loss": vloss_sum / steps}

    def iterate(self) -> dict[str, float]:
        stats = self.play()
        steps = max(1, self.config.epochs * -(-stats["rollout_samples"] //
                                              self.config.minibatch_size))
        stats.update(self.learn(steps))
        stats["replay"] = self.replay_len
        self.iteration += 1
        self.samples += stats["rollout_samples"]
        return stats

    # --- checkpointing -------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        pend = self.pending
        return {
            **super().state_dict(),
            "replay": {k: torch.from_numpy(v[: self.replay_len].copy())
                       for k, v in self.replay.items()},
            "replay_pos": self.replay_pos,
            "nodes": self.nodes,
            "leaves": self.leaves,
            "pending_row": torch.tensor([p[0] for p in pend], dtype=torch.int64),
            "pending_obs": torch.from_numpy(np.array([p[1] for p in pend], np.float32)),
            "pending_legal": torch.from_numpy(np.array([p[2] for p in pend], np.int16)),
            "pending_policy": [torch.from_numpy(p[3].astype(np.float64)) for p in pend],
            "pending_colour": torch.tensor([p[4] for p in pend], dtype=torch.int64),
            "pending_value": torch.tensor([p[5] for p in pend], dtype=torch.float64),
        }

    def load_state_dict(self, data: dict[str, Any]) -> None:
        super().load_state_dict(data)
        n = len(data["replay"]["z"])
        for k, v in data["replay"].items():
            self.replay[k][:n] = v.numpy()
        self.replay_len = n
        self.replay_pos = int(data["replay_pos"])
        self.nodes = int(data["nodes"])
        self.leaves = int(data.get("leaves", 0))
        self.pending = [
            (int(r), o.numpy(), lg.numpy(), p.numpy().astype(np.float32), int(c), float(v))
            for r, o, lg, p, c, v in zip(data["pending_row"], data["pending_obs"],
                                         data["pending_legal"], data["pending_policy"],
                                         data["pending_colour"], data["pending_value"],
                                         strict=True)
        ]

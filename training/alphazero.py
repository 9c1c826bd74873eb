"""AlphaZero-style self-play with the batched PUCT search of :mod:`agents.puct` (the
same search the ``ckpt:PATH,sims=N`` player uses).

The search's visit counts are the policy targets, the game outcomes (from the mover's
view) the value targets; both go to a replay buffer from which the network learns.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents.network import masked_logits
from agents.puct import BatchedSearch
from damii_env.episode import outcome_rewards
from damii_env.observation import observation_shape, observe

from .config import TrainConfig
from .selfplay import SelfPlayTrainer

SAMPLE_PLIES = 20  # moves played by visit-count sampling at the start of a game; argmax after


class AlphaZeroTrainer(SelfPlayTrainer):
    """Self-play with batched search, a replay buffer and policy/value learning."""

    def __init__(self, config: TrainConfig) -> None:
        super().__init__(config, weight_decay=1e-4)
        self.search = BatchedSearch(self.engine, self.net, config.simulations, self.device,
                                    self.rng)
        c, n, _ = observation_shape(self.engine.rules)
        L, R = self.search.L, config.replay_size
        self.L = L
        # replay buffer: observation, legal actions and search policy over them, outcome
        self.replay = {
            "obs": np.zeros((R, c, n, n), np.float16),
            "legal": np.full((R, L), -1, np.int16),
            "policy": np.zeros((R, L), np.float16),
            "z": np.zeros(R, np.float32),
        }
        self.replay_len = 0
        self.replay_pos = 0
        # samples of games still running: (game row, observation, legal, policy, colour)
        self.pending: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, int]] = []

    def _add_to_replay(self, obs: np.ndarray, legal: np.ndarray, policy: np.ndarray,
                       z: float) -> None:
        i = self.replay_pos
        self.replay["obs"][i] = obs
        self.replay["legal"][i] = legal
        self.replay["policy"][i] = policy
        self.replay["z"][i] = z
        self.replay_pos = (i + 1) % self.config.replay_size
        self.replay_len = min(self.replay_len + 1, self.config.replay_size)

    def play(self) -> dict[str, float]:
        """`rollout_steps` searched hops in every game."""
        eng, state = self.engine, self.state
        self.net.eval()
        finished, new = 0, 0
        for _ in range(self.config.rollout_steps):
            visits, _ = self.search.run(state)
            total = visits.sum(1, keepdims=True)
            policy = np.where(total > 0, visits / np.maximum(total, 1), 0)
            obs = observe(eng, state)
            k = state.n_legal.astype(np.int64)
            # early plies sample the visit counts, later ones take the most visited hop
            u = self.rng.random(state.batch_size)[:, None]
            sampled = (np.cumsum(policy, 1) < u * policy.sum(1, keepdims=True)).sum(1)
            index = np.where(state.ply < SAMPLE_PLIES, np.minimum(sampled, k - 1),
                             policy.argmax(1))
            playing = ~state.done & (k > 0)
            choice = np.where(playing, state.legal[np.arange(state.batch_size),
                                                   np.maximum(index, 0)], 0).astype(np.int64)
            cols = np.arange(self.L)[None, :]
            legal_rows = np.where(cols < k[:, None], state.legal, -1).astype(np.int16)
            for b in np.flatnonzero(playing & (k > 1)):  # forced hops teach nothing
                self.pending.append((int(b), obs[b], legal_rows[b], policy[b, :k[b]].copy(),
                                     int(state.turn[b])))
                new += 1
            eng.step(state, choice)
            done = np.flatnonzero(state.done)
            if done.size:
                keep = []
                for item in self.pending:
                    b = item[0]
                    if b in done:
                        z = outcome_rewards(state.outcome[b], item[4])
                        legal = item[2]
                        pol = np.zeros(self.L, np.float16)
                        pol[: len(item[3])] = item[3]
                        self._add_to_replay(item[1], legal, pol, float(z))
                    else:
                        keep.append(item)
                self.pending = keep
                finished += done.size
                eng.reset_where(state, rng=self.rng)
        return {"rollout_samples": new, "episodes": finished}

    def learn(self, steps: int) -> dict[str, float]:
        """Gradient steps on minibatches drawn from the replay buffer."""
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

    # --- checkpointing -----------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        pend = self.pending
        return {
            **super().state_dict(),
            "replay": {k: torch.from_numpy(v[: self.replay_len].copy())
                       for k, v in self.replay.items()},
            "replay_pos": self.replay_pos,
            "pending_row": torch.tensor([p[0] for p in pend], dtype=torch.int64),
            "pending_obs": torch.from_numpy(np.array([p[1] for p in pend], np.float32)),
            "pending_legal": torch.from_numpy(np.array([p[2] for p in pend], np.int16)),
            "pending_policy": [torch.from_numpy(p[3].astype(np.float64)) for p in pend],
            "pending_colour": torch.tensor([p[4] for p in pend], dtype=torch.int64),
        }

    def load_state_dict(self, data: dict[str, Any]) -> None:
        super().load_state_dict(data)
        n = len(data["replay"]["z"])
        for k, v in data["replay"].items():
            self.replay[k][:n] = v.numpy()
        self.replay_len = n
        self.replay_pos = int(data["replay_pos"])
        self.pending = [
            (int(r), o.numpy(), lg.numpy(), p.numpy(), int(c))
            for r, o, lg, p, c in zip(data["pending_row"], data["pending_obs"],
                                      data["pending_legal"], data["pending_policy"],
                                      data["pending_colour"], strict=True)
        ]

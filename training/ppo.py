"""Self-play PPO with action masking, on the vectorized engine.

One network plays both seats from the mover's point of view. Each rollout steps
``num_envs`` games ``rollout_steps`` hops; in a share of games (``pool_prob``) one seat is
played by an earlier snapshot of the network, in another (``alphabeta_prob``) by the
alpha-beta agent, and only the learner's hops are trained on by PPO (with
``alphabeta_imitation`` > 0 the alpha-beta seat's hops also teach the policy by
cross-entropy). Targets are game outcomes
from the mover's view (+1 win, -1 loss, 0 draw or turn limit), and for games still
running at the end of the rollout the learner's value of the current position (from the
right side), shaped by a potential (Sci-Damath's point lead, ``score_shaping``; material,
``material_shaping``) and mixed with the learner's values by GAE (``gae_lambda``). The
advantage is target minus value; PPO's clipped objective, a value loss and an entropy
bonus make the update.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from damii_agents.network import PolicyValueNet, masked_logits
from damii_agents.registry import PlayerSpec
from damii_agents.seats import HopSeat
from damii_env.episode import for_colour, outcome_rewards, shaping_potential
from damii_env.observation import observe
from damii_training.config import TrainConfig
from damii_training.selfplay import (
    SelfPlayTrainer,
    TrainingDiverged,
    check_snapshot,
    guarded_step,
)

LEARNER = -1  # learner_colour value: the learner plays both seats
ALPHABETA = -1  # pool_index value: the opponent is the alpha-beta agent


@dataclass
class Rollout:
    """Learner samples of one rollout, as tensors."""

    obs: torch.Tensor
    mask: torch.Tensor
    actions: torch.Tensor
    logp: torch.Tensor
    values: torch.Tensor
    targets: torch.Tensor
    episodes_finished: int
    mean_episode_plies: float
    teacher_obs: torch.Tensor | None = None
    """The alpha-beta seat's positions, masks and hops (imitation targets), if kept."""
    teacher_mask: torch.Tensor | None = None
    teacher_actions: torch.Tensor | None = None

    @property
    def size(self) -> int:
        return int(self.actions.shape[0])


class PPOTrainer(SelfPlayTrainer):
    """Collects self-play rollouts and updates the network; state is checkpointable."""

    def __init__(self, config: TrainConfig) -> None:
        super().__init__(config)
        self.pool: list[dict[str, torch.Tensor]] = []
        self._pool_nets: list[PolicyValueNet] = []
        B = config.num_envs
        self.learner_colour = np.full(B, LEARNER, dtype=np.int64)
        self.pool_index = np.zeros(B, dtype=np.int64)
        self.episode_plies: list[int] = []
        self.opponent = HopSeat(PlayerSpec.parse(config.seat_opponent()).build(config.variant,
                                           **config.rule_options), self.engine)

    def _potential(self) -> np.ndarray:
        """(B,) White's shaping potential of the games now."""
        cfg = self.config
        return shaping_potential(self.engine, self.state, cfg.material_shaping,
                                 cfg.score_shaping)

    # --- acting ------------------------------------------------------------------------
    def _assign_seats(self, rows: np.ndarray) -> None:
        """New games: most are pure self-play, a share meets a pool snapshot."""
        if not len(rows):
            return
        cfg = self.config
        self.learner_colour[rows] = LEARNER
        if cfg.alphabeta_prob > 0:
            u = self.rng.random(len(rows))
            chosen = rows[u < cfg.alphabeta_prob]
            self.learner_colour[chosen] = self.rng.integers(0, 2, len(chosen))
            self.pool_index[chosen] = ALPHABETA
            rows = rows[u >= cfg.alphabeta_prob]
            pool_prob = cfg.pool_prob / (1 - cfg.alphabeta_prob) if cfg.alphabeta_prob < 1 else 0
        else:
            pool_prob = cfg.pool_prob
        if self.pool and pool_prob > 0:
            vs_pool = self.rng.random(len(rows)) < pool_prob
            chosen = rows[vs_pool]
            self.learner_colour[chosen] = self.rng.integers(0, 2, len(chosen))
            self.pool_index[chosen] = self.rng.integers(0, len(self.pool), len(chosen))

    def _pool_net(self, i: int) -> PolicyValueNet:
        while len(self._pool_nets) <= i:
            self._pool_nets.append(PolicyValueNet(self.shape).to(self.device).eval())
        net = self._pool_nets[i]
        net.load_state_dict(self.pool[i])
        return net

    @torch.no_grad()
    def _policy(self, net: PolicyValueNet, obs: np.ndarray, mask: np.ndarray
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits, value = net(torch.from_numpy(obs).to(self.device))
        logits = masked_logits(logits, torch.from_numpy(mask).to(self.device))
        probs = torch.softmax(logits, dim=-1).cpu()
        if not bool(torch.isfinite(probs).all()):
            which = "the learner's" if net is self.net else "an opponent-pool snapshot's"
            raise TrainingDiverged(f"{which} network gives NaN or infinite values in "
                                   f"iteration {self.iteration + 1}; training stopped")
        actions = torch.multinomial(probs, 1, generator=self.torch_rng).squeeze(1)
        logp = torch.log(probs.gather(1, actions[:, None]).squeeze(1).clamp_min(1e-12))
        return actions, logp, value.cpu()

    def collect(self) -> Rollout:
        """Play `rollout_steps` hops in every game; return the learner's samples."""
        cfg, eng, state = self.config, self.engine, self.state
        B = cfg.num_envs
        self.net.eval()
        buf: dict[str, list] = {k: [] for k in ("obs", "mask", "act", "logp", "val", "row",
                                                "colour", "episode", "phi", "t_obs",
                                                "t_mask", "t_act")}
        episode_id = getattr(self, "_episode_id", np.zeros(B, dtype=np.int64))
        results: dict[tuple[int, int], np.ndarray] = {}
        n_finished = 0
        plies = []
        for _ in range(cfg.rollout_steps):
            potential = self._potential()
            obs = observe(eng, state)
            mask = eng.legal_action_mask(state)
            mover = state.turn.astype(np.int64)
            learner = (self.learner_colour == LEARNER) | (self.learner_colour == mover)
            actions = np.zeros(B, dtype=np.int64)
            rows = np.flatnonzero(learner)
            a, logp, val = self._policy(self.net, obs[rows], mask[rows])
            actions[rows] = a.numpy()
            for i in np.unique(self.pool_index[~learner]):
                prow = np.flatnonzero(~learner & (self.pool_index == i))
                if i == ALPHABETA:  # the opponent seat, seeded from our generator
                    actions[prow] = self.opponent.hops(state, prow, self.rng)
                    if cfg.alphabeta_imitation > 0:
                        buf["t_obs"].append(obs[prow])
                        buf["t_mask"].append(mask[prow])
                        buf["t_act"].append(actions[prow])
                    continue
                pa, _, _ = self._policy(self._pool_net(int(i)), obs[prow], mask[prow])
                actions[prow] = pa.numpy()
            buf["obs"].append(obs[rows])
            buf["mask"].append(mask[rows])
            buf["act"].append(a)
            buf["logp"].append(logp)
            buf["val"].append(val)
            buf["row"].append(rows)
            buf["colour"].append(mover[rows])
            buf["episode"].append(episode_id[rows].copy())
            buf["phi"].append(potential[rows])
            eng.step(state, actions)
            done = np.flatnonzero(state.done)
            final = self._potential() if len(done) else None
            for b in done:
                results[(int(b), int(episode_id[b]))] = (state.outcome[b].copy(), final[b])
                plies.append(int(state.ply[b]))
            n_finished += len(done)
            if len(done):
                eng.reset_where(state, rng=self.rng)
                episode_id[done] += 1
                self._assign_seats(done)
        self._episode_id = episode_id
        potential = self._potential()
        # bootstrap values of the games still running, for the player to move now
        with torch.no_grad():
            _, v_now = self.net(torch.from_numpy(observe(eng, state)).to(self.device))
        v_now = v_now.cpu().numpy()
        rows = np.concatenate(buf["row"])
        colour = np.concatenate(buf["colour"])
        episode = np.concatenate(buf["episode"])
        values = torch.cat(buf["val"]).numpy().astype(np.float64)
        phi = for_colour(np.concatenate(buf["phi"]), colour)  # mover's view
        # where each sample's game stands now: finished (its result, its final potential)
        # or running (the value for this sample's colour, the potential now)
        finished = episode != episode_id[rows]
        end_value = np.where(colour == state.turn[rows], v_now[rows], -v_now[rows])
        end_phi = for_colour(potential[rows], colour)
        for i in np.flatnonzero(finished):
            outcome, phi_end = results[(int(rows[i]), int(episode[i]))]
            end_value[i] = outcome_rewards(outcome, colour[i])
            end_phi[i] = for_colour(phi_end, colour[i])
        targets = self._gae_targets(rows, colour, episode, values, phi, end_value, end_phi)
        self.episode_plies.extend(plies)
        teacher = {}
        if buf["t_act"]:
            teacher = dict(teacher_obs=torch.from_numpy(np.concatenate(buf["t_obs"])),
                           teacher_mask=torch.from_numpy(np.concatenate(buf["t_mask"])),
                           teacher_actions=torch.from_numpy(np.concatenate(buf["t_act"])))
        return Rollout(
            obs=torch.from_numpy(np.concatenate(buf["obs"])),
            mask=torch.from_numpy(np.concatenate(buf["mask"])),
            actions=torch.cat(buf["act"]),
            logp=torch.cat(buf["logp"]),
            values=torch.cat(buf["val"]),
            targets=torch.from_numpy(targets),
            episodes_finished=n_finished,
            mean_episode_plies=float(np.mean(plies)) if plies else float("nan"),
            **teacher,
        )

    def _gae_targets(self, rows: np.ndarray, colour: np.ndarray, episode: np.ndarray,
                     values: np.ndarray, phi: np.ndarray, end_value: np.ndarray,
                     end_phi: np.ndarray) -> np.ndarray:
        """Value targets by GAE(lambda) (no discount) along each player's own samples of a
        game: the step from one of a player's hops to the player's next is rewarded with
        the change of its potential; the last step reaches the result of the game (or the
        value of where it stands). lambda = 1 gives the Monte-Carlo targets (result plus
        the potential gained to the end); lower lambda lends more on the learner's values."""
        lam = self.config.gae_lambda
        targets = np.empty(len(rows), dtype=np.float32)
        # samples were appended in time order: a stable sort groups each player's chain
        order = np.lexsort((np.arange(len(rows)), colour, episode, rows))
        key = np.stack([rows, episode, colour], axis=1)[order]
        advantage = 0.0
        for j in range(len(order) - 1, -1, -1):
            i = order[j]
            last = j == len(order) - 1 or (key[j + 1] != key[j]).any()
            if last:
                next_value, next_phi, advantage = end_value[i], end_phi[i], 0.0
            else:
                nxt = order[j + 1]
                next_value, next_phi = values[nxt], phi[nxt]
            delta = next_phi - phi[i] + next_value - values[i]
            advantage = delta + lam * advantage
            targets[i] = advantage + values[i]
        return targets

    # --- learning ----------------------------------------------------------------------
    def update(self, ro: Rollout) -> dict[str, float]:
        cfg = self.config
        self.net.train()
        adv = ro.targets - ro.values
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        n = ro.size
        stats = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0,
                 "clip_frac": 0.0}
        n_teacher = 0 if ro.teacher_actions is None else int(ro.teacher_actions.shape[0])
        if cfg.alphabeta_imitation > 0:
            stats["imitation_loss"] = 0.0
        n_batches = -(-n // cfg.minibatch_size)
        steps = 0
        for _ in range(cfg.epochs):
            perm = torch.randperm(n, generator=self.torch_rng)
            # the teacher's samples are spread over the same number of minibatches
            tperm = torch.randperm(n_teacher, generator=self.torch_rng) if n_teacher else None
            for j, start in enumerate(range(0, n, cfg.minibatch_size)):
                idx = perm[start:start + cfg.minibatch_size]
                obs = ro.obs[idx].to(self.device)
                mask = ro.mask[idx].to(self.device)
                logits, value = self.net(obs)
                logp_all = torch.log_softmax(masked_logits(logits, mask), dim=-1)
                logp = logp_all.gather(1, ro.actions[idx, None].to(self.device)).squeeze(1)
                ratio = torch.exp(logp - ro.logp[idx].to(self.device))
                a = adv[idx].to(self.device)
                pg = -torch.min(ratio * a, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * a).mean()
                vloss = 0.5 * ((value - ro.targets[idx].to(self.device)) ** 2).mean()
                probs = logp_all.exp()
                entropy = -(probs * torch.where(mask > 0, logp_all, 0.0)).sum(-1).mean()
                loss = pg + cfg.value_coef * vloss - cfg.entropy_coef * entropy
                if n_teacher:
                    tidx = tperm[j * n_teacher // n_batches:(j + 1) * n_teacher // n_batches]
                    imitation = self._imitation_loss(ro, tidx)
                    loss = loss + cfg.alphabeta_imitation * imitation
                    stats["imitation_loss"] += float(imitation.detach())
                guarded_step(self, loss, {"policy loss": pg, "value loss": vloss,
                                          "entropy": entropy})
                with torch.no_grad():
                    kl = (ro.logp[idx].to(self.device) - logp).mean()
                    clipped = ((ratio - 1).abs() > cfg.clip).float().mean()
                stats["policy_loss"] += float(pg.detach())
                stats["value_loss"] += float(vloss.detach())
                stats["entropy"] += float(entropy.detach())
                stats["approx_kl"] += float(kl)
                stats["clip_frac"] += float(clipped)
                steps += 1
        return {k: v / max(steps, 1) for k, v in stats.items()}

    def _imitation_loss(self, ro: Rollout, idx: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy of the policy against the alpha-beta seat's hops `idx`."""
        if not len(idx):
            return torch.zeros((), device=self.device)
        logits, _ = self.net(ro.teacher_obs[idx].to(self.device))
        logp_all = torch.log_softmax(masked_logits(logits, ro.teacher_mask[idx].to(self.device)),
                                     dim=-1)
        target = ro.teacher_actions[idx, None].to(self.device)
        return -logp_all.gather(1, target).mean()

    def iterate(self) -> dict[str, float]:
        """One rollout and one update; returns the iteration's statistics."""
        ro = self.collect()
        stats = self.update(ro)
        self.iteration += 1
        self.samples += ro.size
        if self.config.pool_size > 0 and self.iteration % self.config.snapshot_every == 0:
            weights = {k: v.detach().clone().cpu() for k, v in self.net.state_dict().items()}
            self.pool.append(weights)
            self.pool = self.pool[-self.config.pool_size:]
        stats.update(rollout_samples=ro.size, episodes=ro.episodes_finished,
                     episode_plies=ro.mean_episode_plies)
        return stats

    # --- checkpointing -----------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly where this trainer is (plain data)."""
        return {
            **super().state_dict(),
            "pool": self.pool,
            "learner_colour": torch.from_numpy(self.learner_colour),
            "pool_index": torch.from_numpy(self.pool_index),
            "episode_id": torch.from_numpy(getattr(self, "_episode_id",
                                                   np.zeros(self.config.num_envs, np.int64))),
            "seat": self.opponent.state_dict(),
        }

    def load_state_dict(self, data: dict[str, Any]) -> None:
        super().load_state_dict(data)
        for i, snapshot in enumerate(data["pool"]):
            check_snapshot(snapshot, self.net, f"opponent-pool snapshot {i}")
        self.pool = list(data["pool"])
        self.learner_colour = data["learner_colour"].numpy().copy()
        self.pool_index = data["pool_index"].numpy().copy()
        episode_id = data["episode_id"].numpy().copy()
        if episode_id.shape != (self.config.num_envs,) or (episode_id < 0).any():
            raise ValueError(f"episode_id must hold a non-negative count for each of the "
                             f"{self.config.num_envs} games")
        self._episode_id = episode_id
        self.opponent.load_state_dict(data.get("seat", {}))

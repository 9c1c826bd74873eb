"""AlphaZero-style self-play: batched PUCT search over the vectorized engine.

Every game of the batch searches its position at once: the search trees of all games
are arrays with a leading game axis, the positions of their nodes are rows of one
engine state, and each simulation expands one node per game with one batched engine
step and one batched network evaluation. Nodes are hop positions: a child reached by a
capture that goes on has the same player to move, so its value is not negated.

The search's visit counts are the policy targets, the game outcomes (from the mover's
view) the value targets; both go to a replay buffer from which the network learns.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from damii_env.engine import Engine, State
from damii_env.observation import observation_shape, observe

from .config import TrainConfig
from .network import PolicyValueNet, masked_logits
from .ppo import outcome_for
from .selfplay import SelfPlayTrainer

C_PUCT = 1.5
DIRICHLET_ALPHA = 0.3
DIRICHLET_WEIGHT = 0.25
SAMPLE_PLIES = 20  # moves played by visit-count sampling at the start of a game; argmax after


class BatchedSearch:
    """PUCT trees for B games, `simulations` expansions each, as arrays."""

    def __init__(self, engine: Engine, net: PolicyValueNet, simulations: int,
                 device: torch.device, rng: np.random.Generator) -> None:
        self.engine, self.net, self.sims, self.device, self.rng = engine, net, simulations, \
            device, rng
        self.L = engine.empty_state(1).legal.shape[1]

    @torch.no_grad()
    def _evaluate(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """Priors over each game's legal list (B, L) and values (B,) for the movers."""
        obs = torch.from_numpy(observe(self.engine, state)).to(self.device)
        logits, value = self.net(obs)
        mask = torch.from_numpy(self.engine.legal_action_mask(state)).to(self.device)
        probs = torch.softmax(masked_logits(logits, mask), -1).cpu().numpy()
        legal = state.legal.astype(np.int64)
        n = state.n_legal
        priors = np.take_along_axis(probs, np.clip(legal, 0, None), axis=1)
        priors[np.arange(self.L)[None, :] >= n[:, None]] = 0.0
        return priors.astype(np.float32), value.cpu().numpy()

    def run(self, root: State, noise: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Visit counts over each root's legal list (B, L) and the root values (B,)."""
        B, M, L = root.batch_size, self.sims + 1, self.L
        nodes = self.engine.empty_state(B * M)
        rows = np.arange(B) * M
        nodes.put(rows, root)
        prior = np.zeros((B, M, L), np.float32)
        visits = np.zeros((B, M, L), np.float32)
        value_sum = np.zeros((B, M, L), np.float32)
        child = np.full((B, M, L), -1, np.int64)
        n_legal = np.zeros((B, M), np.int64)
        turn = np.zeros((B, M), np.int64)
        terminal = np.zeros((B, M), bool)
        terminal_value = np.zeros((B, M), np.float32)
        count = np.ones(B, np.int64)
        p0, v0 = self._evaluate(root)
        if noise:  # Dirichlet noise over each root's legal hops (gamma draws, normalised)
            legal = np.arange(L)[None, :] < root.n_legal[:, None]
            g = np.where(legal, self.rng.gamma(DIRICHLET_ALPHA, size=(B, L)), 0.0)
            g /= np.maximum(g.sum(1, keepdims=True), 1e-12)
            mix = (root.n_legal > 1)[:, None]
            p0 = np.where(mix, (1 - DIRICHLET_WEIGHT) * p0 + DIRICHLET_WEIGHT * g, p0)
            p0 = p0.astype(np.float32)
        prior[:, 0] = p0
        n_legal[:, 0] = root.n_legal
        turn[:, 0] = root.turn
        games = np.arange(B)
        cols = np.arange(L)[None, :]
        for _ in range(self.sims):
            node = np.zeros(B, np.int64)
            path_node: list[np.ndarray] = []
            path_edge: list[np.ndarray] = []
            walking = ~root.done
            leaf_edge = np.full(B, -1, np.int64)
            leaf_parent = np.zeros(B, np.int64)
            for _depth in range(M + 1):
                if not walking.any():
                    break
                n = visits[games, node]
                q = np.where(n > 0, value_sum[games, node] / np.maximum(n, 1), 0.0)
                u = C_PUCT * prior[games, node] * np.sqrt(n.sum(1, keepdims=True) + 1) / (1 + n)
                score = np.where(cols < n_legal[games, node][:, None], q + u, -np.inf)
                edge = score.argmax(1)
                path_node.append(np.where(walking, node, -1))
                path_edge.append(edge)
                nxt = child[games, node, edge]
                expand = walking & (nxt < 0)
                leaf_edge[expand] = edge[expand]
                leaf_parent[expand] = node[expand]
                stop = expand | (walking & (nxt >= 0) & terminal[games, np.maximum(nxt, 0)])
                node = np.where(walking & ~stop, nxt, node)
                node = np.where(walking & stop & ~expand, nxt, node)
                walking &= ~stop
            # expand one node per game that reached an unvisited edge
            exp = np.flatnonzero(leaf_edge >= 0)
            leaf_value = np.zeros(B, np.float32)
            leaf_turn = turn[games, node].copy()
            if exp.size:
                new = count[exp]
                count[exp] += 1
                parent_rows = exp * M + leaf_parent[exp]
                sub = nodes.take(parent_rows)
                acts = nodes.legal[parent_rows, leaf_edge[exp]].astype(np.int64)
                self.engine.step(sub, acts)
                nodes.put(exp * M + new, sub)
                child[exp, leaf_parent[exp], leaf_edge[exp]] = new
                p, v = self._evaluate(sub)
                prior[exp, new] = p
                n_legal[exp, new] = sub.n_legal
                turn[exp, new] = sub.turn
                done = sub.done
                terminal[exp, new] = done
                terminal_value[exp, new] = outcome_for(sub.outcome, sub.turn.astype(np.int64))
                leaf_value[exp] = np.where(done, terminal_value[exp, new], v)
                leaf_turn[exp] = sub.turn
            reached_terminal = (leaf_edge < 0) & ~root.done
            leaf_value[reached_terminal] = terminal_value[games, node][reached_terminal]
            # back up: each edge's value is from the view of the player to move at its node
            value, vturn = leaf_value, leaf_turn
            for pn, pe in zip(reversed(path_node), reversed(path_edge), strict=True):
                ok = pn >= 0
                g = games[ok]
                nd = pn[ok]
                same = turn[g, nd] == vturn[ok]
                val = np.where(same, value[ok], -value[ok])
                visits[g, nd, pe[ok]] += 1
                value_sum[g, nd, pe[ok]] += val
                value = value.copy()
                value[ok] = val
                vturn = vturn.copy()
                vturn[ok] = turn[g, nd]
        return visits[:, 0], v0


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
                        z = outcome_for(state.outcome[b:b + 1], np.array([item[4]]))[0]
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

"""Batched PUCT search (AlphaZero style) over the vectorized engine.

Every game of the batch searches its position at once: the search trees of all games
are arrays with a leading game axis, the positions of their nodes are rows of one
engine state, and each simulation expands one node per game with one batched engine
step and one batched network evaluation. Nodes are hop positions: a child reached by a
capture that goes on has the same player to move, so its value is not negated.

The AlphaZero-style trainer learns from its visit counts, and the ``ckpt:PATH,sims=N``
player picks its moves by them: the same search at training and at play time.
"""

from __future__ import annotations

import numpy as np
import torch

from damii_env.engine import Engine, State
from damii_env.episode import mover_rewards
from damii_env.observation import observe

from .network import PolicyValueNet, masked_logits

C_PUCT = 1.5
DIRICHLET_ALPHA = 0.3
DIRICHLET_WEIGHT = 0.25


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
                terminal_value[exp, new] = mover_rewards(sub)
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

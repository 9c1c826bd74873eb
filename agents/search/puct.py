"""Batched tree search over the vectorized engine: PUCT (AlphaZero) here, Gumbel
(:mod:`damii_agents.search.gumbel`) on the same trees.

Every game of the batch searches its position at once: the search trees of all games
are arrays with a leading game axis, the positions of their nodes are rows of one
engine state, and each simulation expands one node per game with one batched engine
step and one batched evaluation (priors and values of a
:class:`~damii_agents.search.evaluator.PriorEvaluator`, the network's in play and
training). Nodes are hop positions: a child reached by a
capture that goes on has the same player to move, so its value is not negated.

The AlphaZero-style trainer learns from its visit counts, and the ``ckpt:PATH,sims=N``
player picks its moves by them: the same search at training and at play time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from damii_agents.search.evaluator import PriorEvaluator
from damii_env.engine import Engine, State
from damii_env.episode import mover_rewards

C_PUCT = 1.5
DIRICHLET_ALPHA = 0.3
DIRICHLET_WEIGHT = 0.25


@dataclass
class Trees:
    """B search trees of up to M nodes with up to L edges each; edge statistics are from
    the view of the player to move at the edge's node."""

    prior: np.ndarray  # (B, M, L) network priors over each node's legal hops
    visits: np.ndarray  # (B, M, L)
    value_sum: np.ndarray  # (B, M, L)
    child: np.ndarray  # (B, M, L) node index of each edge's child, -1 unexpanded
    n_legal: np.ndarray  # (B, M)
    turn: np.ndarray  # (B, M)
    terminal: np.ndarray  # (B, M)
    terminal_value: np.ndarray  # (B, M) result for the mover where terminal
    raw_value: np.ndarray  # (B, M) the network's value of each node for its mover

    @classmethod
    def empty(cls, B: int, M: int, L: int) -> Trees:
        """Trees with no node filled in."""
        z = np.zeros
        return cls(z((B, M, L), np.float32), z((B, M, L), np.float32), z((B, M, L), np.float32),
                   np.full((B, M, L), -1, np.int64), z((B, M), np.int64), z((B, M), np.int64),
                   z((B, M), bool), z((B, M), np.float32), z((B, M), np.float32))

    def q(self, games: np.ndarray, node: np.ndarray) -> np.ndarray:
        """Mean values (B, L) of the edges of one node per game (0 where unvisited)."""
        n = self.visits[games, node]
        return np.where(n > 0, self.value_sum[games, node] / np.maximum(n, 1), 0.0)


class TreeSearch:
    """The simulation loop shared by the searches: walk down by :meth:`select`, expand one
    node per game with one engine step and one evaluation, back the value up."""

    def __init__(self, engine: Engine, evaluator: PriorEvaluator, simulations: int,
                 rng: np.random.Generator) -> None:
        self.engine, self.evaluator, self.sims, self.rng = engine, evaluator, simulations, rng
        self.L = engine.empty_state(1).legal.shape[1]

    def select(self, trees: Trees, games: np.ndarray, node: np.ndarray, at_root: bool,
               sim: int) -> np.ndarray:
        """The edge (B,) to follow from one node per game."""
        raise NotImplementedError  # pragma: no cover - implemented by the searches

    def root_priors(self, root: State, priors: np.ndarray) -> np.ndarray:
        """The root's priors as the search uses them (PUCT mixes in noise here)."""
        return priors

    def grow(self, root: State) -> Trees:
        """Run the simulations from the B root positions; the trees they built."""
        B, M, L = root.batch_size, self.sims + 1, self.L
        nodes = self.engine.empty_state(B * M)
        nodes.put(np.arange(B) * M, root)
        t = Trees.empty(B, M, L)
        count = np.ones(B, np.int64)
        p0, v0 = self.evaluator.priors(root)
        t.prior[:, 0] = self.root_priors(root, p0)
        t.raw_value[:, 0] = v0
        t.n_legal[:, 0] = root.n_legal
        t.turn[:, 0] = root.turn
        games = np.arange(B)
        for sim in range(self.sims):
            node = np.zeros(B, np.int64)
            path_node: list[np.ndarray] = []
            path_edge: list[np.ndarray] = []
            walking = ~root.done
            leaf_edge = np.full(B, -1, np.int64)
            leaf_parent = np.zeros(B, np.int64)
            for depth in range(M + 1):
                if not walking.any():
                    break
                edge = self.select(t, games, node, depth == 0, sim)
                path_node.append(np.where(walking, node, -1))
                path_edge.append(edge)
                nxt = t.child[games, node, edge]
                expand = walking & (nxt < 0)
                leaf_edge[expand] = edge[expand]
                leaf_parent[expand] = node[expand]
                stop = expand | (walking & (nxt >= 0) & t.terminal[games, np.maximum(nxt, 0)])
                node = np.where(walking & ~stop, nxt, node)
                node = np.where(walking & stop & ~expand, nxt, node)
                walking &= ~stop
            # expand one node per game that reached an unvisited edge
            exp = np.flatnonzero(leaf_edge >= 0)
            leaf_value = np.zeros(B, np.float32)
            leaf_turn = t.turn[games, node].copy()
            if exp.size:
                new = count[exp]
                count[exp] += 1
                parent_rows = exp * M + leaf_parent[exp]
                sub = nodes.take(parent_rows)
                acts = nodes.legal[parent_rows, leaf_edge[exp]].astype(np.int64)
                self.engine.step(sub, acts)
                nodes.put(exp * M + new, sub)
                t.child[exp, leaf_parent[exp], leaf_edge[exp]] = new
                p, v = self.evaluator.priors(sub)
                t.prior[exp, new] = p
                t.raw_value[exp, new] = v
                t.n_legal[exp, new] = sub.n_legal
                t.turn[exp, new] = sub.turn
                done = sub.done
                t.terminal[exp, new] = done
                t.terminal_value[exp, new] = mover_rewards(sub)
                leaf_value[exp] = np.where(done, t.terminal_value[exp, new], v)
                leaf_turn[exp] = sub.turn
            reached_terminal = (leaf_edge < 0) & ~root.done
            leaf_value[reached_terminal] = t.terminal_value[games, node][reached_terminal]
            # back up: each edge's value is from the view of the player to move at its node
            value, vturn = leaf_value, leaf_turn
            for pn, pe in zip(reversed(path_node), reversed(path_edge), strict=True):
                ok = pn >= 0
                g = games[ok]
                nd = pn[ok]
                same = t.turn[g, nd] == vturn[ok]
                val = np.where(same, value[ok], -value[ok])
                t.visits[g, nd, pe[ok]] += 1
                t.value_sum[g, nd, pe[ok]] += val
                value = value.copy()
                value[ok] = val
                vturn = vturn.copy()
                vturn[ok] = t.turn[g, nd]
        return t


class BatchedSearch(TreeSearch):
    """PUCT trees for B games, `simulations` expansions each, as arrays."""

    noise = True

    def root_priors(self, root: State, priors: np.ndarray) -> np.ndarray:
        if not self.noise:
            return priors
        # Dirichlet noise over each root's legal hops (gamma draws, normalised)
        B, L = priors.shape
        legal = np.arange(L)[None, :] < root.n_legal[:, None]
        g = np.where(legal, self.rng.gamma(DIRICHLET_ALPHA, size=(B, L)), 0.0)
        g /= np.maximum(g.sum(1, keepdims=True), 1e-12)
        mix = (root.n_legal > 1)[:, None]
        return np.where(mix, (1 - DIRICHLET_WEIGHT) * priors + DIRICHLET_WEIGHT * g,
                        priors).astype(np.float32)

    def select(self, trees: Trees, games: np.ndarray, node: np.ndarray, at_root: bool,
               sim: int) -> np.ndarray:
        n = trees.visits[games, node]
        u = C_PUCT * trees.prior[games, node] * np.sqrt(n.sum(1, keepdims=True) + 1) / (1 + n)
        cols = np.arange(self.L)[None, :]
        score = np.where(cols < trees.n_legal[games, node][:, None],
                         trees.q(games, node) + u, -np.inf)
        return score.argmax(1)

    def run(self, root: State, noise: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Visit counts over each root's legal list (B, L) and the root values (B,)."""
        self.noise = noise
        t = self.grow(root)
        return t.visits[:, 0], t.raw_value[:, 0]

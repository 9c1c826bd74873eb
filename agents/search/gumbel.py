"""Gumbel AlphaZero's search (Danihelka et al., "Policy improvement by planning with
Gumbel", ICLR 2022) on the batched trees of :mod:`damii_agents.search.puct`.

At the root, the first candidates are drawn without replacement by Gumbel-top-k over the
network's logits; the simulations are then shared out by sequential halving, keeping the
better half by ``gumbel + logits + sigma(q)`` after each round, and the hop played is the
best survivor. Below the root, the hop followed is the one whose visit share lags its
improved policy most. The policy target is the improved policy
``softmax(logits + sigma(completed q))``, where hops never visited take the mixed value
(the network's value blended with the visited hops' values, weighted by their priors).
It improves the policy with as few as 2-16 simulations, where PUCT's visit counts do not.
The constants are those of DeepMind's reference implementation (mctx).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from damii_agents.search.evaluator import PriorEvaluator
from damii_agents.search.puct import Trees, TreeSearch
from damii_env.engine import Engine, State

C_VISIT = 50.0
"""sigma(q) = (C_VISIT + most visits of a sibling) * C_SCALE * q, q rescaled to [0, 1]."""
C_SCALE = 0.1
MAX_CONSIDERED = 16
"""Root candidates drawn by Gumbel-top-k (fewer where fewer hops are legal)."""


def halving_schedule(considered: int, simulations: int) -> np.ndarray:
    """For each simulation, the visit count a root candidate must have to be chosen in
    it: sequential halving of `simulations` over `considered` candidates (mctx's
    ``get_sequence_of_considered_visits``). With one candidate it is ``0, 1, 2, ...``."""
    if considered <= 1:
        return np.arange(simulations, dtype=np.int64)
    log2max = math.ceil(math.log2(considered))
    sequence: list[int] = []
    visits = [0] * considered
    n = considered
    while len(sequence) < simulations:
        extra = max(1, int(simulations / (log2max * n)))
        for _ in range(extra):
            sequence.extend(visits[:n])
            for i in range(n):
                visits[i] += 1
        n = max(2, n // 2)
    return np.array(sequence[:simulations], dtype=np.int64)


@njit(cache=True, inline="always")
def _row_sigma(prior, visits, value_sum, raw, n, out):  # pragma: no cover - numba
    """out[:n] = sigma of the completed q-values over the n legal hops of one node, in
    float64: visited hops keep their mean value, the others take the mixed value
    ``(v + sum N * sum_visited(p q) / sum_visited(p)) / (1 + sum N)``; then q is rescaled
    to [0, 1] over the legal hops and scaled by ``(C_VISIT + max N) * C_SCALE``. Returns
    the node's total visits."""
    tiny = np.float64(np.finfo(np.float32).tiny)
    total = 0.0
    most = 0.0
    p_visited = 0.0
    pq = 0.0
    for j in range(n):
        v = np.float64(visits[j])
        total += v
        if v > most:
            most = v
        if v > 0:
            p = max(np.float64(prior[j]), tiny)
            p_visited += p
            pq += p * (np.float64(value_sum[j]) / v)
    weighted = pq / p_visited if p_visited > 0 else 0.0
    mixed = (np.float64(raw) + total * weighted) / (total + 1)
    low = np.inf
    high = -np.inf
    for j in range(n):
        v = np.float64(visits[j])
        c = np.float64(value_sum[j]) / v if v > 0 else mixed
        out[j] = c
        low = min(low, c)
        high = max(high, c)
    scale = (C_VISIT + most) * C_SCALE / max(high - low, 1e-8)
    for j in range(n):
        out[j] = (out[j] - low) * scale
    return total


@njit(cache=True, inline="always")
def _row_scores(prior, visits, value_sum, raw, n, out):  # pragma: no cover - numba
    """out[:n] = logits + sigma(completed q) over the n legal hops of one node (the
    improved policy's logits); returns the node's total visits."""
    total = _row_sigma(prior, visits, value_sum, raw, n, out)
    for j in range(n):
        out[j] += np.log(max(np.float64(prior[j]), 1e-30))
    return total


SIGMA, SCORES, POLICY = 0, 1, 2
"""What :func:`_node_rows` gives: sigma(completed q), logits + sigma, or their softmax."""


@njit(cache=True)
def _node_rows(prior, visits, value_sum, raw_value, n_legal, what):  # pragma: no cover
    """sigma(completed q), logits + sigma or the improved policy (`what`: SIGMA, SCORES,
    POLICY) of one node per row, over its n_legal[b] first hops; 0 past them."""
    B, L = prior.shape
    out = np.zeros((B, L))
    for b in range(B):
        n = n_legal[b]
        if n == 0:
            continue
        if what == SIGMA:
            _row_sigma(prior[b], visits[b], value_sum[b], raw_value[b], n, out[b])
            continue
        _row_scores(prior[b], visits[b], value_sum[b], raw_value[b], n, out[b])
        if what == SCORES:
            continue
        top = -np.inf
        for j in range(n):
            top = max(top, out[b, j])
        norm = 0.0
        for j in range(n):
            out[b, j] = np.exp(out[b, j] - top)
            norm += out[b, j]
        for j in range(n):
            out[b, j] /= norm
    return out


def completed_sigma(prior: np.ndarray, visits: np.ndarray, value_sum: np.ndarray,
                    raw_value: np.ndarray, n_legal: np.ndarray) -> np.ndarray:
    """sigma of the completed q-values (B, L) of one node per row, from its priors,
    visit counts and value sums (B, L), its network value (B,) and its legal hop count
    (B,): visited hops keep their mean value ``value_sum / visits``, the others take the
    mixed value ``(v + sum N * sum_visited(p q) / sum_visited(p)) / (1 + sum N)``; then q
    is rescaled to [0, 1] over the legal hops and scaled by ``(C_VISIT + max N) *
    C_SCALE``; 0 past the legal hops."""
    return _node_rows(prior, visits, value_sum, raw_value,
                      np.asarray(n_legal, dtype=np.int64), SIGMA)


def improved_policy(prior: np.ndarray, visits: np.ndarray, value_sum: np.ndarray,
                    raw_value: np.ndarray, n_legal: np.ndarray) -> np.ndarray:
    """``softmax(logits + sigma(completed q))`` over the legal hops (B, L) of one node per
    row (arguments as :func:`completed_sigma`); 0 past them, all 0 in a row without any."""
    return _node_rows(prior, visits, value_sum, raw_value,
                      np.asarray(n_legal, dtype=np.int64), POLICY)


@njit(cache=True)
def _select_below_root(prior, visits, value_sum, raw_value, n_legal, games, node):
    """For one node per game: the legal hop whose visit share lags its improved policy
    ``softmax(logits + sigma(completed q))`` most (the first such; 0 with no legal hop)."""
    B = games.shape[0]
    edge = np.zeros(B, np.int64)
    z = np.empty(prior.shape[2])
    for b in range(B):
        g, m = games[b], node[b]
        n = n_legal[g, m]
        if n == 0:
            continue
        total = _row_scores(prior[g, m], visits[g, m], value_sum[g, m], raw_value[g, m], n, z)
        top = -np.inf
        for j in range(n):
            top = max(top, z[j])
        norm = 0.0
        for j in range(n):
            z[j] = np.exp(z[j] - top)
            norm += z[j]
        best, best_lag = 0, -np.inf
        for j in range(n):
            lag = z[j] / norm - np.float64(visits[g, m, j]) / (1 + total)
            if lag > best_lag:
                best, best_lag = j, lag
        edge[b] = best
    return edge


@njit(cache=True)
def _select_at_root(prior, visits, value_sum, raw_value, n_legal, gumbel, wanted):
    """Sequential halving at each game's root: among the legal hops with exactly
    `wanted` visits (all legal hops if none has), the best ``gumbel + logits + sigma``."""
    B = prior.shape[0]
    edge = np.zeros(B, np.int64)
    z = np.empty(prior.shape[2])
    for b in range(B):
        n = n_legal[b, 0]
        if n == 0:
            continue
        _row_scores(prior[b, 0], visits[b, 0], value_sum[b, 0], raw_value[b, 0], n, z)
        any_wanted = False
        for j in range(n):
            if visits[b, 0, j] == wanted[b]:
                any_wanted = True
                break
        best, best_score = 0, -np.inf
        for j in range(n):
            if any_wanted and visits[b, 0, j] != wanted[b]:
                continue
            score = gumbel[b, j] + z[j]
            if score > best_score:
                best, best_score = j, score
        edge[b] = best
    return edge


@dataclass
class GumbelResult:
    """What a Gumbel search gives for each of B roots (over each root's legal list)."""

    policy: np.ndarray  # (B, L) improved policy: the training target
    choice: np.ndarray  # (B,) index into the legal list of the hop to play
    visits: np.ndarray  # (B, L) root visit counts
    value: np.ndarray  # (B,) the network's value of the root for its mover


class GumbelSearch(TreeSearch):
    """Gumbel AlphaZero trees for B games, `simulations` expansions each.

    `gumbel_scale` 1 samples the root candidates (self-play); 0 makes the search
    deterministic (play)."""

    def __init__(self, engine: Engine, evaluator: PriorEvaluator, simulations: int,
                 rng: np.random.Generator, max_considered: int = MAX_CONSIDERED,
                 gumbel_scale: float = 1.0) -> None:
        super().__init__(engine, evaluator, simulations, rng)
        if max_considered < 1:
            raise ValueError(f"max_considered must be >= 1, got {max_considered}")
        self.max_considered = max_considered
        self.gumbel_scale = gumbel_scale
        self._table = np.stack([halving_schedule(m, max(simulations, 1))
                                for m in range(max_considered + 1)])
        self._gumbel = np.zeros((0, self.L))
        self._considered = np.zeros(0, np.int64)

    def _legal(self, trees: Trees, games: np.ndarray, node: np.ndarray) -> np.ndarray:
        return np.arange(self.L)[None, :] < trees.n_legal[games, node][:, None]

    def select(self, trees: Trees, games: np.ndarray, node: np.ndarray, at_root: bool,
               sim: int) -> np.ndarray:
        if at_root:  # sequential halving among the Gumbel-top-k candidates
            return _select_at_root(trees.prior, trees.visits, trees.value_sum,
                                   trees.raw_value, trees.n_legal, self._gumbel,
                                   self._table[self._considered, sim])
        return _select_below_root(trees.prior, trees.visits, trees.value_sum,
                                  trees.raw_value, trees.n_legal, games, node)

    def run(self, root: State) -> GumbelResult:
        """Search the B roots; the improved policies, the hops to play, the visits."""
        B = root.batch_size
        self._gumbel = self.gumbel_scale * self.rng.gumbel(size=(B, self.L))
        self._considered = np.minimum(root.n_legal.astype(np.int64), self.max_considered)
        t = self.grow(root)
        games, node = np.arange(B), np.zeros(B, np.int64)
        legal = self._legal(t, games, node)
        roots = (t.prior[:, 0], t.visits[:, 0], t.value_sum[:, 0], t.raw_value[:, 0],
                 t.n_legal[:, 0])  # each tree's root node
        visits = roots[1]
        policy = improved_policy(*roots)
        score = self._gumbel + _node_rows(*roots, SCORES)  # gumbel + logits + sigma
        most = legal & (visits == visits.max(1, keepdims=True))
        choice = np.where(most, score, -np.inf).argmax(1)
        return GumbelResult(policy, choice, visits, t.raw_value[:, 0].copy())

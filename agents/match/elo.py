"""Elo ratings from game results: Bradley-Terry maximum likelihood, bootstrap intervals.

A game is ``(white, black, points_of_white)`` with points 1, 1/2 or 0 (a draw counts as
half a win for each side). The model: the expected points of player i against j are
``1 / (1 + 10 ** ((R_j - R_i) / 400))``. Ratings are the maximum-likelihood ones with one
player (the anchor) fixed at 0. ``prior_draws`` virtual draws are added to every pairing
that played, so that a perfect score gives a large but finite rating difference (with the
default of one virtual draw a 20-0 sweep gives about +645); set it to 0 for the plain
maximum-likelihood fit. Confidence intervals are percentiles of the ratings refitted on
games resampled with replacement (bootstrap over games).

A perfect score leaves a rating without an upper bound (a zero score without a lower one):
when no chain of points leads from the anchor to a player (the anchor, or someone who took
points from the anchor, ... never took a point from that player), the data allow any rating
above, and every bootstrap resample is the same sweep, so the percentiles would be a
zero-width interval at the prior's value. That end is ``inf`` (``-inf``) instead; the other
end is then the one-sided binomial bound of a direct sweep against the anchor (the lowest
rating under which losing no game of the `n` has probability at least (1 - level) / 2:
``p_low = ((1 - level) / 2) ** (1 / n)``, 10-0 gives about +140), or the bootstrap's when
the player did not meet the anchor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ELO_PER_NAT = 400.0 / np.log(10.0)
"""Elo points per natural-log unit of strength."""

GameScore = tuple[int, int, float]
"""(white player index, black player index, points of White)."""


@dataclass(frozen=True)
class Rating:
    """A player's Elo rating relative to the anchor, with its confidence interval."""

    name: str
    elo: float
    low: float
    high: float
    games: int
    points: float

    @property
    def score(self) -> float:
        """Fraction of the available points won."""
        return self.points / self.games if self.games else 0.0


def _tally(n: int, games: np.ndarray, weights: np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """Points W[..., i, j] (of i against j) and games N[..., i, j]; `weights` (B, G) counts
    each game per bootstrap sample."""
    w = np.ones((1, len(games))) if weights is None else np.atleast_2d(weights)
    white, black = games[:, 0].astype(int), games[:, 1].astype(int)
    pts = games[:, 2]
    W = np.zeros((len(w), n, n))
    N = np.zeros((len(w), n, n))
    for i in range(n):
        for j in range(n):
            ij, ji = (white == i) & (black == j), (white == j) & (black == i)
            W[:, i, j] = w[:, ij] @ pts[ij] + w[:, ji] @ (1.0 - pts[ji])
            N[:, i, j] = w[:, ij].sum(axis=1) + w[:, ji].sum(axis=1)
    return (W[0], N[0]) if weights is None else (W, N)


def fit(W: np.ndarray, N: np.ndarray, anchor: int = 0, start: np.ndarray | None = None,
        tol: float = 1e-9, max_iter: int = 200) -> np.ndarray:
    """Maximum-likelihood Elo ratings (Newton's method) from points and games matrices
    (n, n), or a stack of them (B, n, n); `start` (Elo) is where the search begins."""
    n = W.shape[-1]
    theta = np.zeros(W.shape[:-1]) if start is None else \
        np.broadcast_to(np.asarray(start, dtype=float) / ELO_PER_NAT, W.shape[:-1]).copy()
    free = np.array([i for i in range(n) if i != anchor], dtype=int)
    if not len(free):
        return theta
    ridge = 1e-9 * np.eye(len(free))
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(theta[..., None, :] - theta[..., :, None]))
        grad = (W - N * p).sum(axis=-1)
        h = N * p * (1.0 - p)
        hess = h.sum(axis=-1)[..., :, None] * np.eye(n) - h
        a = hess[..., free[:, None], free[None, :]] + ridge
        step = np.clip(np.linalg.solve(a, grad[..., free, None])[..., 0], -2.0, 2.0)
        theta[..., free] += step
        if np.max(np.abs(step)) < tol:
            break
    return theta * ELO_PER_NAT


def _closure(edges: np.ndarray) -> np.ndarray:
    """reach[i, j]: a path of `edges` (boolean (n, n)) leads from i to j (i to i always)."""
    reach = edges.astype(bool) | np.eye(len(edges), dtype=bool)
    for k in range(len(edges)):
        reach |= reach[:, k, None] & reach[None, k, :]
    return reach


def unbounded(W: np.ndarray, N: np.ndarray, anchor: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Which players' maximum-likelihood ratings (without virtual draws) have no upper
    bound, and which no lower bound, relative to `anchor`, from the points W and games N
    matrices: i is unbounded above when no chain of "took points from" leads from the
    anchor to i, and below when none leads from i to the anchor (among players connected
    to the anchor by games)."""
    scored = _closure(W > 0)
    connected = _closure((N + N.T) > 0)[anchor]
    above, below = ~scored[anchor] & connected, ~scored[:, anchor] & connected
    above[anchor] = below[anchor] = False
    return above, below


def sweep_bound(n_games: float, level: float = 0.95) -> float:
    """Elo difference that a sweep of `n_games` games exceeds with confidence 1 - (1 -
    level) / 2 (one-sided binomial bound): ``p_low = ((1 - level) / 2) ** (1 / n)``."""
    p = ((1.0 - level) / 2.0) ** (1.0 / n_games)
    return float(ELO_PER_NAT * np.log(p / (1.0 - p)))


def rate(names: Sequence[str], games: Sequence[GameScore], anchor: int = 0,
         samples: int = 1000, level: float = 0.95, prior_draws: float = 1.0,
         seed: int = 0) -> list[Rating]:
    """Ratings of every player from all games, with bootstrap confidence intervals."""
    n = len(names)
    data = np.asarray(games, dtype=float).reshape(-1, 3)
    W, N = _tally(n, data)
    played = (N > 0).astype(float)
    prior_w, prior_n = played * prior_draws / 2.0, played * prior_draws
    elo = fit(W + prior_w, N + prior_n, anchor)
    low, high = elo, elo
    if samples and len(data):
        g = len(data)
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, g, (samples, g)) + g * np.arange(samples)[:, None]
        counts = np.bincount(draws.ravel(), minlength=samples * g).reshape(samples, g)
        Wb, Nb = _tally(n, data, counts.astype(float))
        boot = fit(Wb + prior_w, Nb + prior_n, anchor, start=elo)
        tail = (1.0 - level) / 2.0 * 100.0
        low, high = np.percentile(boot, [tail, 100.0 - tail], axis=0)
    low, high = np.array(low, dtype=float), np.array(high, dtype=float)
    above, below = unbounded(W, N, anchor)
    for i in np.flatnonzero(above):  # no chain of points from the anchor to i
        high[i] = np.inf
        if N[i, anchor] > 0:  # i swept the anchor: the one-sided bound of that sweep
            low[i] = sweep_bound(N[i, anchor], level)
    for i in np.flatnonzero(below):
        low[i] = -np.inf
        if N[i, anchor] > 0:
            high[i] = -sweep_bound(N[i, anchor], level)
    return [Rating(name=names[i], elo=float(elo[i]), low=float(low[i]), high=float(high[i]),
                   games=int(N[i].sum()), points=float(W[i].sum())) for i in range(n)]

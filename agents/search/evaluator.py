"""Evaluators: the one place where a search or a trainer asks what positions are worth.

An evaluator values a search's leaves for the player to move there (:class:`Evaluator`,
what the minimax search and the TD-leaf trainer need); one that also gives priors over
each position's legal hops (:class:`PriorEvaluator`) serves the PUCT and Gumbel tree
searches. :class:`NetworkEvaluator` asks the policy-value network, in bounded batches; a
compiled evaluation can be another implementation of the same protocols.

Finished games are valued by their result (+1 win, -1 loss, 0 draw for the mover), never
by the evaluation. A network trained on shaped returns (``material_shaping``,
``score_shaping``) values a position at the expected result minus the mover's shaping
potential; :class:`NetworkEvaluator`'s ``value_potential`` adds that potential back, as
the players do (the trainers, which learn the value head as it is, leave it out).

Leaves come as ``levels``: ``(states, rows)`` pairs, the games at `rows` (int64,
increasing) of `states`, values returned concatenated in the order of the pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from damii_env.engine import Engine, State
from damii_env.episode import for_colour, outcome_rewards, shaping_potential
from damii_env.observation import observation_shape, observe

Levels = Sequence[tuple[State, np.ndarray]]
"""Leaves of a search: ``(states, rows)`` pairs (see the module doc)."""

PLAYER_BATCH = 1024
"""Leaves a player's evaluator sends through the network at a time."""


class Evaluator(Protocol):
    """Values of positions for their player to move."""

    def leaf_values(self, levels: Levels) -> np.ndarray:
        """float64 (total rows,): the value of each leaf of `levels` for its mover, in
        the order of the pairs (the result where the game is over)."""
        ...  # pragma: no cover - a protocol


class PriorEvaluator(Evaluator, Protocol):
    """An evaluator that also gives priors over each position's legal hops."""

    def priors(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """float32 (B, L) priors over each game's legal list (0 past its hops) and
        values (B,) for the movers."""
        ...  # pragma: no cover - a protocol


def leaf_batches(levels: Levels, size: int
                 ) -> Iterator[list[tuple[State, np.ndarray, np.ndarray]]]:
    """The live (unfinished) leaves of `levels` in batches of at most `size`, so that a
    network's input stays bounded however large the search: each batch is a list of
    ``(states, rows, at)``, `rows` some rows of `states` and `at` their places in the
    leaves' concatenated order."""
    batch: list[tuple[State, np.ndarray, np.ndarray]] = []
    n = start = 0
    for states, rows in levels:
        alive = np.flatnonzero(~states.done[rows])
        i = 0
        while i < len(alive):
            part = alive[i:i + size - n]
            batch.append((states, rows[part], start + part))
            n += len(part)
            i += len(part)
            if n == size:
                yield batch
                batch, n = [], 0
        start += len(rows)
    if batch:
        yield batch


def results(levels: Levels) -> np.ndarray:
    """float64 (total rows,): the result of each leaf's game for its mover where it is
    over, 0 where it goes on."""
    values = np.zeros(sum(len(rows) for _states, rows in levels))
    start = 0
    for states, rows in levels:
        over = np.flatnonzero(states.done[rows])
        if len(over):
            ended = rows[over]
            values[start + over] = outcome_rewards(states.outcome[ended], states.turn[ended])
        start += len(rows)
    return values


class LeafFunction:
    """An :class:`Evaluator` from a function of the levels (``fn(levels) -> values``)."""

    def __init__(self, fn: Callable[[Levels], np.ndarray]) -> None:
        self.fn = fn

    def leaf_values(self, levels: Levels) -> np.ndarray:
        return self.fn(levels)


class NetworkEvaluator:
    """The policy-value network as an evaluator of the states of one engine.

    `value_potential` (``{"material": m, "score": s}``, the shaping the value head was
    trained with) is added back to the network's values of live leaves; None or zeros
    leave the values as the head gives them. The live leaves go through the network
    `batch` at a time (a network's numbers may depend on its batch: one batch size per
    caller keeps them reproducible). Needs torch (the ``train`` extra).
    """

    def __init__(self, net: Any, engine: Engine, device: Any = "cpu",
                 value_potential: dict[str, float] | None = None,
                 batch: int = PLAYER_BATCH) -> None:
        import torch

        self._torch = torch
        self.net = net
        self.engine = engine
        self.device = torch.device(device)
        self.value_potential = dict(value_potential or {})
        self.batch = batch

    def for_engine(self, engine: Engine) -> NetworkEvaluator:
        """The same network (and potential and batch) for the states of `engine` (one with
        the same rules but another turn limit, say): this evaluator if it is its own."""
        if engine is self.engine:
            return self
        return NetworkEvaluator(self.net, engine, self.device, self.value_potential, self.batch)

    def leaf_values(self, levels: Levels) -> np.ndarray:
        """See :meth:`Evaluator.leaf_values`: results where games are over, else the value
        head (plus the shaping potential, see the class doc)."""
        torch = self._torch
        values = results(levels)
        material = self.value_potential.get("material", 0.0)
        score = self.value_potential.get("score", 0.0)
        shape = observation_shape(self.engine.rules)
        with torch.no_grad():
            for batch in leaf_batches(levels, self.batch):
                obs = np.empty((sum(len(rows) for _s, rows, _at in batch), *shape), np.float32)
                k = 0
                for states, rows, _at in batch:
                    observe(self.engine, states, rows=rows, out=obs[k:k + len(rows)])
                    k += len(rows)
                v = self.net.value(torch.from_numpy(obs).to(self.device)).cpu().numpy()
                if material or score:
                    v = v + np.concatenate([
                        for_colour(shaping_potential(self.engine, states.take(rows), material,
                                                     score), states.turn[rows])
                        for states, rows, _at in batch])
                values[np.concatenate([at for _s, _rows, at in batch])] = v
        return values

    def values(self, state: State, rows: np.ndarray | None = None) -> np.ndarray:
        """:meth:`leaf_values` of the games at `rows` of one state (default: all)."""
        rows = np.arange(state.batch_size) if rows is None else np.asarray(rows, np.int64)
        return self.leaf_values([(state, rows)])

    def action_probs(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """The policy's probabilities (B, A) over every action (0 where illegal) and the
        value head's values (B,) for the movers."""
        from damii_agents.network import masked_logits

        torch = self._torch
        with torch.no_grad():
            obs = torch.from_numpy(observe(self.engine, state)).to(self.device)
            logits, value = self.net(obs)
            mask = torch.from_numpy(self.engine.legal_action_mask(state)).to(self.device)
            probs = torch.softmax(masked_logits(logits, mask), -1)
            return probs.cpu().numpy(), value.cpu().numpy()

    def priors(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """See :meth:`PriorEvaluator.priors`: the policy's probabilities of each game's
        legal hops, in the order of its legal list."""
        probs, value = self.action_probs(state)
        legal = state.legal.astype(np.int64)
        priors = np.take_along_axis(probs, np.clip(legal, 0, None), axis=1)
        priors[np.arange(legal.shape[1])[None, :] >= state.n_legal[:, None]] = 0.0
        return priors.astype(np.float32), value

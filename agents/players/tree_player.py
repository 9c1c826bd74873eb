"""A network with a tree search (``ckpt:PATH,sims=N``): the visit counts of N simulations
of the AlphaZero trainer's PUCT search (:mod:`damii_agents.search.puct`) pick each hop, or
with ``mcts=gumbel`` Gumbel AlphaZero's search (:mod:`damii_agents.search.gumbel`, without
its Gumbel noise at play): the searches of training, on a batch of one, hop by hop."""

from __future__ import annotations

import numpy as np

from damii_agents.players.network_player import NetworkPlayer, on_legal
from damii_agents.search.evaluator import NetworkEvaluator
from damii_agents.search.gumbel import GumbelSearch
from damii_agents.search.puct import BatchedSearch
from damii_env.engine import State

SEARCHES = ("puct", "gumbel")
"""The tree searches a player may play with."""


class TreeSearchPlayer(NetworkPlayer):
    """Plays by `simulations` simulations of the PUCT or the Gumbel search a hop."""

    def __init__(self, evaluator: NetworkEvaluator, simulations: int, search: str = "puct",
                 mode: str = "argmax", seed: int | None = None, name: str = "neural") -> None:
        super().__init__(evaluator, mode=mode, seed=seed, name=name)
        self.simulations = simulations
        self.search = search

    def hop_weights(self, state: State, evaluator: NetworkEvaluator) -> np.ndarray:
        engine = evaluator.engine
        if self.search == "gumbel":
            found = GumbelSearch(engine, evaluator, self.simulations, self.np_rng,
                                 gumbel_scale=0.0).run(state)
            k = int(state.n_legal[0])
            if self.mode == "argmax":
                weights = np.zeros(k)
                weights[found.choice[0]] = 1.0
                return on_legal(state, engine, weights)
            return on_legal(state, engine, found.policy[0, :k])
        visits, _ = BatchedSearch(engine, evaluator, self.simulations, self.np_rng).run(
            state, noise=False)
        return on_legal(state, engine, visits[0, :int(state.n_legal[0])])

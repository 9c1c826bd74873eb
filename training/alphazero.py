"""AlphaZero-style self-play with the batched PUCT search of :mod:`damii_agents.search.puct`, or
Gumbel AlphaZero's search of :mod:`damii_agents.search.gumbel` (``mcts: gumbel``): the same searches
the ``ckpt:PATH,sims=N`` player uses.

The policy targets are the search's visit counts (PUCT) or its improved policy (Gumbel),
the game outcomes (from the mover's view) the value targets; both go to a replay buffer
from which the network learns.
"""

from __future__ import annotations

import numpy as np

from damii_agents.search.evaluator import NetworkEvaluator
from damii_agents.search.gumbel import GumbelSearch
from damii_agents.search.puct import BatchedSearch
from damii_env.episode import outcome_rewards
from damii_env.observation import observe
from damii_training.config import TrainConfig
from damii_training.replay import ReplayTrainer

SAMPLE_PLIES = 20  # moves played by visit-count sampling at the start of a game; argmax after


class AlphaZeroTrainer(ReplayTrainer):
    """Self-play with batched search, a replay buffer and policy/value learning."""

    def __init__(self, config: TrainConfig) -> None:
        super().__init__(config)
        self.evaluator = NetworkEvaluator(self.net, self.engine, self.device)
        """The searches' priors and values: the network's."""
        self.search: BatchedSearch | GumbelSearch
        """The search ``mcts`` names (the one built)."""
        if config.mcts == "gumbel":
            self.search = GumbelSearch(self.engine, self.evaluator, config.simulations,
                                       self.rng, max_considered=config.gumbel_considered)
        else:
            self.search = BatchedSearch(self.engine, self.evaluator, config.simulations,
                                        self.rng)
        # pending: samples of games still running (game row, observation, legal, policy,
        # colour)

    def play(self) -> dict[str, float]:
        """`rollout_steps` searched hops in every game."""
        eng, state = self.engine, self.state
        self.net.eval()
        finished, new = 0, 0
        for _ in range(self.config.rollout_steps):
            k = state.n_legal.astype(np.int64)
            if self.config.mcts == "gumbel":  # the root's Gumbel draws explore by themselves
                found = self.search.run(state)
                policy, index = found.policy, found.choice
            else:
                visits, _ = self.search.run(state)
                total = visits.sum(1, keepdims=True)
                policy = np.where(total > 0, visits / np.maximum(total, 1), 0)
                # early plies sample the visit counts, later ones take the most visited hop
                u = self.rng.random(state.batch_size)[:, None]
                sampled = (np.cumsum(policy, 1) < u * policy.sum(1, keepdims=True)).sum(1)
                index = np.where(state.ply < SAMPLE_PLIES, np.minimum(sampled, k - 1),
                                 policy.argmax(1))
            obs = observe(eng, state)
            playing = ~state.done & (k > 0)
            choice = np.where(playing, state.legal[np.arange(state.batch_size),
                                                   np.maximum(index, 0)], 0).astype(np.int64)
            legal_rows = state.legal_padded.astype(np.int16)
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

"""MaskablePPO self-play over the PettingZoo AEC environment (PettingZoo's SB3 tutorial
pattern for action-masked classic games, as for connect_four_v3).

One policy plays both seats: :class:`SB3ActionMaskWrapper` turns the AEC env into a
single-agent Gymnasium-style env whose observation is always the agent-to-move's planes
(the planes are from the mover's side, so one network serves both colours) and whose
reward is the acting agent's. A multi-capture is several steps of the same agent.
After training, the policy plays the AEC env against uniformly random hops.

Measured with ``python examples/sb3_selfplay_aec.py`` (defaults: 20,480 steps of both
seats, then 100 games against random hops, seats alternated; 2026-12-01, on the 2-core
machine of benchmarks/RESULTS.md while three other training processes loaded it; torch
2.13 CPU on 1 thread): 20,480 steps in 81 s of learning (252 steps/s; 93 s wall in all);
against random: 49.0% of the points. That is no better than random: this short self-play
run teaches the policy nothing measurable (the Gymnasium example against a random
opponent, :mod:`sb3_maskable_ppo`, reaches 88-100% in the same number of steps).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

# ruff: noqa: E402 - the imports after build_parser may be missing; --help must not need them

EPILOG = ('Needs sb3-contrib: pip install sb3-contrib'
          "; the rest of this file's docstring says what the example does "
          "and what it measured.")
"""The end of --help: what the example needs."""


def build_parser() -> argparse.ArgumentParser:
    """The options; the description is the docstring's first paragraph."""
    p = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()),
                                epilog=EPILOG)
    p.add_argument("--steps", type=int, default=20_480,
                   help="environment steps of self-play training (both seats)"
                   " (default: %(default)s)")
    p.add_argument("--games", type=int, default=100,
                   help="games against random hops afterwards, seats alternated"
                   " (default: %(default)s)")
    return p


if __name__ == "__main__":  # --help answers before the imports below, which may be missing
    build_parser().parse_args()

import gymnasium
import numpy as np
import pettingzoo.utils
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from sb3_contrib.common.wrappers import ActionMasker

import damii_env


class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
    """The AEC env seen by one policy that plays whichever agent is to move."""

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple:
        super().reset(seed, options)
        agent = self.possible_agents[0]
        self.observation_space = super().observation_space(agent)["observation"]
        self.action_space = super().action_space(agent)
        return self.observe(self.agent_selection), {}

    def step(self, action: int) -> tuple:
        """Play the mover's hop; return the next mover's observation and the actor's
        reward, termination, truncation and info."""
        actor = self.agent_selection
        super().step(action)
        return (self.observe(self.agent_selection), self._cumulative_rewards[actor],
                self.terminations[actor], self.truncations[actor], self.infos[actor])

    def observe(self, agent: str) -> np.ndarray:
        return super().observe(agent)["observation"]

    def action_mask(self) -> np.ndarray:
        return super().observe(self.agent_selection)["action_mask"].astype(bool)


def make_env(variant: str = "damii", **rule_options: Any) -> ActionMasker:
    env = SB3ActionMaskWrapper(damii_env.env(variant, **rule_options))
    env.reset(seed=0)
    return ActionMasker(env, lambda e: e.action_mask())


def score_against_random(model: MaskablePPO, games: int, variant: str = "damii",
                         seed: int = 1, **rule_options: Any) -> float:
    """Points share (win 1, draw 1/2) of the greedy masked policy against random hops,
    seats alternated."""
    rng = np.random.default_rng(seed)
    points = 0.0
    for g in range(games):
        env = damii_env.env(variant, **rule_options)
        env.reset(seed=seed + g)
        ours = env.possible_agents[g % 2]
        for agent in env.agent_iter():
            obs, reward, termination, truncation, _info = env.last()
            if termination or truncation:
                if agent == ours:
                    points += (reward + 1.0) / 2.0
                env.step(None)
                continue
            mask = obs["action_mask"].astype(bool)
            if agent == ours:
                action, _ = model.predict(obs["observation"], action_masks=mask,
                                          deterministic=True)
            else:
                action = rng.choice(np.flatnonzero(mask))
            env.step(int(action))
    return points / games


def run(steps: int = 20_480, games: int = 100, n_steps: int = 512, seed: int = 0,
        variant: str = "damii", **rule_options: Any) -> dict[str, float]:
    torch.set_num_threads(1)
    env = make_env(variant, **rule_options)
    model = MaskablePPO(MaskableActorCriticPolicy, env, n_steps=n_steps, batch_size=256,
                        seed=seed, verbose=0)
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    seconds = time.perf_counter() - start
    score = score_against_random(model, games, variant, **rule_options)
    return {"steps": float(model.num_timesteps), "seconds": seconds,
            "steps_per_second": model.num_timesteps / seconds, "score": score}


def main() -> None:
    args = build_parser().parse_args()
    r = run(args.steps, args.games)
    print(f"self-play: {r['steps']:,.0f} steps in {r['seconds']:.0f} s "
          f"({r['steps_per_second']:.0f} steps/s); against random over {args.games} games: "
          f"{100 * r['score']:.1f}%")


if __name__ == "__main__":
    main()

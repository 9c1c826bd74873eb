"""RLlib PPO with action masking over ``PettingZooEnv`` (one shared policy for both seats).

RLlib (``ray[rllib]`` 2.60) pins ``gymnasium==1.2.2``. That is inside the project's own
range (``gymnasium>=1.0``), but it would move the development environment's Gymnasium, so
it is not among the project's extras: ``.ci/run`` tests this example in a virtualenv of
its own that adds RLlib beside the project's environment::

    python -m venv .venv-rllib
    SITE=lib/python3.11/site-packages
    echo "$PWD/.venv/$SITE" > .venv-rllib/$SITE/project.pth
    .venv-rllib/bin/pip install "ray[rllib]==2.60.0" "gymnasium==1.2.2"

RLlib's ``ActionMaskingTorchRLModule`` wants each observation as a dict of
``observations`` and ``action_mask``; :class:`RLlibObservations` renames the AEC env's
``observation`` key and flattens the planes (RLlib's default encoder for 3-D boxes is a
CNN that needs a filter configuration). Both agents map to one policy, which sees the
board from the mover's side.

Measured with ``python -W ignore examples/rllib_ppo.py --iterations 5`` (5 iterations of
2,000 environment steps, both seats' steps counted; then 50 games against random hops,
seats alternated; 2026-12-01, on the 2-core machine of benchmarks/RESULTS.md while three
other training processes loaded it; ray 2.60.0, torch 2.13 CPU): 10,000 steps in 59 s of
training (170 steps/s; 87 s wall with Ray's start); against random: 80.0% of the points.

The config turns RLlib's env check off (``disable_env_checking=True``). That check
(``check_multiagent_environments`` in ``ray/rllib/utils/pre_checks/env.py``, run by
``MultiAgentEnvRunner.make_env``) resets each new env with ``seed=42`` and steps it once
with ``action_space.sample()``, unmasked: out of 1,800 actions only 9 are legal at the
start, so the standard wrapper ended that game as a loss of ``player_0`` with
PettingZoo's "Illegal move made" warning, once per env runner built. The runner resets
the env before sampling, so no such hop entered the training data; the hops sampled
through the masking module were all legal (0 illegal in 20,400 hops of full games and
4,200 with ``turn_limit=30``, multi-captures included). tests/envs/test_examples.py counts
the warnings.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

# ruff: noqa: E402 - the imports after build_parser may be missing; --help must not need them

EPILOG = ('Needs ray[rllib] (in a virtualenv of its own: see the top of this file)'
          "; the rest of this file's docstring says what the example does "
          "and what it measured.")
"""The end of --help: what the example needs."""


def build_parser() -> argparse.ArgumentParser:
    """The options; the description is the docstring's first paragraph."""
    p = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()),
                                epilog=EPILOG)
    p.add_argument("--iterations", type=int, default=10,
                   help="RLlib training iterations"
                   " (default: %(default)s)")
    p.add_argument("--batch", type=int, default=2000,
                   help="environment steps per iteration (both seats counted)"
                   " (default: %(default)s)")
    p.add_argument("--games", type=int, default=50,
                   help="games against random hops afterwards, seats alternated"
                   " (default: %(default)s)")
    return p


if __name__ == "__main__":  # --help answers before the imports below, which may be missing
    build_parser().parse_args()

import gymnasium
import numpy as np
import pettingzoo.utils
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
    ActionMaskingTorchRLModule,
)
from ray.tune.registry import register_env

import damii_env

ENV_NAME = "damii_env_aec"


class RLlibObservations(pettingzoo.utils.BaseWrapper):
    """The AEC env with observations ``{"observations": flat planes, "action_mask": ...}``."""

    def observation_space(self, agent: str) -> gymnasium.spaces.Dict:
        space = super().observation_space(agent)
        planes = space["observation"]
        flat = gymnasium.spaces.Box(float(planes.low.min()), 1.0,
                                    shape=(int(np.prod(planes.shape)),), dtype=np.float32)
        return gymnasium.spaces.Dict({"observations": flat,
                                      "action_mask": space["action_mask"]})

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seen = super().observe(agent)
        return {"observations": seen["observation"].reshape(-1),
                "action_mask": seen["action_mask"]}


def make_env(config: dict[str, Any] | None = None) -> PettingZooEnv:
    config = dict(config or {})
    variant = config.pop("variant", "damii")
    return PettingZooEnv(RLlibObservations(damii_env.env(variant, **config)))


def make_config(batch: int = 2000, variant: str = "damii", **rule_options: Any) -> PPOConfig:
    register_env(ENV_NAME, make_env)
    module = RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                          model_config={"fcnet_hiddens": [128, 128],
                                        "head_fcnet_hiddens": [128]})
    return (
        PPOConfig()
        # RLlib's env check steps one unmasked random action: an illegal hop (docstring)
        .environment(ENV_NAME, env_config={"variant": variant, **rule_options},
                     disable_env_checking=True)
        .multi_agent(policies={"shared"},
                     policy_mapping_fn=lambda agent_id, *args, **kwargs: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"shared": module}))
        .env_runners(num_env_runners=0, rollout_fragment_length="auto")
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=batch, minibatch_size=min(batch, 256),
                  num_epochs=2, lr=3e-4)
        .debugging(log_level="ERROR")
    )


def score_against_random(algo: Any, games: int, variant: str = "damii", seed: int = 1,
                         **rule_options: Any) -> float:
    """Points share (win 1, draw 1/2) of the policy's greedy masked hops against random
    hops, seats alternated."""
    import torch

    module = algo.get_module("shared")
    rng = np.random.default_rng(seed)
    points = 0.0
    for g in range(games):
        env = RLlibObservations(damii_env.env(variant, **rule_options))
        env.reset(seed=seed + g)
        ours = env.possible_agents[g % 2]
        for agent in env.agent_iter():
            obs, reward, termination, truncation, _info = env.last()
            if termination or truncation:
                points += (reward + 1.0) / 2.0 if agent == ours else 0.0
                env.step(None)
                continue
            mask = obs["action_mask"].astype(bool)
            if agent == ours:
                batch = {"obs": {k: torch.as_tensor(v[None]) for k, v in obs.items()}}
                logits = module.forward_inference(batch)["action_dist_inputs"][0]
                action = int(torch.argmax(logits))
            else:
                action = int(rng.choice(np.flatnonzero(mask)))
            env.step(action)
    return points / games


def run(iterations: int = 10, batch: int = 2000, games: int = 50, variant: str = "damii",
        **rule_options: Any) -> dict[str, float]:
    import ray

    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True,
             log_to_driver=False)
    try:
        algo = make_config(batch, variant, **rule_options).build_algo()
        start = time.perf_counter()
        steps = 0
        for _ in range(iterations):
            result = algo.train()
            steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
        seconds = time.perf_counter() - start
        score = score_against_random(algo, games, variant, **rule_options)
        algo.stop()
    finally:
        ray.shutdown()
    return {"steps": float(steps), "seconds": seconds, "steps_per_second": steps / seconds,
            "score": score}


def main() -> None:
    args = build_parser().parse_args()
    r = run(args.iterations, args.batch, args.games)
    print(f"rllib PPO: {r['steps']:,.0f} env steps in {r['seconds']:.0f} s "
          f"({r['steps_per_second']:.0f} steps/s); against random over {args.games} games: "
          f"{100 * r['score']:.1f}%")


if __name__ == "__main__":
    main()

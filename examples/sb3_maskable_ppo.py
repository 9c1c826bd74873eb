"""sb3-contrib's MaskablePPO on the Gymnasium environment, with an MLP or a small CNN.

The learner plays Damii against the environment's random opponent (``opponent=None``),
one hop per step, the legal hops given by ``env.action_masks()``. The observation is
channels-first float32 planes ``(8, 10, 10)`` in [0, 1] (Sci-Damath: ``(15, 8, 8)`` in
[-1, 1]), which SB3's ``CnnPolicy`` refuses with its default NatureCNN (it wants uint8
images of at least 36x36): pass :class:`DraughtsCNN` as the features extractor and
``normalize_images=False``, as :func:`make_model` does. ``MlpPolicy`` flattens the planes.

The environment id carries its module (``"damii_env:damii_env/Damii-v0"``), so the worker
processes of ``SubprocVecEnv`` import damii_env before they make it.

Measured with ``python examples/sb3_maskable_ppo.py`` (defaults: 20,480 learner steps,
4 environments, then 100 games against random, colours drawn; 2026-12-01, on the 2-core
machine of benchmarks/RESULTS.md while three other training processes loaded it; torch
2.13 CPU on 1 thread; the times are of the learning alone):

- MLP: 20,480 steps in 90 s (229 steps/s); against random: 88.0% of the points.
- CNN (:class:`DraughtsCNN`): 20,480 steps in 109 s (189 steps/s); against random: 100.0%.
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
    p.add_argument("--policy", choices=["mlp", "cnn", "both"], default="both",
                   help="the policy network: mlp, cnn or both (one after the other)")
    p.add_argument("--steps", type=int, default=20_480,
                   help="environment steps of training (the learner's hops)"
                   " (default: %(default)s)")
    p.add_argument("--games", type=int, default=100,
                   help="games against the random opponent afterwards"
                   " (default: %(default)s)")
    return p


if __name__ == "__main__":  # --help answers before the imports below, which may be missing
    build_parser().parse_args()

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

ENV_ID = "damii_env:damii_env/Damii-v0"


class DraughtsCNN(BaseFeaturesExtractor):
    """A small convnet over the observation planes (channels first, float)."""

    def __init__(self, observation_space: gymnasium.spaces.Box, features_dim: int = 128,
                 channels: int = 32) -> None:
        super().__init__(observation_space, features_dim)
        c, h, w = observation_space.shape
        self.net = nn.Sequential(
            nn.Conv2d(c, channels, 3, padding=1), nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(),
            nn.Flatten(), nn.Linear(channels * h * w, features_dim), nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.net(observations)


def make_model(policy: str, n_envs: int = 4, n_steps: int = 256, seed: int = 0,
               **env_kwargs: Any) -> MaskablePPO:
    """MaskablePPO with an MLP (``policy="mlp"``) or :class:`DraughtsCNN` (``"cnn"``)."""
    envs = make_vec_env(ENV_ID, n_envs=n_envs, seed=seed, env_kwargs=env_kwargs)
    if policy == "mlp":
        return MaskablePPO("MlpPolicy", envs, n_steps=n_steps, batch_size=256, seed=seed,
                           verbose=0)
    kwargs = {"features_extractor_class": DraughtsCNN, "normalize_images": False,
              "net_arch": []}
    return MaskablePPO("CnnPolicy", envs, n_steps=n_steps, batch_size=256, seed=seed,
                       policy_kwargs=kwargs, verbose=0)


def score_against_random(model: MaskablePPO, games: int, seed: int = 1,
                         **env_kwargs: Any) -> float:
    """Share of points (win 1, draw 1/2) of the model's masked greedy policy against the
    environment's random opponent, colours drawn at random."""
    env = gymnasium.make(ENV_ID, **env_kwargs)
    points = 0.0
    for g in range(games):
        obs, info = env.reset(seed=seed + g)
        done, reward = False, 0.0
        while not done:
            action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks(),
                                      deterministic=True)
            obs, reward, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        points += (reward + 1.0) / 2.0
    return points / games


def run(policy: str = "mlp", steps: int = 20_480, games: int = 100, n_envs: int = 4,
        n_steps: int = 256, seed: int = 0, **env_kwargs: Any) -> dict[str, float]:
    """Train for `steps` learner steps, then play `games` against random."""
    torch.set_num_threads(1)
    model = make_model(policy, n_envs=n_envs, n_steps=n_steps, seed=seed, **env_kwargs)
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    seconds = time.perf_counter() - start
    score = score_against_random(model, games, **env_kwargs)
    return {"steps": float(model.num_timesteps), "seconds": seconds,
            "steps_per_second": model.num_timesteps / seconds, "score": score}


def main() -> None:
    args = build_parser().parse_args()
    for policy in (["mlp", "cnn"] if args.policy == "both" else [args.policy]):
        r = run(policy, args.steps, args.games)
        print(f"{policy}: {r['steps']:,.0f} steps in {r['seconds']:.0f} s "
              f"({r['steps_per_second']:.0f} steps/s); against random over {args.games} "
              f"games: {100 * r['score']:.1f}%")
    np.set_printoptions()


if __name__ == "__main__":
    main()

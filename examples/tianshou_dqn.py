"""Tianshou 2.x multi-agent: a DQN learner against a masked random player over
``tianshou.env.PettingZooEnv`` (the pattern of Tianshou's tic-tac-toe example).

``PettingZooEnv(damii_env.env("damii"))`` gives each step's observation as ``obs`` (the
planes, from the mover's side), ``mask`` (the legal hops) and ``agent_id``;
``MultiAgentOffPolicyAlgorithm`` hands each step to the seat's algorithm. The learner is
``player_1`` (Black, second to move); a multi-capture is several steps of the same agent.

Measured with ``python -W ignore examples/tianshou_dqn.py`` (defaults: 5 epochs of 2,000
environment steps, both seats' steps counted, 4 environments; then 50 test games;
2026-12-01, on the 2-core machine of benchmarks/RESULTS.md while three other training
processes loaded it; torch 2.13 CPU on 1 thread; Tianshou 2.0.1): 10,000 steps in 144 s
of training (70 steps/s; 177 s wall in all); against random: 58.0% of the points.
"""

from __future__ import annotations

import argparse
import logging
import time
from typing import Any

# ruff: noqa: E402 - the imports after build_parser may be missing; --help must not need them

EPILOG = ('Needs tianshou 2.x: pip install "tianshou>=2"'
          "; the rest of this file's docstring says what the example does "
          "and what it measured.")
"""The end of --help: what the example needs."""


def build_parser() -> argparse.ArgumentParser:
    """The options; the description is the docstring's first paragraph."""
    p = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()),
                                epilog=EPILOG)
    p.add_argument("--epochs", type=int, default=5,
                   help="training epochs"
                   " (default: %(default)s)")
    p.add_argument("--epoch-steps", type=int, default=2000,
                   help="environment steps per epoch (both seats counted)"
                   " (default: %(default)s)")
    p.add_argument("--games", type=int, default=50,
                   help="test games afterwards"
                   " (default: %(default)s)")
    return p


if __name__ == "__main__":  # --help answers before the imports below, which may be missing
    build_parser().parse_args()

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import damii_env

LEARNER = 1
"""Seat of the learner: 1 = player_1 (Black)."""


def make_env(variant: str = "damii", **rule_options: Any) -> PettingZooEnv:
    return PettingZooEnv(damii_env.env(variant, **rule_options))


def make_algorithm(env: PettingZooEnv, hidden: int = 256, lr: float = 1e-3
                   ) -> MultiAgentOffPolicyAlgorithm:
    space = env.observation_space["observation"]
    net = Net(state_shape=space.shape, action_shape=int(env.action_space.n),
              hidden_sizes=[hidden, hidden])
    learner = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space,
                                                 eps_training=0.1, eps_inference=0.0),
                  optim=AdamOptimizerFactory(lr=lr), gamma=0.99, n_step_return_horizon=3,
                  target_update_freq=200)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    seats = [opponent, learner] if LEARNER == 1 else [learner, opponent]
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env)


def run(epochs: int = 5, epoch_steps: int = 2000, games: int = 50, n_envs: int = 4,
        seed: int = 0, variant: str = "damii", **rule_options: Any) -> dict[str, float]:
    """Train, then play `games` test episodes; the score is the learner's points share."""
    torch.set_num_threads(1)
    # Tianshou logs a line per episode batch about its 2-column (per-agent) returns
    logging.getLogger("tianshou").setLevel(logging.ERROR)
    torch.manual_seed(seed)
    np.random.seed(seed)
    env_fn = lambda: make_env(variant, **rule_options)  # noqa: E731
    train_envs = DummyVectorEnv([env_fn for _ in range(n_envs)])
    test_envs = DummyVectorEnv([env_fn for _ in range(n_envs)])
    train_envs.seed(seed)
    test_envs.seed(seed + 1)
    algorithm = make_algorithm(env_fn())
    train_collector = Collector[CollectStats](
        algorithm, train_envs, VectorReplayBuffer(20_000, n_envs), exploration_noise=True)
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=False)
    train_collector.reset()
    train_collector.collect(n_step=64 * n_envs)
    start = time.perf_counter()
    result = algorithm.run_training(OffPolicyTrainerParams(
        training_collector=train_collector, test_collector=test_collector,
        max_epochs=epochs, epoch_num_steps=epoch_steps, collection_step_num_env_steps=16,
        test_step_num_episodes=n_envs, batch_size=64,
        update_step_num_gradient_steps_per_sample=0.25, test_in_training=False,
        multi_agent_return_reduction=lambda rews: rews[:, LEARNER], show_progress=False,
        verbose=False))
    seconds = time.perf_counter() - start
    steps = float(result.train_step)
    stats = test_collector.collect(n_episode=games, reset_before_collect=True)
    returns = np.asarray(stats.returns)[:, LEARNER]
    return {"steps": steps, "seconds": seconds, "steps_per_second": steps / seconds,
            "score": float(np.mean((returns + 1.0) / 2.0))}


def main() -> None:
    args = build_parser().parse_args()
    r = run(args.epochs, args.epoch_steps, args.games)
    print(f"tianshou DQN: {r['steps']:,.0f} env steps in {r['seconds']:.0f} s "
          f"({r['steps_per_second']:.0f} steps/s); against random over {args.games} games: "
          f"{100 * r['score']:.1f}%")


if __name__ == "__main__":
    main()

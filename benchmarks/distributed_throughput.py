"""Self-play on Ray against the local trainer: samples/s of each trainer, in one run.

For each trainer (TD-leaf, AlphaZero-style, PPO) on a small Damii config:

- **local**: the trainer as ``damii train`` runs it (play, then learn, in this process);
- **ray 1** and **ray 2**: the same config with ``ray_address`` on a local Ray instance
  (``ray.init(num_cpus=N)``) and 1 or 2 self-play actors, the learner in this process.

Samples/s are counted over ``--seconds`` of iterations after a warm-up (the first
iteration; for Ray, the actors' start-up and their first batch), as ``damii train``
counts them: decisions played (local) or samples taken by the learner (Ray). On a
machine with fewer cores than actors + learner the actors compete with the learner.

Needs the distributed extra. Run by hand (results go to ``benchmarks/RESULTS.md`` with
the date, the commit and how loaded the machine was)::

    python benchmarks/distributed_throughput.py --seconds 30
"""

from __future__ import annotations

import argparse
import os
import time

import torch

from damii_training.config import config_from_dict
from damii_training.distributed import distributed_trainer
from damii_training.run import TRAINERS

BASE = {"variant": "damii", "rule_options": {"turn_limit": 200}, "trunk": "mlp",
        "channels": 128, "blocks": 1, "num_envs": 64, "rollout_steps": 16,
        "minibatch_size": 512, "epochs": 1, "torch_threads": 1, "search_depth": 1,
        "search_nodes": 200, "simulations": 8, "total_steps": 10**9}
"""A small config every trainer runs (the TD-leaf network shape, short rollouts)."""


def rate(trainer, seconds: float) -> tuple[float, int]:
    """Samples/s over `seconds` of iterations after one warm-up iteration."""
    trainer.iterate()
    start_samples, t0 = trainer.samples, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        trainer.iterate()
    return (trainer.samples - start_samples) / (time.perf_counter() - t0), trainer.iteration


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--algorithms", nargs="+", default=["tdleaf", "alphazero", "ppo"])
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray instance")
    args = parser.parse_args()
    import ray

    torch.set_num_threads(1)
    print(f"# {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start; "
          f"{args.seconds:g} s per row")
    print("| trainer | mode | samples/s | iterations |")
    print("| --- | --- | ---: | ---: |")
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    try:
        for algorithm in args.algorithms:
            local = config_from_dict({**BASE, "algorithm": algorithm})
            r, it = rate(TRAINERS[algorithm](local), args.seconds)
            print(f"| {algorithm} | local | {r:,.0f} | {it} |", flush=True)
            for actors in (1, 2):
                cfg = config_from_dict({**BASE, "algorithm": algorithm, "ray_address": "auto",
                                        "ray_actors": actors})
                t = distributed_trainer(cfg)
                try:
                    r, it = rate(t, args.seconds)
                finally:
                    t.close()
                print(f"| {algorithm} | ray, {actors} actor{'s' * (actors > 1)} | {r:,.0f} "
                      f"| {it} |", flush=True)
    finally:
        ray.shutdown()
    print(f"# load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""AEC steps per second of damii-env's PettingZoo environments, with PettingZoo's
connect_four_v3 (and chess_v6, if python-chess is installed) as anchors in the same run.

Each environment is played with uniformly random legal actions from the action mask,
through the standard loop (``agent_iter`` / ``last`` / ``step``) of the wrapped
``env()``, restarting when a game ends; a "step" is one ``env.step`` call (for the
draughts variants one hop, so a multi-capture is several steps). The ``raw`` rows play
the unwrapped ``raw_env`` the same way.

Run from the repository root::

    python benchmarks/aec_throughput.py --seconds 3
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")


def measure(make: Callable[[], Any], seconds: float, seed: int = 0) -> tuple[float, int]:
    """Random-play steps per second of an AEC environment, and games finished."""
    env = make()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = games = 0
    # warm-up: one short game so that compilation and caches are out of the timing
    for _ in env.agent_iter(50):
        obs, _r, term, trunc, _i = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    env.reset(seed=seed)
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(200):
            obs, _r, term, trunc, _i = env.last()
            if term or trunc:
                env.step(None)
                if not env.agents:
                    games += 1
                    env.reset()
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
    elapsed = time.perf_counter() - start
    env.close()
    return steps / elapsed, games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per environment")
    args = parser.parse_args()

    import damii_env
    from damii_env.envs import all_environments

    rows: list[tuple[str, Callable[[], Any]]] = []
    for name, module in all_environments.items():
        rows.append((name, module.env))
        rows.append((f"{name} (raw)", module.raw_env))
    rows.append(("damii_v0 orientation=standard", lambda: damii_env.env(orientation="standard")))
    for anchor in ("connect_four_v3", "chess_v6"):
        try:
            module = importlib.import_module(f"pettingzoo.classic.{anchor}")
        except ImportError as exc:
            print(f"# {anchor} skipped: {exc}")
            continue
        rows.append((f"pettingzoo {anchor}", module.env))

    print(f"# python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs, {args.seconds:g} s per row")
    print("| environment | steps/s | games finished |")
    print("| --- | ---: | ---: |")
    for name, make in rows:
        rate, games = measure(make, args.seconds)
        print(f"| {name} | {rate:,.0f} | {games} |", flush=True)


if __name__ == "__main__":
    main()

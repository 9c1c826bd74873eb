#!/usr/bin/env python
"""Hops per second of the public vector environment, with the engine alone and OpenSpiel's
10x10 checkers measured in the same run (round-robin, pooled over repeats).

Rows (4,096 games by default, random play):

- ``engine``: ``eng.sample_actions`` + ``eng.step`` + ``eng.reset_where``, no observation;
- ``vector env``: ``DraughtsVectorEnv.step`` (observation planes and mask of every game,
  rewards, flags, info, autoreset), actions drawn by the engine's sampler from the games'
  legal hops (``envs.engine.sample_actions(envs.game_state, rng)``);
- ``vector env, pick over mask``: the same with a uniform pick from ``info["action_mask"]``
  (a compiled scan of each mask row: what a policy reading the mask pays);
- the engine and the vector env again on one numba thread (``numba.set_num_threads(1)``
  around each step: the serial kernels), which a loaded machine can favour;
- OpenSpiel ``checkers`` 10x10 (``legal_actions`` + ``apply_action``; one action = one hop).

Hops count the games that were going on (a game restarting in NEXT_STEP mode plays none).

Run from the repository root::

    python benchmarks/vector_env_throughput.py --seconds 3 --repeats 3
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numba
import numpy as np
from numba import njit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from engine_throughput import (  # noqa: E402
    Sample,
    cpu_counters,
    engine_stepper,
    log,
    machine_lines,
    openspiel_stepper,
    other_load,
    timed_sample,
)

GOAL_HOPS = 1_000_000
GOAL_OPENSPIEL = 5.0


@njit(cache=True)
def pick_from_masks(mask, uniforms, out):  # pragma: no cover - numba
    """A uniform pick among the set entries of each mask row (-1 where none)."""
    for b in range(mask.shape[0]):
        n = 0
        for a in range(mask.shape[1]):
            n += mask[b, a]
        if n == 0:
            out[b] = -1
            continue
        k = min(int(uniforms[b] * n), n - 1)
        for a in range(mask.shape[1]):
            if mask[b, a]:
                if k == 0:
                    out[b] = a
                    break
                k -= 1


def vector_stepper(variant: str, batch: int, over_mask: bool, seed: int):
    from damii_env.vector_env import DraughtsVectorEnv

    envs = DraughtsVectorEnv(batch, variant)
    _obs, info = envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    actions = np.empty(batch, dtype=np.int64)
    state = {"info": info}

    def step() -> int:
        if over_mask:
            pick_from_masks(state["info"]["action_mask"], rng.random(batch), actions)
            acts = actions
        else:
            acts = envs.engine.sample_actions(envs.game_state, rng)
        _o, _r, _t, _u, state["info"] = envs.step(acts)
        return int(np.count_nonzero(state["info"]["actor"] >= 0))

    return step


def one_thread(step):
    """`step` run on one numba thread (the serial kernels)."""
    def stepped() -> int:
        threads = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            return step()
        finally:
            numba.set_num_threads(threads)

    return stepped


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", default="damii")
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--warmup", type=float, default=0.5)
    p.add_argument("--window", type=float, default=0.25)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    from damii_env import Engine

    machine = machine_lines()
    log("\n".join(machine))
    counters = cpu_counters()
    eng = Engine(args.variant)
    rows = {
        "engine alone (no observation)": lambda s: engine_stepper(eng, args.batch, False, s),
        "vector env (obs + mask), engine pick": lambda s: vector_stepper(
            args.variant, args.batch, False, s),
        "vector env (obs + mask), pick over mask": lambda s: vector_stepper(
            args.variant, args.batch, True, s),
        "engine alone, 1 thread": lambda s: one_thread(
            engine_stepper(eng, args.batch, False, s)),
        "vector env (obs + mask), engine pick, 1 thread": lambda s: one_thread(
            vector_stepper(args.variant, args.batch, False, s)),
    }
    try:
        import pyspiel  # noqa: F401

        rows["OpenSpiel checkers 10x10"] = lambda s: openspiel_stepper(random.Random(s))
    except ImportError:
        log("OpenSpiel not installed: no anchor")
    samples = {name: Sample() for name in rows}
    for make in rows.values():  # compile / warm caches
        step = make(args.seed)
        for _ in range(3):
            step()
    for r in range(args.repeats):
        for name, make in rows.items():
            got = timed_sample(make(args.seed + r), args.seconds, args.warmup, args.window)
            samples[name].add(got)
            log(f"  round {r + 1}: {name}: {got.overall:,.0f}/s (median {got.median:,.0f})")
    machine.append(f"- CPU used by other processes during the run: {other_load(counters)}")
    spiel = samples.get("OpenSpiel checkers 10x10")
    lines = [*machine, "",
             f"Settings: {args.variant}, {args.batch} games, {args.repeats} x {args.seconds:g} s "
             f"per row (round-robin), {args.warmup:g} s warm-up, {args.window:g} s windows.", "",
             "| row | hops/s overall | hops/s median window | ÷ OpenSpiel overall | "
             "÷ OpenSpiel median |", "|---|---:|---:|---:|---:|"]
    for name, s in samples.items():
        ratio = (f"{s.overall / spiel.overall:.1f}x | {s.median / spiel.median:.1f}x"
                 if spiel and spiel.overall else "— | —")
        lines.append(f"| {name} | {s.overall:,.0f} | {s.median:,.0f} | {ratio} |")
    env = samples["vector env (obs + mask), engine pick"]
    verdict = "MET" if env.median >= GOAL_HOPS else "NOT MET"
    lines += ["", f"Goal >= {GOAL_HOPS:,} hops/s with obs + mask (median window): "
                  f"{env.median:,.0f} -> {verdict}"]
    if spiel and spiel.median:
        k = env.median / spiel.median
        lines.append(f"Goal >= {GOAL_OPENSPIEL:g}x OpenSpiel (median windows): {k:.1f}x -> "
                     f"{'MET' if k >= GOAL_OPENSPIEL else 'NOT MET'}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a new user waits for before the first move: CPU and wall seconds of each first step,
in a fresh process whose compiled-code cache holds nothing but what the packages ship.

Steps, as issue 59's table: ``import damii_env``; the README's first AEC snippet up to its
first ``env.step`` (Damii); then the first ``Game`` move (International); then the first
``pretrained:international`` move. A second fresh process makes a ``pretrained:international``
move first. Each process gets an empty cache folder of its own (``DAMII_CACHE_DIR``), so
nothing compiled by an earlier run is reused; ``--no-shipped`` ignores the shipped cache too
(``DAMII_SHIPPED_CACHE=0``), which measures a compilation from nothing.

    python benchmarks/cold_start.py               # with the shipped cache
    python benchmarks/cold_start.py --no-shipped  # compiling everything
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

STEPS = r"""
import json, sys, time
marks = []
def mark(name):
    marks.append((name, time.process_time(), time.perf_counter()))
mark("start")
import numpy as np
import damii_env
mark("import damii_env")
if "env" in sys.argv:
    env = damii_env.env(variant="damii")
    env.reset(seed=42)
    rng = np.random.default_rng(42)
    observation, reward, termination, truncation, info = env.last()
    env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    mark("first AEC env.step (Damii)")
    game = damii_env.Game("international")
    game.push(game.legal_moves()[0])
    mark("then the first Game move (International)")
from damii_env import Game, make_player
player = make_player("pretrained:international", "international")
game = Game("international")
game.push(player.choose(game))
mark("first pretrained:international move" if "env" not in sys.argv
     else "then the first pretrained:international move")
print(json.dumps(marks))
"""


def run(steps: str, shipped: bool) -> list[tuple[str, float, float]]:
    """Run the steps in a fresh process with an empty cache; (step, CPU s, wall s) each."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, DAMII_CACHE_DIR=cache,
                   DAMII_SHIPPED_CACHE="1" if shipped else "0")
        out = subprocess.run([sys.executable, "-c", STEPS, steps], env=env, check=True,
                             capture_output=True, text=True).stdout
    marks = json.loads(out.strip().splitlines()[-1])
    return [(name, cpu - marks[i][1], wall - marks[i][2])
            for i, (name, cpu, wall) in enumerate(marks[1:])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-shipped", action="store_true",
                        help="ignore the shipped cache: compile everything")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}; shipped cache "
          f"{'ignored' if args.no_shipped else 'used'}")
    print(f"{'step':50} {'CPU s':>8} {'wall s':>8}")
    for steps in ("env", "search"):
        for name, cpu, wall in run(steps, not args.no_shipped):
            print(f"{name:50} {cpu:8.1f} {wall:8.1f}", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python
"""Alpha-beta search speed: nodes per second for each variant, on positions from play.

Each position comes from a seeded random game (after 10, 20, ... plies); the agent
searches it to a fixed depth with a fresh transposition table. Nodes are hop-level
nodes (every position the search enters, including capture continuations). ``--options``
takes the alphabeta spec's search options (docs/SEARCH.md), e.g. the reference player's
``pvs=0,killers=0,history=0,lmr=0,asp=0,tm=old,legacy=1``; give it more than once to
compare players in one run: their searches are interleaved position by position (A/B on
the same machine load) and each one's nodes/s is printed beside its ratio to the first.
A variant a player cannot be built for (``eval=learned`` where no weights are shipped)
is reported as such. The nodes a search needs to reach the depth are printed beside the speed.

    python benchmarks/alphabeta_nodes.py [--depth 6] [--positions 8] [--options ...]...
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time

from damii_agents.registry import make_agent
from damii_agents.search.evaluation import PatternWeightsError
from damii_env import VARIANTS, Game

REFERENCE = "pvs=0,killers=0,history=0,lmr=0,asp=0,tm=old,legacy=1"


def positions(variant: str, count: int, seed: int = 0) -> list[Game]:
    rng = random.Random(seed)
    out: list[Game] = []
    while len(out) < count:
        game = Game(variant)
        for ply in range(200):
            if game.is_over():
                break
            if ply and ply % 10 == 0 and len(game.legal_moves()) > 1:
                out.append(game.copy())
            game.push(rng.choice(game.legal_moves()))
    return out[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--positions", type=int, default=8)
    parser.add_argument("--options", action="append",
                        help="alphabeta spec options, e.g. lmr=0 (repeat to compare; "
                             "'reference' names the reference player's options)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="search each position this many times (longer, steadier timings)")
    args = parser.parse_args()
    option_sets = [REFERENCE if o == "reference" else o for o in (args.options or [""])]
    specs = [f"alphabeta:depth={args.depth}" + (f",{o}" if o else "") for o in option_sets]
    print(f"# alpha-beta nodes/s, depth {args.depth}, {args.positions} positions per variant, "
          f"searched {args.repeat}x each")
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}, load average at start {os.getloadavg()[0]:.2f}")
    print("| variant | player | nodes | seconds | nodes/s | vs first |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for variant in VARIANTS:
        agents = {}
        for spec in specs:
            try:
                agents[spec] = make_agent(spec, variant)
            except PatternWeightsError as error:
                print(f"| {variant} | `{spec}` | - | - | not built: {error} | - |")
        for agent in agents.values():
            agent.choose(Game(variant))  # compile and warm up
        nodes = dict.fromkeys(agents, 0)
        seconds = dict.fromkeys(agents, 0.0)
        for game in positions(variant, args.positions):
            for _ in range(args.repeat):
                for spec, agent in agents.items():
                    agent.reset()
                    agent.choose(game)
                    nodes[spec] += agent.nodes
                    seconds[spec] += agent.search_time
        first = None
        for spec in agents:
            speed = nodes[spec] / seconds[spec]
            first = first or speed
            print(f"| {variant} | `{spec}` | {nodes[spec]:,} | {seconds[spec]:.2f} | "
                  f"{speed:,.0f} | {speed / first:.2f} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Alpha-beta search speed: nodes per second for each variant, on positions from play.

Each position comes from a seeded random game (after 10, 20, ... plies); the agent
searches it to a fixed depth with a fresh transposition table. Nodes are the positions
the search enters, one a whole move (before 2026-12-05, and in ``--reference``'s pinned
search, one a hop: a capture of three pieces was three nodes). ``--options``
takes the alphabeta spec's options (``eval=learned``, ``tt=20``); give it more than once to
compare players in one run: their searches are interleaved position by position (A/B on
the same machine load) and each one's nodes/s is printed beside its ratio to the first.
``--reference`` puts the reference player first (the search of the pinned commit in
:mod:`reference`, run in a child process on the same positions, just before the others
in each variant). A variant a player cannot be built for (``eval=learned`` where no
weights are shipped) is reported as such. The nodes a search needs to reach the depth are
printed beside the speed.

    python benchmarks/alphabeta_nodes.py [--depth 6] [--positions 8] [--reference] \
        [--options ...]...
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time

from damii_env import VARIANTS, Game


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
                        help="alphabeta spec options, e.g. eval=learned (repeat to compare)")
    parser.add_argument("--reference", action="store_true",
                        help="measure the reference player of the pinned commit first "
                             "(benchmarks/reference.py)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="search each position this many times (longer, steadier timings)")
    args = parser.parse_args()
    from reference import REFERENCE_COMMIT, run_nodes

    from damii_agents.search.patterns import PatternWeightsError
    from damii_env.player import make_player

    specs = [f"alphabeta:depth={args.depth}" + (f",{o}" if o else "")
             for o in (args.options or [""])]
    print(f"# alpha-beta nodes/s, depth {args.depth}, {args.positions} positions per variant, "
          f"searched {args.repeat}x each")
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}, load average at start {os.getloadavg()[0]:.2f}")
    print("| variant | player | nodes | seconds | nodes/s | vs first |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for variant in VARIANTS:
        agents = {}
        first = None
        if args.reference:
            ref = run_nodes(variant, args.depth, args.positions, args.repeat)
            first = ref["nodes"] / ref["seconds"]
            print(f"| {variant} | reference (commit {REFERENCE_COMMIT}) | {ref['nodes']:,} | "
                  f"{ref['seconds']:.2f} | {first:,.0f} | 1.00 |")
        for spec in specs:
            try:
                agents[spec] = make_player(spec, variant)
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
        for spec in agents:
            speed = nodes[spec] / seconds[spec]
            first = first or speed
            print(f"| {variant} | `{spec}` | {nodes[spec]:,} | {seconds[spec]:.2f} | "
                  f"{speed:,.0f} | {speed / first:.2f} |")


if __name__ == "__main__":
    main()

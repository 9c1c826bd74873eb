#!/usr/bin/env python
"""Alpha-beta search speed: nodes per second for each variant, on positions from play.

Each position comes from a seeded random game (after 10, 20, ... plies); the agent
searches it to a fixed depth with a fresh transposition table. Nodes are hop-level
nodes (every position the search enters, including capture continuations). ``--options``
takes the alphabeta spec's search options (docs/SEARCH.md), e.g. the reference player's
``pvs=0,killers=0,history=0,lmr=0,asp=0,tm=old,legacy=1``; the nodes a search needs to
reach the depth are printed beside the speed.

    python benchmarks/alphabeta_nodes.py [--depth 6] [--positions 8] [--options ...]
"""

from __future__ import annotations

import argparse
import platform
import random
import time

from damii_agents.registry import make_agent
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
    parser.add_argument("--options", default="", help="alphabeta spec options, e.g. lmr=0")
    args = parser.parse_args()
    spec = f"alphabeta:depth={args.depth}" + (f",{args.options}" if args.options else "")
    print(f"# alpha-beta nodes/s, {spec}, {args.positions} positions per variant")
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}")
    print("| variant | nodes | seconds | nodes/s |")
    print("| --- | ---: | ---: | ---: |")
    for variant in VARIANTS:
        agent = make_agent(spec, variant)
        agent.choose(Game(variant))  # compile and warm up
        nodes = 0
        seconds = 0.0
        for game in positions(variant, args.positions):
            agent.reset()
            agent.choose(game)
            nodes += agent.nodes
            seconds += agent.search_time
        print(f"| {variant} | {nodes:,} | {seconds:.2f} | {nodes / seconds:,.0f} |")


if __name__ == "__main__":
    main()

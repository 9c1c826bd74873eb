#!/usr/bin/env python
"""``damii analyse`` by hand: how long a game's review takes, and how far its ``??`` marks
hold up under a search twice as long.

    python benchmarks/analyse_review.py GAMES.pdn                      # time each game
    python benchmarks/analyse_review.py GAMES.pdn --agreement --games 20

For each game of the file (the first ``--games``): the review's wall time (``--time`` a
position, ``--workers`` processes, the start of the worker processes included, as the
command does), its plies and marks. With ``--agreement``, each move marked ``??`` is
searched again (both its positions, a fresh player, ``2 x --time`` a position; with
``--warm K`` the K positions before it first, its table kept) and counts
as agreeing when that search's loss is still at least the blunder threshold; the share
that agrees is printed (the issue's target: 90%). The load average is printed first and
last (the machine is shared: docs/ANALYSE.md lists the figures with their load).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from damii_agents.review import Thresholds, analyse_game, recheck, searchers
from damii_env.pdn import read_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pdn")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--time", type=float, default=0.2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--player", default=None)
    parser.add_argument("--agreement", action="store_true")
    parser.add_argument("--factor", type=float, default=2.0,
                        help="the recheck searches this many times --time (default: 2)")
    parser.add_argument("--balanced", action="store_true",
                        help="the recheck values the engine's move by the position it leads "
                             "to, as the review's second look does")
    parser.add_argument("--warm", type=int, default=0,
                        help="the recheck searches this many positions before each move "
                             "first and keeps its table (0: a cleared table a position)")
    args = parser.parse_args()
    print(f"load {os.getloadavg()}")
    blunder = Thresholds().blunder
    agree = total = 0
    with searchers(args.workers) as runner:
        for n, game in enumerate(read_file(args.pdn)[:args.games], 1):
            agree, total = _one(n, game, runner, args, blunder, agree, total)
    if args.agreement:
        share = agree / total if total else float("nan")
        print(f"?? moves that lose at least {blunder:g} by a search of "
              f"{args.factor * args.time:g} s: "
              f"{agree}/{total} = {share:.1%}")
    print(f"load {os.getloadavg()}")


def _one(n: int, game: Any, runner: Any, args: argparse.Namespace, blunder: float,
         agree: int, total: int) -> tuple[int, int]:
    """Review game `n`, print its line; the ?? moves that held and all, so far."""
    t0 = time.perf_counter()
    review = analyse_game(game, args.player, args.time, args.workers, runner=runner)
    wall = time.perf_counter() - t0
    marks = {m: sum(1 for r in review.moves if r.mark == m) for m in ("?!", "?", "??")}
    line = (f"game {n}: {len(review.moves)} plies, {wall:.1f} s "
            f"({wall / (len(review.moves) + 1):.3f} s a position), marks {marks}")
    if args.agreement:
        plies = [r.ply for r in review.moves if r.mark == "??"]
        losses = recheck(review, plies, args.factor * args.time, warm=args.warm,
                         balanced=args.balanced)
        held = sum(1 for x in losses if x >= blunder)
        agree, total = agree + held, total + len(plies)
        line += f", ?? held {held}/{len(plies)} ({[round(x) for x in losses]})"
    print(line, flush=True)
    return agree, total


if __name__ == "__main__":
    main()

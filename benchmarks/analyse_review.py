#!/usr/bin/env python
"""``damii analyse`` by hand: how long a game's review takes, and how far its ``??`` marks
hold up under a search twice as long.

    python benchmarks/analyse_review.py GAMES.pdn                      # time each game
    python benchmarks/analyse_review.py GAMES.pdn --agreement --games 20
    python benchmarks/analyse_review.py GAMES.pdn --agreement --truth 2 --json out.json

For each game of the file (the first ``--games``): the review's wall time (``--time`` a
position, ``--workers`` processes, the start of the worker processes included, as the
command does), its plies and marks. With ``--agreement``, each move marked ``??`` (and
each marked ``?``) is searched again (both its positions, a fresh player in this
process, each position on a cleared table, ``--factor x --time`` a position:
:func:`damii_agents.review.recheck_searches`) and counts as agreeing when that search's
loss (:func:`~damii_agents.review.move_loss`, the position before valued by its own
search) is still at least the mark's threshold; the share that agrees is printed (the
issue's target: 90% of the ``??``). ``--truth S`` searches the same moves once more, S
seconds a position, as a deeper view than the check. The load average is printed first
and last (the machine is shared: docs/ANALYSE.md lists the figures with their load);
``--json`` writes each checked move's searches.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import damii_agents.review as review_module
from damii_agents.review import (
    Thresholds,
    analyse_game,
    move_loss,
    recheck_searches,
    review_moves,
    searchers,
)
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
    parser.add_argument("--truth", type=float, default=0.0,
                        help="also search the checked moves this many seconds a position "
                             "(0: not)")
    parser.add_argument("--json", default=None, help="write each checked move here")
    parser.add_argument("--check-from", type=float, default=None,
                        help="check every move whose loss by the review's first look or by "
                             "its second reaches this (search units), whatever its mark: "
                             "the moves a longer search may call blunders that the review "
                             "did not (recall); default: the moves marked ? and ??")
    parser.add_argument("--verify-factor", type=float, default=None,
                        help="an experiment: the review's second look searches this many "
                             "times --time (default: review.VERIFY_FACTOR)")
    parser.add_argument("--decided", type=float, default=None,
                        help="an experiment: the losses' clamp, in the review and the check "
                             "(default: review.DECIDED; 1000 as before 2026-12-07)")
    args = parser.parse_args()
    if args.verify_factor is not None:
        review_module.VERIFY_FACTOR = args.verify_factor
    if args.decided is not None:
        review_module.DECIDED = args.decided
    print(f"load {os.getloadavg()}", flush=True)
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    with searchers(args.workers) as runner:
        for n, game in enumerate(read_file(args.pdn)[:args.games], 1):
            rows.extend(_one(n, game, runner, args))
    if args.agreement:
        thresholds = Thresholds()
        for mark, at_least in (("??", thresholds.blunder), ("?", thresholds.mistake)):
            _share(rows, mark, at_least, "check", f"a search of {args.factor * args.time:g} s")
            if args.truth:
                _share(rows, mark, at_least, "truth", f"a search of {args.truth:g} s")
        if args.truth:
            lost = [r for r in rows if r["truth"] >= thresholds.blunder]
            found = sum(1 for r in lost if r["mark"] == "??")
            print(f"moves checked that lose at least {thresholds.blunder:g} by a search of "
                  f"{args.truth:g} s: {len(lost)}, marked ?? by the review: {found} (recall "
                  f"among the checked moves)")
    print(f"{time.perf_counter() - t0:.0f} s in all; load {os.getloadavg()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


def _share(rows: list[dict[str, Any]], mark: str, at_least: float, key: str,
           what: str) -> None:
    losses = [r[key] for r in rows if r["mark"] == mark]
    held = sum(1 for x in losses if x >= at_least)
    share = held / len(losses) if losses else float("nan")
    print(f"{mark} moves that lose at least {at_least:g} by {what}: "
          f"{held}/{len(losses)} = {share:.1%}")


def _one(n: int, game: Any, runner: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Review game `n`, print its line; its checked moves."""
    t0 = time.perf_counter()
    review = analyse_game(game, args.player, args.time, args.workers, runner=runner)
    wall = time.perf_counter() - t0
    marks = {m: sum(1 for r in review.moves if r.mark == m) for m in ("?!", "?", "??")}
    line = (f"game {n}: {len(review.moves)} plies, {wall:.1f} s "
            f"({wall / (len(review.moves) + 1):.3f} s a position), marks {marks}")
    rows = []
    if args.agreement:
        first = review_moves(game, review.positions, review.thresholds)
        if args.check_from is None:
            checked = [r for r in review.moves if r.mark in ("?", "??")]
        else:
            checked = [r for r, f in zip(review.moves, first, strict=True)
                       if max(r.loss, f.loss) >= args.check_from]
        plies = [r.ply for r in checked]
        searches = {"check": recheck_searches(review, plies, args.factor * args.time,
                                              warm=args.warm, balanced=args.balanced)}
        if args.truth:
            searches["truth"] = recheck_searches(review, plies, args.truth, seed=2)
        for i, r in enumerate(checked):
            row = {"game": n, "ply": r.ply, "move": r.move, "mark": r.mark,
                   "loss": r.loss, "first": first[r.ply].loss, "best": r.best}
            for key, found in searches.items():
                before, after = found[i]
                row[key] = move_loss(before, after, r.move)
                row[f"{key}_searches"] = [[p.value, p.depth, p.best] for p in (before, after)]
            rows.append(row)
        blunders = [x for x in rows if x["mark"] == "??"]
        line += (f", ?? held {sum(x['check'] >= Thresholds().blunder for x in blunders)}"
                 f"/{len(blunders)} ({[round(x['check']) for x in blunders]})")
    print(line, flush=True)
    return rows


if __name__ == "__main__":
    main()

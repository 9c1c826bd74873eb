"""Precision and recall of the review's ``??`` for a range of blunder margins, from the
rows that ``benchmarks/analyse_review.py --agreement --truth 2 --json`` writes (each checked
move: the review's loss ``loss`` (its second look), ``first`` (its first look, where
recorded), the check's loss at 0.4 s ``check`` and the 2 s search's ``truth``).

A move is a ``??`` with margin m when its review loss is at least 200 + m (``--rule two``:
the first look's loss too). Precision: the share of those ``??`` whose check (0.4 s) and
2 s losses are at least 200. Recall: of the checked moves that lose at least 200 by 2 s,
the share marked ``??``. The review's searches are the same for every margin: only the
mark changes (the margin is applied to the second look's loss, as agents/review.py does).

    python margins.py tune_international_seed0.json ... [--rule two] [--margins 0,10,20]
"""

import argparse
import json

BLUNDER = 200.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("json", nargs="+")
    parser.add_argument("--rule", choices=("second", "two"), default="second")
    parser.add_argument("--margins", default="0,5,10,15,20,25,30,40")
    args = parser.parse_args()
    rows = [r for name in args.json for r in json.load(open(name))]
    lost = [r for r in rows if r["truth"] >= BLUNDER]
    print(f"{len(rows)} checked moves, {len(lost)} lose at least {BLUNDER:g} by 2 s")
    print("margin  ??  held at 0.4 s  held at 2 s  recall (of those at 2 s)")
    for m in (float(x) for x in args.margins.split(",")):
        def blunder(r, m=m):
            loss = r["loss"] if args.rule == "second" else min(r["loss"], r["first"])
            return loss >= BLUNDER + m
        marked = [r for r in rows if blunder(r)]
        check = sum(r["check"] >= BLUNDER for r in marked)
        truth = sum(r["truth"] >= BLUNDER for r in marked)
        found = sum(1 for r in lost if blunder(r))
        n = len(marked) or float("nan")
        print(f"{m:6g}  {len(marked):2d}  {check:3d} ({check / n:6.1%})  {truth:3d} "
              f"({truth / n:6.1%})  {found}/{len(lost)} ({found / (len(lost) or 1):.1%})")


if __name__ == "__main__":
    main()

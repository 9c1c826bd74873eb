#!/usr/bin/env python
"""The equal-time Elo ladder of one variant: random, greedy, the shipped network's policy
alone, the network's own search, the alpha-beta with the handwritten evaluation, the
strongest shipped player (``pretrained:V``) and, in International, dame-rs (an engine this
project did not write, played through the Hub protocol where ``dame`` is installed), every
searching player at the same time a move.
(The ladders published until commit 37a3aee were anchored at the reference alpha-beta of
that commit, which no longer ships: lab/README.md says how to run them there.)

The players meet along a chain of pairings (each next to the one it is closest to, so
that no pairing is a foregone sweep) plus cheap cross links; every game of every pairing
goes into one Bradley-Terry fit (:func:`damii_agents.match.elo.rate`, anchored at the
handwritten alpha-beta, bootstrap 95% intervals). Each pairing is a ``damii eval`` match:
``--clock none``, seats alternated, 2-ply opening ballots, its own seed. Its results are
saved in ``OUT/<pairing>/`` (results.json, results.md, games.pdn) as soon as it ends, and a
pairing whose results are already there is not played again: an interrupted ladder resumes
where it stopped. ``--reuse A,B=PATH`` takes a pairing's games from a ``damii eval``
results.json of two players (its first spec for label A, its second for B: the same
players, possibly by other names, such as ``alphabeta:time=0.1,eval=learned`` for
``pretrained:damii``), a longer match played before.

    python benchmarks/equal_time_ladder.py --variant damii --games 200 --headline-games 400 \
        --out runs/ladder-damii
    python benchmarks/equal_time_ladder.py --variant damii --players random,greedy --games 4

Prints (and writes to ``OUT/ladder.md``) the ladder table and the pairings table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from damii_agents.match import MatchConfig, reports, run_match
from damii_agents.match.elo import rate
from damii_env import VARIANTS
from damii_env.pdn import white_points

ROOT = Path(__file__).resolve().parents[1]
ANCHOR = "alphabeta (handwritten)"
"""The ladder's 0: the shipped search with the handwritten evaluation."""


HEADLINE = (ANCHOR, "pretrained (new)")
"""The pairing the issue's target is about: it gets ``--headline-games``."""


OUTSIDE_ENGINES = {"international": ("dame-rs", 'hub:"dame hub",time={t}', "dame")}
"""An engine this project did not write, the ladder's top rung where it plays the variant
and is installed (dame-rs: ``pip install dame-rs``, its ``dame hub`` a Hub engine,
docs/HUB.md)."""


def default_players(variant: str, seconds: float) -> dict[str, str]:
    """Ladder label -> player spec."""
    t = f"{seconds:g}"
    players = {
        "random": "random",
        "greedy": "greedy",
        "policy alone": f"pretrained:{variant},net=policy",
        "network search": f"pretrained:{variant},net=search,time={t}",
        ANCHOR: f"alphabeta:time={t}",
        "pretrained (new)": f"pretrained:{variant}" + ("" if t == "0.1" else f",time={t}"),
    }
    if variant in OUTSIDE_ENGINES:
        label, spec, program = OUTSIDE_ENGINES[variant]
        if shutil.which(program):  # on PATH
            players[label] = spec.format(t=t)
    return players


def default_pairings(labels: list[str]) -> list[tuple[str, str]]:
    """The chain of neighbours plus the cross links that cost little (no two searchers)."""
    chain = list(zip(labels, labels[1:], strict=False))
    cross = [("random", "policy alone")]
    return chain + [p for p in cross if p[0] in labels and p[1] in labels]


def slug(a: str, b: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", f"{a} vs {b}".lower()).strip("-")


def play_pairing(variant: str, a: str, b: str, games: int, seed: int, workers: int,
                 folder: Path, progress: bool) -> dict:
    """One pairing's results.json, played now or read back from an earlier run."""
    saved = folder / "results.json"
    if saved.is_file():
        return json.loads(saved.read_text())
    start = time.time()
    config = MatchConfig(variant=variant, specs=(a, b), games=games, clock="none",
                         workers=workers, seed=seed)
    result = run_match(config, progress=progress)
    folder.mkdir(parents=True, exist_ok=True)
    reports.save(result, folder)  # results.json last written: its presence means done
    data = json.loads(saved.read_text())
    data["wall_seconds"] = round(time.time() - start, 1)
    data["load_at_end"] = os.getloadavg()[0]
    tmp = saved.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(saved)
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="damii", choices=sorted(VARIANTS))
    parser.add_argument("--time", type=float, default=0.1, help="seconds a move (0.1)")
    parser.add_argument("--games", type=int, default=200, help="games a pairing (200)")
    parser.add_argument("--headline-games", type=int, default=400,
                        help="games of the last pairing: the new player against the handwritten "
                             "alpha-beta")
    parser.add_argument("--players", default=None,
                        help="comma-separated labels to keep (default: all of them)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=None, help="folder (default runs/ladder-VARIANT)")
    parser.add_argument("--reuse", action="append", default=[],
                        help="LABEL_A,LABEL_B=results.json of a damii eval of those two specs")
    parser.add_argument("--reuse-tally", action="append", default=[],
                        help="LABEL_A,LABEL_B=W-D-L[@SOURCE]: a pairing played before, by its "
                             "tally from A's side (the fit has no colour term, so a tally "
                             "rates the same as its games)")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args()

    players = default_players(args.variant, args.time)
    if args.players:
        keep = [x.strip() for x in args.players.split(",")]
        unknown = [x for x in keep if x not in players]
        if unknown:
            parser.error(f"unknown player label(s) {unknown}; expected some of {list(players)}")
        players = {k: v for k, v in players.items() if k in keep}
    labels = list(players)
    out = Path(args.out or ROOT / "runs" / f"ladder-{args.variant}")
    reused: dict[tuple[str, str], Path] = {}
    for item in args.reuse:
        pair, _, path = item.partition("=")
        a, _, b = pair.partition(",")
        if a not in players or b not in players or not Path(path).is_file():
            parser.error(f"--reuse {item!r}: expected LABEL_A,LABEL_B=PATH with labels of "
                         f"{labels} and an existing results.json")
        reused[(a, b)] = Path(path)

    tallies: dict[tuple[str, str], tuple[int, int, int, str]] = {}
    for item in args.reuse_tally:
        pair, _, rest = item.partition("=")
        a, _, b = pair.partition(",")
        counts, _, where = rest.partition("@")
        try:
            w, d, lost = (int(x) for x in counts.split("-"))
        except ValueError:
            w = -1
        if a not in players or b not in players or min(w, 0) < 0:
            parser.error(f"--reuse-tally {item!r}: expected LABEL_A,LABEL_B=W-D-L[@SOURCE] "
                         f"with labels of {labels}")
        tallies[(a, b)] = (w, d, lost, where or "a tally")

    pairings = default_pairings(labels)
    games: list[tuple[int, int, float]] = []
    rows = []
    for n, (a, b) in enumerate(pairings):
        count = args.headline_games if (a, b) == HEADLINE else args.games
        if (a, b) in tallies or (b, a) in tallies:
            if (b, a) in tallies:
                a, b = b, a
            w, d, lost, where = tallies[(a, b)]
            ia, ib = labels.index(a), labels.index(b)
            outcomes = [1.0] * w + [0.5] * d + [0.0] * lost
            for k, pts in enumerate(outcomes):  # seats alternated, as they were played
                games.append((ia, ib, pts) if k % 2 == 0 else (ib, ia, 1.0 - pts))
            total = w + d + lost
            rows.append((a, b, total, w, d, lost, (w + d / 2) / total, None, None, None,
                         f"tally of {where}"))
            continue
        flipped = (b, a) in reused  # given as B,A: its first spec is B
        if flipped:
            a, b = b, a
        if (a, b) in reused:  # its first spec plays A, its second B (the same players
            data = json.loads(reused[(a, b)].read_text())  # by other names, say)
            source = f"reused: {' vs '.join(f'`{s}`' for s in data['specs'])}"
        else:
            data = play_pairing(args.variant, players[a], players[b], count,
                                args.seed + n, args.workers, out / slug(a, b),
                                not args.no_progress)
            source = f"{slug(a, b)}/"
        specs = data["players"]
        if (a, b) not in reused and list(data["specs"]) != [players[a], players[b]]:
            raise SystemExit(f"{source}: played {data['specs']}, not {players[a]!r} and "
                             f"{players[b]!r}")
        index = {specs[0]: labels.index(a), specs[1]: labels.index(b)}
        w = d = lost = 0
        for g in data["games"]:
            pts = white_points(g["result"])
            pts = 0.5 if pts is None else pts  # a game cut without a result: a draw
            games.append((index[g["white"]], index[g["black"]], pts))
            a_pts = pts if g["white"] == specs[0] else 1.0 - pts
            w, d, lost = w + (a_pts == 1.0), d + (a_pts == 0.5), lost + (a_pts == 0.0)
        total = w + d + lost
        rows.append((a, b, total, w, d, lost, (w + d / 2) / total, data.get("seed"),
                     data.get("wall_seconds"), data.get("load_at_end"), source))
    anchor = labels.index(ANCHOR) if ANCHOR in labels else 0
    ratings = rate(labels, games, anchor=anchor, samples=1000, seed=args.seed)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                            capture_output=True).stdout.strip() or "?"
    lines = [f"# Equal-time ladder: {args.variant}, {args.time:g} s a move",
             "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit}, "
             f"{platform.machine()}, {os.cpu_count()} CPUs, load average now "
             f"{os.getloadavg()[0]:.2f}; `--clock none`, seats alternated, 2-ply ballots; "
             f"Bradley-Terry over all {len(games)} games, anchored at "
             f"{labels[anchor]} = 0, bootstrap 95% intervals (one virtual draw a pairing).",
             "",
             "| player | spec | Elo | 95% interval |",
             "| --- | --- | ---: | --- |"]
    for label, r in sorted(zip(labels, ratings, strict=True), key=lambda x: -x[1].elo):
        lines.append(f"| {label} | `{players[label]}` | {r.elo:+.0f} | "
                     f"{reports.interval(r.low, r.high)} |")
    lines += ["", "| pairing | games | W-D-L (first) | score of first | seed | wall | load "
              "at end | results |", "| --- | ---: | --- | ---: | ---: | ---: | ---: | --- |"]
    for a, b, total, w, d, lost, score, seed, wall, load, source in rows:
        wall_text = f"{wall / 60:.0f} min" if wall else "-"
        load_text = f"{load:.1f}" if load is not None else "-"
        seed_text = "-" if seed is None else seed
        lines.append(f"| {a} vs {b} | {total} | {w}-{d}-{lost} | {score:.1%} | {seed_text} | "
                     f"{wall_text} | {load_text} | {source} |")
    text = "\n".join(lines) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / "ladder.md").write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

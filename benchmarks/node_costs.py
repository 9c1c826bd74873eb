#!/usr/bin/env python
"""Where a search node's time goes: nanoseconds per call of the parts the alpha-beta runs
at each node, on positions from play (the positions of ``alphabeta_nodes.py``).

Parts, each timed in a compiled loop over every whole move of each position:

- ``ply_play``: one whole move played into the next row of the ply stack, its moves
  listed (an inner node's child);
- ``ply_play leaf``: the same where the next row's quiet moves are only counted (a child
  at the horizon: most nodes);
- ``learned evaluation``: the shipped tables' value of a leaf row (the regions kept per
  row where the variant has them, as the search does);
- ``regions after a move``: the row's region indices made from its parent's (variants
  with region tables);
- ``totals lead``: Sci-Damath's lead in the totals (points and chips) at a leaf.

The timing loops are compiled without reference counts, as the search's loop is; with
``--refcounts`` they are also timed compiled with them (numba's default): the difference
is what the counts cost around the same inlined code (docs/ARCHITECTURE.md).

    python benchmarks/node_costs.py [--positions 16] [--reps 2000] [--refcounts]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from alphabeta_nodes import positions  # noqa: E402

from damii_agents.search import patterns as EV  # noqa: E402
from damii_env import VARIANTS, Engine  # noqa: E402
from damii_env import compiled as C  # noqa: E402


def _play(T, G, P, L, W, reps, leaf):  # pragma: no cover - numba
    n = C.ply_root(T, G, 0, P)
    for _ in range(reps):
        for i in range(n):
            C.ply_play(T, P, 0, i, leaf)
    return n * reps


@njit(_nrt=False)
def _children(T, G, P, L, W):  # pragma: no cover - numba
    """Each child of the position (a leaf row) kept apart: its masks in W[2][i], its
    region indices in W[3][i]. Returns the number of children."""
    ridx, rwork, bits, index = W[0], W[1], W[2], W[3]
    n = C.ply_root(T, G, 0, P)
    S = C.n_squares(T)
    ray = T[1]
    n1 = C.board_size(T) - 1
    if ridx.shape[1] > 0:
        EV.region_indices(P[0], 0, L[0], ridx, 0)
    for i in range(n):
        C.ply_play(T, P, 0, i, True)
        for k in range(4):
            bits[i, k] = P[12][1, k]
        if ridx.shape[1] > 0:
            start, land = C.move_ends(ray, n1, P[6], P[8], 0, i)
            EV.regions_after_move(ridx, 0, 1, P[0], S, start, land, P[6], P[7], P[8], i,
                                  rwork, L[7], L[8], L[9])
            for r in range(ridx.shape[1]):
                index[i, r] = ridx[1, r]
    return n


def _evaluate(T, G, P, L, W, reps, leaf):  # pragma: no cover - numba
    n = _children(T, G, P, L, W)
    S = C.n_squares(T)
    bits, index = W[2], W[3]
    no_regions = W[4]  # variants without region tables
    total = 0.0
    for _ in range(reps):
        for i in range(n):
            if index.shape[1] > 0:
                total += EV.pattern_value_indexed(bits, i, P[13], S, index, L[1], L[2], L[3],
                                                  L[4], L[5], L[6], n, 0.0)
            else:
                total += EV.pattern_value_bits(bits, i, P[13], S, no_regions, L[1], L[2], L[3],
                                               L[4], L[5], L[6], n, 0.0)
    return n * reps if total == total else 0


def _regions(T, G, P, L, W, reps, leaf):  # pragma: no cover - numba
    ridx, rwork = W[0], W[1]
    n = C.ply_root(T, G, 0, P)
    S = C.n_squares(T)
    ray = T[1]
    n1 = C.board_size(T) - 1
    EV.region_indices(P[0], 0, L[0], ridx, 0)
    for i in range(n):
        C.ply_play(T, P, 0, i, True)  # row 1: after the last move
    for _ in range(reps):
        for i in range(n):
            start, land = C.move_ends(ray, n1, P[6], P[8], 0, i)
            EV.regions_after_move(ridx, 0, 1, P[0], S, start, land, P[6], P[7], P[8], i,
                                  rwork, L[7], L[8], L[9])
    return n * reps


def _lead(T, G, P, L, W, reps, leaf):  # pragma: no cover - numba
    C.ply_root(T, G, 0, P)
    total = 0.0
    for _ in range(reps):
        total += C.ply_totals_lead(T, P, 0)
    return reps if total == total else 0


PARTS = (("ply_play", _play, False), ("ply_play leaf", _play, True),
         ("learned evaluation", _evaluate, False), ("regions after a move", _regions, False),
         ("totals lead", _lead, False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=16)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--refcounts", action="store_true",
                        help="also time the loops compiled with reference counts")
    args = parser.parse_args()
    builds = [("without", njit(_nrt=False))]
    if args.refcounts:
        builds.append(("with", njit))
    loops = {(label, name): compile_(fn) for label, compile_ in builds
             for name, fn, _leaf in PARTS}
    print(f"# ns a call, best of 3 passes over {args.positions} positions a variant; "
          f"{time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.2f}")
    print("| variant | part | reference counts | ns a call |")
    print("| --- | --- | --- | ---: |")
    for variant in VARIANTS:
        engine = Engine(variant)
        T = engine.tables
        P = C.new_plies(T, 8, 256, 256)
        L = EV.learned_weights(engine.rules, None).search_arrays
        R = EV.region_bits(L[0], P[13]).shape[0] if C.has_bits(T) else 0
        W = (np.zeros((8, R), dtype=np.int64), np.zeros(R, dtype=np.int64),
             np.zeros((256, 4), dtype=np.int64), np.zeros((256, R), dtype=np.int64),
             np.zeros((0, 4), dtype=np.int64))
        games = [g.state.take(slice(0, 1)).arrays for g in positions(variant, args.positions)]
        for name, _fn, leaf in PARTS:
            if (name == "regions after a move" and not R) or (
                    name == "totals lead" and not engine.scoring):
                continue
            for label, _ in builds:
                loop = loops[(label, name)]
                loop(T, games[0], P, L, W, 1, leaf)  # compile
                best = float("inf")
                for _ in range(3):
                    start = time.perf_counter()
                    calls = sum(loop(T, G, P, L, W, args.reps, leaf) for G in games)
                    best = min(best, (time.perf_counter() - start) / calls * 1e9)
                print(f"| {variant} | {name} | {label} | {best:.1f} |", flush=True)


if __name__ == "__main__":
    main()

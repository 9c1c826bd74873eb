#!/usr/bin/env python
"""Where a search node's time goes: nanoseconds per call of the parts the alpha-beta runs
at each node, on positions from play (the positions of ``alphabeta_nodes.py``).

Parts, each timed in a compiled loop over every whole move of each position:

- ``ply_play``: one whole move played into the next row of the ply stack, its moves
  listed (an inner node's child);
- ``ply_play leaf``: the same where the next row's quiet moves are only counted (a child
  at the horizon: most nodes);
- ``learned evaluation``: the shipped tables' value of a leaf row, read from its bit masks
  as the search does;
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
from damii_agents.search.evaluation import learned  # noqa: E402
from damii_env import VARIANTS, Engine  # noqa: E402
from damii_env import compiled as C  # noqa: E402


def _play(T, G, P, L, W, reps, leaf):  # pragma: no cover - numba
    n = C.ply_root(T, G, 0, P)
    for _ in range(reps):
        for i in range(n):
            C.ply_play(T, P, 0, i, leaf)
    return n * reps


@njit(_nrt=False)
def _children(T, G, P, W):  # pragma: no cover - numba
    """Each child of the position (a leaf row) kept apart: its masks in W[0][i]. Returns
    the number of children."""
    bits = W[0]
    n = C.ply_root(T, G, 0, P)
    for i in range(n):
        C.ply_play(T, P, 0, i, True)
        for k in range(4):
            bits[i, k] = P.bits[1, k]
    return n


def _evaluate(T, G, P, L, W, reps, leaf):  # pragma: no cover - numba
    """The learned evaluation as the search reads it (from the row's masks), of each child."""
    n = _children(T, G, P, W)
    S = C.n_squares(T)
    bits = W[0]
    total = 0.0
    for _ in range(reps):
        for i in range(n):
            total += EV.pattern_value_bits(bits, i, P.layout, S, L.rbits, L.pattern, L.square,
                                           L.dense, L.square_end, L.dense_end,
                                           L.phase_pieces, n, 0.0)
    return n * reps if total == total else 0


def _lead(T, G, P, L, W, reps, leaf):  # pragma: no cover - numba
    C.ply_root(T, G, 0, P)
    total = 0.0
    for _ in range(reps):
        total += C.ply_totals_lead(T, P, 0)
    return reps if total == total else 0


PARTS = (("ply_play", _play, False), ("ply_play leaf", _play, True),
         ("learned evaluation", _evaluate, False), ("totals lead", _lead, False))


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
        L = learned(EV.learned_weights(engine.rules, None), T)
        W = (np.zeros((256, 4), dtype=np.int64),)
        games = [g.state.take(slice(0, 1)).arrays for g in positions(variant, args.positions)]
        for name, _fn, leaf in PARTS:
            if name == "totals lead" and not engine.scoring:
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

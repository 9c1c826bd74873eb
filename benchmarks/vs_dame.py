#!/usr/bin/env python
"""International draughts side by side with dame-rs (``pip install dame-rs``, Rust, MIT):
perft and search nodes/s on the same positions, one thread each, in one run.

- **perft**: the number of complete moves to depth D from each position, counted by
  ``damii_env``'s engine and by ``dame.perft``, and the seconds. The counts agree but
  where a capture can be run round a loop both ways: this project counts paths (two
  moves), dame-rs the FMJD move (start, end, captured set: one) (docs/RULES.md, "Moves
  are paths"); such a row is marked. ``tests/rules/test_dame_oracle.py`` checks the move
  sets themselves.
- **search**: each position searched for ``--time`` seconds by ``pretrained:international``
  (the compiled alpha-beta with the learned evaluation) and by ``dame.Engine`` (a fresh
  engine each position, its default hash), interleaved position by position so that both
  see the same machine load. Both count a node per position after a whole move (a
  capture sequence is one move; until 2026-12-05 ours counted each hop, which overstated
  its speed where captures are long); the depths reached are printed beside it.

Both run in this process on one thread each (dame-rs's search is single-threaded; numba
runs one thread here). The positions: the start and seeded random games' positions
(``benchmarks/alphabeta_nodes.py``'s, 10 to 70 plies in).

    python benchmarks/vs_dame.py [--perft-depth 7] [--positions 8] [--time 1]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from alphabeta_nodes import positions

from damii_env import Game
from damii_env.player import make_player

ROOT = Path(__file__).resolve().parents[1]


def _dame():
    try:
        import dame
    except ImportError:
        raise SystemExit("benchmarks/vs_dame.py needs dame-rs: pip install dame-rs (a test "
                         "and benchmark dependency, in the dev extra)") from None
    return dame


def perft_rows(fens: list[str], depth: int) -> list[tuple[str, int, float, int, float]]:
    """(fen, our count, our seconds, dame's count, dame's seconds) at `depth`."""
    dame = _dame()
    rows = []
    for fen in fens:
        game = Game.from_fen(fen, "international")
        game.engine.perft(game.state, 1)  # compiled before timing
        t0 = time.perf_counter()
        ours = game.engine.perft(game.state, depth)
        t1 = time.perf_counter()
        theirs = dame.perft(dame.Board(fen), depth)
        t2 = time.perf_counter()
        rows.append((fen, ours, t1 - t0, theirs, t2 - t1))
    return rows


def search_rows(fens: list[str], seconds: float) -> list[tuple[int, float, int, int, float, int]]:
    """(our nodes, our seconds, our depth, dame's nodes, dame's seconds, dame's depth)."""
    dame = _dame()
    ours = make_player(f"pretrained:international,time={seconds:g}", "international", seed=0)
    ours.choose(Game("international"))  # compile and warm up
    rows = []
    for fen in fens:
        ours.reset(0)
        ours.choose(Game.from_fen(fen, "international"))
        result = dame.Engine().search(dame.Board(fen), time=seconds)
        rows.append((ours.nodes, ours.search_time, ours.last_depth, result.nodes,
                     result.elapsed, result.depth))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--perft-depth", type=int, default=7)
    parser.add_argument("--positions", type=int, default=8,
                        help="positions from seeded random games, beside the start")
    parser.add_argument("--time", type=float, default=1.0, help="seconds a search (1)")
    args = parser.parse_args()
    fens = [Game("international").fen()] + [g.fen() for g in
                                             positions("international", args.positions)]
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print(f"# International: damii-env ({commit}) and dame-rs, one thread each; "
          f"{platform.machine()}, python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.2f} at start")
    print(f"\n## perft {args.perft_depth}\n")
    print("| position | damii-env count | dame-rs count | damii-env s | dame-rs s | "
          "damii-env / dame-rs speed |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    total = [0.0, 0.0]
    for i, (_fen, ours, t_ours, theirs, t_theirs) in enumerate(
            perft_rows(fens[:3], args.perft_depth)):
        mark = "" if ours == theirs else " (paths)"
        total[0] += t_ours
        total[1] += t_theirs
        print(f"| {'start' if i == 0 else i} | {ours:,}{mark} | {theirs:,} | {t_ours:.3f} | "
              f"{t_theirs:.3f} | {t_theirs / t_ours:.2f}x |")
    print(f"| all | | | {total[0]:.3f} | {total[1]:.3f} | {total[1] / total[0]:.2f}x |")
    print(f"\n## search, {args.time:g} s a position\n")
    print("| position | damii-env nodes/s | depth | dame-rs nodes/s | depth | ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    sums = [0, 0.0, 0, 0.0]
    for i, (n1, s1, d1, n2, s2, d2) in enumerate(search_rows(fens, args.time)):
        sums = [sums[0] + n1, sums[1] + s1, sums[2] + n2, sums[3] + s2]
        print(f"| {'start' if i == 0 else i} | {n1 / s1:,.0f} | {d1} | {n2 / s2:,.0f} | {d2} | "
              f"{(n1 / s1) / (n2 / s2):.2f} |")
    ours, theirs = sums[0] / sums[1], sums[2] / sums[3]
    print(f"| all | {ours:,.0f} | | {theirs:,.0f} | | {ours / theirs:.2f} |")
    print(f"\nload {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    sys.exit(main())

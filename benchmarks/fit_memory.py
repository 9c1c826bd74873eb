"""Peak memory of the learned evaluation's fit, per position (by hand; results in
docs/TRAINING.md, "Memory").

    python benchmarks/fit_memory.py --positions 2000000 [--variant international]

Builds N random positions of the variant (20 to 40 pieces of random kinds on distinct
squares, random patterns and labels: the fit's cost does not depend on what the positions
are), and traces the memory the fit allocates beyond them (``tracemalloc``, which sees
numpy's arrays) in a one-epoch fit with king regions: its peak, in bytes a position, the
tables' fixed size apart. The positions' own stored bytes are printed too.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from damii_agents.search import patterns as EV
from damii_training import patterns as P
from damii_training.config import config_from_dict


def random_positions(variant: str, n: int, seed: int = 0) -> P.Positions:
    """`n` random positions of `variant`'s board in the fit's stored layout."""
    config = config_from_dict({"algorithm": "patterns", "variant": variant})
    size = config.rules.board_size
    R = len(EV.pattern_regions(size, config.rules.orientation))
    S = size * size // 2
    rng = np.random.default_rng(seed)
    occupied = np.full((n, S), -1, dtype=np.int16)
    for lo in range(0, n, 20_000):
        hi = min(n, lo + 20_000)
        count = rng.integers(20, 41, size=hi - lo)
        squares = np.argsort(rng.random((hi - lo, S)), axis=1)[:, :40]
        kinds = rng.integers(0, EV.PIECE_KINDS, size=(hi - lo, 40))
        entries = (kinds * S + squares).astype(np.int16)
        entries[np.arange(40)[None, :] >= count[:, None]] = -1
        occupied[lo:hi, :40] = entries
    return P.Positions(rng.integers(0, EV.PATTERNS, size=(n, R)).astype(np.uint16), occupied,
                       rng.standard_normal((n, EV.N_DENSE)).astype(np.float32),
                       rng.integers(0, 2, size=n).astype(np.float32), np.arange(n) // 80,
                       np.full(n, np.nan, dtype=np.float32),
                       rng.integers(0, 2, size=n).astype(np.float32))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=2_000_000)
    parser.add_argument("--variant", default="international")
    args = parser.parse_args()
    data = random_positions(args.variant, args.positions)
    stored = sum(getattr(data, name).nbytes for name in
                 ("pattern", "occupied", "dense", "label", "game", "value", "result"))
    config = config_from_dict({"algorithm": "patterns", "variant": args.variant,
                               "patterns": {"epochs": 1, "pattern_lr": 1.0,
                                            "king_regions": True}})
    tables = (EV.PATTERNS + EV.KING_PATTERNS) * 8 * data.pattern.shape[1]
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    P.fit(data, config, progress=False)
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    n = args.positions
    print(f"{args.variant}: {n:,} positions, stored {stored / n:.0f} B a position; the fit's "
          f"peak {peak / 2**20:.0f} MiB above them: {(peak - tables) / n:.0f} B a position "
          f"and the tables' {tables / 2**20:.0f} MiB; fit {seconds:.1f} s")


if __name__ == "__main__":
    main()

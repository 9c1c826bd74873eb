"""The server's fair queue: what one ``put(replace=True)`` (a seat's new search replacing
its queued one), one ``cancel`` (a game gone) and one light-lane ``get`` cost with N tasks
queued, this tree's ``FairQueue`` against another commit's, interleaved (by hand; results
in docs/SERVE.md).

    python benchmarks/serve_queue.py [--queued 230,2000,20000] [--base e792ffd]

The queued tasks are spread like the pressure scenario's: sessions of a few addresses,
each with a seat's search (a key a seat), mostly heavy (``time=0.5`` agents).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import types
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from damii_app.serve import jobs

ROOT = Path(__file__).resolve().parent.parent


def jobs_at(commit: str) -> types.ModuleType:
    """`app/serve/jobs.py` as it was at `commit`, as a module of its own."""
    source = subprocess.run(["git", "show", f"{commit}:app/serve/jobs.py"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout
    module = types.ModuleType(f"jobs_{commit}")
    sys.modules[module.__name__] = module  # the dataclasses look their module up
    exec(compile(source, f"{commit}:app/serve/jobs.py", "exec"), module.__dict__)  # noqa: S102
    return module


def filled(module: Any, n: int) -> Any:
    queue = module.FairQueue(heavy_slots=1, group_slots=1)
    for i in range(n):
        queue.put(module._Task(Future(), abs, 0, f"game{i}:w", f"session{i}",
                               i % 10 != 0, f"10.0.0.{i % 7}", False))
    return queue


def per_call(module: Any, n: int, calls: int = 200) -> dict[str, float]:
    """Microseconds a call of each operation takes with `n` tasks queued."""
    out = {}
    queue = filled(module, n)
    t0 = time.perf_counter()
    for c in range(calls):
        i = (c * 7919) % n
        queue.put(module._Task(Future(), abs, 0, f"game{i}:w", f"session{i}", True,
                               f"10.0.0.{i % 7}", False), True)
    out["put(replace)"] = (time.perf_counter() - t0) / calls * 1e6
    t0 = time.perf_counter()
    for c in range(calls):
        i = (c * 7919) % n
        queue.cancel(f"game{i}:")
    out["cancel"] = (time.perf_counter() - t0) / calls * 1e6
    queue = filled(module, n)
    t0 = time.perf_counter()
    for _ in range(calls):
        queue._pick(light_only=True)
    out["light get, none queued"] = (time.perf_counter() - t0) / calls * 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queued", default="230,2000,20000",
                        help="how many tasks are queued, comma-separated")
    parser.add_argument("--base", default="e792ffd", help="the commit compared with")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    args = parser.parse_args()
    trees = {args.base: jobs_at(args.base), "this tree": jobs}
    for n in (int(x) for x in args.queued.split(",")):
        best: dict[str, dict[str, float]] = {}
        for _ in range(args.rounds):
            for name, module in trees.items():
                for op, us in per_call(module, n).items():
                    best.setdefault(name, {})[op] = min(us, best.get(name, {}).get(op, 1e18))
        for name, ops in best.items():
            print(f"{n:6d} queued  {name:10s} " +
                  "  ".join(f"{op} {us:9.1f} us" for op, us in ops.items()))


if __name__ == "__main__":
    main()

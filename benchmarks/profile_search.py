#!/usr/bin/env python
"""Where the compiled search spends its time: Linux ``perf`` samples of fixed-depth
searches, mapped onto numba's compiled functions and, inside the hottest one, onto its
machine code.

numba's code has no symbols that ``perf report`` can read. This script compiles the
search afresh (a temporary ``NUMBA_CACHE_DIR``: code loaded from the cache keeps no
object file), asks each compiled function for its address and its object code, records
``perf record -p`` on itself while it searches, and sorts the sampled addresses into
the functions (``nm``) and the hottest function's 256-byte blocks (``objdump``). A block's
instructions with the most samples say what it is (an ``idiv``, a table load that misses
the cache, the insertion sort of the move ordering...). The searches are the same trees
in every commit (a fixed depth), so a change's effect can be read block by block.

Needs ``perf`` and ``objdump`` (binutils) on the PATH and the right to sample one's own
process (``/proc/sys/kernel/perf_event_paranoid`` at most 2). The first run compiles for
a few minutes.

    python benchmarks/profile_search.py [--variant international] [--depth 12]
        [--seconds 5] [--blocks 16]
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from bisect import bisect_right
from collections import Counter
from pathlib import Path

CACHE = tempfile.mkdtemp(prefix="damii-profile-")
os.environ["NUMBA_CACHE_DIR"] = CACHE  # before numba is imported: compile afresh

import numba  # noqa: E402
from alphabeta_nodes import positions  # noqa: E402

from damii_env import Game  # noqa: E402
from damii_env.player import make_player  # noqa: E402


def _short(symbol: str) -> str:
    """module.function of a numba symbol (``_ZN9damii_env8_kernels10turn_moves...``)."""
    s = re.sub(r"^(cfunc\.)?_ZN", "", symbol)
    parts, i = [], 0
    while i < len(s) and s[i].isdigit():
        j = i
        while s[j].isdigit():
            j += 1
        n = int(s[i:j])
        parts.append(s[j:j + n])
        i = j + n
    return ".".join(parts[-2:]) if parts else symbol[:40]


def compiled_functions(out: Path) -> list[tuple[int, int, str, Path, int]]:
    """(start, end, name, object file, offset of start in it) of every text symbol of the
    numba functions compiled in this process, each object file written under `out`."""
    found = []
    dispatchers = [f for f in gc.get_objects()
                   if isinstance(f, numba.core.registry.CPUDispatcher)]
    for f in dispatchers:
        name = f.py_func.__name__
        for k, cres in enumerate(f.overloads.values()):
            llname = cres.fndesc.llvm_func_name
            try:
                addr = cres.library.get_pointer_to_function(llname)
                obj = out / f"{name}-{id(f)}-{k}.o"
                obj.write_bytes(cres.library._get_compiled_object())
            except Exception:  # noqa: BLE001 (not compiled in this process)
                continue
            syms = []
            for line in subprocess.run(["nm", "-S", "-n", str(obj)], capture_output=True,
                                       text=True, check=True).stdout.splitlines():
                p = line.split()
                if len(p) == 4 and p[2] in "tT":
                    syms.append((int(p[0], 16), int(p[1], 16), p[3]))
            main = [s for s in syms if llname in s[2] or llname.endswith(s[2])]
            if not main:
                continue
            base = addr - main[0][0]
            for off, size, sym in syms:
                found.append((base + off, base + off + size, _short(sym), obj, off))
    return sorted(set(found))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="international")
    parser.add_argument("--depth", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds sampled (5)")
    parser.add_argument("--blocks", type=int, default=16,
                        help="hottest 256-byte blocks of the hottest function to show (16)")
    args = parser.parse_args()
    for tool in ("perf", "nm", "objdump"):
        if shutil.which(tool) is None:
            raise SystemExit(f"profile_search.py needs `{tool}` on the PATH (perf: "
                             "linux-perf or linux-tools; nm and objdump: binutils)")
    games = [Game(args.variant)] + positions(args.variant, 8)
    player = make_player(f"pretrained:{args.variant},depth={args.depth}", args.variant,
                         seed=0)
    print(f"compiling into {CACHE} (a few minutes)...", file=sys.stderr)
    player.choose(Game(args.variant))
    work = Path(CACHE) / "objects"
    work.mkdir()
    funcs = compiled_functions(work)
    starts = [f[0] for f in funcs]
    samples = Path(CACHE) / "perf.data"
    done = threading.Event()
    nodes = [0, 0.0]

    def search() -> None:
        t0 = time.perf_counter()
        while not done.is_set():
            for game in games:
                player.reset(0)
                player.choose(game.copy())
                nodes[0] += player.nodes
        nodes[1] = time.perf_counter() - t0

    worker = threading.Thread(target=search)
    worker.start()
    time.sleep(0.5)
    subprocess.run(["perf", "record", "-q", "-F", "4000", "-o", str(samples), "-p",
                    str(os.getpid()), "--", "sleep", str(args.seconds)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    done.set()
    worker.join()
    ips = [int(x, 16) for x in subprocess.run(
        ["perf", "script", "-i", str(samples), "-F", "ip"], capture_output=True, text=True,
        check=True).stdout.split()]
    by_func: Counter = Counter()
    by_block: Counter = Counter()
    by_ip: Counter = Counter()
    for ip in ips:
        i = bisect_right(starts, ip) - 1
        if i >= 0 and ip < funcs[i][1]:
            by_func[funcs[i][2]] += 1
            by_ip[(i, ip - funcs[i][0] + funcs[i][4])] += 1
        else:
            by_func["(outside the compiled functions)"] += 1
    total = len(ips)
    print(f"# {args.variant}, depth {args.depth}: {total} samples over {args.seconds:g} s, "
          f"{nodes[0] / nodes[1]:,.0f} nodes/s while sampled\n")
    print("| function | share of samples |\n| --- | ---: |")
    for name, n in by_func.most_common(12):
        print(f"| {name} | {100 * n / total:.1f}% |")
    hottest = max(range(len(funcs)), key=lambda i: sum(
        n for (j, _), n in by_ip.items() if j == i))
    start, end, name, obj, off0 = funcs[hottest]
    for (j, o), n in by_ip.items():
        if j == hottest:
            by_block[(o - off0) // 256] += n
    listing = {}
    for line in subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(obj)],
                               capture_output=True, text=True, check=True).stdout.splitlines():
        m = re.match(r"\s+([0-9a-f]+):\s+(.*)", line)
        if m:
            listing[int(m.group(1), 16)] = re.sub(r"<[^>]*>", "", m.group(2)).strip()
    print(f"\n## {name}: its hottest blocks (offset from its start, the three hottest "
          "instructions of each)\n")
    for block, n in by_block.most_common(args.blocks):
        lo = off0 + block * 256
        hot = sorted(((c, o) for (j, o), c in by_ip.items()
                      if j == hottest and lo <= o < lo + 256), reverse=True)[:3]
        text = "; ".join(f"{listing.get(o, '?')} ({c})" for c, o in hot)
        print(f"- +{block * 256:#06x}: {100 * n / total:.1f}%: {text}")


if __name__ == "__main__":
    main()

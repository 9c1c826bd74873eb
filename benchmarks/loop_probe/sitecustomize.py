"""What holds a server's event loop: loaded at start-up by a ``damii serve`` started with
this folder on ``PYTHONPATH`` and ``DAMII_LOOP_PROBE=FILE`` set (``serve_load.py
--probe FILE`` does both). Without ``DAMII_LOOP_PROBE`` it does nothing.

Every callback the asyncio loop runs (a task's step, a timer, a transport's read) is
timed, in wall time and in the loop thread's own CPU time (``time.thread_time``: without
the time it waited for a core or for Python's lock, so that a starved process and a long
piece of work on the loop can be told apart); a watchdog thread samples the loop
thread's stack every 2 ms while a callback has run for more than 10 ms. ``FILE`` gets,
every 10 s and at exit: how many callbacks ran, how many took more than 10/20/50/100 ms
and their total (wall and CPU), the slowest, and the stacks (the server's own frames)
where the samples fell, most sampled first (each sample about 2 ms of a blocked loop).
Not part of the server: a measuring aid for benchmarks only.
"""

from __future__ import annotations

import atexit
import collections
import os
import sys
import threading
import time

_PATH = os.environ.get("DAMII_LOOP_PROBE")
SLOW = 0.010
"""Seconds a callback runs before its stack is sampled."""
EVERY = 0.002
"""Seconds between two samples of a slow callback's stack."""
BINS = (0.010, 0.020, 0.050, 0.100)


def _install(path: str) -> None:
    import asyncio.events

    state = {"t0": None, "thread": None, "handle": None, "where": None}
    counts = {"callbacks": 0}
    over = dict.fromkeys(BINS, 0)
    total = dict.fromkeys(BINS, 0.0)
    cpu_over = dict.fromkeys(BINS, 0)
    cpu_total = dict.fromkeys(BINS, 0.0)
    slowest: list[tuple[float, str]] = []
    stacks: collections.Counter[str] = collections.Counter()
    lock = threading.Lock()
    original = asyncio.events.Handle._run

    def _run(self):  # type: ignore[no-untyped-def]
        state["thread"] = threading.get_ident()
        state["handle"] = self
        state["where"] = None
        start = state["t0"] = time.perf_counter()
        cpu = time.thread_time()
        try:
            return original(self)
        finally:
            took = time.perf_counter() - start
            cpu = time.thread_time() - cpu
            state["t0"] = None
            where = state["where"]
            counts["callbacks"] += 1
            if took >= BINS[0]:
                with lock:
                    for b in BINS:
                        if took >= b:
                            over[b] += 1
                            total[b] += took
                        if cpu >= b:
                            cpu_over[b] += 1
                            cpu_total[b] += cpu
                    slowest.append((took, f"{repr(self)[:120]} at {where}"))
                    slowest.sort(reverse=True)
                    del slowest[20:]

    asyncio.events.Handle._run = _run  # type: ignore[method-assign]

    def frames(frame) -> str:  # type: ignore[no-untyped-def]
        out = []
        while frame is not None:
            code = frame.f_code
            name = code.co_filename
            if "damii" in name or "/app/" in name or frame.f_back is None:
                short = name.split("/site-packages/")[-1].split("/wt-63b/")[-1]
                out.append(f"{short}:{frame.f_lineno} {code.co_name}")
            frame = frame.f_back
        # innermost library frame too: where the time is actually spent
        return " <- ".join(out[:12])

    def inner(frame) -> str:  # type: ignore[no-untyped-def]
        code = frame.f_code
        return f"{code.co_filename.split('/')[-1]}:{frame.f_lineno} {code.co_name}"

    def watch() -> None:
        while True:
            time.sleep(EVERY)
            t0, tid = state["t0"], state["thread"]
            if t0 is None or tid is None or time.perf_counter() - t0 < SLOW:
                continue
            frame = sys._current_frames().get(tid)
            if frame is None:
                continue
            key = f"[{inner(frame)}] {frames(frame)}"
            if state["where"] is None:  # the slow callback's first sample names it
                state["where"] = frames(frame)
            with lock:
                stacks[key] += 1

    def dump() -> None:
        with lock:
            lines = [f"callbacks {counts['callbacks']}"]
            for b in BINS:
                lines.append(f"over {b * 1000:.0f} ms: {over[b]} callbacks, {total[b]:.2f} s; "
                             f"over {b * 1000:.0f} ms of the loop thread's own CPU time: "
                             f"{cpu_over[b]} callbacks, {cpu_total[b]:.2f} s")
            lines.append("slowest:")
            lines += [f"  {took * 1000:.0f} ms {what}" for took, what in slowest]
            lines.append(f"samples (every {EVERY * 1000:.0f} ms of a callback past "
                         f"{SLOW * 1000:.0f} ms), most first:")
            lines += [f"  {n:6d} {key}" for key, n in stacks.most_common(200)]
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, path)

    def dumper() -> None:
        while True:
            time.sleep(10.0)
            dump()

    threading.Thread(target=watch, daemon=True, name="loop-probe").start()
    threading.Thread(target=dumper, daemon=True, name="loop-probe-dump").start()
    atexit.register(dump)


if _PATH:
    os.environ.pop("DAMII_LOOP_PROBE")  # the server's worker processes are not watched
    _install(_PATH)

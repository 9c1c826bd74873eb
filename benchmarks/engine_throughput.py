#!/usr/bin/env python
"""Random self-play throughput of the damii-env engine, with anchors from other libraries.

For each variant and batch size the loop is::

    a = eng.sample_actions(state, rng); eng.step(state, a); eng.reset_where(state)

counting the hops actually played (games not over), for a fixed wall time per cell.
The "with mask" column adds ``eng.legal_action_mask(state, out=buf)`` every step,
which is what an RL environment pays for its observation.

Each cell reports the overall rate (units / wall time) and the median rate over short
windows (``--window``), which is robust to other processes stealing the CPU for a while.
With ``--repeats N`` every cell (anchors included) is measured N times, round-robin, and
the samples are pooled, so a burst of load elsewhere hits all cells alike.

Anchors (other libraries, random play, restart when a game ends) are measured in the
same run when installed; an anchor whose module is not importable here is measured in
a subprocess with ``--anchor-python`` (pydraughts and py-draughts both install a
module called ``draughts`` and cannot share one environment).

Run from the repository root::

    python benchmarks/engine_throughput.py --seconds 3 \\
        --anchor-python /tmp/benchvenv/bin/python --markdown report.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

if TYPE_CHECKING:
    from damii_env import Engine

VARIANTS = ("damii", "international", "triestine", "damath")
BATCH_SIZES = (1, 64, 1024, 4096)
TARGET_BATCH = 4096
TARGETS_HOPS = {"damii": 1_000_000, "international": 250_000, "triestine": 250_000}
TARGET_OPENSPIEL_FACTOR = 5.0

Stepper = Callable[[], int]
"""Plays one unit (hop, action or move) and returns how many it played (0 on a restart)."""


# --- timing ------------------------------------------------------------------------------------


@dataclass
class Sample:
    """Units played in timed runs of one cell (pooled over repeats)."""

    count: int = 0
    seconds: float = 0.0
    windows: list[float] = field(default_factory=list)
    """Units per second of each window."""

    def add(self, other: Sample) -> None:
        self.count += other.count
        self.seconds += other.seconds
        self.windows += other.windows

    @property
    def overall(self) -> float:
        """Units played / timed wall time."""
        return self.count / self.seconds if self.seconds else 0.0

    @property
    def median(self) -> float:
        """Median rate over the windows."""
        return statistics.median(self.windows) if self.windows else 0.0


def timed_sample(step: Stepper, seconds: float, warmup: float, window: float) -> Sample:
    """Run `step` for `warmup` seconds untimed, then for `seconds` timed in `window`-long slices."""
    clock = time.perf_counter
    end = clock() + warmup
    while clock() < end:
        step()
    sample = Sample()
    count = 0
    start = w_start = clock()
    end = start + seconds
    while True:
        count += step()
        now = clock()
        if now - w_start >= window or now >= end:
            sample.windows.append(count / (now - w_start))
            sample.count += count
            count, w_start = 0, now
            if now >= end:
                sample.seconds = now - start
                return sample


# --- the engine --------------------------------------------------------------------------------


def engine_stepper(eng: Engine, batch: int, with_mask: bool, seed: int) -> Stepper:
    """One batched random hop per call, restarting finished games; returns hops played."""
    import numpy as np

    state = eng.init(batch)
    rng = np.random.default_rng(seed)
    mask = np.zeros((batch, eng.n_actions), dtype=np.int8) if with_mask else None

    def step() -> int:
        actions = eng.sample_actions(state, rng)
        eng.step(state, actions)
        eng.reset_where(state)
        if mask is not None:
            eng.legal_action_mask(state, out=mask)
        return int(np.count_nonzero(actions >= 0))

    return step


def compile_engine(eng: Engine) -> None:
    """Trigger numba compilation (or cache loading) of the serial and parallel kernels."""
    from damii_env.engine import PARALLEL_MIN_BATCH

    for batch in (1, PARALLEL_MIN_BATCH):
        step = engine_stepper(eng, batch, with_mask=True, seed=0)
        for _ in range(3):
            step()


def hops_per_move(eng: Engine, batch: int = 1024, steps: int = 300, seed: int = 1) -> float:
    """Mean hops per full move in random play (untimed), to compare with move-counting anchors."""
    import numpy as np

    state = eng.init(batch)
    rng = np.random.default_rng(seed)
    hops = moves = 0
    for _ in range(steps):
        turn = state.turn.copy()
        actions = eng.sample_actions(state, rng)
        eng.step(state, actions)
        played = actions >= 0
        hops += int(np.count_nonzero(played))
        moves += int(np.count_nonzero(played & ((state.turn != turn) | state.done)))
        eng.reset_where(state)
    return hops / max(moves, 1)


@dataclass
class VariantResult:
    variant: str
    engine: Engine
    hops_per_move: float
    hops: dict[int, Sample] = field(default_factory=dict)
    """Hops by batch size."""
    hops_mask: dict[int, Sample] = field(default_factory=dict)
    """Hops by batch size, with the legal-action mask every step."""


def prepare_variant(variant: str) -> VariantResult:
    """Build and compile the engine of `variant` and measure its hops per move."""
    from damii_env import Engine

    eng = Engine(variant)
    compile_engine(eng)
    return VariantResult(variant, eng, hops_per_move(eng))


def bench_variant(result: VariantResult, args: argparse.Namespace, seed: int) -> None:
    """One timed run of every batch size, with and without the mask, added to `result`."""
    for batch in args.batch_sizes:
        for with_mask, table in ((False, result.hops), (True, result.hops_mask)):
            stepper = engine_stepper(result.engine, batch, with_mask, seed)
            got = timed_sample(stepper, args.seconds, args.warmup, args.window)
            table.setdefault(batch, Sample()).add(got)
            tag = "+mask" if with_mask else ""
            log(f"  {result.variant:>13} B={batch:<5} {tag:5} {got.overall:>11,.0f} hops/s "
                f"(median window {got.median:,.0f})")


# --- anchors -----------------------------------------------------------------------------------


def openspiel_stepper(rng: random.Random) -> Stepper:
    import pyspiel

    game = pyspiel.load_game("checkers", {"rows": 10, "columns": 10})
    state = game.new_initial_state()

    def step() -> int:
        nonlocal state
        if state.is_terminal():
            state = game.new_initial_state()
            return 0
        state.apply_action(rng.choice(state.legal_actions()))
        return 1

    return step


def pydraughts_stepper(rng: random.Random) -> Stepper:
    import draughts

    board = draughts.Board(variant="standard")

    def step() -> int:
        nonlocal board
        if board.is_over():
            board = draughts.Board(variant="standard")
            return 0
        board.push(rng.choice(board.legal_moves()))
        return 1

    return step


def py_draughts_stepper(rng: random.Random) -> Stepper:
    from draughts import StandardBoard  # py-draughts; pydraughts has no StandardBoard

    board = StandardBoard()

    def step() -> int:
        nonlocal board
        moves = board.legal_moves
        if not moves or board.is_draw:
            board = StandardBoard()
            return 0
        board.push(rng.choice(moves))
        return 1

    return step


def dame_stepper(rng: random.Random) -> Stepper:
    import dame

    board = dame.Board()

    def step() -> int:
        nonlocal board
        moves = board.legal_moves  # empty once the game is over (any FMJD ending)
        if not moves:
            board = dame.Board()
            return 0
        board.push(rng.choice(moves))
        return 1

    return step


@dataclass(frozen=True)
class Anchor:
    key: str
    label: str
    distribution: str
    """PyPI distribution, used to tell the two ``draughts`` modules apart."""
    unit: str
    rules: str
    make: Callable[[random.Random], Stepper]
    international: bool = False
    """Plays International draughts (so its rate compares with our International engine)."""


ANCHORS = (
    Anchor("openspiel", "OpenSpiel checkers 10x10", "open_spiel", "actions (= hops)",
           "American checkers rules (short kings, men capture forwards only, 15 men a side) "
           "on 10x10; one action per hop; legal_actions + apply_action",
           openspiel_stepper),
    Anchor("pydraughts", "pydraughts", "pydraughts", "full moves",
           "International (variant='standard'); is_over + legal_moves + push",
           pydraughts_stepper, international=True),
    Anchor("py-draughts", "py-draughts", "py-draughts", "full moves",
           "International (StandardBoard); legal_moves + is_draw + push",
           py_draughts_stepper, international=True),
    Anchor("dame-rs", "dame-rs", "dame-rs", "full moves",
           "International (FMJD endings); legal_moves + push",
           dame_stepper, international=True),
)
ANCHOR_BY_KEY = {a.key: a for a in ANCHORS}


@dataclass
class AnchorResult:
    anchor: Anchor
    rate: Sample | None = None
    version: str = ""
    where: str = ""
    skipped: bool = False


def measure_anchor_here(anchor: Anchor, args: argparse.Namespace, seed: int
                        ) -> dict[str, Any]:
    """Measure `anchor` in this interpreter: {'sample', 'version'} or {'error'}."""
    try:
        version = importlib.metadata.version(anchor.distribution)
        stepper = anchor.make(random.Random(seed))
    except Exception as exc:  # not installed, or the other 'draughts' module
        return {"error": f"{type(exc).__name__}: {exc}"}
    sample = timed_sample(stepper, args.seconds, args.warmup, args.window)
    return {"sample": asdict(sample), "version": version}


def measure_anchor_subprocess(anchor: Anchor, python: str, args: argparse.Namespace, seed: int
                              ) -> dict[str, Any]:
    """Measure `anchor` with another interpreter running this script as a worker."""
    cmd = [python, str(Path(__file__).resolve()), "--anchor-worker", anchor.key,
           "--seconds", str(args.seconds), "--warmup", str(args.warmup),
           "--window", str(args.window), "--seed", str(seed)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=10 * (args.seconds + args.warmup) + 120)
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except Exception as exc:
        return {"error": f"worker failed ({type(exc).__name__}: {exc})"}


def bench_anchor(result: AnchorResult, args: argparse.Namespace, seed: int) -> None:
    """Measure in-process if importable, else in ``--anchor-python``, else record why not."""
    anchor = result.anchor
    got = measure_anchor_here(anchor, args, seed)
    where = "in-process"
    if "error" in got and args.anchor_python:
        there = measure_anchor_subprocess(anchor, args.anchor_python, args, seed)
        if "error" in there:
            there["error"] = f"here: {got['error']}; {args.anchor_python}: {there['error']}"
        got, where = there, f"subprocess, {args.anchor_python}"
    if "error" in got:
        log(f"  {anchor.label}: skipped ({got['error']})")
        result.skipped, result.where = True, f"not measured: {got['error']}"
        return
    sample = Sample(**got["sample"])
    log(f"  {anchor.label}: {sample.overall:,.0f} {anchor.unit}/s "
        f"(median window {sample.median:,.0f}; {where})")
    if result.rate is None:
        result.rate = Sample()
    result.rate.add(sample)
    result.version, result.where = got["version"], where


# --- report ------------------------------------------------------------------------------------


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def engine_revision() -> str:
    """The repository's commit, flagged when damii_env/ has uncommitted changes."""
    def git(*a: str) -> str:
        return subprocess.run(["git", "-C", str(REPO), *a], capture_output=True, text=True,
                              check=True, timeout=10).stdout.strip()

    try:
        rev = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--", "damii_env")
    except Exception:
        return "unknown (not a git checkout)"
    return rev + (" with uncommitted changes in damii_env/" if dirty else "")


def cpu_counters() -> tuple[float, float, float] | None:
    """(wall time, busy CPU seconds of the whole machine, CPU seconds of this process tree)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    busy = sum(fields[:8]) - fields[3] - fields[4]  # all but idle and iowait
    t = os.times()
    ours = t.user + t.system + t.children_user + t.children_system
    return time.monotonic(), busy / os.sysconf("SC_CLK_TCK"), ours


def other_load(start: tuple[float, float, float] | None) -> str:
    """Share of the machine's CPU time used by other processes since `start`."""
    end = cpu_counters()
    if start is None or end is None:
        return "unknown"
    wall, busy, ours = (b - a for a, b in zip(start, end, strict=True))
    share = max(0.0, busy - ours) / (wall * (os.cpu_count() or 1))
    return f"{100 * share:.0f}% of all cores (the run itself: {100 * ours / wall:.0f}% of one core)"


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"


def machine_lines() -> list[str]:
    import numba
    import numpy

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    return [
        f"- Date: {dt.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M:%S %Z')}",
        f"- CPU: {cpu_model()}; {os.cpu_count()} logical cores ({usable} usable), "
        f"numba threads: {numba.get_num_threads()}",
        f"- OS: {platform.platform()}",
        f"- Python {platform.python_version()}, numpy {numpy.__version__}, "
        f"numba {numba.__version__}",
        f"- damii-env: {REPO} at {engine_revision()}",
        f"- Load average (1, 5, 15 min) at start: {load_average()}",
    ]


def fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f}"


def times(num: float | None, den: float | None) -> str:
    return f"{num / den:,.1f}x" if num and den else "—"


def engine_table(results: list[VariantResult], batches: list[int], stat: str) -> list[str]:
    """Markdown table of hops/s, `stat` being 'overall' or 'median'."""
    head = "| variant | hops/move | " + " | ".join(
        f"B={b} | B={b} with mask" for b in batches) + " |"
    lines = [head, "|" + "---|" * (2 + 2 * len(batches))]
    for r in results:
        cells = " | ".join(f"{fmt(getattr(r.hops[b], stat))} | "
                           f"{fmt(getattr(r.hops_mask[b], stat))}" for b in batches)
        lines.append(f"| {r.variant} | {r.hops_per_move:.3f} | {cells} |")
    return lines


def anchor_table(anchors: list[AnchorResult], ours: dict[str, VariantResult],
                 ref_batch: int) -> list[str]:
    damii = ours["damii"].hops.get(ref_batch) if "damii" in ours else None
    intl = ours.get("international")
    intl_rate = intl.hops.get(ref_batch) if intl else None
    lines = [
        f"| anchor | version | unit | rate, overall | rate, median window | "
        f"Damii B={ref_batch} hops/s ÷ rate | "
        f"International B={ref_batch} moves/s ÷ rate | rules, loop | measured |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for a in anchors:
        r = a.rate
        ratio = same = "—"
        if r and damii:
            ratio = f"{times(damii.overall, r.overall)} (median {times(damii.median, r.median)})"
        if r and intl_rate and a.anchor.international:
            per = intl.hops_per_move
            same = (f"{times(intl_rate.overall / per, r.overall)} "
                    f"(median {times(intl_rate.median / per, r.median)})")
        lines.append(f"| {a.anchor.label} | {a.version or '—'} | {a.anchor.unit} | "
                     f"{fmt(r and r.overall)} | {fmt(r and r.median)} | {ratio} | {same} | "
                     f"{a.anchor.rules} | {a.where} |")
    if intl_rate:
        lines += ["", f"International moves/s = hops/s ÷ hops/move "
                      f"({intl.hops_per_move:.3f}, measured in random play, untimed) = "
                      f"{fmt(intl_rate.overall / intl.hops_per_move)} overall."]
    return lines


def target_lines(ours: dict[str, VariantResult], anchors: list[AnchorResult]) -> list[str]:
    def verdict(value: float | None, need: float | None) -> str:
        if value is None or need is None:
            return "not measured"
        return "MET" if value >= need else "NOT MET"

    lines = []
    for variant, need in TARGETS_HOPS.items():
        r = ours[variant].hops.get(TARGET_BATCH) if variant in ours else None
        lines.append(
            f"- {variant} at B={TARGET_BATCH} >= {need:,} hops/s: "
            f"overall {fmt(r and r.overall)} -> {verdict(r and r.overall, need)}; "
            f"median window {fmt(r and r.median)} -> {verdict(r and r.median, need)}")
    spiel = next((a.rate for a in anchors if a.anchor.key == "openspiel"), None)
    damii = ours["damii"].hops.get(TARGET_BATCH) if "damii" in ours else None
    k = TARGET_OPENSPIEL_FACTOR
    parts = []
    for stat in ("overall", "median"):
        ours_x = getattr(damii, stat) if damii else None
        spiel_x = getattr(spiel, stat) if spiel else None
        need = k * spiel_x if spiel_x else None
        parts.append(f"{stat} {times(ours_x, spiel_x)} -> {verdict(ours_x, need)}")
    lines.append(f"- damii at B={TARGET_BATCH} >= {k:g}x OpenSpiel 10x10 checkers: "
                 + "; ".join(parts))
    return lines


def report(args: argparse.Namespace, ours: list[VariantResult], anchors: list[AnchorResult],
           machine: list[str]) -> str:
    by_variant = {r.variant: r for r in ours}
    ref_batch = TARGET_BATCH if TARGET_BATCH in args.batch_sizes else max(args.batch_sizes)
    out = ["## Machine", "", *machine, "",
           f"Settings: {args.repeats} x {args.seconds:g} s timed per cell (round-robin), "
           f"each after {args.warmup:g} s warm-up; windows of {args.window:g} s.", ""]
    if ours:
        out += ["## Engine: random self-play hops/s (overall)", "",
                *engine_table(ours, args.batch_sizes, "overall"), "",
                f"## Engine: random self-play hops/s (median of {args.window:g} s windows)", "",
                *engine_table(ours, args.batch_sizes, "median"), ""]
    if anchors:
        out += ["## Anchors (random play, restart when a game ends)", "",
                *anchor_table(anchors, by_variant, ref_batch), ""]
    if ours:
        out += ["## Targets (hops/s without the mask)", "", *target_lines(by_variant, anchors),
                ""]
    return "\n".join(out)


# --- main --------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=3.0, help="timed seconds per cell")
    p.add_argument("--warmup", type=float, default=0.5, help="untimed seconds before each cell")
    p.add_argument("--window", type=float, default=0.25, help="seconds per window (median)")
    p.add_argument("--repeats", type=int, default=1,
                   help="measure every cell this many times, round-robin, and pool the samples")
    p.add_argument("--variants", nargs="+", default=list(VARIANTS),
                   help="rule presets to measure (default: %(default)s)")
    p.add_argument("--batch-sizes", nargs="+", type=int, default=list(BATCH_SIZES))
    p.add_argument("--threads", type=int, default=None,
                   help="numba threads for the parallel kernels (default: numba's default)")
    p.add_argument("--no-anchors", action="store_true", help="measure only this engine")
    p.add_argument("--anchors", nargs="+", default=[a.key for a in ANCHORS],
                   choices=[a.key for a in ANCHORS])
    p.add_argument("--anchor-python", default=None,
                   help="python for anchors not importable here, e.g. /tmp/benchvenv/bin/python")
    p.add_argument("--markdown", type=Path, default=None, help="also write the report here")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--anchor-worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.seconds <= 0 or args.window <= 0 or args.warmup < 0 or args.repeats < 1:
        p.error("--seconds, --window and --repeats must be positive, --warmup non-negative")
    if any(b < 1 for b in args.batch_sizes):
        p.error("batch sizes must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.anchor_worker:  # subprocess mode: one anchor, JSON on stdout
        print(json.dumps(measure_anchor_here(ANCHOR_BY_KEY[args.anchor_worker], args,
                                             args.seed)))
        return 0
    if args.threads:
        import numba

        numba.set_num_threads(args.threads)

    machine = machine_lines()
    log("\n".join(machine))
    counters = cpu_counters()
    log("compiling; measuring hops per move")
    ours = [prepare_variant(v) for v in args.variants]
    anchors = [] if args.no_anchors else [AnchorResult(ANCHOR_BY_KEY[k]) for k in args.anchors]
    for round_ in range(args.repeats):
        seed = args.seed + round_
        log(f"round {round_ + 1}/{args.repeats}: engine")
        for result in ours:
            bench_variant(result, args, seed)
        if anchors:
            log(f"round {round_ + 1}/{args.repeats}: anchors")
        for anchor in anchors:
            if not anchor.skipped:
                bench_anchor(anchor, args, seed)
    machine.append(f"- Load average (1, 5, 15 min) at end: {load_average()}")
    machine.append(f"- CPU used by other processes during the run: {other_load(counters)}")
    text = report(args, ours, anchors, machine)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

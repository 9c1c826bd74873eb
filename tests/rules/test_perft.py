"""Perft: counts of complete-move sequences from the start position."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import damii_env as d
from tests.rules import reference_movegen as ref

# Published International draughts perft from the start position (the draughts
# programming community's tables). From depth 8 on, published tables identify a capture
# by start, end and captured set (FMJD); we identify moves by their path (RULES.md), so
# only depths 1-7, where both conventions agree, are compared.
INTERNATIONAL = [9, 81, 658, 4265, 27117, 167140, 1049442]
# Italian draughts perft (pydraughts agrees move by move; see test_pydraughts_oracle).
ITALIAN = [7, 49, 302, 1469, 7361, 36473]
# Damii and Sci-Damath have no published tables. These counts were computed by
# tests/rules/reference_movegen.py, a plain move generator written from the rules text
# (docs/RULES.md, docs/DAMATH.md) that shares no code with damii_env and reproduces the
# published International table above; the tests below recompute them with it.
DAMII = [9, 81, 658, 4265, 27132, 168316]
DAMATH = [7, 49, 302, 1469, 7473, 37628, 187302, 907836]


@pytest.mark.parametrize("depth", range(1, 7))
def test_international_perft(depth):
    assert d.perft(depth, "international") == INTERNATIONAL[depth - 1]


@pytest.mark.slow
@pytest.mark.parametrize("depth", [7])
def test_international_perft_deep(depth):
    assert d.perft(depth, "international") == INTERNATIONAL[depth - 1]


@pytest.mark.parametrize("depth", range(1, 7))
def test_triestine_core_on_8x8_gives_italian_perft(depth):
    opts = dict(board_size=8, men_rows=3, orientation="mirrored")
    assert d.perft(depth, "triestine", **opts) == ITALIAN[depth - 1]


@pytest.mark.parametrize("depth", range(1, 7))
def test_damii_perft(depth):
    assert d.perft(depth, "damii") == DAMII[depth - 1]


@pytest.mark.parametrize("depth", range(1, 9))
def test_damath_perft(depth):
    assert d.perft(depth, "damath") == DAMATH[depth - 1]


@pytest.mark.parametrize("depth", range(1, 6))
def test_reference_generator_gives_the_published_international_perft(depth):
    """The reference generator checked where a published table exists."""
    assert ref.perft(depth, ref.INTERNATIONAL) == INTERNATIONAL[depth - 1]


@pytest.mark.parametrize("depth", range(1, 6))
def test_reference_generator_gives_the_damii_table(depth):
    assert ref.perft(depth, ref.DAMII) == DAMII[depth - 1]


@pytest.mark.parametrize("depth", range(1, 7))
def test_reference_generator_gives_the_damath_table(depth):
    assert ref.perft(depth, ref.DAMATH) == DAMATH[depth - 1]


@pytest.mark.slow
@pytest.mark.parametrize("rules, table, depth", [
    pytest.param(ref.INTERNATIONAL, INTERNATIONAL, 6, id="international-6"),
    pytest.param(ref.DAMII, DAMII, 6, id="damii-6"),
    pytest.param(ref.DAMATH, DAMATH, 7, id="damath-7"),
    pytest.param(ref.DAMATH, DAMATH, 8, id="damath-8"),
])
def test_reference_generator_tables_deep(rules, table, depth):
    assert ref.perft(depth, rules) == table[depth - 1]


@pytest.mark.parametrize("depth", range(1, 6))
def test_damii_orientations_have_the_same_perft(depth):
    """Checks bookkeeping (square numbering under both orientations), not the rules: the
    engine is compared with itself."""
    assert d.perft(depth, "damii") == d.perft(depth, "damii", orientation="standard")


def test_variants_share_the_opening_tree_until_captures_differ():
    # Before the first capture all three variants move alike: depth 1-4 are equal.
    for depth in range(1, 5):
        counts = {v: d.perft(depth, v) for v in ("damii", "international", "triestine")}
        assert len(set(counts.values())) == 1, counts
    # From depth 5 captures differ: Damii allows every capture, so it has the most.
    d5 = {v: d.perft(5, v) for v in ("damii", "international", "triestine")}
    assert d5["damii"] > d5["international"] > d5["triestine"], d5


def test_perft_from_fen_and_errors():
    fen = "W:WK47,28:B22,32,33,12"
    assert d.perft(1, "international", fen=fen) == 3
    assert d.perft(1, "damii", fen=fen, orientation="standard") == 8
    assert d.perft(0, "damii") == 1
    with pytest.raises(d.InvalidOptionError):
        d.perft(-1, "damii")


@pytest.mark.parametrize("divide", [False, True])
def test_deep_perft_stops_on_ctrl_c(divide):
    """Regression (issue 13): `damii perft --depth 11 --divide` ignored SIGINT for a
    minute. Deep perft runs in short compiled calls: Ctrl-C ends it within seconds with
    exit status 130 and one line."""
    import signal
    import subprocess
    import sys
    import time

    argv = ["perft", "--depth", "14", *(["--divide"] if divide else [])]
    # as from a terminal: a shell's background job (no job control) starts its commands
    # with SIGINT ignored, and Python then installs no Ctrl-C handler of its own
    proc = subprocess.Popen([sys.executable, "-m", "damii_app.cli", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # wait until the counting is under way (past the imports and compilation)
        wanted, line = ("perft damii" if divide else "depth  6"), ""
        for line in proc.stdout:
            if line.startswith(wanted):
                break
        assert line.startswith(wanted), proc.stderr.read() if proc.poll() is not None else line
        time.sleep(2)  # deep in the compiled calls now (depth 14 takes hours)
        assert proc.poll() is None
        cpu_before = _cpu_seconds(proc.pid)
        proc.send_signal(signal.SIGINT)
        # the child's own CPU time after Ctrl-C, not the wall clock, which a busy machine
        # stretches: it stops within a compiled call's work (the bug ran a minute's on)
        cpu_after, status = _exit_and_cpu_seconds(proc.pid, timeout=HANG_GUARD_S)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read()
    finally:
        if proc.returncode is None and proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert cpu_after - cpu_before < 5
    assert err == "damii: interrupted\n"


HANG_GUARD_S = 300
"""A wait's limit that only stops a hang."""


def _cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) process `pid` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _exit_and_cpu_seconds(pid: int, timeout: float) -> tuple[float, int]:
    """Wait (at most `timeout` s: a hang guard) for child `pid` to end and reap it: the CPU
    time it used in all, and its wait status."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return usage.ru_utime + usage.ru_stime, status
        assert time.monotonic() < deadline, "the command did not end after Ctrl-C"
        time.sleep(0.02)

"""benchmarks/equal_time_ladder.py: pairings played and saved, resumed without playing
again, and a pairing taken from a tally rated as its games would be."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "equal_time_ladder.py"


def ladder(*args: str) -> str:
    out = subprocess.run([sys.executable, str(SCRIPT), "--no-progress", "--workers", "1",
                          *args], capture_output=True, text=True, timeout=600, cwd=REPO)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def elo_of(text: str, label: str) -> float:
    (row,) = [r for r in text.splitlines() if r.startswith(f"| {label} | `")]
    return float(row.split("|")[3])


def test_a_ladder_is_played_saved_resumed_and_takes_tallies(tmp_path):
    out = tmp_path / "ladder"
    first = ladder("--variant", "damii", "--players", "random,greedy", "--games", "4",
                   "--out", str(out))
    saved = json.loads((out / "random-vs-greedy" / "results.json").read_text())
    assert len(saved["games"]) == 4 and saved["specs"] == ["random", "greedy"]
    assert "| random vs greedy | 4 |" in first and elo_of(first, "random") == 0.0
    mtime = (out / "random-vs-greedy" / "results.json").stat().st_mtime
    assert ladder("--variant", "damii", "--players", "random,greedy", "--games", "4",
                  "--out", str(out)).splitlines()[4:] == first.splitlines()[4:]
    assert (out / "random-vs-greedy" / "results.json").stat().st_mtime == mtime  # not replayed
    # a tally of 30-0-10 for greedy, plus the one virtual draw the fit adds to a pairing:
    # 30.5 of 41 points, so 400 log10(30.5 / 10.5) = +185 Elo (75% alone would be +191)
    tally = ladder("--variant", "damii", "--players", "random,greedy", "--out",
                   str(tmp_path / "t"), "--reuse-tally", "greedy,random=30-0-10@a test")
    assert "| greedy vs random | 40 | 30-0-10 | 75.0% |" in tally
    assert elo_of(tally, "greedy") == pytest.approx(400 * math.log10(30.5 / 10.5), abs=1)

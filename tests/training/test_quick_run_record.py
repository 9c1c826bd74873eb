"""The quick run's report is what its record says (issue 60, N4): docs/TRAINING.md and the
README quote lab/results/main-job-and-test-suite.md, and a run in the test process repeats
itself, so running it again here must give the scores recorded for that setting. Slow:
the whole quick run (about a minute on an idle 2-core machine, 26 minutes at load 10)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

RECORD = Path(__file__).resolve().parents[2] / "lab" / "results" / "main-job-and-test-suite.md"


def recorded_scores() -> dict[str, tuple[int, int]]:
    """Opponent -> (wins, games) of the newest recorded report ('16/20 against random')."""
    text = RECORD.read_text()
    newest = re.findall(r"\*\*(\d+)/(\d+) against (\w+), (\d+)/(\d+) against (\w+)\*\* "
                        r"\(in the test process\)", text)
    assert newest, "the record names no report of a run in the test process"
    a_wins, a_games, a, b_wins, b_games, b = newest[-1]
    return {a: (int(a_wins), int(a_games)), b: (int(b_wins), int(b_games))}


def test_the_record_names_the_quick_runs_scores():
    assert recorded_scores() == {"random": (20, 20), "greedy": (18, 20)}


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_the_quick_run_gives_the_recorded_report(tmp_path):
    pytest.importorskip("torch")
    from damii_training.run import run_training

    report = run_training("damii_quick", run_dir=tmp_path / "run", progress=False).read_text()
    for opponent, (wins, games) in recorded_scores().items():
        row = re.search(rf"^\| {opponent} \| (\d+) \| (\d+) \|", report, flags=re.M)
        assert row is not None, report
        assert (int(row.group(2)), int(row.group(1))) == (wins, games), (opponent, report)

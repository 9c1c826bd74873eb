"""One figure, one place (issue 60, N4/R8): every time and result the README and the docs
quote comes from a record the project keeps (a match table in lab/results/,
benchmarks/RESULTS.md, the timings of the README's two commands), and says the same.

- a table row of the README that links to its record quotes only figures that record has;
- the README's first lines time the two commands with figures of
  lab/results/main-job-and-test-suite.md, and docs/TRAINING.md's quick-run table too;
- the README keeps one strength table and one speed table, each row dated, and the place
  reserved for the cold-start figures;
- no doc says the pattern trainer runs without torch (it imports torch), or names three
  trainers (there are four).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TIMINGS = ROOT / "lab" / "results" / "main-job-and-test-suite.md"
FIGURE = re.compile(r"\d+(?:,\d{3})+|\d+\.\d+%?|\d+-\d+-\d+(?!-)|\b\d+%")
"""What counts as a quoted figure: 4,456,297; 2.54; 82.5%; 144-42-14 (W-D-L); 65%."""


def figures(text: str) -> list[str]:
    return [f for f in FIGURE.findall(text) if not re.fullmatch(r"20\d\d-\d\d-\d\d", f)]


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """The Markdown tables of `text`: header cells and the rows' cells."""
    found = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"\|[ :-]+\|", lines[i + 1]):
            header = [c.strip() for c in line.strip("|").split("|")]
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip("|").split("|")])
            found.append((header, rows))
    return found


def linked_rows(path: Path) -> list[tuple[str, str, Path]]:
    """(row's first cell, the cells whose figures the record must hold, the record) for
    each table row of `path` whose last cell links to a record."""
    out = []
    for header, rows in tables(path.read_text()):
        if not header or header[-1] != "record":
            continue
        checked = [i for i, name in enumerate(header[1:-1], start=1)
                   if not name.startswith("date")]
        for cells in rows:
            link = re.search(r"\]\(([^)#]+)", cells[-1])
            if link is None:
                continue  # a row reserved for figures not measured yet
            out.append((cells[0], " ".join(cells[i] for i in checked),
                        (path.parent / link.group(1)).resolve()))
    return out


def test_the_readme_has_one_strength_and_one_speed_table_with_their_records():
    text = README.read_text()
    assert text.count("\n## Strength\n") == 1 and text.count("\n## Speed\n") == 1
    rows = linked_rows(README)
    assert {r[0] for r in rows} >= {"Damii", "International", "Triestine", "Sci-Damath"}
    assert len(rows) >= 8
    # the place kept for the compiled core's cold-start figures
    assert "<!-- COLD START" in text and "| first `env.step` (cold start) |" in text
    assert "| first searched move (cold start) |" in text
    assert len(text.splitlines()) <= 262, "the README is a product page: at most ~260 lines"


@pytest.mark.parametrize("row", linked_rows(README), ids=lambda r: r[0][:40])
def test_each_readme_figure_is_its_records(row):
    name, cells, record = row
    assert record.is_file(), f"{name}: the record {record} does not exist"
    quoted = figures(cells)
    assert quoted, f"{name}: a row with a record quotes no figure"
    source = " ".join(record.read_text().split())
    missing = [f for f in quoted if f not in source]
    assert not missing, f"README row {name!r} quotes {missing}, which {record.name} does not have"


def test_the_two_commands_are_timed_from_their_record():
    head = "\n".join(README.read_text().splitlines()[:8])
    times = re.findall(r"\d+ min \d+ s|\d+ s\b", head)
    assert len(times) >= 3, head
    record = TIMINGS.read_text()
    assert all(t in record for t in times), (times, TIMINGS)
    assert "lab/results/main-job-and-test-suite.md" in head


def test_the_quick_run_figures_of_the_training_doc_are_the_records():
    doc = (ROOT / "docs" / "TRAINING.md").read_text()
    section = doc.split("## The quick run", 1)[1].split("\n## ", 1)[0]
    record = TIMINGS.read_text()
    [(header, rows)] = tables(section)
    assert header[:3] == ["when", "load", "wall time"]
    for cells in rows:
        for figure in re.findall(r"\d+ min \d+ s|\d+ s\b|\d+/20", " ".join(cells[2:])):
            assert figure in record, (figure, cells)
    assert "16/20 against random, 15/20 against greedy" in section  # damii train, 12-07
    assert "20/20 against random, 18/20 against greedy" in section  # run_training, 12-07


def test_no_doc_says_the_pattern_trainer_needs_no_torch_or_names_three_trainers():
    docs = sorted((ROOT / "docs").glob("*.md"))
    for doc in [README, *docs]:
        text = " ".join(doc.read_text().split())
        assert not re.search(r"(pattern|regression|table)[^.]{0,80}\b(without|no) torch\b",
                             text), doc.name
        # the trainers of networks are three; trainers are four (patterns the fourth)
        assert not re.search(r"\b[Tt]hree trainers\b(?! of networks)", text), doc.name
    assert re.search(r"\b[Ff]our trainers\b", README.read_text())


def test_one_config_claims_the_shipped_damath_network():
    claims = [path.name for path in sorted((ROOT / "configs").glob("*.yaml"))
              if re.search(r"Shipped\s*(#\s*)?as\s*(#\s*)?agents/weights/damath\.pt",
                           path.read_text())]
    assert claims == ["damath_tdleaf_policy_depth2.yaml"]


def suite_counts(config: pytest.Config) -> dict:
    """The whole suite's counts (tests/conftest.py, ``SUITE_COUNTS``): this session's when
    it collected every test file (the README's ``python -m pytest``), else those of a
    ``pytest --collect-only`` of tests/ in a process of its own (this file run alone)."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    from tests.conftest import SUITE_COUNTS

    every = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py"))
    counts = config.stash.get(SUITE_COUNTS, None)
    if counts is not None and sorted(counts["files"] + counts["skipped_files"]) == every:
        return counts
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "counts.json"
        done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                               "-p", "no:cacheprovider", "tests"], cwd=ROOT, text=True,
                              capture_output=True, env={**os.environ,
                                                        "DAMII_TEST_COUNTS_TO": str(out)})
        assert out.exists(), done.stdout[-2000:] + done.stderr[-2000:]
        counts = json.loads(out.read_text())
    unseen = set(every) - set(counts["files"] + counts["skipped_files"])
    assert not unseen, f"test files with no test: {sorted(unseen)}"
    return counts


def test_the_development_section_counts_the_suite(request):
    """The README's Development section says how many tests the default run has, how many
    of them need Chromium and how many `-m slow` runs: the figures of the suite itself."""
    section = README.read_text().split("\n## Development\n", 1)[1].split("\n## ", 1)[0]
    said = re.search(r"the default suite: ([\d,]+) tests, ([\d,]+) of them in Chromium", section)
    slow = re.search(r"`-m slow` runs the ([\d,]+) others", section)
    assert said and slow, "the Development section no longer states the suite's counts"
    counts = suite_counts(request.config)
    if counts["skipped_files"]:  # an extra is missing: whole files are not collected
        pytest.skip(f"the README counts the suite with the dev and train extras; "
                    f"{counts['skipped_files']} were skipped whole")
    figures = [int(said.group(1).replace(",", "")), int(said.group(2).replace(",", "")),
               int(slow.group(1).replace(",", ""))]
    assert figures == [counts["default"], counts["browser"], counts["slow"]], \
        "write the suite's counts into README.md's Development section"


def test_the_images_the_docs_show_exist_and_the_screenshots_are_small():
    """Every image the README and docs/*.md show is there; the page's screenshots
    (docs/images/make_serve_screenshots.py) are small PNGs, and the README shows the page
    as it is: its Analyse tab with a review's graph, and a club's tournament."""
    for doc in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", doc.read_text()):
            if not target.startswith(("http://", "https://")):
                assert (doc.parent / target).is_file(), f"{doc.name} shows {target}: missing"
    for shot in sorted((ROOT / "docs" / "images").glob("serve_*.png")):
        head = shot.read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n", shot.name
        width = int.from_bytes(head[16:20], "big")  # the IHDR chunk's width
        assert width <= 1200 and shot.stat().st_size < 120_000, (shot.name, width)
    readme = README.read_text()
    assert "docs/images/serve_analyse.png" in readme and "docs/images/serve_clubs.png" in readme

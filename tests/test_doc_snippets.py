"""The Python examples of docs/*.md run and print what their ``# ->`` comments show, as the
README's do (tests/test_readme.py; issue 60, N5: docs/HUB.md's examples failed as pasted).

Each runs as the page says to run it: in the project's environment, activated (its
``bin`` folder on ``PATH``, where ``damii`` and ``dame`` are). An example that needs
software the ``dev`` extra does not bring names it in ``NEEDS`` and is skipped without it.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.test_readme import check_block, shown_values

DOCS = Path(__file__).resolve().parent.parent / "docs"
BLOCKS = [(page.name, index, block)
          for page in sorted(DOCS.glob("*.md"))
          for index, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(),
                                                   flags=re.S))]
NEEDS = {"draughts": "pydraughts (the dev extra)", '"dame hub"': "dame-rs (the dev extra)"}


def test_the_docs_have_examples():
    assert {name for name, _, _ in BLOCKS} >= {"HUB.md"}


@pytest.mark.parametrize(("page", "index", "source"), BLOCKS,
                         ids=[f"{name}-{index}" for name, index, _ in BLOCKS])
def test_doc_examples_print_what_their_comments_show(page, index, source, monkeypatch):
    if "import draughts" in source:
        pytest.importorskip("draughts", reason=NEEDS["draughts"])
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    if '"dame hub"' in source and shutil.which("dame") is None:
        pytest.skip(NEEDS['"dame hub"'])
    assert shown_values(source), f"docs/{page} example {index} has no '# -> VALUE' comment"
    problems, _ = check_block(source, f"docs/{page} example {index}")
    assert not problems, "\n".join(problems)

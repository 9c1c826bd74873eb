"""The README's Python examples run as written, and it opens with the two commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_python_examples_run(index, capsys):
    exec(compile(BLOCKS[index], f"README.md block {index}", "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out  # every example prints something


def test_readme_opens_with_the_main_job_and_the_test_command():
    lines = README.read_text().splitlines()
    commands = [line for line in lines[:8] if line.startswith("python3 -m venv")]
    assert len(commands) == 2
    assert commands[0].endswith("damii train configs/damii_quick.yaml")
    assert commands[1].endswith("python -m pytest")
    ci = (README.parent / ".ci" / "run").read_text()
    assert "pip install --quiet torch==2.13.0" in ci and "python -m pytest" in ci

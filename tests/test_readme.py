"""The README's Python examples print what their comments say, and it opens with the two commands.

In a ```python block, a comment ``# -> VALUE`` states what its line prints; everything that
line prints (all iterations of a loop, in order) must match VALUE, where ``...`` stands for
any text and runs of whitespace (a newline between two prints too) count as one space, as in
doctest with ELLIPSIS and NORMALIZE_WHITESPACE. Plain ``# text`` comments are not checked.
"""

from __future__ import annotations

import builtins
import doctest
import io
import re
import sys
import tokenize
from collections import defaultdict
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
SHOWS = re.compile(r"#\s*->\s?(.*)")
CHECKER = doctest.OutputChecker()
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def shown_values(source: str) -> dict[int, str]:
    """Line number (1-based, within the block) -> VALUE of each ``# -> VALUE`` comment."""
    values = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and (match := SHOWS.fullmatch(token.string)):
            values[token.start[0]] = match.group(1).strip()
    return values


def run_block(source: str, name: str) -> dict[int, str]:
    """Exec `source` with a recording ``print``; line number -> all the text printed there."""
    printed: dict[int, str] = defaultdict(str)

    def recording_print(*args, sep=" ", end="\n", file=None, flush=False):
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != name:
            frame = frame.f_back  # a print inside a function the block defines
        buffer = io.StringIO()
        builtins.print(*args, sep=sep, end=end, file=buffer)
        printed[frame.f_lineno if frame is not None else 0] += buffer.getvalue()

    exec(compile(source, name, "exec"), {"__name__": "readme", "print": recording_print})
    return dict(printed)


def check_block(source: str, name: str) -> tuple[list[str], dict[int, str]]:
    """Mismatches between the ``# -> VALUE`` comments of `source` and what it prints, and
    what it printed (line number -> text)."""
    printed = run_block(source, name)
    lines = source.splitlines()
    problems = []
    for line, want in shown_values(source).items():
        got = printed.get(line)
        if got is None:
            problems.append(f"{name}, line {line} printed nothing: {lines[line - 1].strip()}")
        elif not CHECKER.check_output(want + "\n", got if got.endswith("\n") else got + "\n",
                                      FLAGS):
            problems.append(f"{name}, line {line}: {lines[line - 1].strip()}\n"
                            f"  comment shows: {want}\n  line printed:  {got!r}")
    return problems, printed


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_python_examples_print_what_their_comments_show(index):
    source = BLOCKS[index]
    # Every block has a deterministic value to show (the PettingZoo game and the vector
    # engine's random moves are seeded), so every block must check at least one line.
    assert shown_values(source), f"README.md block {index} has no '# -> VALUE' comment"
    problems, _ = check_block(source, f"README.md block {index}")
    assert not problems, "\n".join(problems)


def test_the_checker_reports_wrong_values_and_silent_lines():
    right = (
        "for n in range(3):\n"
        "    print(n, n * n)  # -> 0 0 1 1 ...\n"
        "print('board\\nWhite to move')  # -> ...White to move\n"
        "x = 1  # a plain comment is not checked\n"
    )
    problems, printed = check_block(right, "made-up block")
    assert problems == [] and printed == {2: "0 0\n1 1\n2 4\n", 3: "board\nWhite to move\n"}

    wrong = "print(1 + 1)  # -> 3\nx = 2  # -> 2\nprint('2 2')  # -> 2 2 ...\n"
    problems, _ = check_block(wrong, "made-up block")
    assert len(problems) == 3
    assert "line 1: print(1 + 1)" in problems[0] and "'2\\n'" in problems[0]
    assert "line 2 printed nothing" in problems[1]
    assert "line 3:" in problems[2]  # the '...' after a space needs more text to follow


def test_readme_opens_with_the_main_job_and_the_test_command():
    lines = README.read_text().splitlines()
    commands = [line for line in lines[:8] if line.startswith("python3 -m venv")]
    assert len(commands) == 2
    assert commands[0].endswith("damii train configs/damii_quick.yaml")
    assert commands[1].endswith("python -m pytest")
    ci = (README.parent / ".ci" / "run").read_text()
    assert "pip install --quiet torch==2.13.0" in ci and "python -m pytest" in ci


def test_the_pretrained_players_are_named_the_same_in_readme_help_and_registry():
    """pretrained:NAME is the strongest player, net=policy and net=search the network's:
    the README, `damii eval/play --help` and the registry's errors use the same names."""
    from damii_agents.registry import PRETRAINED_NETS, PRETRAINED_TIME
    from damii_app.cli import PRETRAINED_HELP

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert PRETRAINED_NETS == ("policy", "search")
    for text in (readme, PRETRAINED_HELP):
        assert "pretrained:damii,net=policy" in text or "pretrained:NAME,net=policy" in text
        assert ",net=search,depth=2" in text
        assert f"{PRETRAINED_TIME:g} s a move" in text

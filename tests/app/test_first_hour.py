"""What a new user meets first (issue 29): the version, a board piped into head, the
player kinds in the help and the errors, the terminal clock, quit, the boards' numbers."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

import damii_env as d
from damii_agents.players.human import HumanAgent
from damii_agents.registry import PLAYER_KINDS, PlayerSpec, player_kinds
from damii_app.cli import build_parser, main
from damii_app.play import play_human
from damii_env.player import PlayerSpecError


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"damii-env {d.__version__}"


def test_show_piped_into_head_ends_quietly():
    proc = subprocess.run(
        f"{sys.executable} -m damii_app.cli show --variant international --numbers | head -2",
        shell=True, capture_output=True, text=True, timeout=120)
    assert len(proc.stdout.splitlines()) == 2
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr


def test_show_numbers_on_a_damath_board(capsys):
    assert main(["show", "--variant", "damath", "--numbers"]) == 0
    numbered = capsys.readouterr().out
    assert main(["show", "--variant", "damath"]) == 0
    plain = capsys.readouterr().out
    assert "22 w6" in numbered and "22 w6" not in plain and "w6" in plain


# --- one list of player kinds ------------------------------------------------------------
def test_player_kinds_are_the_same_in_the_help_and_the_errors():
    assert "pretrained:NAME" in PLAYER_KINDS and player_kinds() == PLAYER_KINDS
    listed = ", ".join(PLAYER_KINDS)
    sub = build_parser()._subparsers._group_actions[0].choices  # noqa: SLF001 (argparse)
    for command in ("eval", "play"):
        assert listed in " ".join(sub[command].format_help().split())
    with pytest.raises(PlayerSpecError, match=f"expected one of: {listed}$"):
        PlayerSpec.parse("foo")
    with pytest.raises(PlayerSpecError, match=f"expected one of: {listed}$"):
        PlayerSpec.parse("  ")


def test_player_kinds_for_a_variant_name_its_shipped_network():
    assert player_kinds("damath")[-1] == "pretrained:damath"
    assert player_kinds("damath")[:-1] == PLAYER_KINDS[:-1]


# --- damii play: casual by default, a visible clock when asked, quit ---------------------
def test_play_is_casual_by_default(tmp_path):
    out: list[str] = []
    result = play_human("damii", "random", pdn_path=tmp_path / "g.pdn",
                        input_fn=lambda prompt: "quit", output_fn=out.append)
    assert "no clock (casual)" in out[0]
    assert result.quit and result.end.termination == "abandoned"
    help_text = " ".join(build_parser()._subparsers._group_actions[0]  # noqa: SLF001
                         .choices["play"].format_help().split())
    assert "none (default: casual" in help_text


def test_the_clock_is_shown_at_the_prompt_and_a_late_move_is_told():
    now = [100.0]
    prompts: list[str] = []
    out: list[str] = []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        now[0] += 7.0  # the person thinks 7 s before each answer
        return "board" if len(prompts) == 1 else "1"

    human = HumanAgent(input_fn=answer, output_fn=out.append, move_seconds=10,
                       clock=lambda: now[0])
    move = human.choose(d.Game("damii"))
    assert move == d.Game("damii").legal_moves()[0]
    assert prompts == ["your move (10 s left)> ", "your move (3 s left)> "]
    assert out[-1] == "time is up: this move took 14 s of 10 s"


def test_a_damath_capture_may_take_its_time_without_a_warning():
    now = [0.0]
    out: list[str] = []

    def answer(prompt: str) -> str:
        now[0] += 30.0
        return "1"

    human = HumanAgent(input_fn=answer, output_fn=out.append, move_seconds=10,
                       captures_exempt=True, clock=lambda: now[0])
    move = human.choose(d.Game.from_fen("W:W18=6:B14=4,1=2", "damath"))
    assert move.is_capture and not [line for line in out if "time is up" in line]


def test_quit_exits_0_and_the_end_of_input_1(tmp_path, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    assert main(["play", "--opponent", "random", "--pdn", str(tmp_path / "q.pdn")]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["play", "--opponent", "random", "--pdn", str(tmp_path / "e.pdn")]) == 1


def test_the_board_at_the_end_of_play_has_the_numbers(tmp_path):
    out: list[str] = []
    play_human("international", "random", pdn_path=tmp_path / "g.pdn",
               input_fn=lambda prompt: "quit", output_fn=out.append)
    final_board = out[-3]
    assert final_board.splitlines()[0].split()[-5:] == ["1", "2", "3", "4", "5"]

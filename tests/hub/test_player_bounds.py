"""Outside engines are bounded (issue 63, findings H6, H7, H15): an engine that keeps
printing ``info`` still loses on time, one that writes without a newline costs no memory,
and what an engine starts in its process group ends with it."""

from __future__ import annotations

import re
import resource
import shlex
import sys
import time
from pathlib import Path

import pytest

from damii_agents.match.game_loop import Clock, play_game
from damii_agents.players.hub import HubPlayer
from damii_agents.players.simple import RandomAgent
from damii_env import Game

FAKE = Path(__file__).with_name("fake_engine.py")


def fake(mode: str) -> str:
    return shlex.join([sys.executable, str(FAKE), mode])


def first_game(player: HubPlayer):
    player.reset(0)
    game = Game("international")
    return game, play_game(game, (player, RandomAgent(seed=1)), Clock())


def test_h6_an_engine_that_keeps_printing_info_loses_on_time():
    # before: queued lines were read past the deadline, and the game never ended
    player = HubPlayer(fake("info-flood"), "international", level={"time": 0.05})
    try:
        game, end = first_game(player)
    finally:
        player.close()
    assert end.winner == 1
    assert re.search(r"did not answer with a move within 1.05 s|floods its output",
                     end.termination), end.termination


def test_h7_an_engine_writing_without_a_newline_is_read_in_bounded_chunks():
    # before: a line was read whole (1 GB in 10 s) before it was cut
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB on Linux
    player = HubPlayer(fake("long-line"), "international", level={"time": 0.05})
    try:
        game, end = first_game(player)
    finally:
        player.close()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert end.winner == 1 and "within 1.05 s" in end.termination, end.termination
    assert after - before < 100_000  # under 100 MB more at its peak (it wrote ~1 GB/s)


def pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def wait_gone(pid: int, within: float = 120.0) -> bool:
    """Whether `pid` ends within `within` seconds (a limit that only stops a hang)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_h15_an_engines_children_end_with_it():
    player = HubPlayer(fake("child"), "international", level={"time": 0.05})
    deadline = time.monotonic() + 120  # only stops a hang
    while not any(line.startswith("child=") for line in player._stderr):
        assert time.monotonic() < deadline, "the fake engine did not start its child"
        time.sleep(0.02)
    child = int(next(line for line in player._stderr if line.startswith("child="))[6:])
    assert pid_alive(child)
    player.close()  # the engine exits at quit; before, its child was left running
    assert wait_gone(child)


@pytest.mark.parametrize("mode", ["info-flood"])
def test_an_engine_that_floods_is_stopped_with_its_process(mode):
    player = HubPlayer(fake(mode), "international", level={"time": 0.05})
    pid = player._proc.pid
    first_game(player)
    assert wait_gone(pid)

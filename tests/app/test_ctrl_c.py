"""Ctrl-C anywhere in ``damii play``, ``damii eval`` and ``damii train`` ends cleanly
(issue 60, N1): one line, the game or the run saved, exit status 130.

Each test starts the command as a terminal would (SIGINT handled), waits for a line that
says it is where the Ctrl-C should land, sends SIGINT, and reads what the command did.
No test sleeps for a guessed time."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import damii_env as d
from damii_env.pdn import read_file

WAIT_S = 600
"""Bound on any one wait (a hang fails the test instead of holding the run); each wait
ends on an event, long before this, on any load."""


def start(argv: list[str], cwd: Path, stdin: str | None = None) -> subprocess.Popen:
    """``damii ARGV`` as from a terminal: SIGINT handled (a shell's background job would
    start it with SIGINT ignored, and Python would then install no Ctrl-C handler)."""
    proc = subprocess.Popen([sys.executable, "-m", "damii_app.cli", *argv], cwd=cwd,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, bufsize=1,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    if stdin is not None:
        proc.stdin.write(stdin)
        proc.stdin.flush()
    return proc


def wait_for_line(stream, wanted: Callable[[str], bool], seen: list[str]) -> str:
    """Read `stream` line by line (into `seen`) until a line that is `wanted`; the stream's
    end first fails the test with everything read."""
    result: dict[str, str] = {}

    def read() -> None:
        for line in stream:
            seen.append(line)
            if wanted(line):
                result["line"] = line
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(WAIT_S)
    assert "line" in result, "".join(seen[-40:])
    return result["line"]


def finish(proc: subprocess.Popen) -> tuple[str, str]:
    """SIGINT, then the rest of stdout and stderr once the command has ended."""
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out, err


def games_done(bar_line: str) -> int:
    """The finished games that a line of the match's bar counts (0 for other lines)."""
    match = re.search(r"\| *(\d+)/\d+ ", bar_line)
    return int(match.group(1)) if match else 0


def warm_search_cache(variant: str) -> None:
    """Compile the timed search here once (numba caches it on disk), so that the command
    searches within seconds of its start instead of compiling for minutes."""
    from damii_env.player import make_player

    make_player("alphabeta:time=0.05", variant).choose(d.Game(variant))


def test_ctrl_c_while_the_agent_thinks_saves_the_game_and_exits_130(tmp_path):
    """N1: Ctrl-C inside the agent's timed search (its clock is read from the compiled
    code) printed a SystemError traceback, exited 1 and saved no PDN."""
    warm_search_cache("international")
    pdn = tmp_path / "game.pdn"
    proc = start(["play", "--variant", "international", "--opponent", "alphabeta:time=5",
                  "--pdn", str(pdn), "--seed", "1"], tmp_path)
    game = d.Game("international")  # the game as the command plays it
    seen: list[str] = []
    try:
        # White plays its first listed move until the agent thinks in a position with a
        # choice (a forced move is played without a search), with nothing left to compile
        # after its first move: the Ctrl-C then comes during the agent's 5 s search
        while True:
            wait_for_line(proc.stdout, lambda line: line.startswith("legal moves:"), seen)
            game.push(game.legal_moves()[0])
            proc.stdin.write("1\n")
            proc.stdin.flush()
            wait_for_line(proc.stdout, lambda line: "is thinking" in line, seen)
            if len(game.move_stack) > 1 and len(game.legal_moves()) > 1:
                break
            played = wait_for_line(proc.stdout, lambda line: " plays " in line, seen)
            game.push(played.split(" plays ")[1].split()[0])
        out, err = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in err and "SystemError" not in err, err
    assert proc.returncode == 130, (out, err)
    assert "result * (abandoned)" in out and f"game saved to {pdn}" in out
    assert err.strip().splitlines()[-1] == \
        f"damii play: interrupted; the game is saved unfinished in {pdn}"
    [saved] = read_file(pdn)
    assert saved.tags["Result"] == "*" and saved.tags["Termination"] == "abandoned"
    # every move up to White's last, and not the agent's answer, which never came
    assert saved.moves == [str(m) for m in game.move_stack]


def test_ctrl_c_at_the_prompt_saves_the_game_and_exits_130(tmp_path):
    """Ctrl-C at the person's prompt ended cleanly before, but with status 1, as if the
    input had run out."""
    pdn = tmp_path / "game.pdn"
    proc = start(["play", "--variant", "damii", "--opponent", "random", "--pdn", str(pdn)],
                 tmp_path)
    seen: list[str] = []
    try:
        wait_for_line(proc.stdout, lambda line: line.startswith("legal moves:"), seen)
        out, err = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in err, err
    assert proc.returncode == 130, (out, err)
    assert "result * (abandoned)" in out and pdn.exists()
    assert "damii play: interrupted" in err


def test_the_end_of_the_input_is_no_interruption(tmp_path):
    """The input running out still abandons the game with status 1 (not 130)."""
    pdn = tmp_path / "game.pdn"
    proc = start(["play", "--variant", "damii", "--opponent", "random", "--pdn", str(pdn)],
                 tmp_path)
    out, err = proc.communicate("", timeout=WAIT_S)
    assert proc.returncode == 1, (out, err)
    assert "result * (abandoned)" in out and "interrupted" not in err and pdn.exists()


def test_ctrl_c_during_a_match_saves_the_games_played_and_exits_130(tmp_path):
    """``damii eval``: Ctrl-C after some games keeps them (results and PDN), says how many
    of how many, and exits 130; before, it said "no results were saved"."""
    out_dir = tmp_path / "match"
    proc = start(["eval", "--variant", "damii", "random", "greedy", "--games", "1000",
                  "--clock", "none", "--workers", "1", "--out", str(out_dir)], tmp_path)
    seen: list[str] = []
    try:
        # the bar on stderr (each update ends with a carriage return, a line break here)
        # counts the finished games: Ctrl-C once two are done
        wait_for_line(proc.stderr, lambda line: games_done(line) >= 2, seen)
        out, err = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = "".join(seen) + err
    assert "Traceback" not in err, err
    assert proc.returncode == 130, (out, err)
    assert "damii eval: interrupted after " in err and f"saved in {out_dir}" in err
    games = read_file(out_dir / "games.pdn")
    assert len(games) >= 2 and all(g.tags["Result"] in ("1-0", "0-1", "1/2-1/2")
                                   for g in games)
    assert (out_dir / "results.json").exists() and (out_dir / "results.md").exists()


@pytest.mark.slow  # loads torch and trains one PPO iteration (a minute, more under load)
@pytest.mark.timeout(2 * WAIT_S + 60)
def test_ctrl_c_during_training_keeps_the_run_and_exits_130(tmp_path):
    """``damii train``: Ctrl-C after the first iteration's checkpoint says how to resume,
    keeps the checkpoint and exits 130 (the quick run's shipped config, by its name)."""
    pytest.importorskip("torch")
    pytest.importorskip("yaml")
    run_dir = tmp_path / "run"
    proc = start(["train", "damii_quick", "--run-dir", str(run_dir),
                  "--set", "eval_every=0"], tmp_path)
    seen: list[str] = []
    try:
        # the bar's postfix names iteration 1 once its checkpoint is written
        wait_for_line(proc.stderr, lambda line: " it 1 " in line, seen)
        out, err = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = "".join(seen) + err
    assert "Traceback" not in err, err
    assert proc.returncode == 130, (out, err)
    assert f"the run continues from its last checkpoint (iteration 1) with: damii train " \
           f"--resume {run_dir}" in err or f"damii train --resume {run_dir}" in err
    assert (run_dir / "checkpoints" / "last.pt").exists()

"""``damii play`` on a terminal (issue 45, D5/D6): the clock counts down at the prompt and
the game ends the moment the time is up; the agent says it is thinking (compiling, the
first time); the agent's move is marked on the board; the legal moves wrap between moves."""

from __future__ import annotations

import os
import re
import time

import pytest

import damii_env as d
from damii_agents import RandomAgent
from damii_agents.base import Forfeit
from damii_agents.match import GameEnd, play_game
from damii_agents.players.human import HumanAgent, TerminalInput, marked_board, numbered
from damii_app.play import Thinking, play_human, thinking_line


class FakeTerminal:
    """A TimedInput on a fake clock: nothing is typed unless `lines` says so; each wait
    moves the clock on by the time waited."""

    def __init__(self, now: list[float], lines: dict[float, str] | None = None) -> None:
        self.now, self.lines = now, dict(lines or {})
        self.shown: list[str] = []
        self.interrupted = False

    def prompt(self, text: str) -> None:
        self.shown.append(text)

    def update(self, text: str) -> None:
        self.shown.append(text)

    def poll(self, timeout: float | None) -> str | None:
        assert timeout is not None and 0 < timeout <= 1.01
        self.now[0] += timeout
        for at in sorted(self.lines):
            if self.now[0] >= at:
                return self.lines.pop(at)
        return None

    def interrupt(self) -> None:
        self.interrupted = True


def test_the_clock_counts_down_and_time_is_up_at_that_moment():
    now = [0.0]
    terminal = FakeTerminal(now)
    out: list[str] = []
    human = HumanAgent(output_fn=out.append, move_seconds=8, clock=lambda: now[0],
                       terminal=terminal, input_fn=lambda p: pytest.fail("blocking read"))
    end = play_game(d.Game("damii"), [human, RandomAgent(seed=0)])
    assert end == GameEnd(1, "0-1", "time forfeit")
    assert terminal.shown == [f"your move ({n} s left)> " for n in range(8, -1, -1)]
    assert terminal.interrupted and out[-1] == "time is up: you had 8 s for this move"
    assert 8.0 <= now[0] < 8.01  # not a moment later, and without a key pressed


def test_a_line_typed_in_time_is_the_move_and_ten_seconds_pad_the_prompt():
    now = [0.0]
    terminal = FakeTerminal(now, {2.5: "2"})
    human = HumanAgent(output_fn=[].append, move_seconds=10, clock=lambda: now[0],
                       terminal=terminal)
    move = human.choose(d.Game("damii"))
    assert move == d.Game("damii").legal_moves()[1]
    assert terminal.shown == ["your move (10 s left)> ", "your move ( 9 s left)> ",
                              "your move ( 8 s left)> "]


def test_a_damath_capture_has_no_countdown():
    now = [0.0]
    terminal = FakeTerminal(now, {30.0: "1"})
    terminal.poll = lambda timeout: (now.__setitem__(0, 30.0), "1")[1]  # type: ignore
    human = HumanAgent(output_fn=[].append, move_seconds=10, captures_exempt=True,
                       clock=lambda: now[0], terminal=terminal)
    move = human.choose(d.Game.from_fen("W:W18=6:B14=4,1=2", "damath"))
    assert move.is_capture and terminal.shown == ["your move (a capture: no clock)> "]


posix_only = pytest.mark.skipif(os.name != "posix", reason="select on a terminal: POSIX")


@posix_only
def test_a_real_terminal_counts_down_and_ends_the_turn_without_a_key():
    master, slave = os.openpty()
    with os.fdopen(slave, "r", closefd=False) as stdin, \
            os.fdopen(os.dup(slave), "w") as stdout:
        human = HumanAgent(output_fn=lambda text: print(text, file=stdout, flush=True),
                           move_seconds=1.5, terminal=TerminalInput(stdin, stdout))
        started = time.monotonic()
        with pytest.raises(Forfeit, match="time forfeit"):
            human.choose(d.Game("damii"))
        took = time.monotonic() - started
        shown = _drain(master)
        # no key is ever pressed: the turn ends by itself (waiting for a key would hang
        # here until the test's time limit), and not before its 1.5 s
        assert took >= 1.5
        assert "your move (2 s left)> " in shown  # ceil(1.5)
        assert "\x1b7\ryour move (1 s left)> \x1b8" in shown  # redrawn in place
        assert "time is up: you had 1.5 s for this move" in shown

        os.write(master, b"3\n")
        assert human.choose(d.Game("damii")) == d.Game("damii").legal_moves()[2]
    os.close(slave)
    os.close(master)


def _drain(fd: int) -> str:
    import select

    data = b""
    while select.select([fd], [], [], 0.2)[0]:
        data += os.read(fd, 65536)
    return data.decode("utf-8", errors="replace")


@posix_only
def test_damii_play_on_a_terminal_loses_on_time_without_a_key(tmp_path):
    """The command itself in a pseudo-terminal: the prompt counts down and the game ends
    when the time is up, nobody typing."""
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "damii_app.cli", "play", "--opponent",
                             "random", "--clock", "2", "--pdn", str(tmp_path / "g.pdn")],
                            stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 300  # only stops a hang (the imports are slow under load)
    while proc.poll() is None and time.monotonic() < deadline:
        seen += _read_some(master)
    seen += _read_some(master)
    os.close(master)
    if proc.poll() is None:
        proc.kill()
    text = seen.decode("utf-8", errors="replace")
    assert proc.returncode == 0, text
    assert "\x1b7\ryour move (1 s left)> \x1b8" in text
    assert "time is up: you had 2 s for this move" in text
    assert "result 0-1 (time forfeit)" in text


def _read_some(fd: int) -> bytes:
    import select

    if not select.select([fd], [], [], 0.2)[0]:
        return b""
    try:
        return os.read(fd, 65536)
    except OSError:  # the other side closed (Linux: EIO)
        return b""


@posix_only
def test_terminal_input_reads_lines_and_the_end_of_a_pipe():
    read, write = os.pipe()
    with os.fdopen(read, "r") as stdin, open(os.devnull, "w") as devnull:
        terminal = TerminalInput(stdin, devnull)
        assert terminal.poll(0.05) is None
        os.write(write, b"32-28\nres")
        assert terminal.poll(0.05) == "32-28"
        assert terminal.poll(0.05) is None  # half a line
        os.write(write, b"ign\n")
        assert terminal.poll(0.05) == "resign"
        os.close(write)
        with pytest.raises(EOFError):
            terminal.poll(0.05)


# --- the agent's turn ---------------------------------------------------------------------
def test_the_agent_says_it_is_thinking_before_its_move(tmp_path):
    out: list[str] = []
    answers = iter(["1", "quit"])
    play_human("damii", "random", pdn_path=tmp_path / "g.pdn", output_fn=out.append,
               input_fn=lambda prompt: next(answers))
    thinking = out.index("black (random) is thinking…")
    assert out[thinking + 1].startswith("black (random) plays ")


def test_the_thinking_line_claims_no_compiling_of_its_own():
    """N11: the line said "compiling" at every first move, also with a warm cache; the
    engine says it (damii_env.compile_cache) when, and only when, it compiles."""
    for kind in ("pretrained", "alphabeta", "random"):
        assert thinking_line("black (x)", kind, first=True) == "black (x) is thinking…"
    assert thinking_line("black (x)", "alphabeta", first=False) == "black (x) is thinking…"
    assert thinking_line("black (x)", "hub", first=True) == (
        "black (x) is thinking… (starting the engine)")


def test_the_engine_says_nothing_of_compiling_when_the_shipped_code_fits(tmp_path):
    """With the shipped compiled code (an empty cache folder, this processor) nothing
    compiles and no "compiling" line is printed; the line itself names the cache and why
    (a compilation from nothing is timed by benchmarks/cold_start.py --no-shipped)."""
    import io
    import os
    import subprocess
    import sys

    from damii_env import compile_cache

    code = ("import damii_env\ng = damii_env.Game('damii')\ng.push(g.legal_moves()[0])\n"
            "print('done')")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    warm = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(env, DAMII_CACHE_DIR=str(tmp_path / "warm")), timeout=900)
    assert warm.stdout.strip() == "done", warm.stderr
    if compile_cache.shipped_machine("damii_env") == compile_cache.machine():
        assert "compiling" not in warm.stderr
    line = io.StringIO()
    compile_cache.compile_notice(line)
    assert line.getvalue().startswith("damii-env: compiling the engine for this machine (")
    assert str(compile_cache.cache_root()) in line.getvalue()


def test_thinking_on_a_terminal_ticks_and_is_replaced_by_the_move():
    written: list[str] = []
    with Thinking("black (x) is thinking…", [].append, live=True, raw=written.append):
        deadline = time.monotonic() + 120  # only stops a hang: a tick comes after about 1 s
        while len(written) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert written[0] == "black (x) is thinking…"
    assert "\r\x1b[Kblack (x) is thinking… 1 s" in written
    assert written[-1] == "\r\x1b[K"


# --- the board and the list of moves -----------------------------------------------------
def test_the_agents_move_is_marked_on_the_board(tmp_path):
    out: list[str] = []
    result = play_human("damii", "random:seed=3", colour="black", output_fn=out.append,
                        pdn_path=tmp_path / "g.pdn", input_fn=lambda prompt: "quit")
    move = result.game.move_stack[0]
    board = next(text for text in out if "damii (mirrored)" in text)
    marked = re.findall(r"\[ ?(\w+)\]", board)
    src = move.path[0]
    assert marked == [str(src), "w"] or marked == ["w", str(src)]
    assert f"last move: {move}, in [brackets] on the board" in out


def test_marked_board_brackets_a_capture_and_a_damath_cell():
    game = d.Game.from_fen("W:WK47,28:B22,32,33,12", "damii", orientation="standard")
    game.push("28x17x8")
    board = marked_board(game, game.move_stack[-1])
    assert board.count("[") == 3 and "[28]" in board and "[17]" in board and "[ w]" in board
    game = d.Game("damath")
    game.push(game.legal_moves()[0])
    board = marked_board(game, game.move_stack[-1])
    assert board.count("[") == 2 and re.search(r"\[ 21 \(/\) \]", board)


def test_the_legal_moves_wrap_between_moves():
    moves = d.Game("international").legal_moves()
    text = numbered(moves, "legal moves: ", 30)
    lines = text.split("\n")
    assert len(lines) > 2 and all(len(line) <= 30 for line in lines)
    items = re.findall(r"(\d+)\) (\S+)", text)
    assert [m for _, m in items] == [str(m) for m in moves]
    assert all(re.fullmatch(r"(legal moves: |  )\d+\) \S+(  \d+\) \S+)*", line)
               for line in lines)


def test_the_human_lists_moves_to_the_terminal_width():
    out: list[str] = []
    answers = iter(["99", "1"])
    human = HumanAgent(input_fn=lambda prompt: next(answers), output_fn=out.append, width=32)
    human.choose(d.Game("international"))
    listing = [text for text in out if "1) 31-26" in text]
    assert len(listing) == 2  # the legal moves, then "there is no move 99; ..."
    assert all(len(line) <= 32 for text in listing for line in text.split("\n")
               if ")" in line)  # a message longer than the width: the moves on the next line
    assert listing[1].startswith("there is no move 99; pick 1 to 9:\n  1) 31-26")

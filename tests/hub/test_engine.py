"""``damii hub`` driven from outside: pydraughts' HubEngine plays it against dame-rs's
``dame hub`` through whole International games, pydraughts' own board the referee; the
protocol's corners (ping during a search, stop, unknown commands, a refused variant, the
end of the input) and a Damii move."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import pytest

from damii_env import Game
from damii_env import hub as H

draughts = pytest.importorskip("draughts", reason="pydraughts drives the engines (dev extra)")
from draughts.engine import HubEngine, Limit  # noqa: E402

DAMII = shutil.which("damii")
DAME = shutil.which("dame")
needs_dame = pytest.mark.skipif(DAME is None, reason="dame-rs is not installed (pip install "
                                                     "dame-rs==0.2.0, the dev extra)")
START = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww"


def damii_hub() -> list[str]:
    """The command of `damii hub` (pydraughts resolves a command's first word as a path)."""
    if DAMII is None:
        pytest.skip("the damii command is not installed (pip install -e .)")
    return [DAMII, "hub"]


def canonical(hub_move: str) -> tuple[int, int, tuple[int, ...]]:
    """A Hub move as (from, to, captured squares sorted): the same move however listed."""
    parts = [int(t) for t in hub_move.replace("-", "x").split("x")]
    return parts[0], parts[1], tuple(sorted(parts[2:]))


def play_one_game(white: HubEngine, black: HubEngine, seconds: float, max_plies: int
                  ) -> tuple[str | None, int]:
    """A game between two pydraughts HubEngines refereed by pydraughts' board: the
    winner (``white``, ``black``, None for a draw or a game cut at `max_plies`) and
    the plies played. Every move must be legal on pydraughts' board."""
    board = draughts.Board(variant="standard")
    for engine in (white, black):
        engine.send("new-game")
    plies = 0
    while not board.is_over() and plies < max_plies:
        engine = white if board.turn == draughts.WHITE else black
        result = engine.play(board, Limit(movetime=seconds), ponder=False)
        legal = {canonical(m.hub_move) for m in board.legal_moves()}
        assert canonical(result.move.hub_move) in legal, result.move.hub_move
        board.push(result.move)
        plies += 1
    winner = {draughts.WHITE: "white", draughts.BLACK: "black"}.get(board.winner()) \
        if board.is_over() else None
    return winner, plies


def open_engines() -> tuple[HubEngine, HubEngine]:
    ours = HubEngine(damii_hub())
    theirs = HubEngine([DAME, "hub"])
    assert ours.id["name"] == "damii" and "variant" in ours.options
    assert {"normal", "damii", "triestine", "damath"} <= ours.variants
    for engine in (ours, theirs):
        engine.init()
    return ours, theirs


def close(*engines: HubEngine) -> None:
    for engine in engines:
        engine.quit()
        engine.p.wait(10)


@needs_dame
@pytest.mark.timeout(120)
def test_a_whole_game_against_dame_refereed_by_pydraughts():
    ours, theirs = open_engines()
    try:
        winner, plies = play_one_game(ours, theirs, 0.02, max_plies=300)
        assert plies > 10
        print(f"damii (white) vs dame (black): {winner or 'draw'} after {plies} plies")
    finally:
        close(ours, theirs)


@needs_dame
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_more_games_against_dame_both_colours():
    ours, theirs = open_engines()
    try:
        tally = {}
        for game in range(4):
            white, black = (ours, theirs) if game % 2 == 0 else (theirs, ours)
            winner, plies = play_one_game(white, black, 0.1, max_plies=400)
            name = None if winner is None else ("damii" if (winner == "white") ==
                                                (white is ours) else "dame")
            tally[name] = tally.get(name, 0) + 1
        print(f"damii vs dame, 4 games at 0.1 s a move: {tally}")
    finally:
        close(ours, theirs)


class Raw:
    """`damii hub` driven line by line."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([*damii_hub(), *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(self, *lines: str) -> None:
        for line in lines:
            self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def until(self, command: str, timeout: float = 60) -> list[str]:
        """The lines up to the first whose command is `command` (included)."""
        lines: list[str] = []
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            line = self.proc.stdout.readline()
            assert line, f"damii hub ended; it said: {lines}"
            lines.append(line.strip())
            if H.parse_line(line)[0] == command:
                return lines
        raise AssertionError(f"no {command} within {timeout} s: {lines}")


@pytest.mark.timeout(120)
def test_damii_hub_plays_a_legal_damii_move_and_answers_its_protocol():
    engine = Raw()
    try:
        engine.send("hub")
        lines = engine.until("wait")
        assert 'param name=variant value=normal type=enum values="normal damii triestine ' \
               'damath"' in lines
        engine.send("set-param name=variant value=frisian", "ping")
        lines = engine.until("pong")
        assert lines[0].startswith('error message="unknown variant \'frisian\'; expected one '
                                   'of: normal, damii, triestine, damath')
        engine.send("set-param name=variant value=damii", "init")
        engine.until("ready")
        game = Game("damii")
        game.push("32-26")
        engine.send("new-game", "an-unknown-command x=1",
                    H.format_line("pos", pos=START, moves="32-26"), "level move-time=0.2",
                    "go think", "ping")
        lines = engine.until("done")
        assert "pong" in lines  # answered during the search (or at once after it)
        assert any(line.startswith("info depth=") and " pv=" in line for line in lines)
        move = H.parse_line(lines[-1])[1]["move"]
        assert H.parse_move(game, move) in game.legal_moves()  # a legal Damii move for Black
        # an open analysis stops when asked, with its best move so far
        engine.send(H.format_line("pos", pos=START), "level infinite", "go analyze")
        time.sleep(0.5)
        engine.send("stop")
        move = H.parse_line(engine.until("done", timeout=300)[-1])[1]["move"]
        assert H.parse_move(Game("damii"), move)
        engine.proc.stdin.close()  # the GUI is gone: the engine quits
        assert engine.proc.wait(10) == 0
    finally:
        if engine.proc.poll() is None:
            engine.proc.kill()


@pytest.mark.timeout(120)
def test_damath_positions_come_as_fen_and_a_bad_player_is_refused():
    engine = Raw("--variant", "damath")
    try:
        engine.send("hub", "set-param name=player value=nonsense:1", "init")
        lines = engine.until("ready")
        assert any(line.startswith('error message="unknown agent') for line in lines)
        engine.send("set-param name=player value=alphabeta:depth=2")
        game = Game("damath")
        engine.send(H.format_line("pos", pos="W" + "e" * 32), "ping")
        assert engine.until("pong")[0].startswith('error message="a Sci-Damath position '
                                                  'needs its chip values')
        engine.send(H.format_line("pos", fen=game.fen()), "level depth=2", "go think")
        lines = engine.until("done")
        assert [line.split()[1] for line in lines[:-1]] == ["depth=1", "depth=2"]
        assert H.parse_move(game, H.parse_line(lines[-1])[1]["move"])
        engine.send("quit")
        assert engine.proc.wait(10) == 0
    finally:
        if engine.proc.poll() is None:
            engine.proc.kill()


@needs_dame
@pytest.mark.timeout(300)
def test_damii_eval_against_dame_saves_results_pdn_and_elo(tmp_path):
    out = tmp_path / "eval"
    proc = subprocess.run(
        [sys.executable, "-m", "damii_app.cli", "eval", "--variant", "international",
         "pretrained:international", 'hub:"dame hub",time=0.1', "--games", "2",
         "--out", str(out), "--no-progress"], capture_output=True, text=True, timeout=280)
    assert proc.returncode == 0, proc.stderr
    assert 'hub:"dame hub",time=0.1' in proc.stdout and "Elo" in proc.stdout
    pdn = (out / "games.pdn").read_text()
    assert pdn.count("[Result ") == 2 and '[Black "hub:\\"dame hub\\",time=0.1"]' in pdn
    assert (out / "results.json").is_file() and (out / "results.md").is_file()

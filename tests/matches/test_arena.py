"""Arena: clocks, resignation and agreed draws, round robins, Elo, the eval command."""

from __future__ import annotations

import json
import random
import time

import pytest

import damii_env as d
from damii_agents import RandomAgent
from damii_agents.base import BaseAgent, OfferDraw, Resign
from damii_agents.match import (
    SAFETY_TURN_LIMIT,
    Clock,
    GameEnd,
    MatchConfig,
    anchor_index,
    game_options,
    play_game,
    player_names,
    run_match,
    schedule,
)
from damii_agents.match.elo import fit, rate
from damii_app.cli import main
from damii_env.errors import InvalidOptionError
from damii_env.player import PlayerSpecError


class Sleeper(BaseAgent):
    """Plays random moves; sleeps `seconds` before the first `times` of them."""

    def __init__(self, seconds: float, times: int = 10**9, seed: int = 0) -> None:
        self.name = "sleeper"
        self.seconds, self.times = seconds, times
        self.rng = random.Random(seed)
        self.slept_on: list[d.Move] = []

    def choose(self, game: d.Game) -> d.Move:
        move = self.rng.choice(game.legal_moves())
        if self.times > 0:
            self.times -= 1
            time.sleep(self.seconds)
            self.slept_on.append(move)
        return move


class Scripted(BaseAgent):
    """Random moves; resigns, offers or accepts draws as told."""

    def __init__(self, resign_at: int | None = None, offer: bool = False, accept: bool = False,
                 raise_offer: bool = False, seed: int = 0) -> None:
        self.name = "scripted"
        self.resign_at, self.offer, self.accept, self.raise_offer = (resign_at, offer, accept,
                                                                     raise_offer)
        self.rng = random.Random(seed)
        self.declined = 0

    def choose(self, game: d.Game) -> d.Move:
        if self.raise_offer and not self.declined:
            raise OfferDraw
        return self.rng.choice(game.legal_moves())

    def wants_resign(self, game: d.Game) -> bool:
        return self.resign_at is not None and game.ply >= self.resign_at

    def offers_draw(self, game: d.Game) -> bool:
        return self.offer

    def accepts_draw(self, game: d.Game) -> bool:
        return self.accept

    def draw_declined(self, game: d.Game) -> None:
        self.declined += 1


def position_with_capture(variant: str, seed: int = 0) -> d.Game:
    """A game played at random until the side to move must capture."""
    rng = random.Random(seed)
    while True:
        game = d.Game(variant)
        while not game.is_over():
            moves = game.legal_moves()
            if moves[0].is_capture:
                return game
            game.push(rng.choice(moves))


# --- clocks ------------------------------------------------------------------------------
def test_clock_parse():
    assert Clock.parse("standard", "damii") == Clock(60.0, False)
    assert Clock.parse("blitz", "international").seconds == 15.0
    assert Clock.parse("none", "damii").seconds is None
    assert Clock.parse("2.5", "triestine").seconds == 2.5
    assert Clock.parse("standard", "damath") == Clock(60.0, captures_exempt=True)
    for bad in ("fast", "-1", "0"):
        with pytest.raises(InvalidOptionError):
            Clock.parse(bad, "damii")


@pytest.mark.parametrize("sleeper_side", [0, 1])
def test_clock_forfeits_a_sleeper(sleeper_side):
    sleeper = Sleeper(0.1)
    players = [RandomAgent(seed=1), RandomAgent(seed=1)]
    players[sleeper_side] = sleeper
    game = d.Game("damii")
    end = play_game(game, players, Clock(0.05))
    assert end == GameEnd(1 - sleeper_side, ["0-1", "1-0"][sleeper_side], "time forfeit")
    assert len(game.move_stack) == sleeper_side  # the sleeper's first move was not played


def test_damath_captures_are_exempt_from_the_clock():
    game = position_with_capture("damath", seed=3)
    side, ply = game.turn, len(game.move_stack)
    sleeper = Sleeper(0.1, times=1)
    players = [RandomAgent(seed=2), RandomAgent(seed=2)]
    players[side] = sleeper
    end = play_game(game, players, Clock.parse(0.05, "damath"))
    assert end.termination != "time forfeit"
    assert sleeper.slept_on[0].is_capture and game.move_stack[ply] == sleeper.slept_on[0]


def test_other_variants_do_not_exempt_captures():
    game = position_with_capture("damii", seed=3)
    side = game.turn
    players = [RandomAgent(seed=2), RandomAgent(seed=2)]
    players[side] = Sleeper(0.1, times=1)
    end = play_game(game, players, Clock.parse(0.05, "damii"))
    assert (end.winner, end.termination) == (1 - side, "time forfeit")


# --- resignation, draws, illegal moves ---------------------------------------------------
@pytest.mark.parametrize("resigner", [0, 1])
def test_resignation(resigner):
    players = [RandomAgent(seed=0), RandomAgent(seed=0)]
    players[resigner] = Scripted(resign_at=6)
    game = d.Game("international")
    end = play_game(game, players)
    assert end == GameEnd(1 - resigner, ["0-1", "1-0"][resigner], "resignation")
    assert len(game.move_stack) == 6 + resigner


def test_resignation_raised_from_choose():
    class Quitter(BaseAgent):
        def choose(self, game):
            raise Resign

    end = play_game(d.Game("damii"), [RandomAgent(seed=0), Quitter()])
    assert (end.result, end.termination, end.white_points) == ("1-0", "resignation", 1.0)


def test_agreed_draw():
    game = d.Game("triestine")
    end = play_game(game, [Scripted(offer=True), Scripted(accept=True)])
    assert end == GameEnd(None, "1/2-1/2", "agreed draw")
    assert end.white_points == 0.5 and not game.move_stack


def test_declined_draw_plays_on():
    offerer = Scripted(raise_offer=True, seed=1)
    game = d.Game("damii", turn_limit=400)
    end = play_game(game, [offerer, Scripted(offer=True, seed=2)])
    assert offerer.declined == 1 and end.termination != "agreed draw" and game.move_stack
    end = play_game(d.Game("damii"), [Scripted(raise_offer=True), Scripted(accept=True)])
    assert end.termination == "agreed draw"


def test_illegal_move_forfeits():
    class Cheat(BaseAgent):
        def choose(self, game):
            return d.Move.parse("1-2")

    end = play_game(d.Game("damii"), [Cheat(), RandomAgent(seed=0)])
    assert (end.winner, end.result) == (1, "0-1") and end.termination.startswith("illegal move")


# --- match set-up ------------------------------------------------------------------------
def test_turn_limit_for_safety():
    assert game_options("damii")["turn_limit"] == SAFETY_TURN_LIMIT
    assert game_options("international", turn_limit=50)["turn_limit"] == 50
    assert "turn_limit" not in game_options("damath")  # Damath keeps its own 100


def test_schedule_alternates_seats_on_shared_ballots():
    config = MatchConfig("damii", ("random", "greedy", "random"), games=3, opening_plies=2)
    tasks = schedule(config)
    assert len(tasks) == 3 * 4  # 3 games rounded up to 4 for each of 3 pairings
    assert player_names(config.specs) == ["random", "greedy", "random#2"]
    assert anchor_index(("greedy", "random:seed=3")) == 1
    for first, second in zip(tasks[::2], tasks[1::2], strict=True):
        assert (first.white, first.black) == (second.black, second.white)
        assert first.opening == second.opening and len(first.opening) == 2
    assert len({t.opening for t in tasks}) == 2  # one ballot per pair of games


def test_truncated_games_count_as_draws():
    config = MatchConfig("damii", ("random", "random"), games=2, workers=1,
                         rule_options={"turn_limit": 8})
    result = run_match(config, progress=False, elo_samples=50)
    assert all(g.end.result == "*" and g.end.termination == "turn limit" for g in result.games)
    assert (result.pairings[0].draws, result.pairings[0].points) == (2, 1.0)


def test_workers_give_the_same_games_as_one_process():
    config = MatchConfig("damii", ("random", "greedy"), games=2, seed=5, workers=1)
    one = run_match(config, progress=False, elo_samples=10)
    two = run_match(MatchConfig("damii", ("random", "greedy"), games=2, seed=5, workers=2),
                    progress=False, elo_samples=10)
    assert [g.pdn.moves for g in one.games] == [g.pdn.moves for g in two.games]
    assert [g.end for g in one.games] == [g.end for g in two.games]


# --- Elo ---------------------------------------------------------------------------------
def test_elo_fit_known_values():
    import numpy as np

    W = np.array([[0.0, 5.0], [15.0, 0.0]])
    N = np.array([[0.0, 20.0], [20.0, 0.0]])
    elo = fit(W, N, anchor=0)
    assert elo[0] == 0 and elo[1] == pytest.approx(400 * np.log10(3), abs=1e-6)
    even = rate(["a", "b"], [(0, 1, 1.0), (1, 0, 1.0), (0, 1, 0.5)], samples=100)
    assert even[1].elo == pytest.approx(0.0, abs=1e-6)
    assert (even[0].low, even[0].high) == (0.0, 0.0)  # the anchor
    sweep = rate(["a", "b"], [(0, 1, 0.0)] * 20, samples=100)
    assert sweep[1].elo == pytest.approx(400 * np.log10(20.5 / 0.5), abs=1e-6)


def test_elo_of_a_player_against_itself_is_about_zero():
    config = MatchConfig("damii", ("random", "random"), games=16, seed=3, workers=1)
    result = run_match(config, progress=False)
    other = result.ratings[1]
    assert result.ratings[0].elo == 0.0
    assert other.low <= 0.0 <= other.high
    assert abs(other.elo) < (other.high - other.low) / 2


def test_stronger_player_wins_and_is_rated_higher():
    """On Damii the 1-ply greedy agent is about as strong as random (46% over 100 games
    with seed 1), so the stronger player here is alpha-beta at depth 1."""
    pytest.importorskip("damii_agents.players.alphabeta")
    config = MatchConfig("damii", ("random", "alphabeta:depth=1"), games=6, seed=1, workers=1)
    result = run_match(config, progress=False)
    pairing = result.pairings[0]
    assert pairing.losses >= 5  # from random's side
    assert result.ratings[1].elo > result.ratings[0].elo + 100


# --- the eval command --------------------------------------------------------------------
def test_eval_cli_end_to_end(tmp_path, capsys):
    out = tmp_path / "eval"
    rc = main(["eval", "--variant", "damii", "random", "greedy", "--games", "4",
               "--workers", "1", "--out", str(out), "--no-progress", "--clock", "blitz"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "random vs greedy" in printed and "95% CI" in printed and "15 s/move" in printed
    data = json.loads((out / "results.json").read_text())
    assert len(data["games"]) == 4 and data["anchor"] == "random"
    assert sum(p["games"] for p in data["pairings"]) == 4
    assert "| random vs greedy | 4 |" in (out / "results.md").read_text()
    assert (out / "games.pdn").read_text().count("[Event ") == 4


def test_eval_cli_rejects_bad_specs(capsys):
    assert main(["eval", "random", "nonsense", "--workers", "1", "--no-progress"]) == 2
    assert "unknown agent" in capsys.readouterr().err


def test_gauntlet_pairs_the_first_agent_with_each_other_only():
    from damii_agents.match import MatchConfig, run_match, schedule

    config = MatchConfig(variant="damii", specs=("greedy", "random", "random"), games=2,
                         workers=1, clock="none", gauntlet=True)
    tasks = schedule(config)
    assert {frozenset((t.white, t.black)) for t in tasks} == {frozenset((0, 1)), frozenset((0, 2))}
    result = run_match(config, progress=False)
    assert [(p.games) for p in result.pairings] == [2, 2]


def test_ready_made_players_play_as_their_specs():
    """A RandomAgent object on a seat gives the same games as the spec ``random`` there;
    its spec is then only a label, and the match stays in this process."""
    specs = ("random", "greedy", "random:seed=3")
    by_spec = run_match(MatchConfig("damii", specs, games=4, seed=2, workers=1, clock="none",
                                    gauntlet=True), progress=False, elo_samples=0)
    config = MatchConfig("damii", ("mine", *specs[1:]), games=4, seed=2, workers=2,
                         clock="none", gauntlet=True, players={0: RandomAgent(name="mine")})
    assert config.n_workers() == 1
    ready = run_match(config, progress=False, elo_samples=0)
    assert [(p.wins, p.draws, p.losses) for p in ready.pairings] == \
        [(p.wins, p.draws, p.losses) for p in by_spec.pairings]
    assert [g.pdn.moves for g in ready.games] == [g.pdn.moves for g in by_spec.games]
    assert ready.pairings[0].a == "mine" and ready.games[0].white == "mine"
    assert ready.config.names[ready.config.anchor] == "random:seed=3"
    with pytest.raises(InvalidOptionError):
        MatchConfig("damii", ("mine", "random"), players={2: RandomAgent()})
    with pytest.raises(PlayerSpecError):
        MatchConfig("damii", ("mine", "random"))  # a label needs its ready-made player


def _children(pid: int) -> list[int]:
    """Live child processes of `pid` (from /proc)."""
    import os

    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                kids.append(int(entry))
    return kids


@pytest.mark.skipif(not __import__("os").path.isdir("/proc"), reason="reads /proc (Linux)")
def test_a_killed_eval_ends_its_worker_processes(tmp_path):
    """SIGTERM to `damii eval` stops it as Ctrl-C does: exit 143, one line, and its worker
    processes end with it (they used to run on, orphaned)."""
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "damii_app.cli", "eval", "alphabeta:depth=5", "alphabeta:depth=4",
         "--games", "40", "--workers", "2", "--clock", "none", "--no-progress",
         "--out", str(tmp_path / "out")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 500  # a hang guard: spawned workers import for long under load
        kids: list[int] = []
        while time.time() < deadline and len(kids) < 2:
            kids = _children(proc.pid)
            time.sleep(0.2)
        assert len(kids) >= 2, "the worker processes never started"
        time.sleep(2.0)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=300) == 143
        assert "damii eval: interrupted" in proc.stderr.read()
        deadline = time.time() + 120  # a hang guard, not a margin
        while time.time() < deadline and any(_alive(k) for k in kids):
            time.sleep(0.2)
        assert not [k for k in kids if _alive(k)]
    finally:
        if proc.poll() is None:
            proc.kill()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# --- the Referee, step by step (hand-checked positions and a fake clock) -----------------
from damii_agents.match.game_loop import Referee  # noqa: E402
from damii_env.errors import GameOverError, IllegalMoveError  # noqa: E402


class FakeTime:
    """A time source the test moves by hand."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_referee_time_forfeit_by_the_clock_and_by_the_seconds_given():
    now = FakeTime()
    referee = Referee(d.Game("damii"), Clock(10.0), now=now)
    assert referee.to_move == 0 and referee.remaining() == 10.0
    now.t += 4.0
    assert referee.play("32-27") is None  # 4 s of 10: in time (32-27 is a legal opening)
    assert referee.to_move == 1 and referee.remaining() == 10.0  # the clock restarts
    now.t += 10.5
    assert referee.remaining() == -0.5
    end = referee.check_time()  # Black overstepped: White wins on time
    assert end == GameEnd(0, "1-0", "time forfeit") == referee.end
    assert not referee.end_on_board
    # a move reported as too slow loses and is not made
    referee = Referee(d.Game("damii"), Clock(1.0), now=now)
    assert referee.play("32-27", seconds=1.5) == GameEnd(1, "0-1", "time forfeit")
    assert referee.game.move_stack == []
    with pytest.raises(GameOverError, match="game is over"):
        referee.play("32-27")


def test_referee_resignation_and_abandon():
    referee = Referee(d.Game("damii"))
    referee.play("32-27")
    assert referee.resign(1) == GameEnd(0, "1-0", "resignation")
    with pytest.raises(GameOverError):
        referee.resign(0)  # one ending only
    referee = Referee(d.Game("damii"))
    assert referee.resign(0) == GameEnd(1, "0-1", "resignation")
    referee = Referee(d.Game("damii"))
    assert referee.abandon() == GameEnd(None, "*", "abandoned")
    with pytest.raises(InvalidOptionError, match="side must be 0"):
        Referee(d.Game("damii")).resign(2)


def test_referee_draw_offers_accepted_declined_and_lapsing():
    referee = Referee(d.Game("damii"))
    referee.offer_draw(0)
    assert referee.draw_offer == 0
    with pytest.raises(InvalidOptionError, match="own draw offer"):
        referee.answer_draw(0, True)
    assert referee.answer_draw(1, True) == GameEnd(None, "1/2-1/2", "agreed draw")
    assert referee.end.white_points == 0.5
    referee = Referee(d.Game("damii"))
    referee.offer_draw(0)
    assert referee.answer_draw(1, False) is None and referee.draw_offer is None
    assert referee.end is None
    with pytest.raises(InvalidOptionError, match="no draw is on offer"):
        referee.answer_draw(1, True)
    # an offer stands over the offerer's own move and lapses when the other side moves
    referee.offer_draw(0)
    referee.play("32-27")
    assert referee.draw_offer == 0
    referee.play(str(referee.game.legal_moves()[0]))
    assert referee.draw_offer is None


def test_referee_refuses_an_illegal_move_with_a_clear_error_and_scores_it_when_asked():
    referee = Referee(d.Game("damii"))
    # on Damii's mirrored board White's men start on 31-50: 32-28 is no move at all
    with pytest.raises(IllegalMoveError, match=r"move 32-28 is not legal .*legal moves: 31-26"):
        referee.play("32-28")
    with pytest.raises(IllegalMoveError, match="not legal"):
        referee.play("46-41")  # a back-rank man is blocked by its own men
    assert referee.game.move_stack == [] and referee.end is None  # nothing changed
    assert referee.illegal_move("46-41") == GameEnd(1, "0-1", "illegal move 46-41")


def test_referee_result_of_a_finished_game_and_take_back():
    # White's man on 28 must capture Black's last man on 23: 28x19, and Black cannot move
    referee = Referee(d.Game.from_fen("W:W28:B23", "international"))
    assert [str(m) for m in referee.game.legal_moves()] == ["28x19"]
    end = referee.play("28x19")
    assert (end.winner, end.result) == (0, "1-0") and referee.end_on_board
    assert referee.end.termination == referee.game.outcome().termination
    # a game that ended on the board may be taken back and played on
    assert str(referee.take_back()) == "28x19"
    assert referee.end is None and referee.to_move == 0
    referee.resign(0)
    with pytest.raises(InvalidOptionError, match="ended by resignation"):
        referee.take_back()
    # a game already over when the referee gets it is over at once
    done = d.Game.from_fen("W:W28:B23", "international")
    done.push("28x19")
    assert Referee(done).end == GameEnd(0, "1-0", "no legal move")


def test_referee_damath_capture_is_free_of_the_clock():
    now = FakeTime()
    fen = ("W:W21=-3,23=-1,24=-7,25=0,27=10,30=8,31=-5,32=2:B1=2,3=8,5=-5,6=10,8=0,"
           "9=4,10=-7,11=-3,16=-11,18=6,K29=-9:S-4,-1061/9")
    referee = Referee(d.Game.from_fen(fen, "damath"), Clock.parse(1.0, "damath"), now=now)
    assert not referee.clock_applies() and referee.remaining() is None
    now.t += 60
    assert referee.check_time() is None
    assert referee.play("21x14x7") is None  # a capture takes any time


def test_referee_start_adds_the_safety_turn_limit():
    referee = Referee.start("international")
    assert referee.game.rules.turn_limit == SAFETY_TURN_LIMIT

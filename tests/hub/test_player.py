"""``hub:"COMMAND"`` players (agents/players/hub.py) against a fake engine that misbehaves
(tests/hub/fake_engine.py): each failure loses the game with a clear termination, the
match goes on, nothing hangs, and no engine process is left behind."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import damii_agents.players.hub as hub_module
from damii_agents.match import MatchConfig, run_match
from damii_agents.match.game_loop import Clock, play_game
from damii_agents.players.hub import HubEngineError, HubPlayer
from damii_agents.players.simple import RandomAgent
from damii_agents.registry import HUB_REFUSED, PLAYER_KINDS, PlayerSpec
from damii_env import Game
from damii_env.player import PlayerSpecError, make_player

FAKE = Path(__file__).with_name("fake_engine.py")


def fake(mode: str) -> str:
    """The command of the fake engine in `mode`."""
    return shlex.join([sys.executable, str(FAKE), mode])


HANG_GUARD_S = 120.0
"""A wait's limit that only stops a hang: the tests wait for events, not for margins."""


def gone(pid: int, within: float = HANG_GUARD_S) -> bool:
    """Whether process `pid` has ended (or is a zombie) within `within` seconds (returns as
    soon as it has)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def one_game(player: HubPlayer) -> tuple[Game, object]:
    """The fake as White against a random player, from the start; the game and its end."""
    player.reset(0)
    game = Game("international")
    end = play_game(game, (player, RandomAgent(seed=1)), Clock())
    return game, end


@pytest.mark.parametrize("mode, termination", [
    ("exit", r"engine fake exited \(exit status 3\); its last error output: "
             r"'fake engine: bye'"),
    ("hang", r"engine fake did not answer with a move within 1.05 s"),
    ("noise", r"did not answer with a move within 1.05 s; its last line: '@@@ zzz"),
    ("garbage", r"engine fake answered garbage: done move='hello'"),
    ("illegal", r"illegal move 1-2 by engine fake"),
])
def test_a_failing_engine_loses_the_game_with_a_clear_reason(mode, termination):
    player = HubPlayer(fake(mode), "international", level={"time": 0.05})
    pid = player._proc.pid
    game, end = one_game(player)
    # the engine's failure ends the game at once, not after a match clock (none here: a
    # hang would hold the game forever, which the suite's time limit turns into a failure);
    # the reason below says which of the engine's failures ended it
    assert end.winner == 1 and end.result == "0-1"
    assert re.search(termination, end.termination), end.termination
    assert [str(m) for m in game.move_stack][0] == "32-28" and len(game.move_stack) == 2
    if mode in ("exit", "hang", "noise"):  # ended; the next game starts it again
        assert gone(pid)
        game, end = one_game(player)
        assert player._proc is None or player._proc.pid != pid
        assert end.winner == 1 and str(game.move_stack[0]) == "32-28"
    player.close()
    assert gone(pid) and player._proc is None


def test_an_engine_that_cannot_start_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(hub_module, "START_TIMEOUT", 1.0)
    with pytest.raises(HubEngineError, match="did not answer hub with wait within 1 s"):
        HubPlayer(fake("hang-start"), "international")
    with pytest.raises(HubEngineError,
                       match=r"exited \(exit status 2\); it said: error .no tables here."):
        HubPlayer(fake("error-init"), "international")
    with pytest.raises(HubEngineError, match="'no-such-engine' is not an executable"):
        make_player('hub:"no-such-engine hub"', "international")
    with pytest.raises(HubEngineError, match="declares no variant parameter.*not damii"):
        HubPlayer(fake("exit"), "damii")
    with pytest.raises(HubEngineError, match="has no parameter 'book'; its parameters: hash"):
        HubPlayer(fake("exit"), "international", params={"book": "x"})


def test_the_match_goes_on_and_records_each_forfeit(tmp_path):
    config = MatchConfig(variant="international", specs=(f'hub:"{fake("illegal")}",time=0.05',
                                                         "random"),
                         games=2, clock="none", workers=1, opening_plies=0)
    result = run_match(config, progress=False)
    assert len(result.games) == 2
    for game in result.games:
        assert "illegal move 1-2 by engine fake" in game.end.termination
        assert game.end.winner == (1 if game.white.startswith("hub:") else 0)
        assert game.pdn.tags["Termination"] == "illegal move 1-2 by engine fake"


def test_hub_specs_parse_and_build():
    spec = PlayerSpec.parse(f'hub:"{fake("exit")}",time=0.05,hash=2,timeout=3')
    assert spec.kind == "hub" and spec.get("time") == 0.05 and spec.get("hash") == "2"
    with spec.build("international") as player:
        assert player.level == {"time": 0.05} and player.params == {"hash": "2"}
        assert player.timeout == 3.0 and player.name == spec.text
    assert 'hub:"COMMAND"' in PLAYER_KINDS
    for bad, message in [("hub:", "needs the engine's command"),
                         ('hub:"dame hub', "closing quote"),
                         ('hub:"dame hub",time=1,depth=2', "one of time=, depth= or nodes="),
                         ('hub:"dame hub",time=-1', "time must be"),
                         ('hub:"dame hub",a b=1', "letters, digits")]:
        with pytest.raises(PlayerSpecError, match=message):
            PlayerSpec.parse(bad)


def test_hub_specs_are_refused_where_commands_must_not_run(monkeypatch):
    monkeypatch.setenv(HUB_REFUSED, "1")
    with pytest.raises(PlayerSpecError, match="hub: specs .* are not accepted here"):
        make_player(f'hub:"{fake("exit")}"', "international")


def _default_signals() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def test_no_engine_is_left_behind_when_its_process_is_killed(tmp_path):
    """The engine dies with the process that started it, even by SIGKILL (no clean-up)."""
    code = ("import sys; from damii_agents.players.hub import HubPlayer; "
            f"p = HubPlayer({fake('hang')!r}); print(p._proc.pid, flush=True); "
            "import time; time.sleep(60)")
    for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
        # the child takes the default action of each signal, whatever a test run before
        # this one left in the pytest process (an ignored SIGINT is inherited)
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                text=True, preexec_fn=_default_signals)
        pid = int(proc.stdout.readline())
        assert not gone(pid, within=0.2)
        os.kill(proc.pid, sig)
        try:  # only stops a hang: the parent's exit (KeyboardInterrupt, atexit) on a loaded machine
            proc.wait(HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail(f"the parent did not exit within {HANG_GUARD_S:g} s of {sig.name}")
        assert gone(pid), f"engine {pid} still runs after {sig.name} of its parent"


def test_a_forfeit_raised_by_any_player_ends_the_game_with_its_reason():
    from damii_agents.base import Forfeit

    class Gone:
        name = "gone"

        def choose(self, game):
            raise Forfeit("engine gone: it exited")

    end = play_game(Game("international"), (RandomAgent(seed=0), Gone()), Clock())
    assert (end.winner, end.result, end.termination) == (0, "1-0", "engine gone: it exited")


@pytest.mark.skipif(shutil.which("dame") is None, reason="dame-rs is not installed "
                                                        "(pip install dame-rs==0.2.0)")
def test_an_outside_engine_as_the_gymnasium_opponent(monkeypatch):
    import gymnasium as gym
    import numpy as np

    from damii_agents.players import hub

    # the engine's margin past its 0.02 s (1 s) only as a hang guard: with both cores kept
    # busy, dame once waited longer than that for a core (the margin has its own tests)
    monkeypatch.setattr(hub, "MARGIN", 60.0)
    env = gym.make("damii_env/International-v0", opponent='hub:"dame hub",time=0.02')
    try:
        _, info = env.reset(seed=1)
        rng = np.random.default_rng(0)
        for _ in range(400):
            action = rng.choice(np.flatnonzero(info["action_mask"]))
            _, reward, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        assert terminated and reward == -1.0  # dame beats a random mover
    finally:
        env.close()

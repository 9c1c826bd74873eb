"""pretrained:NAME players: the strongest shipped player (the alpha-beta with the learned
evaluation) and the shipped networks (``net=policy``, ``net=search``) by name, from any
directory, in every place a player spec goes, and from an installed wheel outside the
repository."""

from __future__ import annotations

import io
import os
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="neural players need the train extra")

import gymnasium  # noqa: E402

import damii_env as d  # noqa: E402
from damii_agents.registry import pretrained_names, pretrained_path  # noqa: E402
from damii_env.player import PlayerSpecError, make_player, player_kinds  # noqa: E402
from tests.helpers import build_wheel  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def test_every_variant_has_a_pretrained_name():
    assert pretrained_names() == tuple(sorted(d.VARIANTS))
    assert pretrained_path("damii") == REPO / "agents" / "weights" / "damii.pt"


def test_pretrained_works_from_another_directory(tmp_path, monkeypatch):
    """`ckpt:weights/damii.pt` only worked from the repository root."""
    monkeypatch.chdir(tmp_path)
    agent = make_player("pretrained:damii,depth=2")
    game = d.Game("damii")
    assert agent.choose(game) in game.legal_moves()
    assert "pretrained" in player_kinds()  # the entry point: any damii_env player spec
    for spec in ("pretrained:international", "pretrained:international,net=policy"):
        player = make_player(spec, "international")
        game = d.Game("international")
        assert player.choose(game) in game.legal_moves()


def test_pretrained_names_the_strongest_player_and_keeps_the_networks():
    """pretrained:NAME is the alpha-beta with the learned evaluation at 0.1 s a move (the
    handwritten one where none fits the rules' board); the network's
    policy and its own search stay by option."""
    from damii_agents.players.alphabeta import AlphaBetaAgent
    from damii_agents.players.minimax_player import MinimaxPlayer
    from damii_agents.players.policy_player import PolicyPlayer
    from damii_agents.registry import PRETRAINED_TIME

    assert PRETRAINED_TIME == 0.1  # the time the README and the help state
    for variant, evaluation in (("damii", "learned"), ("international", "learned"),
                                ("damath", "learned"), ("triestine", "learned")):
        agent = make_player(f"pretrained:{variant}", variant)
        assert isinstance(agent, AlphaBetaAgent), variant
        assert (agent.evaluation, agent.time_limit, agent.depth) == (evaluation, 0.1, None)
        assert agent.name == f"pretrained:{variant}"
    # rules whose board no shipped evaluation fits: the handwritten one
    small = make_player("pretrained:triestine", "triestine", board_size=8, men_rows=3)
    assert (small.evaluation, small.time_limit) == ("handwritten", 0.1)
    deep = make_player("pretrained:damii,depth=6", "damii")
    assert (deep.evaluation, deep.time_limit, deep.depth) == ("learned", None, 6)
    assert make_player("pretrained:damii,time=1", "damii").time_limit == 1.0
    assert isinstance(make_player("pretrained:damii,net=policy", "damii"), PolicyPlayer)
    assert isinstance(make_player("pretrained:damii,net=search,depth=2", "damii"), MinimaxPlayer)


@pytest.mark.parametrize("spec, message", [
    ("pretrained:", "needs a name"),
    ("pretrained:checkers", "no pretrained network 'checkers'; shipped: damath, damii"),
    ("pretrained:damii,depht=2", "unknown option"),
    ("pretrained:damii,net=policy,repeat=never", "repeat must be avoid or allow, got 'never'"),
    ("pretrained:damii,sims=8", "the network's options, after net=policy or net=search"),
    ("pretrained:damii,net=mcts", "net must be policy .* or search"),
    ("pretrained:damii,net=search", "net=search needs depth=, time=, nodes= or sims="),
    ("pretrained:damii,net=policy,depth=2", "net=policy plays the policy alone"),
])
def test_pretrained_errors(spec, message):
    with pytest.raises(PlayerSpecError, match=message):
        make_player(spec, "damii")


def test_pretrained_of_another_variant_is_refused():
    with pytest.raises(PlayerSpecError, match="plays international, not damii"):
        make_player("pretrained:international", "damii")


def test_pretrained_gymnasium_opponent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = gymnasium.make("damii_env/Triestine-v0", opponent="pretrained:triestine",
                         play_as="black", turn_limit=40)
    _obs, info = env.reset(seed=0)
    assert int(env.unwrapped.game_state.turn[0]) == 1  # the network (White) has moved
    env.step(int(info["action_mask"].nonzero()[0][0]))


def test_damii_eval_takes_pretrained(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "damii_app.cli", "eval", "--variant", "damath",
         "pretrained:damath", "random", "--games", "2", "--clock", "none", "--workers", "1",
         "--out", str(tmp_path / "eval"), "--no-progress"],
        capture_output=True, text=True, timeout=600, cwd=REPO)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "pretrained:damath" in out.stdout


def test_wheel_ships_the_weights_and_plays_outside_the_repository(tmp_path):
    """Build the wheel, install it into a fresh virtualenv outside the repository beside
    another package that owns a top-level ``agents`` (its
    dependencies seen through a .pth file to this environment's site-packages, so nothing
    is downloaded; editable installs there stay inactive) and play pretrained:damii."""
    wheel = build_wheel(tmp_path / "dist")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    assert sorted(n for n in names if n.endswith(".pt")) == [
        f"damii_agents/weights/{v}.pt" for v in sorted(d.VARIANTS)]
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"damii_env", "damii_agents", "damii_training", "damii_app"}  # our own
    assert wheel.stat().st_size < 20 * 2**20
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    with zipfile.ZipFile(wheel) as zf:  # a pure wheel installs by unpacking into purelib
        zf.extractall(purelib)
    ours = [p for p in {*site.getsitepackages(), sysconfig.get_paths()["purelib"]}
            if Path(p).is_dir()]
    Path(purelib, "outer_dependencies.pth").write_text("\n".join(ours) + "\n")
    # someone else's top-level `agents` (as openai-agents installs) beside ours
    Path(purelib, "agents").mkdir()
    Path(purelib, "agents", "__init__.py").write_text("OWNER = 'someone else'\n")
    code = f"PURELIB = {purelib!r}\n" + """
import agents, damii_agents, damii_env, gymnasium
from pathlib import Path
assert agents.OWNER == "someone else"
assert Path(damii_agents.__file__).is_relative_to(Path(PURELIB)), damii_agents.__file__
from damii_app.cli import main
from damii_env.player import make_player
from damii_agents.match import game_options, play_game
game = damii_env.Game("damii", **game_options("damii"))
end = play_game(game, (make_player("pretrained:damii"), make_player("random", seed=1)))
env = gymnasium.make("damii_env:damii_env/Damii-v0",
                     opponent="pretrained:damii,net=search,depth=1")
obs, info = env.reset(seed=0)
print("played", game.ply, "plies; winner", end.winner)
"""
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    out = subprocess.run([str(python), "-c", code], cwd=work, env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("played ") and out.stdout.split()[1] != "0"


def test_damii_play_takes_pretrained(tmp_path, monkeypatch, capsys):
    from damii_app.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO("1\nresign\n"))
    rc = main(["play", "--variant", "damii", "--opponent", "pretrained:damii", "--clock",
               "none", "--colour", "white", "--pdn", str(tmp_path / "p.pdn"), "--seed", "1"])
    assert rc == 0
    assert "result 0-1 (resignation)" in capsys.readouterr().out

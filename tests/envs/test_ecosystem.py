"""The environments as RL libraries meet them: the vector env's buffers and results, the
registries, metadata, and the checks of Gymnasium and PettingZoo on a default install."""

from __future__ import annotations

import os
import subprocess
import sys

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402
import pettingzoo  # noqa: E402
import pytest  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402
from pettingzoo.test import api_test, render_test  # noqa: E402

import damii_env as d  # noqa: E402
import damii_env.render  # noqa: E402
from damii_env.aec import PETTINGZOO_IDS  # noqa: E402
from damii_env.envs import all_environments  # noqa: E402
from damii_env.episode import outcome_rewards  # noqa: E402
from damii_env.gym_env import GYM_IDS, MAX_EPISODE_STEPS, DraughtsEnv  # noqa: E402
from damii_env.observation import observe  # noqa: E402
from damii_env.vector_env import DraughtsVectorEnv, autoreset_mode_of  # noqa: E402


# --- the vector env ---------------------------------------------------------------------
@pytest.mark.parametrize("name, mode", [
    ("same_step", AutoresetMode.SAME_STEP), ("SAME_STEP", AutoresetMode.SAME_STEP),
    ("SameStep", AutoresetMode.SAME_STEP), ("next-step", AutoresetMode.NEXT_STEP),
    ("next_step", AutoresetMode.NEXT_STEP), (AutoresetMode.SAME_STEP, AutoresetMode.SAME_STEP),
])
def test_autoreset_mode_by_name(name, mode):
    """The docstring's promise: strings name the mode (was a raw ValueError for "same_step")."""
    assert autoreset_mode_of(name) is mode
    assert DraughtsVectorEnv(2, autoreset_mode=name).metadata["autoreset_mode"] is mode


@pytest.mark.parametrize("bad", ["sometimes", "disabled", AutoresetMode.DISABLED, 3])
def test_autoreset_mode_rejected_clearly(bad):
    with pytest.raises(d.InvalidOptionError, match="next_step' or 'same_step"):
        DraughtsVectorEnv(2, autoreset_mode=bad)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "4", True])
def test_vector_env_rejects_a_bad_num_envs(bad):
    with pytest.raises(d.InvalidOptionError, match="num_envs"):
        DraughtsVectorEnv(bad)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("variant, batch", [("damii", 300), ("damath", 7), ("triestine", 260)])
def test_vector_env_outputs_match_observe_and_mask(variant, batch, mode):
    """The fused compiled pass (serial below 256 games, parallel above) gives what the
    shared `observe` and `legal_action_mask` give, every step, restarts included."""
    envs = DraughtsVectorEnv(batch, variant, autoreset_mode=mode, turn_limit=30)
    obs, info = envs.reset(seed=0)
    rng = np.random.default_rng(3)
    restarts = 0
    for _ in range(90):
        np.testing.assert_array_equal(obs, observe(envs.engine, envs.game_state))
        np.testing.assert_array_equal(info["action_mask"],
                                      envs.engine.legal_action_mask(envs.game_state))
        actions = envs.engine.sample_actions(envs.game_state, rng)
        obs, rewards, term, trunc, info = envs.step(actions)
        restarts += int((term | trunc).sum())
    assert restarts > batch // 2


def test_vector_env_reports_who_won():
    """Rewards go to whoever acted, so a decided game always pays its actor +1; who won is
    in info["player_rewards"] and info["winner"], consistent with the outcome code."""
    envs = DraughtsVectorEnv(64, "international", turn_limit=60)
    _obs, info = envs.reset(seed=1)
    rng = np.random.default_rng(1)
    results = {0: 0, 1: 0, -1: 0}
    for _ in range(400):
        _obs, rewards, term, trunc, info = envs.step(
            envs.engine.sample_actions(envs.game_state, rng))
        ended = term | trunc
        outcome, actor = info["outcome"], info["actor"]
        np.testing.assert_array_equal(rewards, np.where(
            actor >= 0, outcome_rewards(outcome, np.maximum(actor, 0)), 0.0))
        for colour in (0, 1):
            np.testing.assert_array_equal(info["player_rewards"][:, colour],
                                          outcome_rewards(outcome, colour))
        assert (info["player_rewards"][~ended] == 0).all()
        winner = info["winner"]
        assert (winner[outcome == d.OutcomeCode.WHITE_WINS] == 0).all()
        assert (winner[outcome == d.OutcomeCode.BLACK_WINS] == 1).all()
        assert (winner[~np.isin(outcome, [1, 2])] == -1).all()
        for w in winner[ended]:
            results[int(w)] += 1
    assert results[0] > 0 and results[1] > 0  # both colours win some: not always "1.00"


def test_vector_env_buffers_are_reused_unless_copy():
    """Outputs are the env's own buffers (valid until the next step); copy=True gives
    fresh arrays with the same contents."""
    fast, safe = DraughtsVectorEnv(8, "damii"), DraughtsVectorEnv(8, "damii", copy=True)
    obs_a, info_a = fast.reset(seed=0)
    obs_b, info_b = safe.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = fast.engine.sample_actions(fast.game_state, rng)
    first_b = obs_b
    obs_a2, _r, _t, _u, info_a2 = fast.step(actions)
    obs_b2, _r, _t, _u, info_b2 = safe.step(actions)
    assert obs_a2 is obs_a and info_a2["action_mask"] is info_a["action_mask"]
    assert obs_b2 is not first_b and info_b2["action_mask"] is not info_b["action_mask"]
    np.testing.assert_array_equal(obs_a2, obs_b2)
    np.testing.assert_array_equal(info_a2["action_mask"], info_b2["action_mask"])
    assert not np.array_equal(first_b, obs_b2)  # the kept copy still shows the start


def test_vector_env_readable_games():
    envs = DraughtsVectorEnv(3, "international")
    envs.reset(seed=0)
    assert envs.fen(1) == d.Game("international").fen()
    game = envs.game(2)
    game.push("32-28")
    assert envs.fen(2) != game.fen()  # a copy
    with pytest.raises(d.InvalidOptionError, match="game index"):
        envs.fen(3)


# --- metadata and checks on a default install -------------------------------------------
def _envs_with_metadata():
    yield d.raw_env("damii")
    yield d.raw_env("triestine")
    for module in all_environments.values():
        yield module.raw_env()
    yield DraughtsEnv("damii")
    yield DraughtsVectorEnv(2, "damii")


def test_render_modes_are_each_instances_own():
    """A wrapper appending to one env's metadata["render_modes"] changes no other env."""
    first = list(_envs_with_metadata())
    for env in first:
        env.metadata["render_modes"].append("mine")
    for env in _envs_with_metadata():
        assert "mine" not in env.metadata["render_modes"], type(env)
    for cls in (d.raw_env, DraughtsEnv, DraughtsVectorEnv):
        assert "mine" not in cls.metadata["render_modes"]


@pytest.fixture
def no_pygame(monkeypatch):
    """As on a default install (no [human] extra): pygame cannot be found."""
    monkeypatch.setattr(damii_env.render, "pygame_installed", lambda: False)


def test_gymnasium_check_env_without_pygame(no_pygame):
    env = DraughtsEnv("damii")
    assert env.metadata["render_modes"] == ["ansi", "rgb_array"]
    check_env(env, skip_render_check=False)


def test_pettingzoo_render_test_without_pygame(no_pygame):
    assert "human" not in d.raw_env("damath").metadata["render_modes"]
    render_test(lambda render_mode=None: d.env("damath", render_mode=render_mode))


def test_human_mode_is_listed_with_pygame(monkeypatch):
    monkeypatch.setattr(damii_env.render, "pygame_installed", lambda: True)
    assert "human" in d.raw_env().metadata["render_modes"]


# --- registries ---------------------------------------------------------------------------
@pytest.mark.parametrize("variant", sorted(PETTINGZOO_IDS))
def test_pettingzoo_registry(variant):
    env = pettingzoo.make("aec", PETTINGZOO_IDS[variant])
    assert env.metadata["name"] == f"{variant}_v0"
    same = pettingzoo.make("aec", f"damii_env/{variant}_v0", render_mode="ansi")
    assert same.render_mode == "ansi"


def test_pettingzoo_registry_env_passes_api_test():
    api_test(pettingzoo.make("aec", "damii_env/damath-v0"), num_cycles=60)


def test_gymnasium_specs_set_max_episode_steps():
    for env_id in GYM_IDS.values():
        assert gymnasium.spec(env_id).max_episode_steps == MAX_EPISODE_STEPS


def test_module_prefixed_id_works_in_a_fresh_process():
    """What SubprocVecEnv's workers do: make the id without importing damii_env first.
    The plain id fails there (NamespaceNotFound); the "damii_env:" form imports it."""
    code = ("import gymnasium\n"
            "try:\n"
            "    gymnasium.make('damii_env/Damii-v0')\n"
            "except gymnasium.error.NamespaceNotFound:\n"
            "    print('plain id: NamespaceNotFound')\n"
            "env = gymnasium.make('damii_env:damii_env/Damii-v0')\n"
            "obs, info = env.reset(seed=0)\n"
            "print(type(env.unwrapped).__name__, obs.shape, env.spec.max_episode_steps)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True).stdout.split("\n")
    assert out[:2] == ["plain id: NamespaceNotFound", "DraughtsEnv (8, 10, 10) 1000"]


def test_state_take_copies_even_a_slice():
    """Game.at took a slice view of the state: pushing a move on the Game moved the env's
    game too."""
    eng = d.Engine("damii")
    state = eng.init(3)
    part = state.take(slice(1, 2))
    part.board[:] = 0
    assert state.board[1].any()


# --- readable games inside the envs --------------------------------------------------------
def test_aec_action_text_mid_capture():
    env = d.raw_env("international")
    env.reset(options={"fen": "W:W28,K47:B22,32,33,12"})
    hop = int(env.observe("player_0")["action_mask"].nonzero()[0][0])
    first = env.action_text(hop)
    assert (first.hop, first.move, first.played) == ("28x17", "28x17x8", ())
    env.step(hop)
    hop = int(env.observe("player_0")["action_mask"].nonzero()[0][0])
    second = env.action_text(hop)
    assert (second.hop, second.move, second.played) == ("17x8", "28x17x8", ("28x17",))
    assert env.board.fen() == "W:W28,K47:B12,22,32,33"  # the start of the move in progress
    assert env.fen() == "W:W17,K47:B12,22,32,33"
    with pytest.raises(d.IllegalActionError, match="not a legal hop"):
        env.action_text(0)


@pytest.mark.parametrize("variant", ["damii", "triestine", "damath"])
def test_action_text_names_every_move_played(variant):
    """Random play: the text of the last hop of each move is that move, and pushing it on
    the env's Game at the move's start gives the env's position after it."""
    env = d.raw_env(variant, turn_limit=80)
    env.reset(seed=0)
    rng = np.random.default_rng(7)
    moves = captures = 0
    for agent in env.agent_iter():
        obs, _r, term, trunc, _i = env.last()
        if term or trunc:
            break
        hop = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        text = env.action_text(hop)
        start = env.board
        assert text.move is None or text.move in text.moves
        env.step(hop)
        if env.agent_selection != agent or env.terminations[agent]:
            assert text.move is not None  # the last hop names one move
            start.push(text.move)
            # (Sci-Damath scores: exact in the Game, to 6 decimals in the env's FEN)
            assert start.fen().split(":S")[0] == env.fen().split(":S")[0]
            moves += 1
            captures += "x" in text.move
    assert moves > 20 and captures > 0


def test_gym_env_board_and_action_text():
    env = DraughtsEnv("international", play_as="white")
    _obs, info = env.reset(options={"fen": "W:W28,K47:B22,32,33,12"})
    hop = int(info["action_mask"].nonzero()[0][0])
    assert str(env.action_text(hop)) == "28x17x8"
    _obs, _r, _t, _u, info = env.step(hop)
    hop = int(info["action_mask"].nonzero()[0][0])
    assert env.action_text(hop).played == ("28x17",)
    assert env.board.fen() == "W:W28,K47:B12,22,32,33"


def test_vector_env_action_text_of_a_state_stepped_outside_the_env():
    """A state changed behind the env's back has no record of its move: a clear error."""
    envs = DraughtsVectorEnv(2, "international")
    envs.reset(seed=0)
    hop = int(envs.engine.legal_actions(envs.game_state, 1)[0])
    text = envs.action_text(1, hop)
    assert text.move == text.hop and "-" in text.hop
    envs.game_state = envs.engine.from_boards(
        envs.engine.absolute_boards(d.Game.from_fen("W:W28,K47:B22,32,33,12",
                                                    "international").state), [0])
    envs.num_envs = 1
    envs.engine.step(envs.game_state, envs.engine.legal_actions(envs.game_state, 0)[:1])
    with pytest.raises(d.InvalidOptionError, match="middle of a capture"):
        envs.action_text(0, int(envs.engine.legal_actions(envs.game_state, 0)[0]))

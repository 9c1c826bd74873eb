"""PettingZoo AEC environments and the observation planes they share with the others."""

from __future__ import annotations

import os
import pickle
import warnings

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from pettingzoo.test import api_test, seed_test  # noqa: E402

import damii_env as d  # noqa: E402
from damii_env.envs import all_environments, damii_v0, international_v0  # noqa: E402
from damii_env.geometry import geometry  # noqa: E402
from damii_env.observation import (  # noqa: E402
    BASE_PLANES,
    observation_shape,
    observe,
    plane_names,
)

CONFIGS = [
    pytest.param("damii", {"orientation": "mirrored"}, id="damii-mirrored"),
    pytest.param("damii", {"orientation": "standard"}, id="damii-standard"),
    pytest.param("international", {}, id="international"),
    pytest.param("triestine", {}, id="triestine"),
    pytest.param("damath", {}, id="damath"),
]

# a White man on 28 takes 22 and 12 (standard orientation): two steps of player_0
DOUBLE_CAPTURE = "W:W28,49:B22,12,3"


def play_random(env, rng: np.random.Generator, max_steps: int = 10_000) -> list[int]:
    """Play random legal actions through `env` until the game ends; return the actions."""
    actions = []
    for _agent in env.agent_iter(max_steps):
        obs, _reward, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        actions.append(action)
        env.step(action)
    return actions


# --- PettingZoo's own test suites ---------------------------------------------------------


@pytest.mark.parametrize("variant,options", CONFIGS)
def test_api(variant, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(d.env(variant, **options), num_cycles=400)


@pytest.mark.parametrize("variant,options", CONFIGS)
def test_seed(variant, options):
    seed_test(lambda: d.env(variant, **options), num_cycles=200)


@pytest.mark.parametrize("name", sorted(all_environments))
def test_variant_modules(name):
    module = all_environments[name]
    env = module.env()
    assert env.metadata["name"] == name == str(env.unwrapped)
    assert env.unwrapped.engine.rules.name == name.removesuffix("_v0")
    assert isinstance(env.unwrapped, module.raw_env)
    assert env.metadata["is_parallelizable"] is False
    assert env.metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env, num_cycles=100)


def test_generic_env_names_the_variant():
    assert d.env("triestine").metadata["name"] == "triestine_v0"
    assert d.raw_env("international").metadata["name"] == "international_v0"
    assert damii_v0.env(orientation="standard").unwrapped.engine.rules.orientation == "standard"


def test_spaces_are_the_same_objects():
    env = d.env("damii")
    env.reset()
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)
        assert env.observation_space(agent)["observation"].shape == (8, 10, 10)
        assert env.action_space(agent).n == 1800
    assert env.observation_space("player_0") is not env.observation_space("player_1")


# --- the game through the AEC interface ---------------------------------------------------


def test_white_moves_first_and_turns_alternate():
    env = d.env("international")
    env.reset(seed=0)
    assert env.agent_selection == "player_0"
    obs, *_ = env.last()
    assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].sum() == 9
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert env.agent_selection == "player_1"


def test_multi_capture_is_consecutive_steps_of_one_agent():
    env = d.env("damii", orientation="standard")
    env.reset(options={"fen": DOUBLE_CAPTURE})
    move = d.Game.from_fen(DOUBLE_CAPTURE, "damii", orientation="standard").legal_moves()[0]
    assert str(move) == "28x17x8" and len(move.actions) == 2
    obs, *_ = env.last()
    assert np.flatnonzero(obs["action_mask"]).tolist() == [move.actions[0]]
    env.step(move.actions[0])
    assert env.agent_selection == "player_0"  # the capture goes on
    obs, reward, term, trunc, _ = env.last()
    assert (reward, term, trunc) == (0, False, False)
    assert np.flatnonzero(obs["action_mask"]).tolist() == [move.actions[1]]
    geo = geometry(10, "standard")
    planes = obs["observation"]
    r, c = geo.square_rc[17 - 1]
    assert planes[4].sum() == 1 and planes[4, r, c] == 1  # the piece that must continue
    r, c = geo.square_rc[22 - 1]
    assert planes[5].sum() == 1 and planes[5, r, c] == 1  # captured, not yet lifted
    assert planes[2, r, c] == 1  # and still on the board
    other = env.observe("player_1")  # the same position from Black's side
    assert not other["action_mask"].any()
    r, c = geo.square_rc[50 - 17]
    assert other["observation"][4, r, c] == 1
    r, c = geo.square_rc[50 - 22]
    assert other["observation"][5, r, c] == 1 and other["observation"][0, r, c] == 1
    env.step(move.actions[1])
    assert env.agent_selection == "player_1"
    assert env.unwrapped.fen() == "B:W8,49:B3"


def test_win_pays_plus_and_minus_one_and_agents_leave():
    env = d.env("international")
    env.reset(options={"fen": "W:W28:B22"})
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.truncations == {"player_0": False, "player_1": False}
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}
    obs, reward, term, _, _ = env.last()
    assert env.agent_selection == "player_1" and reward == -1.0 and term
    assert not obs["action_mask"].any()
    env.step(None)
    obs, reward, term, _, _ = env.last()
    assert env.agent_selection == "player_0" and reward == 1.0 and term
    env.step(None)
    assert env.agents == []


def test_turn_limit_truncates_with_zero_rewards():
    env = d.env("damii", turn_limit=6)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    rewards = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        rewards[agent] += reward
        if term or trunc:
            assert trunc and not term
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert rewards == {"player_0": 0.0, "player_1": 0.0}
    assert int(env.unwrapped.game_state.ply[0]) == 6


def test_raw_env_raises_on_illegal_action_and_keeps_the_position():
    env = d.raw_env("damii")
    env.reset()
    fen = env.fen()
    with pytest.raises(d.IllegalActionError, match="not legal"):
        env.step(0)
    with pytest.raises(d.IllegalActionError):
        env.step(5000)
    assert env.fen() == fen and env.agent_selection == "player_0"


def test_wrapped_env_ends_the_game_on_an_illegal_action():
    env = d.env("damii")
    env.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(0)
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": -1.0, "player_1": 0.0}
    assert not env.last()[0]["action_mask"].any()


def test_same_seed_same_game_and_random_first_player():
    def game(seed: int) -> tuple[str, list[int], str]:
        env = d.env("damii", first_player="random", turn_limit=80)
        env.reset(seed=seed)
        first = env.agent_selection
        actions = play_random(env, np.random.default_rng(seed))
        return first, actions, env.unwrapped.fen()

    assert game(3) == game(3)
    firsts = {game(seed)[0] for seed in range(12)}
    assert firsts == {"player_0", "player_1"}


@pytest.mark.parametrize("wrapped", [True, False])
def test_pickle_keeps_the_position(wrapped):
    env = d.env("damii") if wrapped else d.raw_env("damii")
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(15):
        obs = env.last()[0]
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    copy = pickle.loads(pickle.dumps(env))
    assert copy.unwrapped.fen() == env.unwrapped.fen()
    assert copy.agent_selection == env.agent_selection
    a = play_random(env, np.random.default_rng(7))
    b = play_random(copy, np.random.default_rng(7))
    assert a == b and copy.unwrapped.fen() == env.unwrapped.fen()


def test_reset_from_a_finished_position():
    env = d.env("international")
    env.reset(options={"fen": "B:W28:B"})
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}


# --- observation planes -------------------------------------------------------------------


def expected_planes(fen: str, variant: str, observer: int, **options) -> np.ndarray:
    """Piece planes 0-3 computed from the FEN by hand (the observer's side at the bottom)."""
    game = d.Game.from_fen(fen, variant, **options)
    board = game.board()
    S = board.size
    view = board if observer == 0 else -board[::-1]
    geo = game.engine.geometry
    out = np.zeros((4, 10, 10), dtype=np.float32)
    for s in range(S):
        for plane, value in enumerate((1, 2, -1, -2)):
            if view[s] == value:
                r, c = geo.square_rc[s]
                out[plane, r, c] = 1
    return out


@pytest.mark.parametrize("variant,options", CONFIGS)
def test_start_position_planes(variant, options):
    env = d.raw_env(variant, **options)
    env.reset()
    geo = env.engine.geometry
    rules = env.engine.rules
    n, rows = rules.board_size, rules.men_rows
    for agent in env.possible_agents:
        planes = env.observe(agent)["observation"]
        assert planes.dtype == np.float32
        assert planes.shape == (15 if variant == "damath" else 8, n, n)
        own_rows = {int(r) for r in np.nonzero(planes[0])[0]}
        opp_rows = {int(r) for r in np.nonzero(planes[2])[0]}
        assert own_rows == set(range(n - rows, n)) and opp_rows == set(range(rows))
        assert planes[0].sum() == planes[2].sum() == rows * n // 2
        assert not planes[[1, 3, 4, 5, 6]].any()
        assert (planes[7] == env.possible_agents.index(agent)).all()
        light = geo.rc_square < 0
        assert not planes[:6, light].any()  # square planes use dark squares only


@pytest.mark.parametrize("observer", [0, 1])
def test_planes_of_a_position_from_both_sides(observer):
    fen = "B:W28,K47,33:B22,K3,12"
    env = d.raw_env("international")
    env.reset(options={"fen": fen})
    planes = env.observe(env.possible_agents[observer])["observation"]
    np.testing.assert_array_equal(planes[:4], expected_planes(fen, "international", observer))
    mask = env.observe(env.possible_agents[observer])["action_mask"]
    assert mask.any() == (observer == 1)  # only the player to move has legal actions


def test_no_progress_plane_counts_king_moves():
    env = d.raw_env("international", no_progress_moves=2)
    env.reset(options={"fen": "W:WK46:BK1"})
    values = []
    for text in ("46-41", "1-6", "41-46"):
        values.append(float(env.observe(env.agent_selection)["observation"][6, 0, 0]))
        move = d.Game.from_fen(env.fen(), "international").parse_move(text)
        env.step(move.actions[0])
    assert values == [0.0, 0.25, 0.5]


def test_observe_batched_matches_per_game():
    eng = d.Engine("damii")
    state = eng.init(32)
    rng = np.random.default_rng(0)
    for _ in range(60):
        eng.step(state, eng.sample_actions(state, rng))
        eng.reset_where(state)
    batch = observe(eng, state)
    for b in range(0, 32, 5):
        np.testing.assert_array_equal(batch[b], observe(eng, state.take([b]))[0])
    out = np.empty_like(batch)
    assert observe(eng, state, out=out) is out and (out == batch).all()
    other = observe(eng, state, colour=1 - state.turn)
    np.testing.assert_array_equal(other[:, 7], np.broadcast_to((1 - state.turn)[:, None, None],
                                                               (32, 10, 10)))
    assert observation_shape(eng.rules) == (len(BASE_PLANES), 10, 10)
    assert plane_names(eng.rules)[:2] == ("own_men", "own_kings")


def test_international_module_matches_generic_env():
    a, b = international_v0.env(), d.env("international")
    a.reset()
    b.reset()
    assert play_random(a, np.random.default_rng(5)) == play_random(b, np.random.default_rng(5))

"""Gymnasium environments: the single-agent env against an opponent, and the vector env."""

from __future__ import annotations

import importlib.util
import os
import warnings

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

import damii_env as d  # noqa: E402
from damii_env.errors import InvalidArgumentError  # noqa: E402
from damii_env.gym_env import GYM_IDS, DraughtsEnv  # noqa: E402
from damii_env.observation import observe  # noqa: E402
from damii_env.vector_env import DraughtsVectorEnv  # noqa: E402
from tests.helpers import RandomPolicy  # noqa: E402

HAVE_PYGAME = importlib.util.find_spec("pygame") is not None


@pytest.mark.parametrize("env_id", sorted(GYM_IDS.values()))
def test_check_env(env_id):
    env = gymnasium.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the render check makes one env per render mode; "human" needs pygame
        check_env(env.unwrapped, skip_render_check=not HAVE_PYGAME)
    env.close()


@pytest.mark.parametrize("variant", sorted(GYM_IDS))
def test_registered_ids_make_the_variant(variant):
    damath = variant == "damath"  # 8x8, its own (mirrored) board and 15 planes
    orientation = "mirrored" if damath else "standard"
    env = gymnasium.make(GYM_IDS[variant], play_as="white", orientation=orientation)
    assert isinstance(env.unwrapped, DraughtsEnv)
    assert env.unwrapped.engine.rules.name == variant
    assert env.unwrapped.engine.rules.orientation == orientation
    obs, info = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape == ((15, 8, 8) if damath else (8, 10, 10))
    assert info["action_mask"].dtype == np.int8
    assert info["action_mask"].sum() == (7 if damath else 9)
    np.testing.assert_array_equal(env.get_wrapper_attr("action_masks")(), info["action_mask"] == 1)


def test_play_as_black_starts_after_the_opponent():
    env = DraughtsEnv("damii", play_as="black")
    obs, info = env.reset(seed=0)
    assert int(env.game_state.ply[0]) == 1 and info["colour"] == 1
    assert (obs[7] == 1).all()  # colour plane: the learner is Black
    assert {int(r) for r in np.nonzero(obs[0])[0]} == {6, 7, 8, 9}  # own men at the bottom


def test_same_seed_same_episode():
    def episode(seed: int) -> list[tuple[int, float]]:
        env = DraughtsEnv("triestine")
        _obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        trace, done = [], False
        while not done:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _obs, reward, term, trunc, info = env.step(action)
            trace.append((action, reward))
            done = term or trunc
        return trace

    assert episode(4) == episode(4)
    assert episode(4) != episode(5)


def test_illegal_action_loss():
    env = DraughtsEnv("damii", play_as="white")
    env.reset(seed=0)
    _obs, reward, term, trunc, info = env.step(0)
    assert (reward, term, trunc) == (-1.0, True, False)
    assert info["illegal_action"] and not info["action_mask"].any()
    with pytest.raises(d.GameOverError):
        env.step(0)


def test_illegal_action_random_and_raise():
    env = DraughtsEnv("damii", play_as="white", illegal_action="random")
    env.reset(seed=0)
    _obs, reward, term, _trunc, info = env.step(0)
    assert info["illegal_action"] and not term and int(env.game_state.ply[0]) == 2
    env = DraughtsEnv("damii", play_as="white", illegal_action="raise")
    env.reset(seed=0)
    with pytest.raises(d.IllegalActionError):
        env.step(0)
    with pytest.raises(d.InvalidOptionError):
        DraughtsEnv("damii", illegal_action="ignore")


def test_opponent_policies():
    seen = []

    def first_legal(obs, mask):
        seen.append(obs.shape)
        return int(np.flatnonzero(mask)[0])

    env = DraughtsEnv("international", opponent=first_legal, play_as="black")
    env.reset(seed=0)
    assert seen == [(8, 10, 10)]
    env = DraughtsEnv("international", opponent=RandomPolicy(0), play_as="black")
    env.reset(seed=0)
    assert int(env.game_state.ply[0]) == 1


TORCH = importlib.util.find_spec("torch") is not None
OPPONENT_SPECS = ["random", "greedy", "alphabeta:depth=2",
                  pytest.param("ckpt:agents/weights/damii.pt", marks=pytest.mark.skipif(
                      not TORCH, reason="checkpoints need the train extra")),
                  pytest.param("ckpt:agents/weights/damii.pt,depth=1", marks=pytest.mark.skipif(
                      not TORCH, reason="checkpoints need the train extra"))]


@pytest.mark.parametrize("spec", OPPONENT_SPECS)
def test_every_player_spec_is_an_opponent(spec):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = gymnasium.make("damii_env/Damii-v0", opponent=spec.replace("agents/weights/",
                         os.path.join(root, "agents", "weights", "")), play_as="black",
                         turn_limit=60)
    obs, info = env.reset(seed=3)
    raw = env.unwrapped
    assert int(raw.game_state.turn[0]) == 1  # the opponent (White) has moved
    rng = np.random.default_rng(0)
    done, steps = False, 0
    while not done:
        before = raw.game_state.copy()
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        steps += 1
        # after each step it is the learner's turn again (or the game is over), and the
        # opponent's move was a legal full move of the position the learner left
        assert done or int(raw.game_state.turn[0]) == 1
        assert int(raw.game_state.ply[0]) >= int(before.ply[0])
    assert steps > 5 and reward in (-1.0, 0.0, 1.0)


def test_a_player_object_is_an_opponent_and_is_reseeded():
    from damii_env.player import make_player

    games = []
    for _ in range(2):
        env = DraughtsEnv("international", opponent=make_player("random", "international"),
                          play_as="black")
        env.reset(seed=7)
        games.append(env.unwrapped.game_state.board.copy())
    assert (games[0] == games[1]).all()  # reseeded from the env's seed


class _Stubborn:
    """A player that always plays the first legal move of the start position."""

    name = "stubborn"

    def __init__(self):
        self.first = None

    def choose(self, game):
        moves = game.legal_moves()
        self.first = self.first or moves[0]
        return self.first


@pytest.mark.parametrize("opponent", ["player", "policy", "raises"])
def test_a_failing_opponent_leaves_the_game_as_before_the_step(opponent):
    def raises(obs, mask):
        raise RuntimeError("no idea")

    chosen = {"player": _Stubborn(), "policy": lambda obs, mask: 0, "raises": raises}[opponent]
    env = DraughtsEnv("international", opponent=chosen, play_as="black")
    if opponent == "player":
        env.reset(seed=0)  # White's first move is the stubborn one: legal once
        fen = env.fen()
        action = int(np.flatnonzero(env.action_masks())[0])
        with pytest.raises(d.OpponentError, match="stubborn.*not a legal move"):
            env.step(action)
    else:
        with pytest.raises(d.OpponentError):
            env.reset(seed=0)  # the opponent moves first and fails: reset again
        with pytest.raises(d.GameOverError):
            env.step(0)
        env = DraughtsEnv("international", opponent=chosen, play_as="white")
        env.reset(seed=0)
        fen = env.fen()
        action = int(np.flatnonzero(env.action_masks())[0])
        with pytest.raises(d.OpponentError, match="not legal|failed"):
            env.step(action)
    assert env.fen() == fen  # the learner's hop was taken back
    assert env.action_masks()[action]  # and it is the learner's turn again


def test_masked_rollout_sb3_style():
    """What sb3-contrib's MaskablePPO does: masks from action_masks(), masked sampling."""
    env = gymnasium.make("damii_env/Damii-v0", turn_limit=60)
    rng = np.random.default_rng(0)
    obs, _info = env.reset(seed=0)
    n_steps, episodes, returns = 512, 0, []
    buffer_obs = np.zeros((n_steps, *env.observation_space.shape), dtype=np.float32)
    episode_return = 0.0
    for t in range(n_steps):
        masks = env.get_wrapper_attr("action_masks")()
        logits = rng.normal(size=masks.shape)
        logits[~masks] = -np.inf
        probs = np.exp(logits - logits.max())
        action = int(rng.choice(masks.size, p=probs / probs.sum()))
        buffer_obs[t] = obs
        obs, reward, term, trunc, info = env.step(action)
        assert "illegal_action" not in info
        episode_return += reward
        if term or trunc:
            episodes += 1
            returns.append(episode_return)
            episode_return = 0.0
            obs, _info = env.reset()
    assert episodes >= 3 and set(returns) <= {-1.0, 0.0, 1.0}
    assert env.observation_space.contains(buffer_obs[-1])


# --- the vector environment ---------------------------------------------------------------


def test_vector_env_spaces_and_metadata():
    envs = DraughtsVectorEnv(4, "triestine")
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert envs.observation_space.shape == (4, 8, 10, 10)
    assert envs.single_action_space.n == 1800 and envs.action_space.shape == (4,)
    obs, info = envs.reset(seed=0)
    assert obs.shape == (4, 8, 10, 10) and info["action_mask"].shape == (4, 1800)
    same = DraughtsVectorEnv(2, "damii", autoreset_mode="SameStep")
    assert same.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    with pytest.raises(d.InvalidOptionError):
        DraughtsVectorEnv(2, autoreset_mode=AutoresetMode.DISABLED)


@pytest.mark.parametrize("variant", ["damii", "triestine"])
def test_vector_env_plays_the_same_games_as_the_aec_env(variant):
    """Random actions: the vector env and one AEC env per game see the same everything."""
    B = 6
    envs = DraughtsVectorEnv(B, variant, turn_limit=50)
    aecs = [d.raw_env(variant, turn_limit=50) for _ in range(B)]
    obs, info = envs.reset(seed=0)
    for a in aecs:
        a.reset(seed=0)
    rng = np.random.default_rng(1)
    finished = 0
    for _ in range(250):
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0
                            for m in info["action_mask"]])
        for b, aec in enumerate(aecs):
            agent = aec.agent_selection
            seen = aec.observe(agent)
            if aec.terminations[agent] or aec.truncations[agent]:
                assert not info["action_mask"][b].any()
                aec.reset()
                continue
            np.testing.assert_array_equal(obs[b], seen["observation"])
            np.testing.assert_array_equal(info["action_mask"][b], seen["action_mask"])
            assert info["to_play"][b] == aec.possible_agents.index(agent)
            aec.step(int(actions[b]))
        obs, rewards, term, trunc, info = envs.step(actions)
        for b, aec in enumerate(aecs):
            if info["actor"][b] < 0:
                assert rewards[b] == 0 and not term[b] and not trunc[b]
                continue
            actor = aec.possible_agents[info["actor"][b]]
            assert rewards[b] == aec.rewards[actor]
            assert term[b] == aec.terminations[actor] and trunc[b] == aec.truncations[actor]
            finished += bool(term[b] or trunc[b])
    assert finished >= B


def test_vector_env_same_step_autoreset():
    B = 8
    envs = DraughtsVectorEnv(B, "international", autoreset_mode=AutoresetMode.SAME_STEP,
                             turn_limit=20)
    obs, info = envs.reset(seed=0)
    start = obs.copy()
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(60):
        actions = [rng.choice(np.flatnonzero(m)) for m in info["action_mask"]]
        assert all(m.any() for m in info["action_mask"])  # never a finished game
        obs, rewards, term, trunc, info = envs.step(actions)
        done = term | trunc
        if done.any():
            assert (info["_final_obs"] == done).all()
            np.testing.assert_array_equal(obs[done], start[done])  # restarted at once
            assert (info["outcome"][done] > 0).all()
            assert not (info["final_obs"][done] == start[done]).all()
            ended += int(done.sum())
    assert ended >= B


def test_vector_env_rejects_illegal_actions():
    envs = DraughtsVectorEnv(3, "damii")
    envs.reset()
    state_before = envs.game_state.copy()
    with pytest.raises(d.IllegalActionError):
        envs.step([0, 0, 0])
    assert (envs.game_state.board == state_before.board).all()


def test_vector_observation_is_the_shared_observe():
    """Checks bookkeeping, not correctness: the vector env against the shared observe()."""
    envs = DraughtsVectorEnv(5, "damii")
    obs, _ = envs.reset()
    np.testing.assert_array_equal(obs, observe(envs.engine, envs.game_state))


@pytest.mark.parametrize("variant", ["damii", "damath"])
def test_observe_rows_is_observe_of_the_taken_games(variant):
    eng = d.Engine(variant)
    rng = np.random.default_rng(2)
    state = eng.init(8, rng)
    for _ in range(25):
        eng.step(state, eng.sample_actions(state, rng))
    rows = np.array([5, 1, 1, 7])
    np.testing.assert_array_equal(observe(eng, state, rows=rows),
                                  observe(eng, state.take(rows)))
    colours = np.array([0, 1, 0, 1])
    out = np.full(observe(eng, state, rows=rows).shape, 7.0, np.float32)
    np.testing.assert_array_equal(observe(eng, state, colours, out=out, rows=rows),
                                  observe(eng, state.take(rows), colours))
    assert observe(eng, state, rows=np.zeros(0, np.int64)).shape[0] == 0
    with pytest.raises(InvalidArgumentError, match="rows must hold integers from 0 to 7"):
        observe(eng, state, rows=[8])


def test_reset_from_a_position_and_win():
    env = DraughtsEnv("international", play_as="white")
    _obs, info = env.reset(options={"fen": "W:W28:B22"})
    (action,) = np.flatnonzero(info["action_mask"])
    _obs, reward, term, trunc, info = env.step(action)
    assert (reward, term, trunc) == (1.0, True, False) and info["outcome"] == 1
    assert not env.action_masks().any()

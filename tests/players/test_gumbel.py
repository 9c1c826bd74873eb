"""Gumbel AlphaZero: sequential halving, completed q-values and the improved policy
checked by hand, on formulas and on a tiny tree; the trainer's exact resume; the player."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="training needs the train extra")

import damii_env as d  # noqa: E402
from damii_agents.search.evaluator import NetworkEvaluator  # noqa: E402
from damii_agents.search.gumbel import (  # noqa: E402
    C_SCALE,
    C_VISIT,
    GumbelSearch,
    _select_at_root,
    _select_below_root,
    completed_sigma,
    halving_schedule,
    improved_policy,
)
from damii_training.config import ConfigError, load_config  # noqa: E402


@pytest.mark.parametrize("considered, sims, expected", [
    (1, 3, [0, 1, 2]),                     # one candidate takes every simulation
    (2, 4, [0, 0, 1, 1]),                  # one round of two visits each
    # 4 candidates, log2(4) = 2 rounds: 8 / (2 * 4) = 1 visit each, then the best 2
    # get 8 / (2 * 2) = 2 visits each
    (4, 8, [0, 0, 0, 0, 1, 1, 2, 2]),
    # 3 candidates: ceil(log2 3) = 2; int(7 / 6) = 1 visit each, then 2 survivors with
    # int(7 / 4) = 1 visit a round until the 7 simulations are spent
    (3, 7, [0, 0, 0, 1, 1, 2, 2]),
    (16, 16, [0] * 16),                    # fewer simulations than a full round
])
def test_sequential_halving_schedule_by_hand(considered, sims, expected):
    assert halving_schedule(considered, sims).tolist() == expected


def _reference_logits(prior, legal):
    return np.where(legal, np.log(np.maximum(prior, 1e-30)), -np.inf)


def _reference_sigma(prior, visits, q, raw_value, legal):
    """The paper's sigma(completed q), restated in numpy over whole rows (the library
    computes it in a compiled loop per node): the reference the tests hold it to."""
    visited = visits > 0
    total = visits.sum(1)
    p = np.maximum(prior, np.finfo(np.float32).tiny)
    p_visited = np.where(visited, p, 0.0).sum(1)
    weighted_q = np.where(visited, p * q, 0.0).sum(1) / np.where(p_visited > 0, p_visited, 1.0)
    mixed = (raw_value + total * weighted_q) / (total + 1)
    completed = np.where(visited, q, mixed[:, None])
    low = np.where(legal, completed, np.inf).min(1, keepdims=True)
    high = np.where(legal, completed, -np.inf).max(1, keepdims=True)
    scaled = (completed - low) / np.maximum(high - low, 1e-8)
    return np.where(legal, (C_VISIT + visits.max(1, keepdims=True)) * C_SCALE * scaled, 0.0)


def _reference_policy(prior, visits, q, raw_value, legal):
    z = _reference_logits(prior, legal) + _reference_sigma(prior, visits, q, raw_value, legal)
    top = np.where(legal, z, -np.inf).max(1, keepdims=True)
    z = z - np.where(np.isfinite(top), top, 0.0)
    e = np.where(legal, np.exp(z), 0.0)
    return e / np.maximum(e.sum(1, keepdims=True), 1e-30)


def test_improved_policy_by_hand():
    prior = np.array([[0.5, 0.3, 0.2, 0.0]])
    visits = np.array([[2.0, 1.0, 0.0, 0.0]])
    q = np.array([[0.5, -0.5, 0.0, 0.0]])
    value_sum = q * visits
    legal = np.array([[True, True, True, False]])
    # mixed value: (v + sum N * sum_visited(p q) / sum_visited(p)) / (1 + sum N)
    #   = (0.1 + 3 * (0.5 * 0.5 + 0.3 * -0.5) / 0.8) / 4 = (0.1 + 0.375) / 4 = 0.11875
    # completed q = (0.5, -0.5, 0.11875), rescaled to [0, 1]: (1, 0, 0.61875)
    # sigma = (50 + 2) * 0.1 * that = (5.2, 0, 3.2175)
    expected_sigma = [5.2, 0.0, 3.2175, 0.0]
    e = [0.5 * math.exp(5.2), 0.3, 0.2 * math.exp(3.2175)]
    expected = [x / sum(e) for x in e] + [0.0]
    raw = np.array([0.1])
    sigma = completed_sigma(prior, visits, value_sum, raw, np.array([3]))
    assert sigma[0].tolist() == pytest.approx(expected_sigma)
    got = improved_policy(prior, visits, value_sum, raw, np.array([3]))
    assert got[0].tolist() == pytest.approx(expected)
    # the numpy restatement the random-tree tests compare against, on the same numbers
    assert _reference_sigma(prior, visits, q, raw, legal)[0].tolist() == \
        pytest.approx(expected_sigma)
    assert _reference_policy(prior, visits, q, raw, legal)[0].tolist() == pytest.approx(expected)


def test_improved_policy_without_visits_is_the_prior():
    prior = np.array([[0.6, 0.3, 0.1]])
    got = improved_policy(prior, np.zeros((1, 3)), np.zeros((1, 3)), np.array([0.4]),
                          np.array([3]))
    assert got[0].tolist() == pytest.approx([0.6, 0.3, 0.1])


def test_improved_policy_of_a_root_without_hops_is_zero_without_warnings():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = improved_policy(np.array([[0.5, 0.5], [0.0, 0.0]]), np.zeros((2, 2)),
                              np.zeros((2, 2)), np.array([0.0, 0.0]), np.array([2, 0]))
    assert got.tolist() == [[0.5, 0.5], [0.0, 0.0]]


def test_improved_policy_follows_the_reference_on_random_nodes():
    rng = np.random.default_rng(1)
    for _ in range(20):
        n_legal, legal3, prior, visits, value_sum, raw = _random_trees(rng)
        legal, n, vs = legal3[:, 0], visits[:, 0], value_sum[:, 0]
        q = np.where(n > 0, vs / np.maximum(n, 1), 0.0)
        np.testing.assert_allclose(
            improved_policy(prior[:, 0], n, vs, raw[:, 0], n_legal[:, 0]),
            _reference_policy(prior[:, 0], n, q, raw[:, 0], legal), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(
            completed_sigma(prior[:, 0], n, vs, raw[:, 0], n_legal[:, 0]),
            _reference_sigma(prior[:, 0], n, q, raw[:, 0], legal), rtol=1e-5, atol=1e-6)


def _random_trees(rng, B=16, M=5, L=12):
    n_legal = rng.integers(0, L + 1, (B, M))
    legal = np.arange(L)[None, None, :] < n_legal[:, :, None]
    prior = np.where(legal, rng.dirichlet(np.ones(L), (B, M)), 0).astype(np.float32)
    visits = np.where(legal & (rng.random((B, M, L)) < 0.5),
                      rng.integers(0, 5, (B, M, L)), 0).astype(np.float32)
    value_sum = (visits * rng.uniform(-1, 1, (B, M, L))).astype(np.float32)
    raw = rng.uniform(-1, 1, (B, M)).astype(np.float32)
    return n_legal, legal, prior, visits, value_sum, raw


def _chose_a_best(got, scores, legal):
    """Each row's choice scores the row's maximum (ties and float rounding aside)."""
    for b in range(len(got)):
        if legal[b].any():
            assert legal[b, got[b]]
            assert scores[b, got[b]] == pytest.approx(scores[b].max(), abs=1e-5)


def test_compiled_selection_follows_the_formulas():
    """The search's compiled per-game selection against the numpy reference above, on
    random trees: below the root the most lagging visit share of the improved policy; at
    the root the best gumbel + logits + sigma among the hops with the wanted visits."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        n_legal, legal3, prior, visits, value_sum, raw = _random_trees(rng)
        B = len(n_legal)
        games, node = np.arange(B), rng.integers(0, n_legal.shape[1], B)
        legal, n = legal3[games, node], visits[games, node]
        q = np.where(n > 0, value_sum[games, node] / np.maximum(n, 1), 0.0)
        policy = _reference_policy(prior[games, node], n, q, raw[games, node], legal)
        lag = np.where(legal, policy - n / (1 + n.sum(1, keepdims=True)), -np.inf)
        got = _select_below_root(prior, visits, value_sum, raw, n_legal, games, node)
        _chose_a_best(got, lag, legal)

        gumbel, wanted = rng.gumbel(size=(B, prior.shape[2])), rng.integers(0, 3, B)
        legal, n = legal3[:, 0], visits[:, 0]
        q = np.where(n > 0, value_sum[:, 0] / np.maximum(n, 1), 0.0)
        score = gumbel + _reference_logits(prior[:, 0], legal) + _reference_sigma(
            prior[:, 0], n, q, raw[:, 0], legal)
        ok = legal & (n == wanted[:, None])
        ok = np.where(ok.any(1, keepdims=True), ok, legal)
        got = _select_at_root(prior, visits, value_sum, raw, n_legal, gumbel, wanted)
        _chose_a_best(got, np.where(ok, score, -np.inf), ok)


class _Flat(torch.nn.Module):
    """A network that knows nothing: equal logits, value 0 everywhere."""

    def __init__(self, n_actions: int) -> None:
        super().__init__()
        self.n_actions = n_actions

    def forward(self, obs):
        return torch.zeros(obs.shape[0], self.n_actions), torch.zeros(obs.shape[0])


# International: the black man on 36 is blocked by the white men on 41 and 47 (it can go
# only to 41, and cannot jump 41 because 47 is taken). White to move has four moves:
# 50-44 and 50-45 keep the block, so Black cannot move and loses at once; 41-37 and 47-42
# free it.
BLOCK = "W:W41,47,50:B36"


def _tiny_tree(sims):
    game = d.Game.from_fen(BLOCK, "international")
    engine = game.engine
    search = GumbelSearch(engine, NetworkEvaluator(_Flat(engine.n_actions), engine), sims,
                          np.random.default_rng(0), gumbel_scale=0.0)
    found = search.run(game.state)
    k = int(game.state.n_legal[0])
    names = {}
    for i in range(k):
        g = game.copy()
        g.push(next(m for m in g.legal_moves() if m.actions == (int(game.state.legal[0, i]),)))
        names[i] = ("win" if g.is_over() else "free")
    return found, k, names


@pytest.mark.parametrize("sims, win_visits, free_visits, most", [
    (4, 1, 1, 1),   # one round: every move once
    (8, 3, 1, 3),   # schedule 0,0,0,0,1,1,2,2: the two wins survive the halving
])
def test_gumbel_search_on_a_tiny_tree_by_hand(sims, win_visits, free_visits, most):
    found, k, names = _tiny_tree(sims)
    assert k == 4 and sorted(names.values()) == ["free", "free", "win", "win"]
    visits = found.visits[0, :k]
    for i in range(k):
        assert visits[i] == (win_visits if names[i] == "win" else free_visits)
    # completed q: wins +1, the freeing moves 0 (the flat network's value), rescaled to
    # 1 and 0; sigma = (50 + most visits) * 0.1; the priors are equal
    s = (50 + most) * 0.1
    z = 2 * math.exp(s) + 2
    for i in range(k):
        assert found.policy[0, i] == pytest.approx(
            math.exp(s) / z if names[i] == "win" else 1 / z)
    assert names[int(found.choice[0])] == "win"


def test_gumbel_player_and_options(tmp_path):
    from damii_env.player import PlayerSpecError, make_player
    from damii_training.run import run_training

    run_training("configs/damii_quick.yaml", [*TINY_GUMBEL, "total_steps=64"],
                 run_dir=tmp_path / "r", progress=False)
    path = tmp_path / "r" / "checkpoints" / "last.pt"
    player = make_player(f"ckpt:{path},sims=4,mcts=gumbel", "damii")
    game = d.Game("damii")
    assert player.choose(game) in game.legal_moves()
    with pytest.raises(PlayerSpecError, match="mcts must be puct or gumbel"):
        make_player(f"ckpt:{path},sims=4,mcts=ucb", "damii")
    with pytest.raises(PlayerSpecError, match="give sims too"):
        make_player(f"ckpt:{path},mcts=gumbel", "damii")
    with pytest.raises(ConfigError, match="mcts must be puct or gumbel"):
        load_config("configs/damii_quick.yaml", ["mcts=ucb"])


TINY_GUMBEL = ["num_envs=8", "rollout_steps=8", "channels=8", "blocks=1", "minibatch_size=32",
               "epochs=1", "eval_every=0", "final_eval_games=0", "checkpoint_every=1",
               "algorithm=alphazero", "mcts=gumbel", "simulations=4", "gumbel_considered=4",
               "replay_size=2000", "rule_options={turn_limit: 30}"]


def test_gumbel_alphazero_resume_gives_the_same_network(tmp_path):
    """Checks bookkeeping (resume), not correctness: the trainer against itself."""
    from tests.training.test_training import check_resume_is_exact

    check_resume_is_exact(tmp_path, TINY_GUMBEL, 256)


def test_time_limited_neural_player_deepens_within_its_time(tmp_path):
    """``ckpt:PATH,time=T``: minimax deepened one full move at a time while the next depth
    should end in time: a tiny budget stops after depth 1 (always searched), an ample one
    goes on to the depth cap (``depth=D`` with ``time``)."""
    from damii_env.player import PlayerSpecError, make_player
    from damii_training.run import run_training

    run_training("configs/damii_quick.yaml", [*TINY_GUMBEL, "total_steps=64", "trunk=mlp",
                                              "channels=16"],
                 run_dir=tmp_path / "r", progress=False)
    path = tmp_path / "r" / "checkpoints" / "last.pt"
    game = d.Game("damii")
    tiny = make_player(f"ckpt:{path},time=0.001", "damii")
    assert tiny.choose(game) in game.legal_moves()
    assert tiny.last_depth == 1
    ample = make_player(f"ckpt:{path},time=600,depth=3", "damii")
    assert ample.choose(game) in game.legal_moves()
    assert ample.last_depth == 3
    with pytest.raises(PlayerSpecError, match="not both"):
        make_player(f"ckpt:{path},time=0.1,sims=4", "damii")
    with pytest.raises(PlayerSpecError, match="time must be a finite float"):
        make_player(f"ckpt:{path},time=nan", "damii")

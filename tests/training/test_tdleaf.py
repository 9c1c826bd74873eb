"""Learning from search: the batched minimax, the factorised policy head, the TD-leaf
targets (by hand) and the trainer's exact resume."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="training needs the train extra")

import damii_env as d  # noqa: E402
from damii_agents.network import NetworkShape, PolicyValueNet  # noqa: E402
from damii_agents.search import minimax  # noqa: E402
from damii_agents.search.evaluator import LeafFunction, leaf_batches  # noqa: E402
from damii_env.episode import for_colour, material_balance, mover_rewards  # noqa: E402
from damii_training.run import run_training  # noqa: E402
from damii_training.tdleaf import lambda_returns, softmax  # noqa: E402
from tests.helpers import best, leaf_state, of_root, per_level  # noqa: E402


@pytest.mark.parametrize("lam, expected", [
    # one player's search values 0.2, 0.4, -0.1, then the game is lost (z = -1)
    (0.0, [0.2, 0.4, -0.1]),             # the search values themselves
    (1.0, [-1.0, -1.0, -1.0]),           # the result alone
    # T3 = 0.5 * -0.1 + 0.5 * -1 = -0.55; T2 = 0.5 * 0.4 + 0.5 * -0.55 = -0.075;
    # T1 = 0.5 * 0.2 + 0.5 * -0.075 = 0.0625
    (0.5, [0.0625, -0.075, -0.55]),
])
def test_td_leaf_targets_by_hand(lam, expected):
    got = lambda_returns(np.array([0.2, 0.4, -0.1]), -1.0, lam)
    assert got.tolist() == pytest.approx(expected)


def test_softmax_temperature():
    p = softmax(np.array([0.0, np.log(3.0) * 0.1]), 0.1)
    assert p.tolist() == pytest.approx([0.25, 0.75])


def test_softmax_of_rows_of_several_lengths_is_each_rows_own():
    # the trainer takes the softmaxes of all its games at once, -inf past each game's hops:
    # bit for bit those of each game's hops alone
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 30, 300)
    values = np.full((300, 30), -np.inf)
    for row, n in zip(values, lengths, strict=True):
        row[:n] = rng.normal(size=n)
    got = softmax(values, 0.1, lengths)
    for row, n, p in zip(values, lengths, got, strict=True):
        assert p[:n].tolist() == softmax(row[:n], 0.1).tolist()
        assert not p[n:].any()


def test_search_backs_up_equal_values_and_nans_as_numpy_does():
    # a draw is worth 0.0 and, negated, -0.0: which of the two a node keeps shows in the
    # targets' bits; the compiled back-up keeps what np.maximum.at kept
    engine = d.Engine("damii")
    rng = np.random.default_rng(1)
    for _ in range(300):
        counts = rng.integers(0, 4, 6)
        parent = np.repeat(np.arange(6), counts)
        nodes, children = engine.empty_state(6), engine.empty_state(len(parent) + 1)
        nodes.turn[:] = rng.integers(0, 2, 6)
        children.turn[:] = rng.integers(0, 2, len(parent) + 1)
        below = rng.choice([0.0, -0.0, 0.5, -0.5, np.nan], len(parent))
        values = np.zeros(6)
        minimax._back_up(values, counts > 0, nodes.meta, children.meta, parent, below)
        same = children.turn[:len(parent)] == nodes.turn[parent]
        best = np.full(6, -np.inf)
        with np.errstate(invalid="ignore"):
            np.maximum.at(best, parent, np.where(same, below, -below))
        expected = np.where(counts > 0, best, 0.0)
        assert np.array_equal(values, expected, equal_nan=True)
        assert np.array_equal(np.signbit(values), np.signbit(expected))


def _material(engine):
    def leaf(states):
        return np.where(states.done, mover_rewards(states),
                        0.1 * for_colour(material_balance(engine, states), states.turn))
    return leaf


def _plain_minimax(engine, state, depth, leaf):
    """The same search written recursively, hop by hop, one position at a time."""
    if state.done[0] or (depth <= 0 and not state.capturing[0]):
        return float(leaf(state)[0])
    best = -np.inf
    for a in engine.legal_actions(state):
        child = state.copy()
        engine.step(child, np.array([a]))
        same = child.turn[0] == state.turn[0]
        v = _plain_minimax(engine, child, depth - (0 if same else 1), leaf)
        best = max(best, v if same else -v)
    return best


@pytest.mark.parametrize("variant", ["damii", "triestine", "damath"])
def test_batched_search_equals_a_plain_recursive_search_per_root(variant):
    engine = d.Engine(variant)
    rng = np.random.default_rng(5)
    state = engine.init(6)
    for _ in range(int(rng.integers(20, 40))):  # varied positions, some mid-capture
        engine.step(state, engine.sample_actions(state, rng))
        engine.reset_where(state)
    leaf = _material(engine)
    result = minimax.search(engine, state, 1,
                            per_level(lambda s, rows: leaf(leaf_state(s, rows))))
    for b in range(6):
        root = state.take(slice(b, b + 1))
        hops = engine.legal_actions(state, b)
        assert result.hop_index[result.root == b].tolist() == list(range(len(hops)))
        expected = []
        for a in hops:
            child = root.copy()
            engine.step(child, np.array([a]))
            same = child.turn[0] == root.turn[0]
            v = _plain_minimax(engine, child, 1 - (0 if same else 1), leaf)
            expected.append(v if same else -v)
        assert of_root(result, b).tolist() == pytest.approx(expected)
        assert best(result, 6)[b] == pytest.approx(max(expected))


def test_factorised_head_reads_each_hop_at_its_start_square():
    shape = NetworkShape(8, 10, 1800, channels=4, blocks=0, policy_head="factorised",
                         orientation="standard")
    net = PolicyValueNet(shape)

    class Marks(torch.nn.Module):  # channel j at flat cell c shows 1000 c + j
        def forward(self, h):
            cells = torch.arange(100, dtype=torch.float32).reshape(1, 1, 10, 10) * 1000
            return cells + torch.arange(36, dtype=torch.float32).reshape(1, 36, 1, 1)

    net.policy_head.conv = Marks()
    logits, _ = net(torch.zeros(1, 8, 10, 10))
    # International (standard orientation): square 1 is row 0, column 1 (cell 1); square
    # 46 is row 9, column 0 (cell 90); 28 is row 5, column 4 (cell 54).
    # Action ((s - 1) * 4 + d) * 9 + (k - 1).
    for square, cell in ((1, 1), (46, 90), (28, 54)):
        for d_, k in ((0, 1), (1, 3), (3, 9)):
            a = ((square - 1) * 4 + d_) * 9 + (k - 1)
            assert logits[0, a].item() == 1000 * cell + d_ * 9 + (k - 1)


def test_value_prior_starts_at_the_material_balance():
    shape = NetworkShape(8, 10, 1800, channels=4, blocks=1, policy_head="factorised",
                         value_prior=0.2, king_worth=3.0)
    net = PolicyValueNet(shape).eval()
    engine = d.Engine("international")
    state = d.Game.from_fen("W:W31,32,K33:B1,K2", "international").state
    from damii_env.observation import observe

    value = net.value(torch.from_numpy(observe(engine, state)))
    # White to move: men 2 + king 3 against man 1 + king 3: +1, so tanh(0.2 * 1)
    assert value.item() == pytest.approx(np.tanh(0.2), abs=1e-6)


TINY = ["num_envs=6", "rollout_steps=12", "channels=8", "blocks=1", "policy_head=factorised",
        "value_prior=0.2", "algorithm=tdleaf", "minibatch_size=32", "epochs=1",
        "replay_size=2000", "rule_options={turn_limit: 30}", "eval_every=0",
        "final_eval_games=0", "checkpoint_every=1", "search_nodes=300"]


def test_search_values_every_levels_leaves_in_one_call():
    engine = d.Engine("damii")
    rng = np.random.default_rng(3)
    state = engine.init(4)
    for _ in range(25):
        engine.step(state, engine.sample_actions(state, rng))
        engine.reset_where(state)
    leaf = _material(engine)
    calls = []

    def leaf_values(levels):
        calls.append([(s.batch_size, rows.copy()) for s, rows in levels])
        return np.concatenate([leaf(leaf_state(s, rows)) for s, rows in levels])

    result = minimax.search(engine, state, 2, LeafFunction(leaf_values))
    assert len(calls) == 1 and len(calls[0]) >= 2  # one call, with leaves of several levels
    for size, rows in calls[0]:
        assert len(rows) and np.all(np.diff(rows) > 0) and rows[-1] < size
    assert sum(len(rows) for _size, rows in calls[0]) == result.leaves
    # the same values as a function called once per level
    by_level = minimax.search(engine, state, 2, per_level(
        lambda s, rows: leaf(leaf_state(s, rows))))
    assert result.values.tolist() == by_level.values.tolist()


def test_search_refuses_leaf_values_of_the_wrong_length():
    engine = d.Engine("damii")
    with pytest.raises(ValueError, match="one value per leaf"):
        minimax.search(engine, engine.init(1), 1, LeafFunction(lambda levels: np.zeros(1)))


def test_leaf_batches_cover_the_live_leaves_in_order_within_the_size():
    engine = d.Engine("damii")
    rng = np.random.default_rng(6)
    a, b = engine.init(9), engine.init(5)
    for _ in range(3000):  # random play until one of b's games is over (not restarted)
        engine.step(b, engine.sample_actions(b, rng))
        if b.done.any():
            break
    levels = [(a, np.array([0, 1, 3, 4, 5, 8])), (b, np.arange(5))]
    over = 6 + np.flatnonzero(b.done)
    for size in (1, 4, 7, 100):
        batches = list(leaf_batches(levels, size))
        assert all(sum(len(rows) for _s, rows, _at in x) <= size for x in batches)
        at = np.concatenate([at for x in batches for _s, _rows, at in x])
        assert at.tolist() == [i for i in range(11) if i not in over]
        for x in batches:
            for states, rows, where in x:
                source = levels[0] if states is a else levels[1]
                start = 0 if states is a else 6
                assert source[1][where - start].tolist() == rows.tolist()


def test_trainer_leaf_values_in_small_batches_are_the_same():
    """Checks bookkeeping (batching), not correctness: the trainer against itself."""
    from damii_training.config import load_config
    from damii_training.run import TRAINERS

    cfg = load_config("configs/damii_tdleaf.yaml", ["num_envs=8", "eval_every=0",
                                                     "final_eval_games=0"])
    trainer = TRAINERS[cfg.algorithm](cfg)
    engine = trainer.engine
    rng = np.random.default_rng(8)
    state = engine.init(8)
    for _ in range(17):
        engine.step(state, engine.sample_actions(state, rng))
    children, _parent = engine.children(state)
    levels = [(state, np.arange(0, 8, 2)), (children, np.arange(0, children.batch_size, 3))]
    whole = trainer.evaluator.leaf_values(levels)
    trainer.evaluator.batch = 3
    np.testing.assert_allclose(trainer.evaluator.leaf_values(levels), whole, rtol=1e-6,
                               atol=1e-6)


def test_trainer_values_levels_as_each_level_alone(tmp_path):
    """The TD-leaf trainer's leaf values over several levels at once (one network batch)
    equal its values of each level alone, finished games valued by their results.
    The first assert checks bookkeeping (the trainer against itself); the last, the result."""
    from damii_training.config import load_config
    from damii_training.run import TRAINERS

    cfg = load_config("configs/damii_tdleaf.yaml", ["num_envs=8", "eval_every=0",
                                                     "final_eval_games=0"])
    trainer = TRAINERS[cfg.algorithm](cfg)
    engine = trainer.engine
    rng = np.random.default_rng(2)
    a, b = engine.init(5), engine.init(7)
    for _ in range(12):
        engine.step(a, engine.sample_actions(a, rng))
    for _ in range(3000):  # random play until one of b's games is over (not restarted)
        engine.step(b, engine.sample_actions(b, rng))
        if b.done.any():
            break
    over = int(np.flatnonzero(b.done)[0])
    live = [r for r in range(7) if r != over][:2]
    levels = [(a, np.array([0, 2, 4])), (b, np.array(sorted([over, *live])))]
    together = trainer.evaluator.leaf_values(levels)
    alone = np.concatenate([trainer.evaluator.leaf_values([level]) for level in levels])
    np.testing.assert_allclose(together, alone, rtol=1e-6, atol=1e-6)
    at = 3 + int(np.flatnonzero(levels[1][1] == over)[0])
    assert together[at] == mover_rewards(b)[over] and together[at] in (-1.0, 0.0, 1.0)
    assert trainer.evaluator.leaf_values([]).shape == (0,)


def test_tdleaf_resume_gives_the_same_network(tmp_path):
    """Checks bookkeeping (resume), not correctness: the trainer against itself."""
    from tests.training.test_training import check_resume_is_exact

    check_resume_is_exact(tmp_path, TINY, 300)


def test_tdleaf_with_a_teacher_resumes_exactly(tmp_path):
    """Checks bookkeeping (resume), not correctness: the teacher is reseeded from the
    trainer's checkpointed generator at every decision."""
    from tests.training.test_training import check_resume_is_exact

    check_resume_is_exact(tmp_path, [*TINY, "teacher=alphabeta:depth=1,tt=10"], 300)


def test_tdleaf_checkpoint_plays_with_its_search(tmp_path):
    run_training("configs/damii_quick.yaml", [*TINY, "total_steps=60", "variant=damath",
                                              "rule_options={}"],
                 run_dir=tmp_path / "r", progress=False)
    from damii_env.player import make_player

    player = make_player(f"ckpt:{tmp_path / 'r' / 'checkpoints' / 'last.pt'},depth=1", "damath")
    game = d.Game("damath")
    move = player.choose(game)
    assert move in game.legal_moves()


@pytest.mark.parametrize("policy_temperature, hop1_weight", [
    (0.0, 3.0 ** 0.01),   # 0: the targets use `temperature` (1.0): e^(0.01 ln 3), nearly flat
    (0.01, 3.0),          # e^(0.01 ln 3 / 0.01) = 3
])
def test_policy_targets_use_policy_temperature(monkeypatch, policy_temperature, hop1_weight):
    from damii_training.config import load_config
    from damii_training.tdleaf import TDLeafTrainer

    cfg = load_config("configs/damii_quick.yaml", [
        *TINY, "num_envs=1", "rollout_steps=1", "temperature=1.0", "explore_plies=0",
        f"policy_temperature={policy_temperature}"])
    trainer = TDLeafTrainer(cfg)
    k = int(trainer.state.n_legal[0])
    opening = trainer.state.legal[0, :k].tolist()
    assert k == 9  # Damii's opening: 9 hops
    # the search says: hop 1 is worth 0.01 ln 3 more than every other hop (all 0)
    values = np.zeros(k)
    values[1] = 0.01 * np.log(3.0)
    found = minimax.SearchResult(values=values, root=np.zeros(k, np.int64),
                                 hop_index=np.arange(k), nodes=k + 1, leaves=k)
    monkeypatch.setattr(minimax, "search", lambda *a, **kw: found)
    trainer.play()
    (_, _, legal, policy, _, best), = trainer.pending
    # targets: weight 1 for each of the 8 hops worth 0, hop1_weight for hop 1
    assert policy[1] == pytest.approx(hop1_weight / (8 + hop1_weight), abs=1e-6)
    assert policy[0] == pytest.approx(1 / (8 + hop1_weight), abs=1e-6)
    assert policy[:k].sum() == pytest.approx(1.0, abs=1e-6)
    assert best == pytest.approx(values[1])
    assert legal[:k].tolist() == opening


def test_a_policy_tower_of_its_own_leaves_the_value_to_the_trunk():
    shape = NetworkShape(15, 8, 896, channels=16, blocks=1, trunk="mlp", value_prior=0.2,
                         orientation="mirrored", policy_trunk="conv", policy_channels=4,
                         policy_blocks=1, policy_head="factorised")
    net = PolicyValueNet(shape).eval()
    obs = torch.from_numpy(observe_start("damath", 3))
    logits, value = net(obs)
    assert logits.shape == (3, 896)
    # the policy's weights changed: the logits move, the value does not
    with torch.no_grad():
        for p in net.policy_tower.parameters():
            p.add_(0.5)
    logits2, value2 = net(obs)
    assert not torch.allclose(logits, logits2)
    assert torch.equal(value, value2) and torch.equal(value, net.value(obs))
    # and the value's weights reach the value alone
    with torch.no_grad():
        net.stem.layers[0].weight.add_(0.5)
        net.value_head[0].weight.fill_(0.1)
    logits3, value3 = net(obs)
    assert torch.equal(logits2, logits3) and not torch.allclose(value2, value3)
    with pytest.raises(ValueError, match="policy_trunk must be one of"):
        NetworkShape(15, 8, 896, policy_trunk="wide")
    with pytest.raises(ValueError, match="no board to read a factorised head"):
        NetworkShape(15, 8, 896, trunk="conv", policy_trunk="mlp", policy_head="factorised")


def observe_start(variant, batch):
    from damii_env.observation import observe

    engine = d.Engine(variant)
    return observe(engine, engine.init(batch, rng=1))


def test_init_weights_with_a_new_policy_tower_keeps_the_value(tmp_path):
    from damii_agents.checkpoint import load_network
    from damii_training.config import ConfigError, load_config
    from damii_training.tdleaf import TDLeafTrainer

    tiny = [*TINY, "variant=damath", "rule_options={turn_limit: 30}", "trunk=mlp",
            "channels=16", "policy_head=dense", "total_steps=60"]
    run_training("configs/damii_quick.yaml", tiny, run_dir=tmp_path / "r", progress=False)
    ckpt = tmp_path / "r" / "checkpoints" / "last.pt"
    source, _ = load_network(ckpt)
    tower = [*tiny, f"init_weights={ckpt}", "policy_trunk=conv", "policy_channels=4",
             "policy_blocks=1", "policy_head=factorised"]
    trainer = TDLeafTrainer(load_config("configs/damii_quick.yaml", tower))
    trainer.net.eval()
    obs = torch.from_numpy(observe_start("damath", 4))
    with torch.no_grad():
        assert torch.equal(trainer.net.value(obs), source.value(obs))
        assert trainer.net(obs)[0].shape == source(obs)[0].shape
    for key, value in source.state_dict().items():
        if not key.startswith("policy_head."):
            assert torch.equal(trainer.net.state_dict()[key], value), key
    assert trainer.net.shape.policy_trunk == "conv" and trainer.net.policy_tower is not None
    # a value of another shape is still refused
    with pytest.raises(ConfigError, match="set channels and blocks to match"):
        TDLeafTrainer(load_config("configs/damii_quick.yaml", [*tower, "channels=8"]))
    with pytest.raises(ConfigError, match="needs a conv trunk under the policy"):
        load_config("configs/damii_quick.yaml", [*tiny, "policy_trunk=mlp",
                                                 "policy_head=factorised"])
    with pytest.raises(ConfigError, match="policy_trunk must be shared, conv or mlp"):
        load_config("configs/damii_quick.yaml", [*tiny, "policy_trunk=wide"])



def test_legal_log_probs_are_the_masked_softmax_over_every_action():
    """The policy loss reads the log-softmax over each row's legal hops alone; it equals
    the softmax over every action with the illegal ones masked out, action 0 included
    (the -1 padding, read at action 0, must not mask a legal action 0)."""
    from damii_agents.network import masked_logits
    from damii_training.replay import legal_log_probs

    gen = torch.Generator().manual_seed(0)
    logits = torch.randn((3, 6), generator=gen)
    legal = torch.tensor([[0, 5, -1, -1], [3, -1, -1, -1], [2, 4, 0, 1]])
    mask = torch.zeros((3, 6))
    for row, hops in enumerate(legal.tolist()):
        mask[row, [h for h in hops if h >= 0]] = 1
    full = torch.log_softmax(masked_logits(logits, mask), -1)
    got = legal_log_probs(logits, legal)
    expected = torch.where(legal >= 0, full.gather(1, legal.clamp_min(0)), 0.0)
    assert torch.allclose(got, expected, atol=1e-6)
    assert got[1, 0] == 0.0 and got[1, 1:].eq(0).all()  # a single legal hop: log 1


def _finished(fen: str, move: str, winner: int) -> d.Game:
    """The game of `fen` after `move`, which takes the last piece: `winner` has won."""
    game = d.Game.from_fen(fen, "damii", turn_limit=30)
    game.push(game.parse_move(move))
    assert game.is_over() and game.outcome().winner == winner
    return game


@pytest.mark.parametrize("lam, expected", [
    # lambda = 1: every decision learns its player's result, the winner's +1, the loser's -1
    (1.0, {0: 1.0, 1: 1.0, 2: -1.0, 3: -1.0, 4: -1.0, 5: 1.0}),
    # lambda = 0.5, by hand: White in game 0 (search values 0.3, -0.2, result +1):
    # T2 = 0.5 * -0.2 + 0.5 * 1 = 0.4, T1 = 0.5 * 0.3 + 0.5 * 0.4 = 0.35; Black in game 0
    # (0.1, 0.4, result -1): T2 = 0.2 - 0.5 = -0.3, T1 = 0.05 - 0.15 = -0.1; game 1, one
    # decision each: White (0.6, lost) 0.3 - 0.5 = -0.2, Black (-0.6, won) -0.3 + 0.5 = 0.2
    (0.5, {0: 0.35, 1: 0.4, 2: -0.1, 3: -0.3, 4: -0.2, 5: 0.2}),
])
def test_finished_games_teach_each_player_its_own_result(lam, expected):
    """The TD-leaf value targets end at the game's result for the player who made each
    decision (the sign of z and the colour of each chain; mutation audit finding 1)."""
    from damii_training.config import load_config
    from damii_training.tdleaf import TDLeafTrainer

    trainer = TDLeafTrainer(load_config("configs/damii_quick.yaml", [
        *TINY, "num_envs=2", f"td_lambda={lam}"]))
    state = trainer.engine.init(2)
    state.put(np.array([0]), _finished("W:W28:B23", "28x17", winner=0).state)  # White won
    state.put(np.array([1]), _finished("B:W28:B23", "23x34", winner=1).state)  # Black won
    # decisions in the order they were made (id, game row, colour, search value):
    # game 0: White, Black, White, Black; game 1: Black, White
    made = [(0, 0, 0, 0.3), (2, 0, 1, 0.1), (1, 0, 0, -0.2), (3, 0, 1, 0.4),
            (5, 1, 1, -0.6), (4, 1, 0, 0.6)]
    shape = trainer.decisions.shapes["obs"]
    trainer.decisions.add(
        row=np.array([r for _i, r, _c, _v in made]),
        colour=np.array([c for _i, _r, c, _v in made]),
        obs=np.stack([np.full(shape, i, np.float32) for i, _r, _c, _v in made]),
        legal=np.zeros((len(made), trainer.L), np.int16),
        policy=np.zeros((len(made), trainer.L), np.float32),
        n_hops=np.full(len(made), 2), value=np.array([v for _i, _r, _c, v in made]))
    trainer._finish_games(state, np.array([0, 1]))
    assert trainer.replay_len == len(made)
    ids = trainer.replay["obs"][:len(made), 0, 0, 0].astype(int).tolist()
    targets = dict(zip(ids, trainer.replay["z"][:len(made)].tolist(), strict=True))
    assert sorted(targets) == sorted(expected)
    for i, target in expected.items():
        assert targets[i] == pytest.approx(target, abs=1e-6), i


def _taught_trainer(*overrides: str):
    from damii_training.config import load_config
    from damii_training.tdleaf import TDLeafTrainer

    return TDLeafTrainer(load_config("configs/damii_quick.yaml", [
        *TINY, "variant=international", "num_envs=2", "rollout_steps=1",
        "teacher=alphabeta:depth=2,tt=12", *overrides]))


@pytest.mark.parametrize("explore_plies", [0, 50])
def test_a_teacher_s_hop_is_the_policy_target(explore_plies):
    """White's man on 34 can go to 29, where 23x34 takes it (White's last piece: lost),
    or to 30, where nothing takes it: a depth-2 alpha-beta teacher must choose 34-30,
    and every decision's target is that hop alone; past the explore plies it is also
    the hop played."""
    trainer = _taught_trainer(f"explore_plies={explore_plies}")
    position = d.Game.from_fen("W:W34:B23,5", "international", turn_limit=30)
    assert sorted(str(m) for m in position.legal_moves()) == ["34-29", "34-30"]
    for b in (0, 1):
        trainer.state.put(np.array([b]), position.state)
    safe = position.parse_move("34-30").actions[0]
    trainer.play()
    decisions = trainer.pending
    assert len(decisions) == 2
    for _row, _obs, legal, policy, colour, value in decisions:
        assert colour == 0 and value == 0.0
        assert policy.sum() == 1.0 and policy[legal[:len(policy)].tolist().index(safe)] == 1.0
    if explore_plies == 0:  # the teacher's hop was played in both games
        for b in (0, 1):
            assert d.Game.at(trainer.engine, trainer.state, b).fen().startswith("B:W30:")


def test_a_teacher_s_games_teach_each_player_its_result_whatever_td_lambda():
    """With a teacher the decisions carry no search value: the value targets are the
    results (td_lambda 1) even where td_lambda says 0.5 (a winner's decisions +1)."""
    trainer = _taught_trainer("variant=damii", "num_envs=2", "td_lambda=0.5")
    state = trainer.engine.init(2)
    state.put(np.array([0]), _finished("W:W28:B23", "28x17", winner=0).state)
    made = [(0, 0, 0.3), (1, 1, 0.1), (2, 0, -0.2)]  # (id, colour, value) in game 0
    shape = trainer.decisions.shapes["obs"]
    trainer.decisions.add(
        row=np.zeros(3, np.int64), colour=np.array([c for _i, c, _v in made]),
        obs=np.stack([np.full(shape, i, np.float32) for i, _c, _v in made]),
        legal=np.zeros((3, trainer.L), np.int16), policy=np.zeros((3, trainer.L), np.float32),
        n_hops=np.full(3, 2), value=np.array([v for _i, _c, v in made]))
    trainer._finish_games(state, np.array([0]))
    ids = trainer.replay["obs"][:3, 0, 0, 0].astype(int).tolist()
    targets = dict(zip(ids, trainer.replay["z"][:3].tolist(), strict=True))
    assert targets == {0: 1.0, 1: -1.0, 2: 1.0}


def test_a_teacher_is_a_tdleaf_key_and_a_player_spec():
    from damii_training.config import ConfigError, load_config

    with pytest.raises(ConfigError, match="teacher is a TD-leaf key"):
        load_config("configs/damii_quick.yaml", ["teacher=greedy"])
    with pytest.raises(ConfigError, match="teacher: .*alphabetaa"):
        load_config("configs/damii_quick.yaml", [*TINY, "teacher=alphabetaa:depth=2"])
    # greedy plays whole moves: after an explore ply's random first hop of a double
    # capture its planned second hop would not fit
    with pytest.raises(ConfigError, match="'greedy' plays whole moves; a teacher must pick "
                                          "a hop in any position"):
        load_config("configs/damii_quick.yaml", [*TINY, "teacher=greedy"])
    assert load_config("configs/damii_quick.yaml",
                       [*TINY, "teacher=pretrained:damii"]).teacher == "pretrained:damii"


def test_opponent_seats_play_their_own_hops_and_teach_nothing(monkeypatch):
    """``opponents: [greedy]``, ``opponent_play: 1``, two games: greedy plays White in row
    0 (0 // 1 even) and Black in row 1. In W:W34:B23,5 (White to move) greedy is asked
    for row 0's hop alone, and the one decision kept is the teacher's in row 1 (34-30)."""
    trainer = _taught_trainer("explore_plies=0", "opponents=[greedy]", "opponent_play=1.0")
    position = d.Game.from_fen("W:W34:B23,5", "international", turn_limit=30)
    for b in (0, 1):
        trainer.state.put(np.array([b]), position.state)
    asked = []
    seat = trainer.opponents[0]
    original = seat.hops

    def recording(state, rows, rng):
        asked.append(rows.tolist())
        return original(state, rows, rng)

    monkeypatch.setattr(seat, "hops", recording)
    trainer.play()
    assert asked == [[0]]
    (row, _obs, legal, policy, colour, _value), = trainer.pending
    safe = position.parse_move("34-30").actions[0]
    assert (row, colour) == (1, 0) and policy[legal[:len(policy)].tolist().index(safe)] == 1.0
    assert d.Game.at(trainer.engine, trainer.state, 1).fen().startswith("B:W30:")
    assert not d.Game.at(trainer.engine, trainer.state, 0).fen().startswith("W:")  # moved


def test_opponent_seats_only_in_the_last_rows_and_by_colour():
    """Six games, opponent_play 0.5, opponents [greedy, random]: rows 3-5 have an opponent,
    ``row % 2`` says which (row 4 greedy, rows 3 and 5 random) and ``(row // 2) % 2`` its
    colour (row 3: 1, Black; rows 4 and 5: 2, White); rows 0-2 are self-play."""
    from damii_training.config import load_config
    from damii_training.tdleaf import TDLeafTrainer

    trainer = TDLeafTrainer(load_config("configs/damii_quick.yaml", [
        *TINY, "opponents=[greedy, random]", "opponent_play=0.5"]))
    games = np.arange(6)
    state = trainer.engine.init(6)  # White to move everywhere
    assert trainer._opponent_seats(state, games).tolist() == [False] * 4 + [True] * 2
    state.turn[:] = 1  # Black to move everywhere
    assert trainer._opponent_seats(state, games).tolist() == [False] * 3 + [True] + \
        [False] * 2
    assert [g.tolist() for g in trainer._by_opponent(np.array([3, 4, 5]))] == [[4], [3, 5]]


def test_tdleaf_with_opponents_resumes_exactly(tmp_path):
    """Checks bookkeeping (resume), not correctness: greedy's planned hops and the
    random player's draws come back from the checkpoint."""
    from tests.training.test_training import check_resume_is_exact

    check_resume_is_exact(tmp_path, [*TINY, "opponents=[greedy, random]",
                                     "opponent_play=0.5"], 300)


def test_opponents_are_tdleaf_keys_that_come_with_opponent_play():
    from damii_training.config import ConfigError, load_config

    with pytest.raises(ConfigError, match="opponents and opponent_play are TD-leaf keys"):
        load_config("configs/damii_quick.yaml", ["opponents=[random]", "opponent_play=0.5"])
    with pytest.raises(ConfigError, match="opponent_play 0.5 needs opponents"):
        load_config("configs/damii_quick.yaml", [*TINY, "opponent_play=0.5"])
    with pytest.raises(ConfigError, match="play no game: opponent_play x num_envs"):
        load_config("configs/damii_quick.yaml", [*TINY, "opponents=[random]"])
    with pytest.raises(ConfigError, match="opponents: .*randon"):
        load_config("configs/damii_quick.yaml", [*TINY, "opponents=[randon]",
                                                 "opponent_play=0.5"])
    with pytest.raises(ConfigError, match="opponent_play must be from 0 to 1"):
        load_config("configs/damii_quick.yaml", [*TINY, "opponents=[random]",
                                                 "opponent_play=1.5"])

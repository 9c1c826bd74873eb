"""The checkpoint player: loading path, legality, clear errors (a random network)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="neural players need the train extra")

import damii_env as d  # noqa: E402
from damii_agents.checkpoint import CheckpointError, load_checkpoint, save_checkpoint  # noqa: E402
from damii_agents.network import NetworkShape, PolicyValueNet  # noqa: E402
from damii_env.observation import observation_shape  # noqa: E402
from damii_env.player import make_player  # noqa: E402


def random_checkpoint(path, variant="damii", **rule_options):
    rules = d.make_rules(variant, **rule_options)
    c, n, _ = observation_shape(rules)
    torch.manual_seed(0)
    net = PolicyValueNet(NetworkShape(c, n, rules.n_actions, channels=16, blocks=1,
                                      orientation=rules.orientation))
    return save_checkpoint(path, net, variant, rule_options, step=7)


@pytest.mark.parametrize("variant", ["damii", "international", "triestine", "damath"])
def test_random_network_checkpoint_plays_legal_games(tmp_path, variant):
    path = random_checkpoint(tmp_path / "net.pt", variant, turn_limit=30)
    data = load_checkpoint(path)
    assert data["variant"] == variant and data["step"] == 7
    specs = [f"ckpt:{path}", f"ckpt:{path},mode=sample,seed=3"]
    if variant == "damii":
        specs.append(f"ckpt:{path},sims=4")
    for spec in specs:
        agent = make_player(spec, variant)
        game = d.Game(variant, turn_limit=30)
        if "sims" in spec:  # the search is slow in Python: a shorter game shows the path
            game = d.Game(variant, turn_limit=12)
        while not game.is_over():
            game.push(agent.choose(game))
        assert len(game.move_stack) >= 10 or game.outcome().termination in ("no legal move",
                                                                            "turn limit")


def test_checkpoint_errors(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        make_player(f"ckpt:{tmp_path / 'missing.pt'}")
    bad = tmp_path / "corrupt.pt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="cannot be read"):
        make_player(f"ckpt:{bad}")
    good = random_checkpoint(tmp_path / "net.pt")
    cut = tmp_path / "cut.pt"
    cut.write_bytes(good.read_bytes()[:200])
    with pytest.raises(CheckpointError):
        make_player(f"ckpt:{cut}")
    other = tmp_path / "other.pt"
    torch.save({"hello": 1}, other)
    with pytest.raises(CheckpointError, match="not a damii-env checkpoint"):
        load_checkpoint(other)
    agent = make_player(f"ckpt:{good}")
    with pytest.raises(CheckpointError, match="cannot play"):
        agent.choose(d.Game("international"))


def test_save_is_atomic(tmp_path, monkeypatch):
    path = random_checkpoint(tmp_path / "net.pt")
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", boom)
    with pytest.raises(OSError):
        random_checkpoint(path)
    assert path.read_bytes() == before  # the old checkpoint is intact
    assert [p.name for p in tmp_path.iterdir()] == ["net.pt"]  # no temporary left behind


def test_exported_weights_are_small_and_play(tmp_path):
    from damii_agents.checkpoint import export_weights

    rules = d.make_rules("damii")
    c, n, _ = observation_shape(rules)
    net = PolicyValueNet(NetworkShape(c, n, rules.n_actions, channels=8, blocks=1,
                                      orientation=rules.orientation))
    big = save_checkpoint(tmp_path / "last.pt", net, "damii", {}, step=5,
                          trainer={"optimizer": {"blob": torch.zeros(200_000)}})
    small = export_weights(big, tmp_path / "weights.pt", minutes=1.5)
    assert big.stat().st_size - small.stat().st_size > 700_000  # the 800 kB trainer blob is gone
    data = load_checkpoint(small)
    assert "trainer" not in data and data["minutes"] == 1.5 and data["step"] == 5
    agent = make_player(f"ckpt:{small}", "damii")
    assert agent.choose(d.Game("damii")) in d.Game("damii").legal_moves()


def _network_player(tmp_path, variant="damii", depth=2, **rule_options):
    from damii_agents.players.neural import NetworkOptions, load_player

    path = random_checkpoint(tmp_path / f"{variant}.pt", variant, **rule_options)
    return load_player(path, NetworkOptions(depth=depth))


def _negamax(agent, engine, state, remaining):
    """Values of the side to move by plain recursion, one position at a time."""
    capturing = bool(state.capturing[0])
    if state.done[0] or (remaining == 0 and not capturing):
        return float(agent.evaluator.for_engine(engine).values(state)[0])
    return max(_child_values(agent, engine, state, remaining))


def _child_values(agent, engine, state, remaining):
    out = []
    for k in range(int(state.n_legal[0])):
        child = state.copy()
        engine.step(child, np.array([int(state.legal[0, k])]))
        moved = int(child.turn[0] != state.turn[0])
        v = _negamax(agent, engine, child, max(remaining - moved, 0))
        out.append(v if not moved else -v)
    return out


@pytest.mark.parametrize("variant", ["damii", "damath"])
def test_network_minimax_equals_a_plain_recursive_search(tmp_path, variant):
    agent = _network_player(tmp_path, variant)
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(3):
        game = d.Game(variant)
        for ply in range(40):
            moves = game.legal_moves()
            if not moves:
                break
            if ply % 7 == 3:
                state = game.state.copy()
                fast = agent.hop_values(state, game.engine)
                slow = _child_values(agent, game.engine, state, agent.depth)
                assert fast == pytest.approx(slow, abs=1e-5)
                checked += 1
            game.push(moves[int(rng.integers(len(moves)))])
    assert checked >= 10


# Damii shots from tests/players/test_agents.py (checked there by brute force): mate in 2 moves
@pytest.mark.parametrize("fen", ["W:WK1,6,30,35,39:B21,25,37", "W:WK4,7,20,34,50:B19,38",
                                 "W:WK1,20,28:B27,39", "W:W13,32,42:B16"])
def test_network_minimax_finds_forced_wins_even_with_a_random_network(tmp_path, fen):
    from tests.players.test_agents import winning_moves

    agent = _network_player(tmp_path, "damii", depth=4, orientation="standard")
    game = d.Game.from_fen(fen, "damii", orientation="standard")
    # exact results at finished games outrank every value the network can give (tanh < 1)
    assert str(agent.choose(game)) in winning_moves(game, 2)


def test_leaf_values_add_back_the_shaping_potential(tmp_path):
    agent = _network_player(tmp_path, "international")
    game = d.Game.from_fen("B:W28,33,K40:B23", "international")
    evaluator = agent.evaluator.for_engine(game.engine)
    plain = evaluator.values(game.state)[0]
    evaluator.value_potential = {"material": 0.1}
    # Black to move: White is up two men and a king (1 + 1 + 3 - 1 = 4)
    assert evaluator.values(game.state)[0] == pytest.approx(plain - 0.4)


def test_leaf_values_of_several_levels_are_each_levels_own(tmp_path):
    agent = _network_player(tmp_path, "international")
    engine = d.Engine("international")
    evaluator = agent.evaluator.for_engine(engine)
    evaluator.value_potential = {"material": 0.1}
    rng = np.random.default_rng(4)
    a, b = engine.init(4), engine.init(6)
    for state, plies in ((a, 9), (b, 20)):
        for _ in range(plies):
            engine.step(state, engine.sample_actions(state, rng))
    levels = [(a, np.array([1, 3])), (b, np.array([0, 2, 5]))]
    together = evaluator.leaf_values(levels)
    alone = np.concatenate([evaluator.values(s, rows) for s, rows in levels])
    np.testing.assert_allclose(together, alone, rtol=1e-6, atol=1e-6)


def test_depth_and_sims_are_exclusive(tmp_path):
    path = random_checkpoint(tmp_path / "net.pt")
    with pytest.raises(Exception, match="not both"):
        make_player(f"ckpt:{path},sims=4,depth=2")

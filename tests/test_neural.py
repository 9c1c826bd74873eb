"""The checkpoint player: loading path, legality, clear errors (a random network)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="neural players need the train extra")

import damii_env as d  # noqa: E402
from agents import make_agent  # noqa: E402
from damii_env.observation import observation_shape  # noqa: E402
from training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint  # noqa: E402
from training.network import NetworkShape, PolicyValueNet  # noqa: E402


def random_checkpoint(path, variant="damii", **rule_options):
    rules = d.make_rules(variant, **rule_options)
    c, n, _ = observation_shape(rules)
    torch.manual_seed(0)
    net = PolicyValueNet(NetworkShape(c, n, rules.n_actions, channels=16, blocks=1))
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
        agent = make_agent(spec, variant)
        game = d.Game(variant, turn_limit=30)
        if "sims" in spec:  # the search is slow in Python: a shorter game shows the path
            game = d.Game(variant, turn_limit=12)
        while not game.is_over():
            game.push(agent.choose(game))
        assert len(game.move_stack) >= 10 or game.outcome().termination in ("no legal move",
                                                                            "turn limit")


def test_checkpoint_errors(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        make_agent(f"ckpt:{tmp_path / 'missing.pt'}")
    bad = tmp_path / "corrupt.pt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="cannot be read"):
        make_agent(f"ckpt:{bad}")
    good = random_checkpoint(tmp_path / "net.pt")
    cut = tmp_path / "cut.pt"
    cut.write_bytes(good.read_bytes()[:200])
    with pytest.raises(CheckpointError):
        make_agent(f"ckpt:{cut}")
    other = tmp_path / "other.pt"
    torch.save({"hello": 1}, other)
    with pytest.raises(CheckpointError, match="not a damii-env checkpoint"):
        load_checkpoint(other)
    agent = make_agent(f"ckpt:{good}")
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
    from training.checkpoint import export_weights

    rules = d.make_rules("damii")
    c, n, _ = observation_shape(rules)
    net = PolicyValueNet(NetworkShape(c, n, rules.n_actions, channels=8, blocks=1))
    big = save_checkpoint(tmp_path / "last.pt", net, "damii", {}, step=5,
                          trainer={"optimizer": {"blob": torch.zeros(200_000)}})
    small = export_weights(big, tmp_path / "weights.pt", minutes=1.5)
    assert big.stat().st_size - small.stat().st_size > 700_000  # the 800 kB trainer blob is gone
    data = load_checkpoint(small)
    assert "trainer" not in data and data["minutes"] == 1.5 and data["step"] == 5
    agent = make_agent(f"ckpt:{small}", "damii")
    assert agent.choose(d.Game("damii")) in d.Game("damii").legal_moves()

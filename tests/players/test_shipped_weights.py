"""The trained weights shipped in agents/weights/ load, play legal moves and beat random."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch", reason="neural players need the train extra")

import damii_env as d  # noqa: E402
from damii_agents.checkpoint import load_checkpoint  # noqa: E402
from damii_agents.match import game_options, play_game  # noqa: E402
from damii_env.player import make_player  # noqa: E402

WEIGHTS = Path(__file__).resolve().parents[2] / "agents" / "weights"


def test_every_variant_has_shipped_weights():
    assert sorted(p.stem for p in WEIGHTS.glob("*.pt")) == sorted(d.VARIANTS)


@pytest.mark.parametrize("variant", d.VARIANTS)
def test_shipped_weights_beat_random(variant):
    path = WEIGHTS / f"{variant}.pt"
    data = load_checkpoint(path)
    assert data["variant"] == variant and "trainer" not in data
    assert path.stat().st_size < 16 * 2**20
    agent = make_player(f"ckpt:{path}", variant)
    points = 0.0
    for i in range(10):
        opponent = make_player("random", variant, seed=100 + i)
        white, black = (agent, opponent) if i % 2 == 0 else (opponent, agent)
        end = play_game(d.Game(variant, **game_options(variant, **data["rule_options"])),
                        (white, black))
        points += 0.5 if end.winner is None else float(end.winner == i % 2)
    assert points >= 6.5, points  # a clear win of the match (the README has 200-game results)

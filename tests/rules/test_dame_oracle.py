"""International draughts against dame-rs (an engine this project did not write, Rust, a
test dependency only): perft counts from the start and from positions of seeded random
games agree with ``dame.perft`` (complete moves, captures by the majority rule)."""

from __future__ import annotations

import random

import pytest

import damii_env as d

dame = pytest.importorskip("dame", reason="dame-rs (pip install dame-rs, in the dev extra)")


def _positions(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    fens = []
    while len(fens) < count:
        game = d.Game("international")
        for _ in range(rng.randrange(10, 90)):
            if game.is_over():
                break
            game.push(rng.choice(game.legal_moves()))
        if not game.is_over():
            fens.append(game.fen())
    return fens


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5])
def test_perft_from_the_start_agrees_with_dame(depth):
    start = d.Game("international")
    assert start.engine.perft(start.state, depth) == dame.perft(dame.Board(start.fen()), depth)


def test_perft_of_random_positions_agrees_with_dame():
    """Kings, long captures and majority captures come up in these (40 positions)."""
    for fen in _positions(40, seed=5):
        game = d.Game.from_fen(fen, "international")
        for depth in (1, 2, 3):
            assert game.engine.perft(game.state, depth) == \
                dame.perft(dame.Board(fen), depth), (fen, depth)

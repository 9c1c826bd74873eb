"""International draughts against dame-rs (an engine this project did not write, Rust, a
test dependency only). dame-rs names a move by its start, end and captured pieces (the
FMJD convention); this project names it by its path (docs/RULES.md, "Moves are paths": a
capture run round a loop both ways is two moves here, one there). So the legal moves are
compared as (start, end, captured set) at every node of shallow trees, and perft counts
where no such loop can arise (from the start, depths 1-5)."""

from __future__ import annotations

import random

import pytest

import damii_env as d

dame = pytest.importorskip("dame", reason="dame-rs (pip install dame-rs, in the dev extra)")


def positions(count: int, seed: int, plies: tuple[int, int] = (10, 160)) -> list[str]:
    """FENs of positions from seeded random games (kings from about 60 plies on)."""
    rng = random.Random(seed)
    fens = []
    while len(fens) < count:
        game = d.Game("international")
        for _ in range(rng.randrange(*plies)):
            if game.is_over():
                break
            game.push(rng.choice(game.legal_moves()))
        if not game.is_over():
            fens.append(game.fen())
    return fens


def fmjd_moves(game: d.Game) -> set[tuple[int, int, frozenset[int]]]:
    """This project's legal moves by the FMJD identity: start, end, captured set."""
    return {(m.path[0], m.path[-1], frozenset(m.captured)) for m in game.legal_moves()}


def dame_moves(board) -> set[tuple[int, int, frozenset[int]]]:
    return {(m.from_square, m.to_square, frozenset(m.captured or ())) for m in board.legal_moves}


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5])
def test_perft_from_the_start_agrees_with_dame(depth):
    start = d.Game("international")
    assert start.engine.perft(start.state, depth) == dame.perft(dame.Board(start.fen()), depth)


def test_legal_moves_agree_with_dame_two_plies_deep_from_random_positions():
    """Every node of the two-ply trees of 40 positions (kings, long and majority captures
    among them): the same moves by start, end and captured pieces."""
    kings = 0
    for fen in positions(40, seed=5):
        kings += "K" in fen
        game = d.Game.from_fen(fen, "international")
        assert fmjd_moves(game) == dame_moves(dame.Board(fen)), fen
        for move in game.legal_moves():
            game.push(move)
            if not game.is_over():
                assert fmjd_moves(game) == dame_moves(dame.Board(game.fen())), game.fen()
            game.pop()
    assert kings >= 5  # the positions do reach kings


def test_a_loop_run_both_ways_is_two_paths_here_and_one_move_there():
    """The position where perft 7 first differs on a benchmark position: a man takes six
    pieces round a loop, either way round."""
    fen = "W:W16,26,31,32,39,40,41,42,44,45,46,47,48,49,50:B1,2,3,4,5,7,9,10,11,12,13,15,21,22,23"
    game = d.Game.from_fen(fen, "international")
    assert sorted(m.path for m in game.legal_moves()) == [
        (26, 17, 8, 19, 28, 17, 6), (26, 17, 28, 19, 8, 17, 6)]
    assert len(list(dame.Board(fen).legal_moves)) == 1
    assert fmjd_moves(game) == dame_moves(dame.Board(fen))

"""Differential tests against pydraughts (variant ``standard``, International rules).

pydraughts is an independent implementation of International draughts; here it is a
test-only oracle. Both libraries name a move by its path (start and every landing
square), so the legal move sets must be identical.
"""

from __future__ import annotations

import random

import pytest

import damii_env as d
from tests.conftest import random_game_fens, random_placement_fen

draughts = pytest.importorskip("draughts", reason="pydraughts is the test oracle (dev extra)")


def oracle_moves(fen: str) -> set[tuple[int, ...]]:
    board = draughts.Board(variant="standard", fen=fen)
    return {tuple(m.steps_move) for m in board.legal_moves()}


def our_moves(fen: str, variant: str = "international", **options) -> set[tuple[int, ...]]:
    return {m.path for m in d.Game.from_fen(fen, variant, **options).legal_moves()}


def compare(fens: list[str]) -> tuple[int, list[str]]:
    mismatches = [fen for fen in fens if our_moves(fen) != oracle_moves(fen)]
    return len(fens), mismatches


def placement_fens(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [random_placement_fen(rng) for _ in range(n)]


def test_random_placements_match_pydraughts():
    n, bad = compare(placement_fens(1000, seed=2026))
    assert n == 1000
    assert not bad, f"{len(bad)} of {n} positions differ, e.g. {bad[:3]}"


def test_random_game_positions_match_pydraughts(international_game_fens):
    fens = international_game_fens
    assert len(fens) >= 1000, len(fens)
    n, bad = compare(fens)
    assert not bad, f"{len(bad)} of {n} positions differ, e.g. {bad[:3]}"


def test_capture_positions_are_well_represented(international_game_fens):
    """The samples must exercise captures, multi-captures and kings, or they prove little."""
    fens = placement_fens(1000, seed=2026) + international_game_fens
    captures = multi = king_moves = 0
    for fen in fens:
        g = d.Game.from_fen(fen, "international")
        moves = g.legal_moves()
        board = g.board()
        captures += any(m.is_capture for m in moves)
        multi += any(len(m.captured) >= 2 for m in moves)
        king_moves += any(abs(board[m.path[0] - 1]) == 2 for m in moves)
    assert captures >= 300 and multi >= 100 and king_moves >= 300, (captures, multi, king_moves)


def _max_capture_filter(moves: list[d.Move]) -> set[tuple[int, ...]]:
    most = max(len(m.captured) for m in moves)
    return {m.path for m in moves if len(m.captured) == most}


def test_damii_contains_international(international_game_fens):
    """Damii (standard orientation) restricted to its largest captures is International."""
    fens = placement_fens(600, seed=99) + international_game_fens[::2]
    for fen in fens:
        damii = d.Game.from_fen(fen, "damii", orientation="standard").legal_moves()
        intl = our_moves(fen)
        if not damii:
            assert not intl, fen
            continue
        assert _max_capture_filter(damii) == intl, fen
        assert intl <= {m.path for m in damii}, fen


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 5,000 positions through pydraughts' pure-Python generator
def test_many_more_positions_match_pydraughts():
    fens = placement_fens(5000, seed=5) + random_game_fens("international", 40, seed=11)
    n, bad = compare(fens)
    assert not bad, f"{len(bad)} of {n} positions differ, e.g. {bad[:3]}"


# Triestine's capture rules are Italian draughts' rules on a 10x10 board: men capture
# forwards only and never kings, short kings, the four precedence levels, promotion ends
# the move. pydraughts implements Italian draughts (8x8, bottom-left corner light, i.e.
# our `mirrored` orientation, 12 men a side), so the same rule core sized 8x8 must agree.
ITALIAN = dict(board_size=8, men_rows=3, orientation="mirrored")


def test_triestine_rules_on_8x8_match_pydraughts_italian():
    rng = random.Random(3)
    fens = [random_placement_fen(rng, 32, 8, max_pieces=8) for _ in range(700)]
    fens += random_game_fens("triestine", 6, seed=5, **ITALIAN)
    assert len(fens) >= 1000
    bad = []
    for fen in fens:
        ours = {m.path for m in d.Game.from_fen(fen, "triestine", **ITALIAN).legal_moves()}
        theirs = {tuple(m.steps_move)
                  for m in draughts.Board(variant="italian", fen=fen).legal_moves()}
        if ours != theirs:
            bad.append(fen)
    assert not bad, f"{len(bad)} of {len(fens)} positions differ, e.g. {bad[:3]}"


# Damii's free choice: pydraughts' `Game.get_moves()` lists every complete capture
# sequence of International rules before the maximum-capture filter is applied. With
# the standard orientation, that pseudo-legal list is exactly Damii's legal move set.
def oracle_free_choice_moves(fen: str) -> set[tuple[int, ...]]:
    game = draughts.Board(variant="standard", fen=fen)._game
    moves, _captures = game.get_moves()
    return {tuple([m[0][0]] + [step[1] for step in m]) for m in moves}


def test_damii_free_choice_matches_pydraughts_unfiltered_sequences(international_game_fens):
    fens = placement_fens(800, seed=31) + international_game_fens[1::2]
    assert len(fens) >= 1000
    bad = [fen for fen in fens
           if our_moves(fen, "damii", orientation="standard") != oracle_free_choice_moves(fen)]
    assert not bad, f"{len(bad)} of {len(fens)} positions differ, e.g. {bad[:3]}"


def _oracle_damii_perft(board, depth: int) -> int:
    if depth == 0:
        return 1
    moves, _ = board._game.get_moves()
    if depth == 1:
        return len(moves)
    total = 0
    for m in moves:
        child = board._game.copy_fast()
        for step in m:
            child.move(step)
        wrapper = draughts.Board(variant="standard", fen="startpos")
        wrapper._game = child
        total += _oracle_damii_perft(wrapper, depth - 1)
    return total


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 27,132 leaves through pydraughts, a few hundred moves a second
def test_damii_perft_5_matches_pydraughts_free_choice():
    assert _oracle_damii_perft(draughts.Board(variant="standard"), 5) == \
        d.perft(5, "damii", orientation="standard") == d.perft(5, "damii")

"""International draughts' FMJD endgame draws (issue 13), checked against pydraughts.

Three pieces with a king among them against a lone king are drawn after 16 moves by
each side; two pieces or fewer with a king against a lone king after 5. The count runs
from the capture or promotion that last changed the material (or from the set-up).
"""

from __future__ import annotations

import random

import pytest

import damii_env as d
from damii_env.engine import EndReason

draughts = pytest.importorskip("draughts", reason="pydraughts is the test oracle (dev extra)")


def safe_moves(game: d.Game) -> list[d.Move]:
    """Non-capturing moves after which the opponent has no capture (keeps the material)."""
    out = []
    for m in game.legal_moves():
        if m.captured:
            continue
        child = game.copy()
        child.push(m)
        if not any(c.captured for c in child.legal_moves()):
            out.append(m)
    return out


def play_both(fen: str, seed: int, max_plies: int = 80) -> tuple[int, d.Game, object]:
    """Play the same safe random moves in both libraries until either says the game is over."""
    rng = random.Random(seed)
    game = d.Game.from_fen(fen, "international")
    board = draughts.Board(variant="standard", fen=fen)
    for ply in range(max_plies):
        assert game.is_over() == board.is_over(), (fen, seed, ply, game.outcome())
        if game.is_over():
            return ply, game, board
        moves = safe_moves(game) or game.legal_moves()
        move = rng.choice(moves)
        by_path = {tuple(m.steps_move): m for m in board.legal_moves()}
        game.push(move)
        board.push(by_path[move.path])
    raise AssertionError(f"{fen}: no end within {max_plies} plies")


@pytest.mark.parametrize("fen, plies", [
    ("W:WK46,K47,K48:BK5", 32),   # three kings v a lone king: 16 moves each
    ("B:WK46,K49,K50:BK5", 32),
    ("W:WK5:BK46,K47,K48", 32),   # the lone king is White's
    ("W:WK46,K48:BK5", 10),       # two kings v a lone king: 5 moves each
    ("B:WK46:BK5", 10),           # a king v a king
])
def test_endgame_draws_match_pydraughts(fen, plies):
    for seed in range(3):
        ply, game, board = play_both(fen, seed)
        if game.outcome().winner is None:  # the rule, not a lucky capture, ended it
            assert ply == plies
            assert game.outcome().termination == "endgame draw rule"
            assert int(game.state.reason[0]) == EndReason.ENDGAME
            assert board.winner() == 0  # pydraughts: 0 is a draw


def test_endgame_draws_are_international_only():
    assert d.make_rules("international").endgame_three_moves == 16
    assert d.make_rules("international").endgame_two_moves == 5
    for variant in ("damii", "triestine", "damath"):
        r = d.make_rules(variant)
        assert (r.endgame_three_moves, r.endgame_two_moves) == (0, 0)
    # the same two kings v one play on in Damii (standard orientation, same squares)
    game = d.Game.from_fen("W:WK46,K48:BK5", "damii", orientation="standard")
    rng = random.Random(0)
    for _ in range(12):
        if game.is_over():
            break
        game.push(rng.choice(safe_moves(game) or game.legal_moves()))
        assert not game.is_over() or game.outcome().termination != "endgame draw rule"


def test_endgame_draws_can_be_switched_off_and_resized():
    fen = "W:WK47,K49:BK2"
    off = d.Game.from_fen(fen, "international", endgame_two_moves=0)
    short = d.Game.from_fen(fen, "international", endgame_two_moves=1)
    rng = random.Random(0)
    for ply in range(12):
        move = rng.choice(safe_moves(off))
        off.push(move)
        if ply < 2:
            short.push(move)
    assert not off.is_over()
    assert short.is_over() and short.outcome().termination == "endgame draw rule"
    with pytest.raises(d.InvalidOptionError, match="endgame_two_moves"):
        d.make_rules("international", endgame_two_moves=-1)


@pytest.mark.parametrize("fen", ["W:WK46,K47,K48:BK5,15", "W:WK47,K49:BK2,19",
                                 "W:WK46,K47,K48,K49:BK5"])
def test_capture_restarts_the_count_like_pydraughts(fen):
    """Before the capture that makes the material there is no count; both libraries agree
    on every ply (play_both checks), and four pieces v a lone king are never drawn."""
    for seed in range(3):
        play_both(fen, seed, max_plies=120)


def test_a_man_move_does_not_restart_the_count():
    """FMJD counts from the capture or promotion that made the material; pydraughts
    restarts its count at a man move (the one known difference, see docs/RULES.md)."""
    fen = "W:WK46,K47,45:BK5"
    for seed in range(4):
        rng = random.Random(seed)
        game = d.Game.from_fen(fen, "international")
        board = draughts.Board(variant="standard", fen=fen)
        man_moves = 0
        for _ in range(32):
            assert not game.is_over()
            moves = safe_moves(game) or game.legal_moves()
            men = [m for m in moves if game.board()[m.path[0] - 1] == 1]
            move = rng.choice(men if men and man_moves < 2 else
                              [m for m in moves if m not in men] or moves)
            man_moves += move in men
            by_path = {tuple(m.steps_move): m for m in board.legal_moves()}
            game.push(move)
            board.push(by_path[move.path])
            if game.outcome() and game.outcome().winner is not None:
                break
        else:
            assert game.outcome().termination == "endgame draw rule"
            if man_moves:
                assert not board.is_over()

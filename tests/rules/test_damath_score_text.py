"""Issue 45, G11: what the engine writes as a Sci-Damath FEN, it reads back, however
long the exact scores grow."""

from __future__ import annotations

from fractions import Fraction

import pytest

from damii_env import Game
from damii_env.damath import CHIP_SETS, MAX_DIGITS, Exact
from damii_env.errors import InvalidFenError

POLYNOMIAL_GAME = (
    "24-20 12-16 21-18 11-15 20x11 7x14x21 25x18 9-13 18x9 6-11 22-19 11-15 19x12 8x15 "
    "26-22 3-6 23-20 15x24 22-19 10-14 19x10x3 4-7 3x12 16x7 27-22 2-6 9x2x11x4 1-5 4-7 "
    "5-10 7-3 10-14 3-6 14-19 22x15").split()
"""35 legal plies (found by hypothesis) after which White's score has 13 digits."""


def test_the_polynomial_game_of_the_finding_round_trips():
    game = Game("damath", chip_set="polynomial")
    for move in POLYNOMIAL_GAME:
        game.push(move)
    fen = game.fen()
    assert "S-1333299921917/120120," in fen
    again = Game.from_fen(fen, "damath", chip_set="polynomial")
    assert again.fen() == fen and again.scores() == game.scores()


def test_the_largest_score_a_game_can_reach_is_read():
    """A score is a sum of at most 24 jumps' points; the bound of MAX_DIGITS covers the
    largest: 24 jumps each of the largest product, over the product of 24 of the largest
    denominators."""
    top = max(abs(c.coef.a) * 7 ** (c.x_exp + c.y_exp) for c in CHIP_SETS["polynomial"])
    denominator = int(top) ** 24
    numerator = 24 * 2 * int(top) ** 2 * denominator
    assert len(str(numerator)) <= MAX_DIGITS
    score = Exact(Fraction(-numerator, denominator - 1), Fraction(numerator, denominator + 1))
    assert Exact.parse(str(score)) == score


def test_score_text_is_still_bounded():
    with pytest.raises(ValueError, match="not a plain number"):
        Exact.parse("1" * (MAX_DIGITS + 1))
    with pytest.raises(InvalidFenError, match="cannot read the scores"):
        Game.from_fen("W:W21=6x:B12=6x:S" + "9" * (MAX_DIGITS + 1) + ",0", "damath",
                      chip_set="polynomial")

"""The engine against tests/rules/reference_movegen.py on random positions.

The reference is a plain move generator written from the rules text, sharing no code with
the engine (its perft tables are in tests/rules/test_perft.py; Damii's and International's
random-position checks sit in their rule files). Here: Sci-Damath, whose chip values do not
change which moves are legal, so every chip gets a value of its side's set in turn.
"""

from __future__ import annotations

import random

from damii_env import Game, perft
from tests.conftest import random_placement_fen
from tests.rules import reference_movegen as ref

INTEGER_CHIPS = [-9, 6, -1, 4, 0, -3, 10, -7, -11, 8, -5, 2]


def with_chip_values(fen: str) -> str:
    """A plain FEN with a value from the integer chip set on every piece (Damath FEN)."""
    side, white, black = fen.split(":")

    def tagged(body: str) -> str:
        tokens = [t for t in body[1:].split(",") if t]
        return ",".join(f"{t}={INTEGER_CHIPS[i]}" for i, t in enumerate(tokens))

    return f"{side}:W{tagged(white)}:B{tagged(black)}"


def test_damath_engine_agrees_with_the_reference_on_random_positions() -> None:
    rng = random.Random(17)
    captures = 0
    for _ in range(400):
        fen = random_placement_fen(rng, n_squares=32, size=8, max_pieces=8, king_share=0.3)
        expected = ref.move_texts(fen, ref.DAMATH)
        captures += any("x" in m for m in expected)
        ours = {str(m) for m in Game.from_fen(with_chip_values(fen), "damath").legal_moves()}
        assert ours == expected, fen
    assert captures > 100  # the positions exercise the capture rules, not only quiet moves


def test_damath_perft_from_random_positions_agrees_with_the_reference() -> None:
    rng = random.Random(19)
    for _ in range(60):
        fen = random_placement_fen(rng, n_squares=32, size=8, max_pieces=6, king_share=0.3)
        assert perft(3, "damath", fen=with_chip_values(fen)) == ref.perft(3, ref.DAMATH, fen), fen

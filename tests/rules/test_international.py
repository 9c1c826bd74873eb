"""International draughts: the rules of docs/RULES.md on hand-built positions.

International is Damii's rules with the standard orientation and the maximum-capture rule:
only the sequences that capture the most pieces are legal, kings and men counting one each.
Every expected move list below was worked out by hand from the rules text, not copied from
the engine; the comment above each position gives the analysis. Each position is drawn
with ``board()`` (tests/conftest.py) in the standard orientation: dark squares where
row + column is odd, the bottom-left corner dark, White moving up. ``.`` is an empty dark
square, ``w``/``W`` a White man/king, ``b``/``B`` a Black man/king.

Square arithmetic used in the analysis (standard orientation, N = 10): squares 1-5, 11-15,
21-25, 31-35, 41-45 (rows 0, 2, 4, 6, 8) have neighbours up-left s-5, up-right s-4,
down-left s+5, down-right s+6; squares 6-10, 16-20, 26-30, 36-40, 46-50 (rows 1, 3, 5, 7,
9) have up-left s-6, up-right s-5, down-left s+4, down-right s+5 (where the board allows).

Each position is also checked against tests/rules/reference_movegen.py (a plain move
generator written from the rules text, sharing no code with the engine). The published
perft table (tests/rules/test_perft.py) and pydraughts (tests/rules/test_pydraughts_oracle.py)
check the engine's International rules on many more positions.
"""

from __future__ import annotations

import random

import pytest

from damii_env import Game
from tests.conftest import board, random_placement_fen
from tests.rules import reference_movegen as ref


def international(diagram: str, turn: str = "W") -> Game:
    return Game.from_fen(board(diagram, turn), "international")


def damii_standard(diagram: str) -> Game:
    return Game.from_fen(board(diagram), "damii", orientation="standard")


def legal(game: Game) -> set[str]:
    return {str(m) for m in game.legal_moves()}


# --- The majority capture. The man on 33 takes 29 and then 19 (33x24x13: from 24 the man
# on 19 stands up-left with 13 empty behind it; from 13 nothing is adjacent); the man on 31
# takes 27 only (31x22: from 22 no enemy is adjacent). Two pieces beat one: 33x24x13 alone.
# (Damii, free choice, allows 31x22 too.)
MAJORITY = """
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   b   .
      .   .   .   .   .
    .   b   .   b   .
      w   .   w   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
"""

# --- The same for Black, the board turned 180 degrees (square s becomes 51 - s): Black's man
# on 18 takes 22 and then 32 (18x27x38), the man on 20 takes 24 only (20x29). Black moves
# down: 18x27x38 alone.
MAJORITY_BLACK = """
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   b   .   b
      .   w   .   w   .
    .   .   .   .   .
      .   w   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
"""

# --- Pieces are counted, not their worth: the same with a king on 27. The man on 31 would
# take a king, the man on 33 two men; two beat one.
MAJORITY_OVER_A_KING = """
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   b   .
      .   .   .   .   .
    .   B   .   b   .
      w   .   w   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
"""

# --- Equal captures: free choice among them. 31x22 (over 27) and 33x24 (over 29) take one
# piece each and neither can go on (from 22 and 24 no enemy is adjacent): both are legal.
EQUAL_CAPTURES = """
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   b   .   b   .
      w   .   w   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
"""

# --- A flying king and the majority. The king on 50 sees along its up-left diagonal 44
# (empty) and the man on 39; behind it 33, 28, 22, 17, 11 and 6 are empty. Only from 28 is
# there a further jump: up-right lie 23 (empty) and the man on 19, with 14, 10 and 5 empty
# behind. The king must take the most pieces, so it must land on 28 and go on:
# 50x28x14, 50x28x10, 50x28x5. (Damii allows the one-piece landings 33, 22, 17, 11, 6 too.)
KING_MAJORITY = """
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   b   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   b   .
      .   .   .   .   .
    .   .   .   .   W
"""

# --- Kings fly. No capture exists (the Black man on 5 has no square behind it). The king
# on 28 runs over empty squares: up-left 22, 17, 11, 6; up-right 23, 19, 14, 10 (then the
# man on 5); down-left 32 (then its own man on 37); down-right 33, 39, 44, 50. The man on 37
# steps forward only: 31 or 32.
KING_FLIES = """
      .   .   .   .   b
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   W   .   .
      .   .   .   .   .
    .   w   .   .   .
      .   .   .   .   .
    .   .   .   .   .
"""

# --- Men capture backwards. The man on 23 has nothing to take forwards (18 and 19 are
# empty); the Black man on 28 stands down-left of it with 32 empty behind: 23x32 is
# compulsory, so the man on 45 may not make its quiet move 45-40.
MAN_BACKWARD = """
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   w   .   .
    .   .   b   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   w
    .   .   .   .   .
"""

# --- A man crossing the crown row mid-capture stays a man. The man on 13 takes 9 and lands
# on 4, on the crown row; as a man it must jump on (the majority rule wants it anyway),
# backwards over 10 to 15. It ends on 15, not on the crown row: 13x4x15, still a man.
PASSES_CROWN_ROW = """
      .   .   .   .   .
    .   .   .   b   b
      .   .   w   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
"""

# --- Crowned where the move ends. The man on 14 takes 9 and lands on 3, on the crown row.
# As a man it has no jump there (down-left 8 is empty, down-right 9 was just taken); as a
# king it could take 17 at a distance (8 and 12 empty, 21 empty behind), but it is not a
# king until its move ends: 14x3, crowned on 3.
CROWNED_AT_THE_END = """
      .   .   .   .   .
    .   .   .   b   .
      .   .   .   w   .
    .   b   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
"""

CASES = [
    pytest.param(MAJORITY, {"33x24x13"}, id="majority-capture"),
    pytest.param(MAJORITY_OVER_A_KING, {"33x24x13"}, id="majority-counts-pieces-not-kings"),
    pytest.param(EQUAL_CAPTURES, {"31x22", "33x24"}, id="equal-captures-free-choice"),
    pytest.param(KING_MAJORITY, {"50x28x14", "50x28x10", "50x28x5"}, id="king-majority"),
    pytest.param(KING_FLIES, {"28-22", "28-17", "28-11", "28-6", "28-23", "28-19", "28-14",
                              "28-10", "28-32", "28-33", "28-39", "28-44", "28-50",
                              "37-31", "37-32"}, id="king-flies-men-step-forward"),
    pytest.param(MAN_BACKWARD, {"23x32"}, id="man-captures-backwards"),
    pytest.param(PASSES_CROWN_ROW, {"13x4x15"}, id="man-passes-the-crown-row"),
    pytest.param(CROWNED_AT_THE_END, {"14x3"}, id="crowned-where-the-move-ends"),
]

# The same positions under Damii's free choice (standard orientation): what the majority
# rule removes comes back.
DAMII_CASES = [
    pytest.param(MAJORITY, {"33x24x13", "31x22"}, id="majority-capture"),
    pytest.param(KING_MAJORITY, {"50x28x14", "50x28x10", "50x28x5",
                                 "50x33", "50x22", "50x17", "50x11", "50x6"},
                 id="king-majority"),
]


@pytest.mark.parametrize("diagram, expected", CASES)
def test_international_legal_moves(diagram: str, expected: set[str]) -> None:
    assert legal(international(diagram)) == expected


@pytest.mark.parametrize("diagram, expected", DAMII_CASES)
def test_the_same_positions_under_damii_free_choice(diagram, expected) -> None:
    assert legal(damii_standard(diagram)) == expected


@pytest.mark.parametrize("diagram, expected", CASES)
def test_reference_generator_agrees_with_the_hand_analysis(diagram, expected) -> None:
    """The hand analysis above, checked against the independent reference generator."""
    assert ref.move_texts(board(diagram), ref.INTERNATIONAL) == expected


def test_black_takes_the_most_pieces_too() -> None:
    assert legal(international(MAJORITY_BLACK, turn="B")) == {"18x27x38"}
    assert ref.move_texts(board(MAJORITY_BLACK, "B"), ref.INTERNATIONAL) == {"18x27x38"}


def test_a_capture_below_the_majority_is_refused() -> None:
    game = international(MAJORITY)
    with pytest.raises(ValueError):
        game.push("31x22")
    assert legal(game) == {"33x24x13"}


def test_the_man_passing_the_crown_row_ends_as_a_man() -> None:
    game = international(PASSES_CROWN_ROW)
    game.push("13x4x15")
    assert game.fen() == "B:W15:B"


def test_a_man_crowned_at_the_end_of_a_capture() -> None:
    game = international(CROWNED_AT_THE_END)
    game.push("14x3")
    assert game.fen() == "B:WK3:B17"


def test_engine_agrees_with_the_reference_on_random_positions() -> None:
    """International's legal moves on random positions with many kings equal those of the
    independent reference generator."""
    rng = random.Random(13)
    for _ in range(300):
        fen = random_placement_fen(rng, max_pieces=8, king_share=0.4)
        assert legal(Game.from_fen(fen, "international")) == \
            ref.move_texts(fen, ref.INTERNATIONAL), fen

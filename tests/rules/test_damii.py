"""Damii (Ghanaian draughts): the rules of docs/RULES.md on hand-built positions.

Every expected move list below was worked out by hand from the rules text, not copied from
the engine; the comment above each position gives the analysis. Each position is drawn with
``board()`` (tests/conftest.py) in Damii's own, mirrored orientation: dark squares where
row + column is even, so the top-left and bottom-right corners are dark. White moves up.
``.`` is an empty dark square, ``w``/``W`` a White man/king, ``b``/``B`` a Black man/king.

Square numbers (dark squares in reading order, 1-5 on the top row) used in the analysis,
mirrored orientation, N = 10: square ``s`` of row ``r`` and column ``c`` is
``5 r + c // 2 + 1``. Rows 0, 2, 4, 6, 8 (squares 1-5, 11-15, ...) have neighbours up-left
s-6, up-right s-5, down-left s+4, down-right s+5; rows 1, 3, 5, 7, 9 (squares 6-10, 16-20,
...) have up-left s-5, up-right s-4, down-left s+5, down-right s+6 (where the board allows).

Each position is also checked against tests/rules/reference_movegen.py, a plain move
generator written from the same rules text (it shares no code with the engine).

Damii's rules are checked elsewhere too: the free choice against pydraughts' unfiltered
capture sequences on over a thousand positions
(tests/rules/test_pydraughts_oracle.py::test_damii_free_choice_matches_pydraughts_unfiltered_sequences),
Damii beside Triestine on Triestine's positions (tests/rules/test_triestine.py,
``test_contrast_legal_moves`` and the removal tests), and Damii's perft
(tests/rules/test_perft.py).
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from damii_env import Game
from tests.conftest import board, random_placement_fen
from tests.rules import reference_movegen as ref


def damii(diagram: str, **options) -> Game:
    return Game.from_fen(board(diagram, orientation="mirrored"), "damii", **options)


def legal(game: Game) -> set[str]:
    return {str(m) for m in game.legal_moves()}


# --- Free choice among captures. The man on 33 takes 27 and then 17 (33x22x13: from 22
# the man on 17 stands up-right with 13 empty behind it; from 13 nothing is left); the man
# on 35 takes 29 only (35x24: from 24 no enemy is adjacent). Damii has no maximum-capture
# rule: both are legal, the one-piece capture too. (International would allow 33x22x13
# alone.) Capturing is compulsory, so no quiet move is legal.
FREE_CHOICE = """
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   b   .   .   .
    .   .   .   .   .
      .   b   .   b   .
    .   .   w   .   w
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
"""

# --- A flying king's landing squares, free choice. The king on 46 sees along its up-right
# diagonal 42 (empty) and the man on 37; behind 37 lie 33, 28, 24, 19, 15, 10, all empty, so
# it may land on any of them. Only from 28 is there a further jump: up-left from 28 lie 23
# (empty) and the man on 17, with 12, 6 and 1 empty behind it. A king standing where a jump
# exists must jump, so 46x28 alone is not a move; every other landing ends the capture
# (free choice: the one-piece captures are legal beside the two-piece ones).
# Legal: 46x33, 46x24, 46x19, 46x15, 46x10 and 46x28x12, 46x28x6, 46x28x1.
KING_LANDINGS = """
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   b   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   b   .   .   .
    .   .   .   .   .
      W   .   .   .   .
"""

# --- Men capture backwards. The man on 23 has no jump forward (17 and 18 are empty) but the
# Black man on 28 stands down-right of it with 34 empty behind: 23x34 is compulsory, so the
# man on 41 may not make its quiet move 41-36.
MAN_BACKWARD = """
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   w   .   .
      .   .   b   .   .
    .   .   .   .   .
      .   .   .   .   .
    w   .   .   .   .
      .   .   .   .   .
"""

# --- Men take kings. The man on 33 takes the Black king on 28 (landing on 24); the man
# on 41 may not move quietly.
MAN_TAKES_KING = """
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   B   .   .
    .   .   w   .   .
      .   .   .   .   .
    w   .   .   .   .
      .   .   .   .   .
"""

# --- Kings fly, men step forward. No capture exists (the Black man on 1 has no square
# behind it). The king on 28 runs along every diagonal over empty squares: up-left 23, 17,
# 12, 6 (then the man on 1), up-right 24, 19, 15, 10, down-left 33, 37, 42, 46, down-right
# 34 (then its own man on 39). The man on 39 steps forward only: 34 or 35 (not 44, 45).
KING_FLIES = """
    b   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   W   .   .
    .   .   .   .   .
      .   .   .   w   .
    .   .   .   .   .
      .   .   .   .   .
"""

# --- A man crossing the far row mid-capture stays a man. The man on 13 takes 7 (landing on
# 2, on the far row) and, still a man, must jump on: backwards over 6 to 11. It ends on 11,
# not on the far row, so it is not crowned: 13x2x11 is the only move. With the rule option
# `promotion_mid_capture="crowns_and_ends"` it is crowned on 2 and its move ends there.
PASSES_FAR_ROW = """
    .   .   .   .   .
      b   b   .   .   .
    .   .   w   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
"""

# --- Crowned where the move ends, not before. The man on 12 takes 7 and lands on 3, on the
# far row. As a man it has no jump there (down-right 8 is empty, down-left 7 was just
# taken); as a king it could take 19 at a distance (8 and 14 empty, 25 empty behind), but it
# is not a king until its move ends: 12x3 is the only move, and it ends crowned on 3.
CROWNED_AT_THE_END = """
    .   .   .   .   .
      .   b   .   .   .
    .   w   .   .   .
      .   .   .   b   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
"""

# --- Promotion by a quiet move: the man on 7 steps to 2 or 3 on the far row and is crowned.
QUIET_PROMOTION = """
    .   .   .   .   .
      .   w   .   .   .
    .   .   .   .   .
      .   .   .   .   b
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
"""

CASES = [
    pytest.param(FREE_CHOICE, {"33x22x13", "35x24"}, id="free-choice-among-captures"),
    pytest.param(KING_LANDINGS, {"46x33", "46x24", "46x19", "46x15", "46x10",
                                 "46x28x12", "46x28x6", "46x28x1"}, id="king-landing-choice"),
    pytest.param(MAN_BACKWARD, {"23x34"}, id="man-captures-backwards"),
    pytest.param(MAN_TAKES_KING, {"33x24"}, id="man-takes-king"),
    pytest.param(KING_FLIES, {"28-23", "28-17", "28-12", "28-6", "28-24", "28-19", "28-15",
                              "28-10", "28-33", "28-37", "28-42", "28-46", "28-34",
                              "39-34", "39-35"}, id="king-flies-men-step-forward"),
    pytest.param(PASSES_FAR_ROW, {"13x2x11"}, id="man-passes-the-far-row"),
    pytest.param(CROWNED_AT_THE_END, {"12x3"}, id="crowned-where-the-move-ends"),
    pytest.param(QUIET_PROMOTION, {"7-2", "7-3"}, id="quiet-promotion"),
]


@pytest.mark.parametrize("diagram, expected", CASES)
def test_damii_legal_moves(diagram: str, expected: set[str]) -> None:
    assert legal(damii(diagram)) == expected


@pytest.mark.parametrize("diagram, expected", CASES)
def test_reference_generator_agrees_with_the_hand_analysis(diagram, expected) -> None:
    """The hand analysis above, checked against the independent reference generator."""
    assert ref.move_texts(board(diagram, orientation="mirrored"), ref.DAMII) == expected


def test_a_king_standing_where_a_jump_exists_must_jump() -> None:
    game = damii(KING_LANDINGS)
    with pytest.raises(ValueError):
        game.push("46x28")


def test_the_man_passing_the_far_row_ends_as_a_man() -> None:
    game = damii(PASSES_FAR_ROW)
    game.push("13x2x11")
    assert game.fen() == "B:W11:B"


def test_a_man_crowned_at_the_end_of_a_capture() -> None:
    game = damii(CROWNED_AT_THE_END)
    game.push("12x3")
    assert game.fen() == "B:WK3:B19"


@pytest.mark.parametrize("move", ["7-2", "7-3"])
def test_a_quiet_move_to_the_far_row_crowns(move: str) -> None:
    game = damii(QUIET_PROMOTION)
    game.push(move)
    assert game.fen() == f"B:WK{move[2:]}:B20"


# ----------------------------------------------------------------------------------
# Promotion ends the move: the rule option `promotion_mid_capture="crowns_and_ends"`
# (Triestine's rule, off in Damii). A second guard beside
# tests/rules/test_triestine.py::test_crowning_ends_the_move_as_a_rule_option (mutation
# audit of 2026-12-02, finding 2): under Damii's free choice the engine has to stop the
# sequence itself, no precedence filter does it.
# ----------------------------------------------------------------------------------

# The man on 13 takes 7 and reaches 2, on the far row (as in PASSES_FAR_ROW). Under
# crowns_and_ends it is crowned there and its move ends, so the backward jump over 6 is
# not made: 13x2. Under Damii's own rule it jumps on as a man: 13x2x11. The man on 44 has a
# capture of its own, 44x35 over 39 (from 35 nothing is adjacent), legal beside either by
# free choice: so no precedence filter can drop 13x2x11, the engine has to stop the
# sequence itself.
PROMOTION_ENDS = """
    .   .   .   .   .
      b   b   .   .   .
    .   .   w   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   .   .
    .   .   .   .   .
      .   .   .   b   .
    .   .   .   w   .
      .   .   .   .   .
"""


def test_crowning_ends_the_move_under_damii_free_choice() -> None:
    ends = damii(PROMOTION_ENDS, promotion_mid_capture="crowns_and_ends")
    assert legal(ends) == {"13x2", "44x35"}
    assert legal(damii(PROMOTION_ENDS)) == {"13x2x11", "44x35"}
    ends.push("13x2")
    assert ends.fen() == "B:WK2,44:B6,39"


def _crown_row_fens(rng: random.Random, count: int, rules: ref.RefRules) -> list[str]:
    """Random positions, each one where the two promotion rules give different moves
    (chosen by the reference generator alone: White men one to three rows from the crown
    row among Black men)."""
    fens: list[str] = []
    while len(fens) < count:
        squares = rng.sample(range(1, 26), 11)
        white = [s for s in squares[:3] if s > 5] or [16]
        black = squares[3:3 + rng.randint(3, 8)]
        fen = f"W:W{','.join(map(str, white))}:B{','.join(map(str, black))}"
        if ref.move_texts(fen, rules) != ref.move_texts(fen, ref.DAMII):
            fens.append(fen)
    return fens


def test_crowning_ends_the_move_on_random_positions_against_the_reference() -> None:
    """Positions where the two promotion rules differ: the engine's moves under
    ``crowns_and_ends`` and under Damii's own rule equal the reference generator's."""
    crowning = dataclasses.replace(ref.DAMII, crowning_ends=True)
    fens = _crown_row_fens(random.Random(5), 40, crowning)
    for fen in fens:
        ends = Game.from_fen(fen, "damii", promotion_mid_capture="crowns_and_ends")
        assert legal(ends) == ref.move_texts(fen, crowning), fen
        assert legal(Game.from_fen(fen, "damii")) == ref.move_texts(fen, ref.DAMII), fen


def test_engine_agrees_with_the_reference_on_random_positions() -> None:
    """Damii's legal moves on random positions with many kings (both orientations) equal
    those of the independent reference generator."""
    rng = random.Random(11)
    standard = dataclasses.replace(ref.DAMII, dark_parity=1)
    for _ in range(300):
        fen = random_placement_fen(rng, max_pieces=8, king_share=0.4)
        assert legal(Game.from_fen(fen, "damii")) == ref.move_texts(fen, ref.DAMII), fen
        assert legal(Game.from_fen(fen, "damii", orientation="standard")) == \
            ref.move_texts(fen, standard), fen

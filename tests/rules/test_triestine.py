"""Triestine draughts: every rule line of RULES.md on hand-built positions.

Every expected set of legal moves below was worked out by hand from the rules (the
original Triestine rule text and docs/RULES.md), not copied from the engine.
Each position has a diagram: the standard orientation, White moving up; a piece is
written as its colour and kind (``w`` White man, ``W`` White king, ``b`` Black man,
``B`` Black king) followed by its square number, an empty dark square shows its number.

Square arithmetic used in the hand analysis (standard orientation, N = 10):
squares 1-5, 11-15, 21-25, 31-35, 41-45 (rows 0, 2, 4, 6, 8) have neighbours
up-left s-5, up-right s-4, down-left s+5, down-right s+6; squares 6-10, 16-20,
26-30, 36-40, 46-50 (rows 1, 3, 5, 7, 9) have up-left s-6, up-right s-5,
down-left s+4, down-right s+5 (where the board allows).

Every Triestine case is also checked with the colours swapped and the board turned
180 degrees (square s -> 51 - s, Black to move), which must give the same moves
turned the same way.

Note on "captured pieces are removed at once": in Triestine every piece jumps
exactly one square over an adjacent piece, so every landing square of a sequence
is an even number of rows and columns away from the start square while every
jumped square is an odd number away. A moving piece can therefore never land on
(or, moving one square at a time, cross) a square that it emptied earlier in the
same sequence, and a removed piece cannot be jumped again because it is gone:
with short-range pieces immediate and end-of-sequence removal give the same
moves. The difference shows only with a flying king, so the removal rule is tested
below through the engine's ``removal`` option on a flying-king position, against
International/Damii where captured pieces stay until the sequence ends.
"""

from __future__ import annotations

import pytest

from damii_env import Game


def legal(game: Game) -> set[str]:
    return {str(m) for m in game.legal_moves()}


def turn_fen(fen: str) -> str:
    """Swap the colours and turn the board 180 degrees (square s -> 51 - s)."""
    side, white, black = fen.split(":")

    def turned(body: str) -> str:
        out = []
        for tok in body.split(","):
            if not tok:
                continue
            king = tok.startswith("K")
            lo, _, hi = tok.lstrip("K").partition("-")
            for sq in range(int(lo), int(hi or lo) + 1):
                out.append(f"K{51 - sq}" if king else str(51 - sq))
        return ",".join(out)

    return f"{'B' if side == 'W' else 'W'}:W{turned(black[1:])}:B{turned(white[1:])}"


def turn_move(move: str) -> str:
    sep = "x" if "x" in move else "-"
    return sep.join(str(51 - int(s)) for s in move.split(sep))


def triestine(fen: str) -> Game:
    return Game.from_fen(fen, "triestine")


def damii_std(fen: str) -> Game:
    return Game.from_fen(fen, "damii", orientation="standard")


def international(fen: str, **options) -> Game:
    return Game.from_fen(fen, "international", **options)


# ==================================================================================
# Positions. Each comment says what the hand analysis finds.
# ==================================================================================

# --- Level 1: the most pieces. The man on 34 takes 29 and 18 (34x23x12, two pieces);
# the man on 37 takes only 32 (37x28, then 28 has no enemy in front). Two beats one.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17     b18      19      20
#      21      22      23      24      25
#  26      27      28     b29      30
#      31     b32      33     w34      35
#  36     w37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
LEVEL1 = "W:W34,37:B18,29,32"

# --- Level 1 over levels 2 and 3: pieces are counted, not their value. The king on 47
# can take the king on 42 (47x38, one piece, a king, by a king); the man on 34 takes
# two men (34x23x12). Two men beat one king, and the man must move.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17     b18      19      20
#      21      22      23      24      25
#  26      27      28     b29      30
#      31      32      33     w34      35
#  36      37      38      39      40
#      41     B42      43      44      45
#  46     W47      48      49      50
# White to move
LEVEL1_OVER_KING = "W:W34,K47:B18,29,K42"

# --- Level 2: same count (one each), the king must capture. King 46 takes 41 (46x37);
# man 35 takes 30 (35x24). Only 46x37 is legal.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22      23      24      25
#  26      27      28      29     b30
#      31      32      33      34     w35
#  36      37      38      39      40
#     b41      42      43      44      45
# W46      47      48      49      50
# White to move
LEVEL2 = "W:W35,K46:B30,41"

# --- Level 3: two pieces each, both by kings; king 46 takes two men (41, 32:
# 46x37x28), king 50 takes the king on 44 then the man on 34 (50x39x30).
# The most kings captured: 50x39x30.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22      23      24      25
#  26      27      28      29      30
#      31     b32      33     b34      35
#  36      37      38      39      40
#     b41      42      43     B44      45
# W46      47      48      49     W50
# White to move
LEVEL3 = "W:WK46,K50:B32,34,41,K44"

# --- Level 3 before level 4: king 46 takes 41, K32, K23 (46x37x28x19: three pieces,
# two kings, the first king on the 2nd jump); king 15 takes K20, 29, 38
# (15x24x33x42: three pieces, one king, on the 1st jump). More kings wins over an
# earlier king: 46x37x28x19.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14     W15
#  16      17      18      19     B20
#      21      22     B23      24      25
#  26      27      28     b29      30
#      31     B32      33      34      35
#  36      37     b38      39      40
#     b41      42      43      44      45
# W46      47      48      49      50
# White to move
LEVEL3_BEFORE_4 = "W:WK15,K46:BK20,K23,29,K32,38,41"

# --- Level 4 (two kings): both take two pieces, one of them a king. King 46 takes
# K41 first, then 32 (46x37x28); king 50 takes 44 first, then K34 (50x39x30).
# The king captured earliest: 46x37x28.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22      23      24      25
#  26      27      28      29      30
#      31     b32      33     B34      35
#  36      37      38      39      40
#     B41      42      43     b44      45
# W46      47      48      49     W50
# White to move
LEVEL4_TWO_KINGS = "W:WK46,K50:BK41,32,44,K34"

# --- Level 4 on one king's two routes round a ring. King 28 can go round the four
# pieces 23, 13, 12, 22 either way and come back to its start square (the start square
# is empty during its own capture; removed pieces are never jumped twice):
#   28x19x8x17x28 takes 23, 13, 12, 22;   28x17x8x19x28 takes 22, 12, 13, 23.
# Same pieces, same count, one king each: the route meeting the king first wins.
# With the king on 23: the first route (king on jump 1 against jump 4).
#       1       2       3       4       5
#   6       7       8       9      10
#      11     b12     b13      14      15
#  16      17      18      19      20
#      21     b22     B23      24      25
#  26      27     W28      29      30
#      31      32      33      34      35
#  36      37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
LEVEL4_RING_K23 = "W:WK28:B12,13,22,K23"

# With the king on 12 instead: the second route (king on jump 2 against jump 3).
#       1       2       3       4       5
#   6       7       8       9      10
#      11     B12     b13      14      15
#  16      17      18      19      20
#      21     b22     b23      24      25
#  26      27     W28      29      30
#      31      32      33      34      35
#  36      37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
LEVEL4_RING_K12 = "W:WK28:BK12,13,22,23"

# --- Level 5: all men on the ring; both routes tie on every level: free choice.
#       1       2       3       4       5
#   6       7       8       9      10
#      11     b12     b13      14      15
#  16      17      18      19      20
#      21     b22     b23      24      25
#  26      27     W28      29      30
#      31      32      33      34      35
#  36      37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
LEVEL5_RING = "W:WK28:B12,13,22,23"

# --- Level 5: two kings each take one man (46x37, 50x39): free choice.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22      23      24      25
#  26      27      28      29      30
#      31      32      33      34      35
#  36      37      38      39      40
#     b41      42      43     b44      45
# W46      47      48      49     W50
# White to move
LEVEL5_TWO_KINGS = "W:WK46,K50:B41,44"

# --- Level 5: two kings each take a king then a man (46x37x28: K41, 32;
# 50x39x30: K44, 34): equal on levels 1-4, free choice.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22      23      24      25
#  26      27      28      29      30
#      31     b32      33     b34      35
#  36      37      38      39      40
#     B41      42      43     B44      45
# W46      47      48      49     W50
# White to move
LEVEL5_KING_FIRST_BOTH = "W:WK46,K50:B32,34,K41,K44"

# --- A man cannot capture a king: the man on 32 faces the king on 28 with 23 empty
# behind it; no capture exists, so the quiet move 32-27 is legal (32-28 is occupied).
# Damii/International: men take kings, 32x23 is compulsory.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22      23      24      25
#  26      27     B28      29      30
#      31     w32      33      34      35
#  36      37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
WALL = "W:W32:BK28"

# --- ... but a king can: king 33 takes the king on 28 (33x22), compulsory.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22      23      24      25
#  26      27     B28      29      30
#      31     w32     W33      34      35
#  36      37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
WALL_KING_TAKES = "W:W32,K33:BK28"

# --- The wall mid-sequence: man 37 takes 32 (landing on 28); from 28 the only jump
# would be over the king on 23, which a man cannot take, so the move ends: 37x28.
# Damii: 37x28x19, the man takes the king too.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22     B23      24      25
#  26      27      28      29      30
#      31     b32      33      34      35
#  36     w37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
WALL_MID = "W:W37:B32,K23"

# --- Men capture forward only: the men on 32 and 33 are behind the man on 28
# (37 and 39 empty). No capture: the quiet moves 28-22 and 28-23.
# Damii/International: 28x37 and 28x39.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22      23      24      25
#  26      27     w28      29      30
#      31     b32     b33      34      35
#  36      37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
FORWARD_ONLY = "W:W28:B32,33"

# --- ... also mid-sequence: man 38 takes 33 and lands on 29; from 29 the man on 34
# lies behind (40 empty), which a Triestine man cannot take: 38x29.
# Damii: the man goes on backwards, 38x29x40.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22      23      24      25
#  26      27      28      29      30
#      31      32     b33     b34      35
#  36      37     w38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
FORWARD_ONLY_MID = "W:W38:B33,34"

# --- A man zig-zags between its two forward diagonals: 38x29x18 (33, then 23).
# Damii/International also have the backward 38x29x40 (33, then 34), same count.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22     b23      24      25
#  26      27      28      29      30
#      31      32     b33     b34      35
#  36      37     w38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
ZIGZAG = "W:W38:B23,33,34"

# --- Short kings: the king on 28 moves one square in each of the 4 directions.
# Damii: it flies, 17 moves along its four diagonals.
#       1       2     b3        4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22      23      24      25
#  26      27     W28      29      30
#      31      32      33      34      35
#  36      37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
KING_STEP = "W:WK28:B3"

# --- Short kings capture adjacent pieces only: the man on 19 is two squares away
# (23 empty), so no capture; the four one-step moves. Damii: 28x14, 28x10, 28x5.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18     b19      20
#      21      22      23      24      25
#  26      27     W28      29      30
#      31      32      33      34      35
#  36      37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
KING_NO_DISTANT = "W:WK28:B19"

# --- The king captures in all four directions: 28x17 (22), 28x19 (23), 28x37 (32),
# 28x39 (33); one man each, none continues (free choice at level 5).
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21     b22     b23      24      25
#  26      27     W28      29      30
#      31     b32     b33      34      35
#  36      37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
KING_FOUR_WAYS = "W:WK28:B22,23,32,33"

# --- The landing square must be empty and on the board. King 28: over 22 lands on
# 17 (a White man: no), over 23 lands on 19 (a Black man: no), over 32 lands on 37
# (empty: yes). King 20: over 15 would land off the board (no). Only 28x37.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14     b15
#  16     w17      18     b19     W20
#      21     b22     b23      24      25
#  26      27     W28      29      30
#      31     b32      33      34      35
#  36      37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
LANDING_BLOCKED = "W:W17,K20,K28:B15,19,22,23,32"

# --- A man reaching the last row mid-capture is crowned and the move ends: man 24
# takes 19 and 8 (24x13x2) and becomes a king on 2; as a king it could take 7 next
# (2x11), but the move is over (as a man it has no forward jump from the last row).
# Damii: the man jumps on out of the last row, backwards over 7, and stays a man:
# 24x13x2x11.
#       1       2       3       4       5
#   6     b7      b8        9      10
#      11      12      13      14      15
#  16      17      18     b19      20
#      21      22      23     w24      25
#  26      27      28      29      30
#      31      32      33      34      35
#  36      37      38      39      40
#      41      42      43      44     b45
#  46      47      48      49      50
# White to move
PROMOTION_ENDS = "W:W24:B7,8,19,45"

# --- Promotion grants no exemption from level 1: man 13 takes 8 and is crowned on 2
# (one piece, the move ends), man 35 takes 30 and 20 (35x24x15, two pieces).
# Only 35x24x15. Damii/International: 13x2x11 goes on over 7 (two pieces as well).
#       1       2       3       4       5
#   6     b7      b8        9      10
#      11      12     w13      14      15
#  16      17      18      19     b20
#      21      22      23      24      25
#  26      27      28      29     b30
#      31      32      33      34     w35
#  36      37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
PROMOTION_PRECEDENCE = "W:W13,35:B7,8,20,30"

# --- A promoting man counts as a man at level 2: man 13 takes 8 and is crowned
# (13x2), king 46 takes 41 (46x37); one piece each, the king must capture: 46x37.
#       1       2       3       4       5
#   6       7     b8        9      10
#      11      12     w13      14      15
#  16      17      18      19      20
#      21      22      23      24      25
#  26      27      28      29      30
#      31      32      33      34      35
#  36      37      38      39      40
#     b41      42      43      44      45
# W46      47      48      49      50
# White to move
PROMOTION_IS_A_MAN = "W:W13,K46:B8,41"

# --- Capture is compulsory: the man on 28 can be taken by 32 (32x23) or 33 (33x22);
# the quiet moves of the man on 31 (31-26, 31-27) do not exist.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22      23      24      25
#  26      27     b28      29      30
#     w31     w32     w33      34      35
#  36      37      38      39      40
#      41      42      43      44      45
#  46      47      48      49      50
# White to move
COMPULSORY = "W:W31,32,33:B28"


TRIESTINE_CASES = [
    pytest.param(LEVEL1, {"34x23x12"}, id="level1-most-pieces"),
    pytest.param(LEVEL1_OVER_KING, {"34x23x12"}, id="level1-two-men-beat-one-king"),
    pytest.param(LEVEL2, {"46x37"}, id="level2-king-over-man"),
    pytest.param(LEVEL3, {"50x39x30"}, id="level3-most-kings"),
    pytest.param(LEVEL3_BEFORE_4, {"46x37x28x19"}, id="level3-before-level4"),
    pytest.param(LEVEL4_TWO_KINGS, {"46x37x28"}, id="level4-king-earliest-two-kings"),
    pytest.param(LEVEL4_RING_K23, {"28x19x8x17x28"}, id="level4-ring-king-on-23"),
    pytest.param(LEVEL4_RING_K12, {"28x17x8x19x28"}, id="level4-ring-king-on-12"),
    pytest.param(LEVEL5_RING, {"28x19x8x17x28", "28x17x8x19x28"}, id="level5-ring"),
    pytest.param(LEVEL5_TWO_KINGS, {"46x37", "50x39"}, id="level5-two-kings"),
    pytest.param(LEVEL5_KING_FIRST_BOTH, {"46x37x28", "50x39x30"},
                 id="level5-king-first-both"),
    pytest.param(WALL, {"32-27"}, id="man-cannot-take-king"),
    pytest.param(WALL_KING_TAKES, {"33x22"}, id="king-takes-king"),
    pytest.param(WALL_MID, {"37x28"}, id="man-cannot-take-king-mid-sequence"),
    pytest.param(FORWARD_ONLY, {"28-22", "28-23"}, id="men-capture-forward-only"),
    pytest.param(FORWARD_ONLY_MID, {"38x29"}, id="men-forward-only-mid-sequence"),
    pytest.param(ZIGZAG, {"38x29x18"}, id="men-zigzag-forward"),
    pytest.param(KING_STEP, {"28-22", "28-23", "28-32", "28-33"}, id="king-moves-one-square"),
    pytest.param(KING_NO_DISTANT, {"28-22", "28-23", "28-32", "28-33"},
                 id="king-no-distant-capture"),
    pytest.param(KING_FOUR_WAYS, {"28x17", "28x19", "28x37", "28x39"},
                 id="king-captures-four-directions"),
    pytest.param(LANDING_BLOCKED, {"28x37"}, id="landing-square-must-be-free"),
    pytest.param(PROMOTION_ENDS, {"24x13x2"}, id="promotion-ends-capture"),
    pytest.param(PROMOTION_PRECEDENCE, {"35x24x15"}, id="promotion-no-exemption-level1"),
    pytest.param(PROMOTION_IS_A_MAN, {"46x37"}, id="promoting-man-counts-as-man"),
    pytest.param(COMPULSORY, {"32x23", "33x22"}, id="compulsory-capture"),
    pytest.param("W:W31-50:B1-20",
                 {"31-26", "31-27", "32-27", "32-28", "33-28", "33-29", "34-29", "34-30",
                  "35-30"}, id="start-position"),
]


@pytest.mark.parametrize("fen, expected", TRIESTINE_CASES)
def test_triestine_legal_moves(fen: str, expected: set[str]) -> None:
    assert legal(triestine(fen)) == expected


@pytest.mark.parametrize("fen, expected", TRIESTINE_CASES)
def test_triestine_legal_moves_black(fen: str, expected: set[str]) -> None:
    """The same position with the colours swapped and the board turned: Black to move."""
    game = triestine(turn_fen(fen))
    assert game.turn == 1
    assert legal(game) == {turn_move(m) for m in expected}


@pytest.mark.parametrize("fen, move, captured", [
    (LEVEL1, "34x23x12", (29, 18)),
    (LEVEL3, "50x39x30", (44, 34)),
    (LEVEL3_BEFORE_4, "46x37x28x19", (41, 32, 23)),
    (LEVEL4_RING_K23, "28x19x8x17x28", (23, 13, 12, 22)),
    (LEVEL4_RING_K12, "28x17x8x19x28", (22, 12, 13, 23)),
    (PROMOTION_ENDS, "24x13x2", (19, 8)),
    (WALL_MID, "37x28", (32,)),
])
def test_triestine_captured_squares_in_order(fen: str, move: str, captured: tuple) -> None:
    moves = {str(m): m for m in triestine(fen).legal_moves()}
    assert moves[move].captured == captured


def test_promotion_crowns_and_ends_the_move() -> None:
    game = triestine(PROMOTION_ENDS)
    game.push("24x13x2")
    # crowned on 2, 19 and 8 gone, the man on 7 untouched, Black to move
    assert game.fen() == "B:WK2:B7,45"
    # Black's men: 7 moves down to 11 or 12; 45 to 50 (down-right is off the board)
    assert legal(game) == {"7-11", "7-12", "45-50"}
    # the new king moves from the following turn: king 2 (row 0) then has the man on 7
    # down-left of it with 11 empty behind, and takes it
    game.push("45-50")
    assert legal(game) == {"2x11"}


def test_ring_removes_every_captured_piece() -> None:
    game = triestine(LEVEL5_RING)
    game.push("28x17x8x19x28")
    assert game.fen() == "B:WK28:B"
    assert game.is_over() and game.result() == "1-0"


def test_short_capture_sequence_passes_start_square() -> None:
    """The ring ends on its own start square: the path lists 28 twice."""
    moves = triestine(LEVEL5_RING).legal_moves()
    assert all(m.path[0] == m.path[-1] == 28 for m in moves)
    assert sorted(len(m.captured) for m in moves) == [4, 4]


# ==================================================================================
# Contrasts: the same diagrams under Damii (standard orientation, to keep the square
# numbers) and International.
# ==================================================================================

CONTRAST_CASES = [
    # Damii has no precedence at all: free choice among all complete sequences.
    pytest.param(damii_std, LEVEL1, {"34x23x12", "37x28"}, id="damii-free-choice"),
    pytest.param(international, LEVEL1, {"34x23x12"}, id="international-most-pieces"),
    # Flying king: 46 takes 41 and may land anywhere on the open diagonal behind it
    # (37, 32, 28, 23, 19, 14, 10, 5); from 19 the man on 30 has the White man 35
    # behind it; no landing square has a further jump. Plus the man 35x24.
    pytest.param(damii_std, LEVEL2,
                 {"46x37", "46x32", "46x28", "46x23", "46x19", "46x14", "46x10", "46x5",
                  "35x24"}, id="damii-flying-king-no-level2"),
    pytest.param(international, LEVEL2,
                 {"46x37", "46x32", "46x28", "46x23", "46x19", "46x14", "46x10", "46x5",
                  "35x24"}, id="international-no-king-priority"),
    pytest.param(damii_std, WALL, {"32x23"}, id="damii-man-takes-king"),
    pytest.param(international, WALL, {"32x23"}, id="international-man-takes-king"),
    pytest.param(damii_std, WALL_MID, {"37x28x19"}, id="damii-man-takes-king-mid-sequence"),
    pytest.param(damii_std, FORWARD_ONLY, {"28x37", "28x39"}, id="damii-men-capture-backward"),
    pytest.param(damii_std, FORWARD_ONLY_MID, {"38x29x40"},
                 id="damii-men-backward-mid-sequence"),
    pytest.param(damii_std, ZIGZAG, {"38x29x18", "38x29x40"}, id="damii-zigzag-or-back"),
    pytest.param(international, ZIGZAG, {"38x29x18", "38x29x40"},
                 id="international-zigzag-or-back"),
    pytest.param(damii_std, KING_STEP,
                 {"28-22", "28-17", "28-11", "28-6",
                  "28-23", "28-19", "28-14", "28-10", "28-5",
                  "28-32", "28-37", "28-41", "28-46",
                  "28-33", "28-39", "28-44", "28-50"}, id="damii-king-flies"),
    pytest.param(damii_std, KING_NO_DISTANT, {"28x14", "28x10", "28x5"},
                 id="damii-king-captures-at-distance"),
    pytest.param(damii_std, PROMOTION_ENDS, {"24x13x2x11"}, id="damii-man-passes-last-row"),
    pytest.param(damii_std, PROMOTION_PRECEDENCE, {"13x2x11", "35x24x15"},
                 id="damii-promotion-row-passed"),
    pytest.param(international, PROMOTION_PRECEDENCE, {"13x2x11", "35x24x15"},
                 id="international-promotion-row-passed"),
]


@pytest.mark.parametrize("make, fen, expected", CONTRAST_CASES)
def test_contrast_legal_moves(make, fen: str, expected: set[str]) -> None:
    assert legal(make(fen)) == expected


def test_crowning_ends_the_move_as_a_rule_option() -> None:
    """A Triestine man captures forward only, so once on the last row it has no jump left
    as a man: "the move ends there" differs from "jumps on as a man" only where men may
    capture backwards. With that switched on, the crowned man still stops on 2 (it would
    otherwise take 7 backwards, 24x13x2x11); Damii with crowning that ends the move too."""
    assert legal(Game.from_fen(PROMOTION_ENDS, "triestine", men_capture_backward=True)) == \
        {"24x13x2"}
    assert legal(Game.from_fen(PROMOTION_ENDS, "triestine", men_capture_backward=True,
                               promotion_mid_capture="stays_man")) == {"24x13x2x11"}
    assert legal(Game.from_fen(PROMOTION_ENDS, "damii", orientation="standard",
                               promotion_mid_capture="crowns_and_ends")) == {"24x13x2"}


def test_damii_man_passing_last_row_stays_a_man() -> None:
    game = damii_std(PROMOTION_ENDS)
    game.push("24x13x2x11")
    assert game.fen() == "B:W11:B45"


# --- Removal of captured pieces: immediate (Triestine) against end of sequence
# (Damii, International). A flying king on 46 with Black men on 37, 33, 43, 31:
#   46 takes 37 and lands on 32, 28, 23, 19, 14, 10 or 5 (the open diagonal);
#   from 32: takes 43 (38 empty), lands on 49; nothing more (46x32x49, 2 pieces);
#   from 28: takes 33, lands on 39, 44 or 50; only from 39 is there a jump, over 43
#     to 48; from 48 the diagonal up-left runs 42, 37, 31, 26: 37 was captured.
#     End of sequence removal: 37 is still on the board, it cannot be jumped again
#     or passed over, so the sequence ends on 48 (46x28x39x48, 3 pieces).
#     Immediate removal: 37 is gone, the king passes over its square and takes 31,
#     landing on 26 (46x28x39x48x26, 4 pieces).
#   from 23, 19, 14, 10, 5: no jump.
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16      17      18      19      20
#      21      22      23      24      25
#  26      27      28      29      30
#     b31      32     b33      34      35
#  36     b37      38      39      40
#      41      42     b43      44      45
# W46      47      48      49      50
# White to move
REMOVAL = "W:WK46:B31,33,37,43"


def test_removal_end_of_sequence_blocks_the_captured_square() -> None:
    assert legal(international(REMOVAL)) == {"46x28x39x48"}


def test_removal_immediate_frees_the_captured_square() -> None:
    game = international(REMOVAL, removal="immediate")
    assert legal(game) == {"46x28x39x48x26"}
    (move,) = game.legal_moves()
    assert move.captured == (37, 33, 43, 31)


def test_removal_damii_free_choice_of_complete_sequences() -> None:
    assert legal(damii_std(REMOVAL)) == {
        "46x32x49", "46x28x39x48", "46x28x44", "46x28x50",
        "46x23", "46x19", "46x14", "46x10", "46x5",
    }


def test_removal_triestine_short_king_cannot_reach() -> None:
    # Short king on 46: 41 is empty, so no capture; its only move is 46-41.
    assert legal(triestine(REMOVAL)) == {"46-41"}

"""Sci-Damath (the ``damath`` preset): the worked checks of docs/DAMATH.md.

Every expected value below is worked out by hand from docs/DAMATH.md. Squares are the PDN
numbers 1..32 in reading order from the top-left (RULES.md, ``mirrored``: r + c even);
Damath names a square (x, y) = (c, 7 - r), so square n sits at
r = (n - 1) // 4, c = 2 * ((n - 1) % 4) + (r % 2), and:

    r (y)    squares and operations, left to right
    0 (7)     1 x   2 /   3 -   4 +
    1 (6)     5 /   6 x   7 +   8 -
    2 (5)     9 -  10 +  11 x  12 /
    3 (4)    13 +  14 -  15 /  16 x
    4 (3)    17 x  18 /  19 -  20 +
    5 (2)    21 /  22 x  23 +  24 -
    6 (1)    25 -  26 +  27 x  28 /
    7 (0)    29 +  30 -  31 /  32 x

White (the first chip set) starts on squares 21-32 and moves up (towards square 1);
Black starts on 1-12 and moves down. White chips promote on 1-4, Black chips on 29-32.

Diagrams: ``w``/``b`` a White/Black chip and ``W``/``B`` a dama, followed by the chip's
value; an empty playable square shows its number and operation; y on the left, x below.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from damii_env import Engine, Game, InvalidFenError, compiled, damath
from damii_env.damath import CHIP_SETS, Exact, jump_score, operation_of
from tests.conftest import replay_batched_games

F = Fraction


def X(a: int | Fraction | str = 0, b: int | Fraction = 0) -> Exact:
    """An exact number a + b*sqrt(2) (a may be a fraction written as text)."""
    return Exact(Fraction(a), Fraction(b))


def paths(game: Game) -> set[str]:
    return {str(m) for m in game.legal_moves()}


def only_move(game: Game):
    moves = game.legal_moves()
    assert len(moves) == 1, [str(m) for m in moves]
    return moves[0]


def engine_scores(game: Game) -> list[float]:
    return [float(v) for v in game.state.scores[0]]


# ---------------------------------------------------------------------------------
# The board: operations and chips
# ---------------------------------------------------------------------------------

# DAMATH.md, playable squares only, left to right; rows 3..0 repeat rows 7..4.
_GRID_BY_Y = {7: "x/-+", 6: "/x+-", 5: "-+x/", 4: "+-/x"}


def test_operation_grid_matches_damath_md() -> None:
    seen: dict[str, int] = {}
    for r in range(8):
        y = 7 - r
        row = _GRID_BY_Y[y if y >= 4 else y + 4]
        cols = [c for c in range(8) if (r + c) % 2 == 0]  # x + y odd <=> r + c even
        assert [operation_of(r, c) for c in cols] == list(row), f"row y={y}"
        for c in cols:
            seen[operation_of(r, c)] = seen.get(operation_of(r, c), 0) + 1
            # the same seen from both sides
            assert operation_of(7 - r, 7 - c) == operation_of(r, c)
    assert seen == {"x": 8, "/": 8, "-": 8, "+": 8}


def test_start_position_integer_set() -> None:
    # v[0..11] on (1,2) (3,2) (5,2) (7,2) / (0,1) (2,1) (4,1) (6,1) / (1,0) (3,0) (5,0) (7,0)
    # = squares 21..32; Black's twin of (c, r) on (7-c, 7-r) = square 33 - n.
    g = Game("damath")
    assert g.fen() == (
        "W:W21=-9,22=6,23=-1,24=4,25=0,26=-3,27=10,28=-7,29=-11,30=8,31=-5,32=2"
        ":B1=2,2=-5,3=8,4=-11,5=-7,6=10,7=-3,8=0,9=4,10=-1,11=6,12=-9:S0,0"
    )
    assert g.turn == 0
    assert g.scores() == (X(0), X(0))
    # -9 + 6 - 1 + 4 + 0 - 3 + 10 - 7 - 11 + 8 - 5 + 2 = -6 a side
    assert g.totals() == (X(-6), X(-6))
    assert not g.is_over()


def test_start_totals_radical_are_exact() -> None:
    # -9√2 - 2√2 + 12√2 + 64√2 - 98√2 - 75√2 + 144√2 + 64√2 - 363√2 - 324√2 + 100√2
    # + 288√2 = -199√2 a side
    g = Game("damath", chip_set="radical")
    assert g.totals() == (X(0, -199), X(0, -199))
    assert g.fen().startswith("W:W21=-9√2,22=-√8,23=4√18,24=16√32,25=-49√8,")


def test_start_chips_in_the_engine() -> None:
    eng = Engine("damath")
    state = eng.init(2)
    chips = eng.absolute_chips(state)
    expect = np.full(32, -1)
    expect[20:32] = np.arange(12)         # White's v[0..11] on squares 21..32
    expect[0:12] = 12 + np.arange(12)[::-1]  # Black's twin of square n on 33 - n
    assert (chips == expect).all()
    assert (state.scores == 0).all()


# ---------------------------------------------------------------------------------
# Moves
# ---------------------------------------------------------------------------------

OPENING = {"21-17", "21-18", "22-18", "22-19", "23-19", "23-20", "24-20"}


def test_opening_has_seven_moves_from_damath_row_2() -> None:
    g = Game("damath")
    moves = g.legal_moves()
    assert len(moves) == 7
    assert {str(m) for m in moves} == OPENING
    assert all(21 <= m.path[0] <= 24 and not m.is_capture for m in moves)
    assert all(m.score == 0 for m in moves)


def test_opening_has_seven_moves_in_the_engine() -> None:
    eng = Engine("damath")
    state = eng.init(1)
    acts = eng.legal_actions(state, 0)
    hops = set()
    for a in acts:
        s, d, k = eng.geometry.decode(int(a))
        hops.add(f"{s + 1}-{int(eng.ray[s, d, k - 1]) + 1}")
    assert hops == OPENING and len(acts) == 7


def test_capture_suppresses_quiet_moves() -> None:
    # 7 |  b2          2/          3-          4+        |
    # 6 |        5/          6x          7+          8-  |
    # 5 |  9-         10+         11x         12/        |
    # 4 |       13+         14-         15/         16x  |
    # 3 | 17x         b10         19-         20+        |
    # 2 |       21/          w6         23+          w4  |
    # 1 | 25-         26+         27x         28/        |
    # 0 |       29+         30-         31/         32x  |
    #       0     1     2     3     4     5     6     7
    # 22x13 (over 18) is the only move although 22 and 24 have quiet moves;
    # lands on 13 '+': 6 + 10 = 16.
    g = Game.from_fen("W:W22=6,24=4:B1=2,18=10", "damath", chip_set="counting")
    m = only_move(g)
    assert m.path == (22, 13) and m.captured == (18,)
    assert m.score == 16
    g.push(m)
    assert g.scores() == (X(16), X(0))
    assert engine_scores(g)[:2] == [16.0, 0.0]
    assert g.fen() == "B:W13=6,24=4:B1=2:S16,0"


def test_most_chips_required() -> None:
    # 7 |  1x          2/          3-          4+        |
    # 6 |        5/          6x          7+          8-  |
    # 5 |  9-         10+         11x         12/        |
    # 4 |       13+         14-         b-1         16x  |
    # 3 | 17x         18/         19-         20+        |
    # 2 |       21/         b-9         23+         24-  |
    # 1 | 25-          w6         27x         b10        |
    # 0 |       29+         30-         31/          w4  |
    #       0     1     2     3     4     5     6     7
    # 26x19x12 takes 22 and 15; 32x23 would take only 28 (and would score more:
    # 4 + 10 = 14 on '+'), so it is illegal. Chain: 19 '-': 6 - (-9) = 15;
    # 12 '/': 6 / (-1) = -6; total 9.
    g = Game.from_fen("W:W26=6,32=4:B15=-1,22=-9,28=10", "damath")
    m = only_move(g)
    assert m.path == (26, 19, 12) and m.captured == (22, 15)
    assert m.score == 9
    g.push(m)
    assert g.scores() == (X(9), X(0))
    assert engine_scores(g)[0] == pytest.approx(9.0)


def test_most_chips_beats_a_dama() -> None:
    # 7 |  1x          2/          3-          4+        |
    # 6 |        5/          6x          7+          8-  |
    # 5 |  9-         10+         11x         12/        |
    # 4 |        b2         14-         15/         16x  |
    # 3 | 17x         18/          w1         20+        |
    # 2 |        b4         22x         23+         24-  |
    # 1 |  w7         26+         27x          b9        |
    # 0 |       29+         30-         31/         W12  |
    #       0     1     2     3     4     5     6     7
    # The chip's 25x18x9 takes two; the dama's 32x23 (stopped by its own chip on 19)
    # takes one, so the dama must not move. 18 '/': 7 / 4; 9 '-': 7 - 2 = 5; total 27/4.
    g = Game.from_fen("W:W19=1,25=7,K32=12:B13=2,21=4,28=9", "damath", chip_set="counting")
    m = only_move(g)
    assert m.path == (25, 18, 9) and m.captured == (21, 13)
    assert m.score == X("27/4")
    g.push(m)
    assert g.scores()[0] == X("27/4")
    assert engine_scores(g)[0] == pytest.approx(6.75)
    assert g.fen() == "B:W9=7,19=1,K32=12:B28=9:S27/4,0"


def test_dama_capture_beats_chip_capture_of_equal_count() -> None:
    # 7 |  1x          2/          3-          4+        |
    # 6 |        5/          6x          7+          8-  |
    # 5 |  9-         10+         11x         12/        |
    # 4 |       13+         14-         15/         16x  |
    # 3 | 17x         18/          b2         20+        |
    # 2 |       b10         22x         23+         24-  |
    # 1 |  w3         26+         27x         28/        |
    # 0 |        W7         30-         31/         32x  |
    #       0     1     2     3     4     5     6     7
    # Both the chip (25x18 over 21) and the dama (29 over 19) take one chip: the dama's
    # captures are required, one move per landing square 15, 12, 8.
    # Dama takes chip x2: 15 '/': 2 * 7/2 = 7; 12 '/': 7; 8 '-': 2 * (7 - 2) = 10.
    g = Game.from_fen("W:W25=3,K29=7:B19=2,21=10", "damath", chip_set="counting")
    got = {str(m): m.score for m in g.legal_moves()}
    assert got == {"29x15": X(7), "29x12": X(7), "29x8": X(10)}
    assert all(m.captured == (19,) for m in g.legal_moves())


def test_flying_dama_scores_each_landing_square() -> None:
    # 7 |  1x          2/          3-          b1        |
    # 6 |        5/          6x          7+          8-  |
    # 5 |  9-         10+         11x         12/        |
    # 4 |       13+         14-         15/         16x  |
    # 3 | 17x         18/         19-         20+        |
    # 2 |       21/         22x          b2         24-  |
    # 1 | 25-         26+         27x         28/        |
    # 0 |       29+         30-         31/          W7  |
    #       0     1     2     3     4     5     6     7
    # The dama takes 23 and may land on 19, 14, 10, 5 or 1 (never on 28, before the chip).
    # Dama takes chip: x2. 19 '-' 2*(7-2)=10; 14 '-' 10; 10 '+' 2*(7+2)=18;
    # 5 '/' 2*(7/2)=7; 1 'x' 2*(7*2)=28. (Black's chip on 4 has no square behind it.)
    g = Game.from_fen("W:WK32=7:B4=1,23=2", "damath", chip_set="counting")
    got = {m.path: m.score for m in g.legal_moves()}
    assert got == {(32, 19): X(10), (32, 14): X(10), (32, 10): X(18), (32, 5): X(7),
                   (32, 1): X(28)}
    assert all(m.captured == (23,) for m in g.legal_moves())
    g.push("32x1")
    assert g.scores() == (X(28), X(0))
    assert engine_scores(g)[:2] == [28.0, 0.0]
    assert g.fen() == "B:WK1=7:B4=1:S28,0"


@pytest.mark.parametrize("fen, expected", [
    ("W:W11=3:B7=5", 8),      # chip takes chip: 3 + 5
    ("W:WK11=3:B7=5", 16),    # dama takes chip: x2
    ("W:W11=3:BK7=5", 16),    # chip takes dama: x2
    ("W:WK11=3:BK7=5", 32),   # dama takes dama: x4
])
def test_dama_multipliers(fen: str, expected: int) -> None:
    # 7 |  1x          2/          3-          4+        |
    # 6 |        5/          6x          B5          8-  |
    # 5 |  9-         10+          W3         12/        |
    # 4 |       13+         14-         15/         16x  |
    # 3 | 17x         18/         19-         20+        |
    # 2 |       21/         22x         23+         24-  |
    # 1 | 25-         26+         27x         28/        |
    # 0 |       29+         30-         31/         32x  |
    #       0     1     2     3     4     5     6     7
    # 11x4 over 7, landing on 4 '+' (the edge: a dama has no other landing square).
    g = Game.from_fen(fen, "damath", chip_set="counting")
    m = only_move(g)
    assert m.path == (11, 4) and m.captured == (7,)
    assert m.score == expected
    g.push(m)
    assert g.scores() == (X(expected), X(0))
    assert engine_scores(g)[0] == expected
    assert g.board()[3] == 2  # ends on the far row: a dama (or still one)


def test_division_by_zero_scores_zero() -> None:
    # 7 |  b9          2/          3-          4+        |
    # 6 |        5/          6x          7+          8-  |
    # 5 |  9-         10+         11x         12/        |
    # 4 |       13+         14-         15/         16x  |
    # 3 | 17x         18/         19-         20+        |
    # 2 |       21/          b0         23+         24-  |
    # 1 | 25-         26+          w7         28/        |
    # 0 |       29+         30-         31/         32x  |
    #       0     1     2     3     4     5     6     7
    # 27x18 over 22, landing on 18 '/': 7 / 0 scores 0.
    g = Game.from_fen("W:W27=7:B1=9,22=0", "damath", chip_set="whole")
    m = only_move(g)
    assert m.path == (27, 18) and m.captured == (22,)
    assert m.score == 0
    g.push(m)
    assert g.scores() == (X(0), X(0))
    assert engine_scores(g)[:2] == [0.0, 0.0]
    assert jump_score("/", X(7), X(0), 4) == 0
    assert jump_score("/", X(0), X(7), 1) == 0


@pytest.mark.parametrize("fen, move, captured, score", [
    # 7 |  b1          2/          3-          4+        |
    # 6 |        5/          6x          7+          8-  |
    # 5 |  9-         10+         11x         12/        |
    # 4 |        w4         14-         15/         16x  |
    # 3 | 17x          b5         19-         20+        |
    # 2 |       21/         22x         23+         24-  |
    # 1 | 25-         26+         27x         28/        |
    # 0 |       29+         30-         31/         32x  |
    #       0     1     2     3     4     5     6     7
    # White's chip jumps down over 18 to 22 'x': 4 * 5 = 20.
    ("W:W13=4:B1=1,18=5", (13, 22), (18,), (X(20), X(0))),
    # 7 |  1x          2/          3-          4+        |
    # 6 |        5/          6x          7+          8-  |
    # 5 |  9-         10+         11x         12/        |
    # 4 |       13+          w5         15/         16x  |
    # 3 | 17x         18/          b4         20+        |
    # 2 |       21/         22x         23+         24-  |
    # 1 | 25-         26+         27x         28/        |
    # 0 |       29+         30-         31/          w1  |
    #       0     1     2     3     4     5     6     7
    # Black's chip jumps up over 14 to 10 '+': 4 + 5 = 9 for Black.
    ("B:W14=5,32=1:B19=4", (19, 10), (14,), (X(0), X(9))),
])
def test_chip_captures_backwards(fen, move, captured, score) -> None:
    g = Game.from_fen(fen, "damath", chip_set="counting")
    m = only_move(g)
    assert m.path == move and m.captured == captured
    g.push(m)
    assert g.scores() == score
    assert engine_scores(g)[:2] == [float(s) for s in score]


def test_passing_the_far_row_mid_capture_does_not_promote() -> None:
    # 7 |  1x          2/          3-          4+        |
    # 6 |        5/          b2          b5          8-  |
    # 5 |  9-         w10         11x         12/        |
    # 4 |       13+         14-         15/         16x  |
    # 3 | 17x         18/         19-         20+        |
    # 2 |       21/         22x         23+         24-  |
    # 1 |  b1         26+         27x         28/        |
    # 0 |       29+         30-         31/         32x  |
    #       0     1     2     3     4     5     6     7
    # 10x3x12: the chip reaches 3 on the far row and must jump on over 7 as a chip (short
    # jump: a dama could also land on 16); it ends on 12 still a chip.
    # 3 '-': 10 - 2 = 8; 12 '/': 10 / 5 = 2; total 10.
    g = Game.from_fen("W:W10=10:B6=2,7=5,25=1", "damath", chip_set="counting")
    m = only_move(g)
    assert m.path == (10, 3, 12) and m.captured == (6, 7)
    assert m.score == 10
    g.push(m)
    assert g.board()[11] == 1
    assert g.fen() == "B:W12=10:B25=1:S10,0"
    assert engine_scores(g)[0] == 10.0


def test_ending_on_the_far_row_promotes() -> None:
    # 7 |  1x          2/          3-          4+        |
    # 6 |        5/          b2          7+          8-  |
    # 5 |  9-         w10         11x         12/        |
    # 4 |       13+         14-         15/         16x  |
    # 3 | 17x         18/         19-         20+        |
    # 2 |       21/         22x         23+         24-  |
    # 1 |  b1         26+         27x         28/        |
    # 0 |       29+         30-         31/         32x  |
    #       0     1     2     3     4     5     6     7
    # 10x3 ends on the far row: a dama. 3 '-': 10 - 2 = 8.
    g = Game.from_fen("W:W10=10:B6=2,25=1", "damath", chip_set="counting")
    m = only_move(g)
    assert m.path == (10, 3) and m.score == 8
    g.push(m)
    assert g.fen() == "B:WK3=10:B25=1:S8,0"


def test_radical_example() -> None:
    # 7 |b-9√2         2/          3-          4+        |
    # 6 |        5/          6x          7+          8-  |
    # 5 |  9-         10+         11x         12/        |
    # 4 |       13+         14-         15/         16x  |
    # 3 | 17x         18/         19-         20+        |
    # 2 |       21/         22x         23+         24-  |
    # 1 | 25-        b4√18        27x         28/        |
    # 0 |       w-√8        30-         31/         32x  |
    #       0     1     2     3     4     5     6     7
    # 29x22 over 26, landing on 22 'x': -√8 * 4√18 = -2√2 * 12√2 = -48 exactly.
    fen = "W:W29=-√8:B1=-9√2,26=4√18"
    g = Game.from_fen(fen, "damath", chip_set="radical")
    m = only_move(g)
    assert m.path == (29, 22) and m.captured == (26,)
    assert m.score == X(-48) and m.score.b == 0
    g.push(m)
    assert g.scores() == (X(-48), X(0))
    assert engine_scores(g)[0] == pytest.approx(-48.0, rel=1e-12)
    assert g.fen() == "B:W22=-√8:B1=-9√2:S-48,0"
    assert "scores: White -48 (-48.00), Black 0 (0.00)" in str(g)
    assert g.pop() == m
    assert g.fen() == fen + ":S0,0"
    assert g.scores() == (X(0), X(0))


def test_polynomial_example() -> None:
    # 7 |  1x          2/          3-          4+        |
    # 6 |        5/          6x          7+          8-  |
    # 5 |  9-         10+         11x         12/        |
    # 4 |       13+         b6x         15/         16x  |
    # 3 | 17x         18/         w10y        20+        |
    # 2 |       21/         22x         23+         24-  |
    # 1 | 25-         26+         27x         28/        |
    # 0 |       29+         30-         31/        w-3x²y|
    #       0     1     2     3     4     5     6     7
    # Black's 6x jumps 10y (over 19) to 23 = (x, y) = (5, 2), a '+' square:
    # 6*5 + 10*2 = 50. Totals evaluate each chip on its own square:
    # before: White 10y on (4,3) = 30, -3x²y on (7,0) = 0; Black 6x on (3,4) = 18.
    # after: Black 50 + 6x on (5,2) = 30 -> 80; White 0.
    g = Game.from_fen("B:W19=10y,32=-3x²y:B14=6x", "damath", chip_set="polynomial")
    assert g.totals() == (X(30), X(18))
    m = only_move(g)
    assert m.path == (14, 23) and m.captured == (19,)
    assert m.score == 50
    g.push(m)
    assert g.scores() == (X(0), X(50))
    assert engine_scores(g)[:2] == [0.0, 50.0]
    assert g.totals() == (X(0), X(80))
    assert g.fen() == "W:W32=-3x²y:B23=6x:S0,50"


@pytest.mark.parametrize("chip_set", sorted(damath.CHIP_SETS))
def test_engine_chip_values_equal_the_exact_ones(chip_set: str) -> None:
    """The compiled chip value (powers as products) equals the exact value of every chip
    of every set on every (x, y), to the float's rounding of the exact number."""
    table = damath.chip_table(chip_set)
    for c, chip in enumerate(damath.chips_of(chip_set)):
        for x in range(8):
            for y in range(8):
                got = compiled.chip_value(table, c, np.int16(x), np.int16(y))
                assert got == pytest.approx(float(chip.value(x, y)), rel=1e-12, abs=1e-12), \
                    (chip.label, x, y)


# ---------------------------------------------------------------------------------
# Totals and the end of the game
# ---------------------------------------------------------------------------------


def test_totals_add_remaining_chips_damas_doubled() -> None:
    # 7 |  1x          2/          3-          4+        |
    # 6 |        5/          6x          7+          8-  |
    # 5 |  b4         10+         11x         12/        |
    # 4 |       13+          W5         15/         16x  |
    # 3 |  B2         18/         19-         20+        |
    # 2 |       21/          w3         23+         24-  |
    # 1 | 25-         26+         27x         28/        |
    # 0 |       29+         30-         31/         32x  |
    #       0     1     2     3     4     5     6     7
    # White 2 + 2*5 + 3 = 15; Black 1 + 4 + 2*2 = 9.
    g = Game.from_fen("W:WK14=5,22=3:B9=4,K17=2:S2,1", "damath", chip_set="counting")
    assert g.scores() == (X(2), X(1))
    assert g.totals() == (X(15), X(9))


@pytest.mark.parametrize("fen, lower_wins, totals, result", [
    # 7 |  1x          2/          3-          4+        |
    # 6 |        5/          6x          7+          8-  |
    # 5 |  9-         10+         11x         12/        |
    # 4 |       13+         14-         15/         16x  |
    # 3 | 17x         18/         19-         20+        |
    # 2 |       21/         22x         23+         24-  |
    # 1 | b12         26+         27x         28/        |
    # 0 |        w1         30-         31/         32x  |
    #       0     1     2     3     4     5     6     7
    # Black to move is cornered (29 is taken, no square behind it): the totals decide.
    ("B:W29=1:B25=12", False, (1, 12), "0-1"),        # the blocked player wins
    ("B:W29=1:B25=12", True, (1, 12), "1-0"),         # lower total wins
    ("B:WK29=1:B25=12:S20,0", False, (22, 12), "1-0"),
    ("B:W29=1:B25=12:S11,0", False, (12, 12), "1/2-1/2"),
    ("B:W29=1:B25=12:S23/2,1/2", False, ("25/2", "25/2"), "1/2-1/2"),
    ("B:W29=1:B25=12:S23/2,1/2", True, ("25/2", "25/2"), "1/2-1/2"),
    # 7 |  1x          2/          3-          b1        |
    # 6 |        5/          6x          7+         w12  |
    # 5 |  9-         10+         11x         12/        |
    # 4 |       13+         14-         15/         16x  |
    # 3 | 17x         18/         19-         20+        |
    # 2 |       21/         22x         23+         24-  |
    # 1 | 25-         26+         27x         28/        |
    # 0 |       29+         30-         31/         32x  |
    #       0     1     2     3     4     5     6     7
    # White's chip on 8 is cornered by Black's chip on 4: White still wins on totals.
    ("W:W8=12:B4=1", False, (12, 1), "1-0"),
    ("W:W8=12:B4=1", True, (12, 1), "0-1"),
])
def test_blocked_player_totals_decide(fen, lower_wins, totals, result) -> None:
    g = Game.from_fen(fen, "damath", chip_set="counting", lower_wins=lower_wins)
    assert g.is_over()
    assert g.legal_moves() == []
    assert g.outcome().termination == "no legal move"
    assert not g.outcome().truncated
    assert g.result() == result
    expect = tuple(X(t) for t in totals)
    assert g.totals() == expect
    assert engine_scores(g)[2:] == pytest.approx([float(t) for t in expect])


@pytest.mark.parametrize("fen, lower_wins, result", [
    ("W:W27=3:B23=5:S0,100", False, "0-1"),   # 11 against 100: Black wins without a chip
    ("W:W27=3:B23=5:S0,100", True, "1-0"),
    ("W:W27=3:B23=5", False, "1-0"),          # 11 against 0
    ("W:W27=3:B23=5:S0,11", False, "1/2-1/2"),
])
def test_no_chips_left_totals_decide(fen, lower_wins, result) -> None:
    # 7 |  1x          2/          3-          4+        |
    # 6 |        5/          6x          7+          8-  |
    # 5 |  9-         10+         11x         12/        |
    # 4 |       13+         14-         15/         16x  |
    # 3 | 17x         18/         19-         20+        |
    # 2 |       21/         22x          b5         24-  |
    # 1 | 25-         26+          w3         28/        |
    # 0 |       29+         30-         31/         32x  |
    #       0     1     2     3     4     5     6     7
    # 27x20 takes Black's last chip: 20 '+': 3 + 5 = 8. White's total 8 + 3 = 11.
    g = Game.from_fen(fen, "damath", chip_set="counting", lower_wins=lower_wins)
    m = only_move(g)
    assert m.path == (27, 20) and m.score == 8
    g.push(m)
    assert g.is_over()
    assert g.outcome().termination == "no legal move"
    assert g.result() == result
    black = g.scores()[1]
    assert g.totals() == (X(11), black)
    assert engine_scores(g)[2:] == pytest.approx([11.0, float(black)])


@pytest.mark.parametrize("fen, result", [
    ("B:W21=6:B:S0,10", "0-1"),   # Black to move has no chip: 6 against 10
    ("W:W21=6:B:S0,10", "0-1"),   # White to move, Black has no chip: still 6 against 10
    ("W:W21=6:B:S0,5", "1-0"),
    ("B:W:B12=-9:S-9,0", "1/2-1/2"),  # -9 against -9
])
def test_set_up_without_chips_totals_decide(fen: str, result: str) -> None:
    # A set-up position where one side has no chip is over at once; the totals decide.
    g = Game.from_fen(fen, "damath")
    assert g.is_over() and g.legal_moves() == []
    assert g.result() == result


# 7 |  1x          2/          3-          B5        |
# 6 |        5/          6x          7+          8-  |
# 5 |  9-         10+         11x         12/        |
# 4 |       13+         14-         15/         16x  |
# 3 | 17x         18/         19-         20+        |
# 2 |       21/         22x         23+         24-  |
# 1 | 25-         26+         27x         28/        |
# 0 |        W3         30-         31/         32x  |
#       0     1     2     3     4     5     6     7
# The damas shuffle 29-25, 4-8, 25-29, 8-4, ...; no capture is ever possible (each dama's
# diagonal to the other ends at the board's edge). Totals: White 2*3 = 6, Black 2*5 = 10.
SHUFFLE_FEN = "W:WK29=3:BK4=5"
SHUFFLE = ["29-25", "4-8", "25-29", "8-4"]


def _shuffle_action(eng: Engine, state, ply: int) -> int:
    """The engine action of the shuffle's move number `ply` (hop in the mover's view)."""
    frm, to = (int(t) for t in SHUFFLE[ply % 4].split("-"))
    if int(state.turn[0]) == 1:  # Black's view: the board turned 180 degrees
        frm, to = 33 - frm, 33 - to
    for a in eng.legal_actions(state, 0):
        s, d, k = eng.geometry.decode(int(a))
        if s == frm - 1 and int(eng.ray[s, d, k - 1]) == to - 1:
            return int(a)
    raise AssertionError(f"no action for {SHUFFLE[ply % 4]}")


def test_turn_limit_ends_the_game_by_totals_engine() -> None:
    g = Game.from_fen(SHUFFLE_FEN, "damath", chip_set="counting", repetition=0)
    assert g.rules.turn_limit == 100
    eng, state = g.engine, g.state.copy()
    for ply in range(100):
        assert not state.done[0], ply
        eng.step(state, np.array([_shuffle_action(eng, state, ply)]))
    assert state.done[0] and state.terminated[0] and not state.truncated[0]
    assert state.reason[0] == 4  # turn limit
    assert state.outcome[0] == 2  # Black: 10 against 6
    assert list(state.scores[0]) == [0.0, 0.0, 6.0, 10.0]


def test_turn_limit_ends_the_game_by_totals() -> None:
    g = Game.from_fen(SHUFFLE_FEN, "damath", chip_set="counting", repetition=0)
    for ply in range(100):
        assert not g.is_over(), ply
        g.push(SHUFFLE[ply % 4])
    assert g.is_over() and g.ply == 100
    assert g.outcome().termination == "turn limit"
    assert not g.outcome().truncated
    assert g.result() == "0-1"
    assert g.totals() == (X(6), X(10))
    g = Game.from_fen(SHUFFLE_FEN, "damath", chip_set="counting", repetition=0,
                      lower_wins=True)
    for ply in range(100):
        g.push(SHUFFLE[ply % 4])
    assert g.result() == "1-0"


def test_threefold_repetition_ends_the_game_by_totals() -> None:
    # The start position comes back after 4 and 8 plies: the third time ends the game.
    g = Game.from_fen(SHUFFLE_FEN, "damath", chip_set="counting")
    for ply in range(8):
        assert not g.is_over(), ply
        g.push(SHUFFLE[ply % 4])
    assert g.is_over()
    assert g.outcome().termination == "threefold repetition"
    assert g.result() == "0-1"


def test_threefold_repetition_ends_the_game_by_totals_engine() -> None:
    g = Game.from_fen(SHUFFLE_FEN, "damath", chip_set="counting")
    eng, state = g.engine, g.state.copy()
    for ply in range(8):
        assert not state.done[0], ply
        eng.step(state, np.array([_shuffle_action(eng, state, ply)]))
    assert state.reason[0] == 2 and state.outcome[0] == 2
    assert list(state.scores[0, 2:]) == [6.0, 10.0]


# ---------------------------------------------------------------------------------
# Damath FEN
# ---------------------------------------------------------------------------------

ROUND_TRIPS = [
    ("counting", "W:W21=10,K22=7:B1=3,K12=12:S10,-3/2"),
    ("whole", "B:W17=0,K30=11:BK2=0,9=2:S0,7"),
    ("integer", "W:W21=-9,22=6,K23=-1:B1=2,4=-5:S10,-3/2"),
    ("fraction", "W:W5=7/10,K30=6/5:B3=1,28=3/10:S7/10,-1/5"),
    ("rational", "B:WK1=-11/10,20=0:B13=-1/2,K31=1:S-7/10,3/100"),
    ("radical", "W:W21=-9√2,K22=-√8:B5=144√8,12=16√32:S3-2√2,10√2"),
    ("radical", "B:WK32=100√2:B6=-81√32:S1/2+(3/2)√2,-√2"),
    ("polynomial", "W:W21=-3x²y,K23=36x²y:B2=78xy²,10=-xy²:S50,-1/3"),
]


@pytest.mark.parametrize("chip_set, fen", ROUND_TRIPS)
def test_fen_round_trip(chip_set: str, fen: str) -> None:
    g = Game.from_fen(fen, "damath", chip_set=chip_set)
    assert g.fen() == fen
    assert Game.from_fen(g.fen(), "damath", chip_set=chip_set).fen() == fen


def test_fen_scores_are_exact() -> None:
    g = Game.from_fen(ROUND_TRIPS[5][1], "damath", chip_set="radical")
    assert g.scores() == (X(3, -2), X(0, 10))
    assert engine_scores(g)[:2] == pytest.approx([3 - 2 * math.sqrt(2), 10 * math.sqrt(2)])
    assert "scores: White 3 - 2√2 (0.17), Black 10√2 (14.14)" in str(g)
    g = Game.from_fen(ROUND_TRIPS[6][1], "damath", chip_set="radical")
    assert g.scores() == (X(F(1, 2), F(3, 2)), X(0, -1))
    g = Game.from_fen(ROUND_TRIPS[0][1], "damath", chip_set="counting")
    assert g.scores() == (X(10), X("-3/2"))
    assert engine_scores(g)[:2] == [10.0, -1.5]


@pytest.mark.parametrize("chip_set", sorted(CHIP_SETS))
def test_start_fen_round_trip(chip_set: str) -> None:
    fen = Game("damath", chip_set=chip_set).fen()
    assert Game.from_fen(fen, "damath", chip_set=chip_set).fen() == fen
    labels = [c.label for c in CHIP_SETS[chip_set]]
    assert fen.startswith(f"W:W21={labels[0]},22={labels[1]},")
    assert f":B1={labels[11]},2={labels[10]}," in fen


def test_fen_canonical_output() -> None:
    # any order on input; the scores default to 0
    g = Game.from_fen("W:W22=6,21=-9:B4=-5,1=2", "damath")
    assert g.fen() == "W:W21=-9,22=6:B1=2,4=-5:S0,0"
    # each side has its own set: the same value on both sides is fine
    assert Game.from_fen("W:W21=6:B1=6", "damath").fen() == "W:W21=6:B1=6:S0,0"


@pytest.mark.parametrize("chip_set, fen", [
    ("counting", "W:W21=13:B1=2"),             # 13 is not a counting chip
    ("integer", "W:W21=7:B1=2"),               # the integer set has -7, not 7
    ("radical", "W:W21=√8:B1=-9√2"),           # only -√8
    ("polynomial", "W:W21=6y:B1=6x"),          # 6x, not 6y
    ("integer", "W:W21=6,22=6:B1=2"),          # White's 6 twice
    ("integer", "W:W21=6:B1=2,2=2"),           # Black's 2 twice
    ("integer", "W:W21,22=6:B1=2"),            # a piece without value
    ("integer", "W:W21=6:B1"),                 # a piece without value
    ("integer", "W:W21=6:B1=2:S1,x"),          # unreadable score
])
def test_bad_fen(chip_set: str, fen: str) -> None:
    with pytest.raises(InvalidFenError):
        Game.from_fen(fen, "damath", chip_set=chip_set)


# ---------------------------------------------------------------------------------
# Who moves first
# ---------------------------------------------------------------------------------


def test_second_player_moves_first() -> None:
    g = Game("damath", first_player="second")
    assert g.turn == 1
    assert g.fen().startswith("B:W21=-9,")
    # Black (the top player) moves down from its front row, squares 9-12
    assert paths(g) == {"9-13", "10-13", "10-14", "11-14", "11-15", "12-15", "12-16"}


def test_second_player_moves_first_engine() -> None:
    eng = Engine("damath", first_player="second")
    state = eng.init(3)
    assert (state.turn == 1).all()
    froms = set()
    for a in eng.legal_actions(state, 0):
        s, _, _ = eng.geometry.decode(int(a))
        froms.add(32 - s)  # mover's view -> absolute square number
    assert froms == {9, 10, 11, 12} and len(eng.legal_actions(state, 0)) == 7
    assert eng.absolute_chips(state)[0, 11] == 12  # Black's v[0] on square 12


def test_random_first_player_uses_the_seed() -> None:
    eng = Engine("damath", first_player="random")
    a = eng.init(64, rng=123).turn.copy()
    b = eng.init(64, rng=123).turn.copy()
    assert set(a.tolist()) == {0, 1}
    assert (a == b).all()
    assert (Engine("damath").init(8, rng=123).turn == 0).all()


# ---------------------------------------------------------------------------------
# The batched engine and the single-game API agree
# ---------------------------------------------------------------------------------


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


_REASONS = {1: "no legal move", 2: "threefold repetition", 4: "turn limit"}


@pytest.mark.parametrize("turn_limit", [None, 30])
@pytest.mark.parametrize("chip_set", sorted(CHIP_SETS))
def test_engine_and_game_agree_on_random_games(chip_set: str, turn_limit: int | None) -> None:
    """Independent for the scores (float kernel against exact Python), not for the moves:
    both sides use one move generator."""
    # Random games in the batched engine, each completed turn replayed on a Game: the
    # float scores follow the exact ones after every move, and the ends agree. (Random
    # games mostly end with a side out of chips or moves; turn_limit=30 ends them early.)
    B = 4 if turn_limit is None else 2
    eng = Engine("damath", chip_set=chip_set, turn_limit=turn_limit)
    state = eng.init(B)
    games = [Game("damath", chip_set=chip_set, turn_limit=turn_limit) for _ in range(B)]
    rng = np.random.default_rng(sum(map(ord, chip_set)))
    n_moves = 0
    for b, continuing in replay_batched_games(eng, state, games, rng):
        if continuing:
            continue  # the capture goes on
        g = games[b]
        n_moves += 1
        sw, sb = g.scores()
        assert _close(float(sw), state.scores[b, 0]), (g.fen(), state.scores[b])
        assert _close(float(sb), state.scores[b, 1]), (g.fen(), state.scores[b])
        assert (g.board() == eng.absolute_boards(state)[b]).all()
        assert (g.chips() == eng.absolute_chips(state)[b]).all()
    assert n_moves > 4 * B
    for b, g in enumerate(games):
        assert g.is_over()
        assert g.ply == state.ply[b]
        if turn_limit is not None:
            assert g.ply == turn_limit and g.outcome().termination == "turn limit"
        tw, tb = g.totals()
        assert _close(float(tw), state.scores[b, 2]) and _close(float(tb), state.scores[b, 3])
        o = g.outcome()
        assert not o.truncated and g.result() != "*"
        assert o.termination == _REASONS[int(state.reason[b])]
        assert {0: 1, 1: 2, None: 3}[o.winner] == state.outcome[b]
        # the winner follows the exact totals
        assert o.winner == (None if tw == tb else (0 if float(tw) > float(tb) else 1))

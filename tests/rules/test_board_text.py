"""The terminal board (issue 29): every square's number shown on request, Sci-Damath's
squares by number and by Damath (x, y) coordinates, moves typed either way."""

from __future__ import annotations

import pytest

from damii_env import Game
from damii_env.errors import IllegalMoveError


def test_numbers_name_every_square_of_a_10x10_board_occupied_or_not():
    g = Game("international")
    rows = g.board_text(numbers=True).splitlines()[:10]
    # each row ends with its five squares' numbers: 1-5 on the first row, 46-50 on the last
    assert rows[0].split()[-5:] == ["1", "2", "3", "4", "5"]
    assert rows[9].split()[-5:] == ["46", "47", "48", "49", "50"]
    listed = [int(t) for r in rows for t in r.split()[-5:]]
    assert listed == list(range(1, 51))
    # a piece's square is found by its row and place: 32 holds a White man at the start
    assert rows[6].split()[:5] == ["w"] * 5 and "32" in rows[6].split()[-5:]


def test_without_numbers_the_board_is_as_before():
    text = Game("damii").board_text()
    assert "1  2  3" not in text and text.splitlines()[4].split() == ["."] * 5


def test_damath_board_shows_the_square_number_of_every_cell():
    g = Game("damath")
    text = g.board_text(numbers=True)
    for square in range(1, 33):
        assert f"{square:>2} " in text
    # the newcomer's finding: 22-18 moved White's chip 6 from (3, 2) to (2, 3); x runs
    # left to right, y bottom to top, and the dark squares are those with x + y odd
    assert g.square_at(3, 2) == 22 and g.square_at(2, 3) == 18
    assert "22 w6" in text and "18 (/)" in text
    assert g.square_at(0, 0) is None and g.square_at(8, 1) is None  # light, off the board
    lines = text.splitlines()[:8]
    assert all(line.endswith("|") for line in lines)  # no ragged right edge


def test_damath_moves_can_be_typed_as_coordinates():
    g = Game("damath")
    assert g.parse_move("(3,2)-(2,3)") == g.parse_move("22-18")
    assert g.parse_move(" ( 3 , 2 ) - ( 2 , 3 ) ") == g.parse_move("22-18")
    with pytest.raises(IllegalMoveError, match=r"\(0,0\) is not a dark square"):
        g.parse_move("(0,0)-(1,1)")
    with pytest.raises(IllegalMoveError, match=r"\(3,3\) is not a dark square"):
        g.parse_move("(3,2)-(3,3)")
    with pytest.raises(IllegalMoveError, match="not legal"):
        g.parse_move("(3,2)-(4,5)")  # dark squares, not a legal move
    with pytest.raises(IllegalMoveError, match="cannot read move"):
        g.parse_move("(3,2)-")


def test_a_damath_capture_in_coordinates_with_either_separator():
    # White's chip at 18 (x=2, y=3) takes Black's at 14 (x=3, y=4) landing on 11 (x=4, y=5)
    g = Game.from_fen("W:W18=6:B14=4,1=2", "damath")
    (capture,) = g.legal_moves()
    assert capture.path == (18, 11)
    assert (g.square_at(2, 3), g.square_at(4, 5)) == (18, 11)
    assert g.parse_move("(2,3)x(4,5)") == capture
    assert g.parse_move("(2,3)-(4,5)") == capture  # the coordinates name the path


def test_coordinates_are_for_damath_only():
    with pytest.raises(IllegalMoveError, match="cannot read move"):
        Game("damii").parse_move("(1,2)-(0,3)")

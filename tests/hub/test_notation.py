"""The Hub protocol's text (damii_env/hub.py) on hand-built positions: lines, positions,
moves in the protocol's notation, and the position a client sends."""

from __future__ import annotations

import pytest

from damii_env import Game
from damii_env import hub as H
from damii_env.errors import IllegalMoveError, InvalidFenError, InvalidOptionError

START = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww"


def board(side: str, pieces: dict[int, str], n: int = 50) -> str:
    """A position text: `pieces` maps square numbers to w, b, W or B."""
    return side + "".join(pieces.get(s, "e") for s in range(1, n + 1))


# --- lines ---------------------------------------------------------------------------
def test_lines_with_quotes_flags_and_empty_values():
    assert H.parse_line('id name=Scan version=3.1 author="Fabien Letouzey" country=France') \
        == ("id", {"name": "Scan", "version": "3.1", "author": "Fabien Letouzey",
                   "country": "France"})
    assert H.parse_line("level infinite") == ("level", {"infinite": ""})
    assert H.parse_line("go think\n") == ("go", {"think": ""})
    assert H.parse_line('set-param name=book-file value=""') \
        == ("set-param", {"name": "book-file", "value": ""})
    assert H.parse_line('pos fen="W:W21=-9:B1=2:S0,0"') == ("pos", {"fen": "W:W21=-9:B1=2:S0,0"})
    assert H.parse_line('error message="open') == ("error", {"message": "open"})
    assert H.parse_line("   ") == ("", {})


def test_format_line_quotes_what_needs_it_and_round_trips():
    line = H.format_line("info", depth=3, score="-0.10", nodes=104, pv="32-27 18-22", x=None)
    assert line == 'info depth=3 score=-0.10 nodes=104 pv="32-27 18-22"'
    assert H.format_line("level", move_time="0.100") == "level move-time=0.100"
    assert H.format_line("set-param", name="book", value="") == 'set-param name=book value=""'
    assert H.format_line("param", values="a b", v="x=y") == 'param values="a b" v="x=y"'
    # a newline or a double quote in a value cannot break the line
    assert H.format_line("error", message='bad "x"\nquit') == "error message=\"bad 'x' quit\""
    command, args = H.parse_line(H.format_line("pos", pos=START, moves="32-28 19-23"))
    assert command == "pos" and args == {"pos": START, "moves": "32-28 19-23"}


def test_variants_and_their_hub_names():
    assert [H.variant_of(v) for v in ("normal", "DAMII", "triestine", "damath")] \
        == ["international", "damii", "triestine", "damath"]
    assert H.hub_variant("international") == "normal"
    with pytest.raises(InvalidOptionError, match="unknown variant 'frisian'.*normal, damii"):
        H.variant_of("frisian")


# --- positions -----------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["international", "damii", "triestine"])
def test_start_positions_round_trip(variant):
    game = Game(variant)
    text = H.position_text(game)
    assert text == START  # 20 men a side on 50 squares in each of these three
    assert H.game_from_position(text, variant).fen() == game.fen()


def test_a_position_with_kings_and_black_to_move():
    text = board("B", {1: "W", 23: "b", 28: "w", 50: "B"})
    game = H.game_from_position(text, "international")
    assert game.turn == 1 and game.fen() == "B:WK1,28:B23,K50"
    assert H.position_text(game) == text


@pytest.mark.parametrize("text, message", [
    ("W" + "e" * 49, "51 characters; got 50"),
    ("X" + "e" * 50, "expected W or B"),
    ("W" + "e" * 49 + "x", "got 'x'"),
])
def test_malformed_positions_are_refused(text, message):
    with pytest.raises(InvalidFenError, match=message):
        H.game_from_position(text, "international")


def test_damath_positions_travel_as_fen():
    game = Game("damath")
    with pytest.raises(InvalidOptionError, match="pos fen="):
        H.position_text(game)
    with pytest.raises(InvalidFenError, match="pos fen="):
        H.game_from_position("W" + "e" * 32, "damath")
    args, moves = H.position_args(game)
    assert args == {"fen": game.fen()} and moves == []
    game.push("22-18")
    again = H.read_position({"fen": Game("damath").fen(), "moves": "22-18"}, "damath")
    assert again.fen() == game.fen()


# --- moves ---------------------------------------------------------------------------
def test_quiet_moves_and_a_single_capture():
    game = Game("international")
    assert H.move_text(game.parse_move("32-28")) == "32-28"
    assert str(H.parse_move(game, "32-28")) == "32-28"
    game = H.game_from_position(board("W", {28: "w", 23: "b"}), "international")
    assert [H.move_text(m) for m in game.legal_moves()] == ["28x19x23"]


def test_a_multiple_capture_lists_every_captured_square_in_any_order():
    # the White man on 37 takes 32, 22 and 12: 37x28x17x8 in PDN
    game = H.game_from_position(board("W", {37: "w", 32: "b", 22: "b", 12: "b", 1: "b"}),
                                "international")
    (move,) = game.legal_moves()
    text = H.move_text(move)
    start, end, *taken = text.split("x")
    assert (int(start), int(end)) == (move.path[0], move.path[-1])
    assert sorted(map(int, taken)) == sorted(move.captured) and len(taken) == 3
    shuffled = "x".join([start, end, *reversed(taken)])
    assert H.parse_move(game, shuffled) == move


def test_a_king_capture_names_the_same_move_by_its_captured_set():
    game = H.game_from_position(board("W", {46: "W", 37: "b", 19: "b"}), "international")
    for move in game.legal_moves():
        assert H.parse_move(game, H.move_text(move)).path[-1] == move.path[-1]


@pytest.mark.parametrize("text, message", [
    ("32-29", "not legal here; legal moves: 31-26"),
    ("28x19", "cannot read the move"),  # a capture without its captured squares
    ("hello", "cannot read the move"),
    ("", "cannot read the move"),
    ("32x28x23", "not legal here"),
])
def test_moves_that_are_not_legal_or_not_readable(text, message):
    with pytest.raises(IllegalMoveError, match=message):
        H.parse_move(Game("international"), text)


def test_moves_are_played_in_turn_and_a_bad_one_is_named():
    game = H.read_position({"pos": START, "moves": "32-28 19-23 28x19x23"}, "international")
    assert len(game.move_stack) == 3 and game.turn == 1
    with pytest.raises(IllegalMoveError, match=r"move 2 \(18-24\).*not legal here"):
        H.read_position({"pos": START, "moves": "32-28 18-24"}, "international")
    with pytest.raises(InvalidFenError, match="pos needs pos="):
        H.read_position({}, "international")


def test_the_client_sends_the_last_irreversible_position_and_the_king_moves_since():
    game = H.game_from_position(board("W", {46: "W", 1: "B", 30: "w"}), "international")
    for move in ("46-41", "1-7", "41-46", "7-1", "30-25", "1-7", "46-41"):
        game.push(move)
    args, tail = H.position_args(game)
    assert [H.move_text(m) for m in tail] == ["1-7", "46-41"]
    assert args == {"pos": board("B", {46: "W", 1: "B", 25: "w"})}
    again = H.read_position({**args, "moves": " ".join(H.move_text(m) for m in tail)},
                            "international")
    assert again.fen() == game.fen()
    fresh = Game("international")
    assert H.position_args(fresh) == ({"pos": START}, [])

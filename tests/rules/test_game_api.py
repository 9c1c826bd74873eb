"""The single-game API: FEN input and output, errors, moves, push/pop, game end."""

from __future__ import annotations

import random

import pytest

from damii_env import (
    DamiiError,
    Game,
    GameOverError,
    IllegalMoveError,
    InvalidFenError,
    InvalidOptionError,
    Move,
    UnknownVariantError,
    perft,
)

START_FEN = ("W:W31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50"
             ":B1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20")

# ---------------------------------------------------------------------------------
# FEN
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["damii", "international", "triestine"])
def test_start_position_fen(variant: str) -> None:
    assert Game(variant).fen() == START_FEN
    assert Game(variant).turn == 0


@pytest.mark.parametrize("fen", [
    START_FEN,
    "W:W31,32,K45:B1,2,K7",
    "B:W31,32,K45:B1,2,K7",
    "W:WK1,K5,28:B23,K46,K50",
    "B:W50:B1",
    "W:WK28:B12,13,22,K23",
])
@pytest.mark.parametrize("variant", ["damii", "international", "triestine"])
def test_fen_round_trip(variant: str, fen: str) -> None:
    game = Game.from_fen(fen, variant)
    assert game.fen() == fen
    assert Game.from_fen(game.fen(), variant).fen() == fen


@pytest.mark.parametrize("text, canonical", [
    ("W:W31-50:B1-20", START_FEN),
    ("W:W31-40,41-50:B1-10,11-20", START_FEN),
    ("W:W41-50,31-40:B11-20,1-10", START_FEN),            # any order on input
    ("B:WK1-3,40:B11,K46-47", "B:WK1,K2,K3,40:B11,K46,K47"),  # a K range: kings
    ("W:WK45,32,31:BK7,2,1", "W:W31,32,K45:B1,2,K7"),      # output sorted by square
    ("w:w31,k45:b1", "W:W31,K45:B1"),                       # lower case
    ('"W:W31, 32 :B1 , 2."', "W:W31,32:B1,2"),              # quotes, spaces, final dot
    ("W:B1,2:W31", "W:W31:B1,2"),                            # Black's list first
    ("W:W31:B", "W:W31:B"),                                   # an empty list
])
def test_fen_input_forms(text: str, canonical: str) -> None:
    assert Game.from_fen(text, "international").fen() == canonical


def test_from_fen_square_numbers_follow_the_orientation() -> None:
    # square 46 is (9, 0) in the standard orientation, (9, 1) in the mirrored one;
    # a White man there moves to 41 only (standard) or to 41 and 42 (mirrored)
    std = Game.from_fen("W:W46:B1", "damii", orientation="standard")
    mir = Game.from_fen("W:W46:B1", "damii", orientation="mirrored")
    assert {str(m) for m in std.legal_moves()} == {"46-41"}
    assert {str(m) for m in mir.legal_moves()} == {"46-41", "46-42"}


@pytest.mark.parametrize("fen, words", [
    ("W:W31,32", ["2 ':'-separated fields", "W:W31,32,K45:B1,2,K7"]),
    ("W:W31:B1:B2", ["4 ':'-separated fields"]),
    ("W31,32,B1", ["1 ':'-separated fields"]),
    ("X:W31:B1", ["side to move must be W or B", "'X'"]),
    (":W31:B1", ["side to move must be W or B"]),
    ("W:W51:B1", ["'51'", "outside 1..50"]),
    ("W:W0:B1", ["'0'", "outside 1..50"]),
    ("W:W31:B45-55", ["'45-55'", "outside 1..50"]),
    ("W:W31,31:B1", ["square 31 is given twice"]),
    ("W:W31:B31", ["square 31 is given twice"]),
    ("W:W31-35:B33", ["square 33 is given twice"]),
    ("W:W3:B20", ["White man on square 3", "crowning row", "K3"]),
    ("W:W31:B48", ["Black man on square 48", "crowning row", "K48"]),
    ("W:W31,abc:B1", ["cannot read 'ABC'", "K45", "31-35"]),
    ("W:W31,,32:B1", ["cannot read ''"]),
    ("W:W31:B1x", ["cannot read '1X'"]),
    ("W:W31:BKK1", ["cannot read 'KK1'"]),
    ("W:W31:X1", ["must start with W or B", "'X1'"]),
    ("W:W31:W32", ["piece list of W appears twice"]),
    ("W:W31:", ["must start with W or B"]),
])
def test_malformed_fen(fen: str, words: list[str]) -> None:
    with pytest.raises(InvalidFenError) as info:
        Game.from_fen(fen, "international")
    message = str(info.value)
    assert repr(fen) in message  # the message quotes the FEN it could not read
    for w in words:
        assert w in message, (w, message)


def test_malformed_fen_errors_are_value_errors() -> None:
    for fen in ("W:W31", "W:W31:B99"):
        with pytest.raises(ValueError):
            Game.from_fen(fen)
        with pytest.raises(DamiiError):
            Game.from_fen(fen)


@pytest.mark.parametrize("fen", [None, 42, b"W:W31:B1"])
def test_fen_must_be_text(fen) -> None:
    with pytest.raises(InvalidFenError, match="must be a string"):
        Game.from_fen(fen, "international")


def test_reversed_range_is_rejected() -> None:
    with pytest.raises(InvalidFenError, match="35-31"):
        Game.from_fen("W:W35-31:B1", "international")


# ---------------------------------------------------------------------------------
# Variants and options
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["checkers", "", "damath10", "international "])
def test_unknown_variant(variant: str) -> None:
    with pytest.raises(UnknownVariantError) as info:
        Game(variant)
    assert "damii, international, triestine" in str(info.value)
    with pytest.raises(UnknownVariantError):
        Game.from_fen("W:W31:B1", variant)
    with pytest.raises(UnknownVariantError):
        perft(1, variant)


def test_variant_names_are_case_insensitive() -> None:
    assert Game("Triestine").rules.name == "triestine"
    assert Game("DAMII").rules.name == "damii"


@pytest.mark.parametrize("options, words", [
    ({"colour": "red"}, ["unknown rule option(s) colour", "known options", "orientation"]),
    ({"flying": True}, ["unknown rule option(s) flying"]),
    ({"orientation": "upside-down"}, ["'orientation'", "standard, mirrored"]),
    ({"king_range": "long"}, ["'king_range'", "flying, short"]),
    ({"removal": "never"}, ["'removal'", "end_of_sequence, immediate"]),
    ({"promotion_mid_capture": "maybe"}, ["'promotion_mid_capture'"]),
    ({"precedence": "max"}, ["'precedence'", "most_pieces"]),
    ({"repetition": 1}, ["'repetition'"]),
    ({"repetition": -3}, ["'repetition'"]),
    ({"turn_limit": -1}, ["'turn_limit'"]),
    ({"turn_limit": 2.5}, ["'turn_limit'"]),
    ({"no_progress_moves": "25"}, ["'no_progress_moves'"]),
    ({"men_capture_backward": "yes"}, ["'men_capture_backward'", "true or false"]),
    ({"men_capture_kings": 1}, ["'men_capture_kings'"]),
    ({"board_size": 11}, ["'board_size'", "even"]),
    ({"board_size": 2}, ["'board_size'"]),
])
def test_invalid_options(options: dict, words: list[str]) -> None:
    with pytest.raises(InvalidOptionError) as info:
        Game("damii", **options)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_options_reach_the_rules() -> None:
    game = Game("damii", orientation="standard", turn_limit=40, repetition=0)
    assert (game.rules.orientation, game.rules.turn_limit, game.rules.repetition) == \
        ("standard", 40, 0)
    # None leaves an option as the preset has it
    assert Game("damii", orientation=None).rules.orientation == "mirrored"


@pytest.mark.parametrize("depth", [-1, 1.5, "2", True])
def test_perft_depth_must_be_a_non_negative_integer(depth) -> None:
    with pytest.raises(InvalidOptionError, match="depth"):
        perft(depth, "international")


# ---------------------------------------------------------------------------------
# Moves: parsing, legality, push and pop
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text, path, capture", [
    ("32-28", (32, 28), False),
    ("28x19x10", (28, 19, 10), True),
    ("28x10", (28, 10), True),
    ("28x19x8x17x28", (28, 19, 8, 17, 28), True),
    (" 32 - 28 ", (32, 28), False),
])
def test_move_parse_round_trip(text: str, path: tuple, capture: bool) -> None:
    move = Move.parse(text)
    assert move.path == path
    assert move.is_capture is capture
    assert str(move) == text.replace(" ", "")
    assert Move.parse(str(move)) == move


def test_moves_are_equal_when_their_paths_are() -> None:
    assert Move.parse("28x19x10") == Move(path=(28, 19, 10), captured=(23, 14))
    assert Move(path=(28, 19, 10)) != Move(path=(28, 19))


@pytest.mark.parametrize("text", ["", "32", "32-28-23", "32--28", "e2e4", "32/28", "x32x28",
                                  "32-28x", "-32-28"])
def test_move_parse_rejects_unreadable_text(text: str) -> None:
    with pytest.raises(IllegalMoveError, match="32-28"):
        Move.parse(text)


def test_push_returns_the_full_move() -> None:
    game = Game("international")
    played = game.push("32-28")
    assert played.path == (32, 28) and played.captured == ()
    assert game.move_stack == [played]
    assert game.fen().startswith("B:W28,31,33,")


def test_illegal_move_lists_the_legal_moves() -> None:
    game = Game("international")
    fen = game.fen()
    with pytest.raises(IllegalMoveError) as info:
        game.push("32-29")
    message = str(info.value)
    assert "32-29" in message and fen in message
    legal = [str(m) for m in game.legal_moves()]
    assert legal and all(m in message for m in legal)
    assert game.fen() == fen and game.move_stack == []


def test_illegal_move_text_that_cannot_be_read() -> None:
    with pytest.raises(IllegalMoveError, match="cannot read"):
        Game("damii").push("hello")
    with pytest.raises(IllegalMoveError):
        Game("damii").push(42)


def test_no_huffing_a_quiet_move_when_a_capture_exists_is_rejected() -> None:
    # Triestine: 32 can take 28 (32x23); the quiet 31-27 does not exist; nothing changes.
    game = Game.from_fen("W:W31,32:B28", "triestine")
    with pytest.raises(IllegalMoveError, match="32x23"):
        game.push("31-27")
    assert game.fen() == "W:W31,32:B28"
    assert {str(m) for m in game.legal_moves()} == {"32x23"}


def test_no_huffing_a_capture_below_precedence_is_rejected() -> None:
    # Triestine level 1: 34x23x12 takes two, 37x28 only one (see test_triestine.py).
    fen = "W:W34,37:B18,29,32"
    game = Game.from_fen(fen, "triestine")
    with pytest.raises(IllegalMoveError):
        game.push("37x28")
    assert game.fen() == fen
    game.push("34x23x12")
    assert game.fen() == "B:W12,37:B32"


@pytest.mark.parametrize("variant", ["damii", "international", "triestine"])
def test_push_pop_restores_the_fen_exactly(variant: str) -> None:
    rng = random.Random(5)
    game = Game(variant)
    fens, legal = [game.fen()], [sorted(str(m) for m in game.legal_moves())]
    for _ in range(60):
        if game.is_over():
            break
        game.push(rng.choice(game.legal_moves()))
        fens.append(game.fen())
        legal.append(sorted(str(m) for m in game.legal_moves()))
    assert len(fens) > 20
    for i in range(len(fens) - 1, 0, -1):
        assert game.fen() == fens[i]
        game.pop()
        assert game.fen() == fens[i - 1]
        assert sorted(str(m) for m in game.legal_moves()) == legal[i - 1]
    assert game.move_stack == []
    with pytest.raises(IllegalMoveError, match="empty"):
        game.pop()


def test_pop_of_a_capture_puts_the_pieces_back() -> None:
    fen = "W:WK28:B12,13,22,23"
    game = Game.from_fen(fen, "triestine")
    game.push("28x19x8x17x28")
    assert game.fen() == "B:WK28:B" and game.is_over()
    assert game.pop() == Move.parse("28x19x8x17x28")
    assert game.fen() == fen and not game.is_over()
    assert len(game.legal_moves()) == 2


# --- the short capture notation: start and end square only --------------------------

# Triestine, a man with two routes to 12:
#       1       2       3       4       5
#   6       7       8       9      10
#      11      12      13      14      15
#  16     b17     b18      19      20
#      21      22      23      24      25
#  26     b27     b28      29      30
#      31     w32      33      34      35
DIAMOND = "W:W32:B17,18,27,28"


def test_short_capture_is_rejected_when_ambiguous() -> None:
    game = Game.from_fen(DIAMOND, "triestine")
    assert {str(m) for m in game.legal_moves()} == {"32x21x12", "32x23x12"}
    with pytest.raises(IllegalMoveError) as info:
        game.push("32x12")
    message = str(info.value)
    assert "ambiguous" in message and "32x21x12" in message and "32x23x12" in message
    assert game.fen() == DIAMOND
    assert game.push("32x23x12").captured == (28, 18)


def test_short_capture_ambiguous_round_trip() -> None:
    # the king's ring both ways round starts and ends on 28
    game = Game.from_fen("W:WK28:B12,13,22,23", "triestine")
    with pytest.raises(IllegalMoveError, match="ambiguous"):
        game.push("28x28")


@pytest.mark.parametrize("variant, fen, short, full", [
    ("triestine", "W:W24:B7,8,19,45", "24x2", "24x13x2"),
    ("international", "W:W34,37:B18,29,32", "34x12", "34x23x12"),
    ("international", "W:W32:B28", "32x23", "32x23"),
])
def test_short_capture_is_accepted_when_unambiguous(variant, fen, short, full) -> None:
    game = Game.from_fen(fen, variant)
    played = game.push(short)
    assert str(played) == full


# ---------------------------------------------------------------------------------
# End of game
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["international", "triestine"])
def test_capturing_the_last_piece_wins(variant: str) -> None:
    game = Game.from_fen("W:W32:B28", variant)
    game.push("32x23")
    assert game.fen() == "B:W23:B"
    assert game.is_over()
    assert game.result() == "1-0"
    assert game.outcome().winner == 0
    assert game.outcome().termination == "no legal move"
    assert game.legal_moves() == []


def test_black_capturing_the_last_piece_wins() -> None:
    game = Game.from_fen("B:W23:B19", "international")
    assert {str(m) for m in game.legal_moves()} == {"19x28"}
    game.push("19x28")
    assert game.is_over() and game.result() == "0-1"


def test_blocked_black_loses() -> None:
    # Black's man on 36 can move only to 41 (White) and cannot take 41 (47 is White).
    #  36   b  ...   after 35-30 Black has no move
    #     w41  42 ...
    #  w46  w47 ...
    game = Game.from_fen("W:W35,41,46,47:B36", "international")
    assert {str(m) for m in game.legal_moves()} == {"35-30", "41-37", "47-42"}
    game.push("35-30")
    assert game.is_over() and game.result() == "1-0"
    assert game.outcome().termination == "no legal move"


def test_blocked_white_loses() -> None:
    # the previous position turned round: White's man on 15 is blocked by 10 and 4
    game = Game.from_fen("B:W15:B4,5,10,16", "international")
    game.push("16-21")
    assert game.is_over() and game.result() == "0-1"


def test_fen_with_no_move_for_the_side_to_move_is_over() -> None:
    assert Game.from_fen("B:W41,46,47:B36", "international").result() == "1-0"
    assert Game.from_fen("W:W:B20", "international").result() == "0-1"
    assert Game.from_fen("B:W31:B", "international").result() == "1-0"


def test_move_after_the_end_is_refused() -> None:
    game = Game.from_fen("W:W32:B28", "international")
    game.push("32x23")
    with pytest.raises(GameOverError, match="over"):
        game.push("23-18")


SHUFFLE = ["46-41", "1-6", "41-46", "6-1"]  # two kings far from each other's diagonals


@pytest.mark.parametrize("variant", ["damii", "international", "triestine"])
def test_threefold_repetition_is_a_draw(variant: str) -> None:
    game = Game.from_fen("W:WK46:BK1", variant, orientation="standard")
    # the start position occurs again after 4 and after 8 plies: the third time is a draw
    for ply, move in enumerate(SHUFFLE * 2, start=1):
        assert not game.is_over(), ply
        game.push(move)
    assert game.is_over()
    assert game.result() == "1/2-1/2"
    assert game.outcome().termination == "threefold repetition"
    assert game.outcome().winner is None and not game.outcome().truncated


def test_repetition_can_be_resized_or_switched_off() -> None:
    game = Game.from_fen("W:WK46:BK1", "triestine", repetition=2)
    for move in SHUFFLE:
        game.push(move)
    assert game.result() == "1/2-1/2"
    game = Game.from_fen("W:WK46:BK1", "triestine", repetition=0, no_progress_moves=0)
    for move in SHUFFLE * 30:
        game.push(move)
    assert not game.is_over()


def test_repetition_counts_from_the_first_occurrence_after_a_man_move() -> None:
    # (the FMJD endgame draw, two pieces v a lone king, is switched off: repetition alone)
    game = Game.from_fen("W:W35,K46:BK1", "international", endgame_two_moves=0)
    for move in SHUFFLE + ["35-30", "1-6", "46-41", "6-1", "41-46"]:
        game.push(move)
    # the position "Black to move, W30,K46 B K1" has occurred after plies 5 and 9
    for move in ["1-6", "46-41", "6-1", "41-46"]:
        assert not game.is_over()
        game.push(move)
    assert game.result() == "1/2-1/2"


@pytest.mark.parametrize("variant", ["international", "triestine"])
def test_no_progress_draw_after_25_king_moves_each(variant: str) -> None:
    # the FMJD endgame draw (International) is switched off: the no-progress rule alone
    game = Game.from_fen("W:WK46:BK1", variant, repetition=0, endgame_two_moves=0)
    for ply in range(1, 51):
        assert not game.is_over(), ply
        game.push(SHUFFLE[(ply - 1) % 4])
    assert game.is_over()
    assert game.result() == "1/2-1/2"
    assert game.outcome().termination == "no-progress rule"


def test_no_progress_count_restarts_after_a_man_move() -> None:
    game = Game.from_fen("W:W35,K46:BK1", "international", repetition=0, endgame_two_moves=0)
    for ply in range(20):
        game.push(SHUFFLE[ply % 4])
    game.push("35-30")  # White's 11th move, a man move
    for ply in range(49):
        game.push(["1-6", "46-41", "6-1", "41-46"][ply % 4])
        assert not game.is_over(), ply
    game.push(["1-6", "46-41", "6-1", "41-46"][49 % 4])
    assert game.outcome().termination == "no-progress rule"


def test_no_progress_rule_can_be_resized() -> None:
    game = Game.from_fen("W:WK46:BK1", "triestine", repetition=0, no_progress_moves=3)
    for ply in range(5):
        game.push(SHUFFLE[ply % 4])
        assert not game.is_over()
    game.push(SHUFFLE[5 % 4])
    assert game.result() == "1/2-1/2"


@pytest.mark.parametrize("variant", ["damii", "international", "triestine"])
def test_turn_limit_truncates(variant: str) -> None:
    rng = random.Random(3)
    game = Game(variant, turn_limit=10)
    for ply in range(1, 11):
        assert not game.is_over() and game.result() == "*", ply
        game.push(rng.choice(game.legal_moves()))
    assert game.is_over()
    assert game.result() == "*"
    outcome = game.outcome()
    assert outcome.truncated and outcome.winner is None
    assert outcome.termination == "turn limit"
    assert game.legal_moves() == []
    with pytest.raises(GameOverError):
        game.push("31-26")


def test_ongoing_game_has_no_outcome() -> None:
    game = Game("damii")
    assert not game.is_over() and game.outcome() is None and game.result() == "*"


@pytest.mark.parametrize("variant", ["damath", "damii"])
def test_a_copy_popped_and_replayed_leaves_the_original_alone(variant: str) -> None:
    """Regression (issue 13): pop() made the stored state live again, and a copy shares
    the history's states, so replaying on a popped copy rewrote the original's history."""
    rng = random.Random(5)
    game = Game(variant)
    for _ in range(6):
        game.push(rng.choice(game.legal_moves()))
    fens = [game.fen()]
    copy = game.copy()
    moves = copy.move_stack
    while copy.move_stack:
        copy.pop()
    for move in moves:
        copy.push(move)
    assert copy.fen() == game.fen()
    while game.move_stack:
        game.pop()
        fens.append(game.fen())
    replay = Game(variant)
    expected = [replay.fen()]
    for move in moves:
        replay.push(move)
        expected.append(replay.fen())
    assert fens == expected[::-1]


def test_a_live_damath_game_can_be_recorded_twice() -> None:
    """Regression (issue 13): damii_env.pdn.record() pops and pushes on a copy; the second
    record of the same live Sci-Damath game raised IllegalMoveError."""
    from damii_env.pdn import record

    rng = random.Random(1)
    game = Game("damath")
    while len(game.move_stack) < 12 and not game.is_over():
        game.push(rng.choice(game.legal_moves()))
    first = record(game)
    second = record(game)
    assert first.moves == second.moves == [str(m) for m in game.move_stack]
    assert first.comments == second.comments


def test_no_progress_moves_is_bounded() -> None:
    """Regression (issue 13): no_progress_moves=10000 allocated 655 MB of position
    history at 4,096 games; the rule option is bounded and says so."""
    with pytest.raises(InvalidOptionError, match="'no_progress_moves' must be an integer "
                                                 "from 0 to 1000, got 10000"):
        Game("damii", no_progress_moves=10000)


def test_the_position_history_is_sized_by_the_turn_limit() -> None:
    from damii_env.engine import Engine

    assert Engine("damii", no_progress_moves=1000).init(1).hist.shape == (1, 2002)
    state = Engine("damii", no_progress_moves=1000, turn_limit=300).init(4096)
    assert state.hist.shape == (4096, 301) and state.hist.nbytes < 10_000_000
    # a repetition as long as the turn limit allows is still seen: the start position
    # occurs the third time at ply 8, the last one before the limit
    game = Game.from_fen("W:WK46:BK1", "triestine", turn_limit=8, no_progress_moves=1000)
    for move in SHUFFLE * 2:
        game.push(move)
    assert game.outcome().termination == "threefold repetition"

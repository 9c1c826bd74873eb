"""Sci-Damath's classroom match (app/serve/classroom.py, driven by LiveGame): the clock
spec, the end after the game's minutes decided by the totals (hand-worked), the minute's
warnings and forced moves, disqualification at the fourth violation while ahead, touch
move, the coin toss, the score sheet, and the match kept across a restart; then through
the API: the claimed repetition, draw offers refused in blitz, the sheet's CSV."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from damii_app.serve.classroom import MatchRules, ScoreSheet, sheet_csv, totals_end  # noqa: E402
from damii_app.serve.live import LiveGame, Seat  # noqa: E402
from damii_app.serve.specs import parse_clock  # noqa: E402
from damii_env import Game  # noqa: E402
from damii_env.errors import IllegalMoveError, InvalidOptionError  # noqa: E402

# White chips -11 on 29 and 2 on 32, Black's 2 on 1 and -11 on 4, White 20 points ahead:
# no capture for a while. Totals: White 20 - 11 + 2 = 11, Black 0 + 2 - 11 = -9.
AHEAD = "W:W29=-11,32=2:B1=2,4=-11:S20,0"
# White 10 on 22 and a dama -3 on 27; Black 8 on 3 and a dama 2 on 5; scores 7 and -5:
# totals White 7 + 10 + 2 x (-3) = 11, Black -5 + 8 + 2 x 2 = 7
TOTALS = "W:W22=10,K27=-3:B3=8,K5=2:S7,-5"


class NoPool:
    """The pool of a game without agents: nothing to cancel."""

    def cancel(self, prefix: str) -> None:
        pass


def match(clock: str = "sci-damath", fen: str | None = AHEAD, seed: int | None = None,
          **kwargs) -> LiveGame:
    return LiveGame("g", "owner", "damath", (Seat("ana"), Seat("ben")),
                    parse_clock(clock, "damath"), False, NoPool(), fen=fen, seed=seed,
                    **kwargs)


def let_time_pass(game: LiveGame, seconds: float) -> None:
    game.referee.turn_started -= seconds


def test_the_clock_spec_and_its_errors():
    assert parse_clock("sci-damath", "damath") == MatchRules(60.0, 20.0, False)
    assert parse_clock("Sci-Damath:touch", "damath") == MatchRules(60.0, 20.0, True)
    assert parse_clock("sci-damath:move=1.5,game=0.5", "damath") == MatchRules(1.5, 0.5)
    assert str(MatchRules(1.5, 20.0, True)) == "sci-damath:move=1.5,touch"
    with pytest.raises(InvalidOptionError, match="choose the variant damath"):
        parse_clock("sci-damath", "damii")
    with pytest.raises(InvalidOptionError, match="cannot read 'moves=3'"):
        parse_clock("sci-damath:moves=3", "damath")
    with pytest.raises(InvalidOptionError, match="0.5 to 600 seconds"):
        parse_clock("sci-damath:move=0", "damath")
    assert parse_clock("standard", "damath").seconds == 60.0  # the per-move clocks stay


def test_the_totals_decide_at_the_end_of_the_game_clock():
    game = Game.from_fen(TOTALS, "damath")
    end = totals_end(game, 20)
    assert (end.winner, end.result) == (0, "1-0")
    assert end.termination == "time up after 20 min, totals 11 to 7"
    sci_dama = Game.from_fen(TOTALS, "damath", lower_wins=True)
    assert totals_end(sci_dama, 20).result == "0-1"
    # Black 4 points more: a score of -1, so Black's total is -1 + 8 + 4 = 11 as well
    assert totals_end(Game.from_fen(TOTALS.replace("S7,-5", "S7,-1"), "damath"),
                      20).result == "1/2-1/2"


def test_twenty_minutes_end_the_match_by_the_totals():
    game = match(fen=TOTALS)
    let_time_pass(game, 19 * 60 + 50)
    game.clocks.check()
    assert not game.over and 9 < game.state()["match"]["game_left"] <= 10
    let_time_pass(game, 11)
    game.clocks.check()
    assert (game.end.result, game.end.termination) == \
        ("1-0", "time up after 20 min, totals 11 to 7")
    assert '[Termination "time up after 20 min, totals 11 to 7"]' in game.pdn()


def test_four_violations_disqualify_a_player_who_is_ahead():
    game = match()
    black = ["4-8", "8-12", "12-16"]
    forced = []
    for n in range(1, 4):
        let_time_pass(game, 59)
        game.clocks.check()
        assert game.game.turn == 0 and game.match.violations == [n - 1, 0]  # not yet
        first = str(game.game.legal_moves()[0])
        let_time_pass(game, 2)
        game.clocks.check()  # the minute is up: a warning and the first legal move
        assert game.match.violations == [n, 0] and str(game.game.move_stack[-1]) == first
        assert f"warning {n} for ana (white)" in game.message and first in game.message
        forced.append(first)
        game.play(black[n - 1])
    assert forced == ["29-25", "25-21", "21-17"]
    assert game.match.forced == [0, 2, 4]
    assert [str(t) for t in game.game.totals()] == ["11", "-9"]  # White is ahead
    let_time_pass(game, 61)
    game.clocks.check()
    assert (game.end.result, game.end.termination) == \
        ("0-1", "disqualification (4th time violation)")
    assert "disqualified, whatever the score sheet says" in game.message
    pdn = game.pdn()
    assert '[Violations "White 4, Black 0"]' in pdn
    assert "{forced by the arbiter after the minute}" in pdn
    sheet = game.state()["sheet"]
    assert [r["forced"] for r in sheet] == [True, False, True, False, True, False]


def test_a_capture_has_no_minute():
    # White's 10 on 22 must take Black's 8 on 18 (22x13)
    game = match(fen="W:W22=10:B18=8,1=2")
    assert game.game.legal_moves()[0].is_capture
    let_time_pass(game, 300)
    game.clocks.check()
    assert not game.over and game.match.violations == [0, 0]
    assert game.clocks.remaining() is None and game.state()["clock"]["exempt"]


def test_touch_move_binds_the_chip_selected():
    game = match("sci-damath:touch")
    with pytest.raises(IllegalMoveError, match="the chip on 4 has no legal move"):
        game.touch(4)  # a Black chip: not the mover's
    game.touch(32)
    assert game.state()["match"]["touched"] == 32
    with pytest.raises(IllegalMoveError, match="the chip on 32 was touched and must move"):
        game.play("29-25")
    with pytest.raises(IllegalMoveError, match="the chip on 32 was touched"):
        game.touch(29)
    let_time_pass(game, 61)
    game.clocks.check()  # the forced move is the touched chip's
    assert str(game.game.move_stack[-1]) == "32-28" and game.match.touched is None
    with pytest.raises(InvalidOptionError, match="not played with touch move"):
        match().touch(32)


def test_the_coin_toss_decides_who_moves_first():
    # random.Random(seed).randrange(2): 0 for seed 1 (White first), 1 for seed 0 (Black)
    first, second = match(fen=None, seed=1), match(fen=None, seed=0)
    assert first.game.turn == 0 and first.options["first_player"] == "first"
    assert second.game.turn == 1 and second.options["first_player"] == "second"
    assert second.message == "coin toss: black (ben) moves first"
    assert "first_player=second" in second.pdn()
    assert first.options["turn_limit"] == 400  # the game clock, not 100 plies, ends it


def test_the_score_sheet_of_a_capture_with_a_dama():
    # White's dama 10 on 22, Damath (3,2), takes Black's 8 on 18 landing on 13, Damath
    # (1,4), a "+" square: 10 + 8 = 18, doubled (a dama takes a chip): 36
    game = Game.from_fen("W:WK22=10:B18=8,1=2", "damath")
    game.push("22x13")
    (row,) = ScoreSheet().rows(game)
    assert (row["move"], row["xy"], row["chip"], row["dama"]) == \
        ("22x13", "(3,2)x(1,4)", "10", True)
    assert row["jumps"] == [{"op": "+", "taker": "10", "taken": "8", "multiplier": 2,
                             "points": "36"}]
    assert (row["points"], row["scores"]) == ("36", ["36", "0"])
    csv = sheet_csv([row], ("56", "2"), "*", None)
    assert '1,1,white,22x13,"(3,2)x(1,4)",10,dama,10 + 8 (x2),36,36,0,\n' in csv
    assert csv.endswith("totals (chips left added; damas doubled),,,,,,,,,56,2,\n"
                        "result,*,,,,,,,,,,\n")


def test_the_match_survives_a_restart(tmp_path):
    from damii_app.serve.store import Store

    game = match("sci-damath:move=30")
    let_time_pass(game, 31)
    game.clocks.check()
    game.play("4-8")
    store = Store(tmp_path / "serve.sqlite3")  # the clock's spec in its column, as text
    store.open_live("g", game.record.row(), [str(m) for m in game.game.move_stack], {"owner"})
    (kept,) = store.live_games()
    store.close()
    assert kept["clock"] == "sci-damath:move=30" and kept["moves"] == ["29-25", "4-8"]
    again = LiveGame.restore(kept, NoPool())
    assert again.match.violations == [1, 0] and again.match.forced == [0]
    assert again.match.rules == MatchRules(30.0, 20.0) and again.game.turn == 0
    assert again.match.used[0] == pytest.approx(31, abs=0.5)


def test_a_move_sent_after_the_minute_is_too_late():
    game = match()
    let_time_pass(game, 61)  # the move arrives before the server's ticker looked
    with pytest.raises(IllegalMoveError, match="too late: white's minute was up"):
        game.play("32-28")
    assert [str(m) for m in game.game.move_stack] == ["29-25"]  # the arbiter's move
    assert game.match.violations == [1, 0] and game.game.turn == 1

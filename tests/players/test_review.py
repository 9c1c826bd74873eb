"""Game review (damii_agents.review): the losses, marks, clamping and summaries on
hand-built evaluations (the expected figures worked out by hand below, not by the code),
the annotated PDN, bad PDNs, and a searched position where a move hangs two men."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from damii_agents.review import (
    BLUNDER_MARGIN,
    CLAMP,
    DECIDED,
    WIN,
    PositionEval,
    ReviewError,
    Thresholds,
    analyse_game,
    make_review,
    move_loss,
    replay_checked,
    review_moves,
    value_text,
    verification_jobs,
)
from damii_agents.search.alphabeta import KNOWN_WIN
from damii_env import Game
from damii_env.pdn import PdnError, PdnGame, loads, record

DATA = Path(__file__).resolve().parent.parent / "data"

# 1. 32-28 19-23 2. 28x19 (forced: the only capture) 14x23 (one of two captures: 13x24 too)
MOVES = ["32-28", "19-23", "28x19", "14x23"]


def _game() -> PdnGame:
    return PdnGame(tags={"Variant": "international", "White": "W", "Black": "B"},
                   moves=list(MOVES), result="*")


def _positions(values: list[float], bests: list[str | None]) -> list[PositionEval]:
    """Hand-set evaluations (for the side to move) of the five positions of MOVES."""
    legal = [9, 9, 1, 2, 9]  # counted by hand from the positions (P2: 28x19 only)
    pairs = enumerate(zip(values, bests, strict=True))
    return [PositionEval(ply=i, turn=i % 2, value=v, best=b, line=(b,) if b else (),
                         legal=legal[i]) for i, (v, b) in pairs]


def test_the_legal_move_counts_used_below_are_right():
    games = replay_checked(_game())
    assert [len(g.legal_moves()) for g in games] == [9, 9, 1, 2, 9]


def test_losses_and_marks_on_a_hand_built_game():
    # P0 White +20, plays the engine's move; P1 Black +10, best 18-22, plays 19-23 after
    # which White (P2) has +140: Black's move is worth -140 for Black, loss 10 + 140 = 150
    # (a mistake: 100 <= 150 < 200); P2 the forced capture (no loss whatever the values);
    # P3 Black -130 with best 13x24, plays 14x23 and White then has +420: loss
    # -130 + 420 = 290 (a blunder).
    game = _game()
    positions = _positions([20, 10, 140, -130, 420], ["32-28", "18-22", "28x19", "13x24",
                                                        "34-29"])
    moves = review_moves(game, positions)
    assert [m.loss for m in moves] == [0.0, 150.0, 0.0, 290.0]
    assert [m.mark for m in moves] == ["", "?", "", "??"]
    assert [m.forced for m in moves] == [False, False, True, False]
    assert [m.after_white for m in moves] == [-10.0, 140.0, 130.0, 420.0]
    white, black = make_review(game, positions, "test", 0.1).summary()
    assert (white.moves, white.average_loss) == (2, 0.0)
    assert (black.moves, black.average_loss) == (2, 220.0)  # (150 + 290) / 2
    assert black.marks == {"?!": 0, "?": 1, "??": 1}


def test_a_move_no_worse_than_the_engines_choice_loses_nothing():
    # Black's 19-23 leaves White -30 (Black +30), better than the best's +10: no loss.
    positions = _positions([0, 10, -30, 0, 0], ["32-28", "18-22", "28x19", "14x23", None])
    assert review_moves(_game(), positions)[1].loss == 0.0


def test_a_decided_game_is_clamped():
    # Black's best wins by force (WIN - 9); after 19-23 White is -400 (Black +400): both
    # clamped to DECIDED (500, five men) and 400, loss 100. After a move leaving Black
    # +900 (clamped to 500): no loss, the game stays won.
    assert DECIDED == 500.0
    positions = _positions([0, WIN - 9, -400, 0, 0], ["32-28", "18-22", "28x19", "14x23",
                                                      None])
    assert review_moves(_game(), positions)[1].loss == DECIDED - 400
    positions = _positions([0, WIN - 9, -900, 0, 0], ["32-28", "18-22", "28x19", "14x23",
                                                      None])
    assert review_moves(_game(), positions)[1].loss == 0.0


def test_a_move_into_a_forced_loss_from_a_lost_game_is_no_blunder():
    # Black at -620 (six men behind, not yet a forced loss by the search) plays 19-23,
    # after which White wins by force (WIN - 11): both beyond DECIDED, no loss. From
    # -250 the same move loses 500 - 250 = 250, a blunder; the graph keeps +-CLAMP.
    positions = _positions([0, -620, WIN - 11, 0, 0], ["32-28", "18-22", "28x19", "14x23",
                                                        None])
    review = make_review(_game(), positions, "test", 0.1)
    assert (review.moves[1].loss, review.moves[1].mark) == (0.0, "")
    assert review.graph()[2] == CLAMP  # White's forced win, drawn at ten men
    positions = _positions([0, -250, WIN - 11, 0, 0], ["32-28", "18-22", "28x19", "14x23",
                                                        None])
    assert [(m.loss, m.mark) for m in review_moves(_game(), positions)][1] == (250.0, "??")
    # the old clamp (ten men, move_loss's `decided`) would call the first one 380
    before, after = positions[1], replace(positions[2], value=WIN - 11)
    assert move_loss(replace(before, value=-620), after, "19-23", decided=CLAMP) == 380.0


def test_thresholds_are_inclusive_and_checked():
    t = Thresholds(50, 100, 200, blunder_margin=0)
    assert [t.mark(x) for x in (0, 49.9, 50, 99.9, 100, 199.9, 200, 1e9)] == [
        "", "", "?!", "?!", "?", "?", "??", "??"]
    assert Thresholds.parse("30, 60,90") == Thresholds(30, 60, 90)
    assert Thresholds.parse("30,60,90,5") == Thresholds(30, 60, 90, blunder_margin=5)
    for bad in ("100,50,200", "0,1,2", "nan,1,2"):
        with pytest.raises(ReviewError, match="ordered"):
            Thresholds.parse(bad)
    for bad in ("50,100,200,-1", "50,100,200,nan"):
        with pytest.raises(ReviewError, match="margin must be 0 or more"):
            Thresholds.parse(bad)
    with pytest.raises(ReviewError, match="three numbers"):
        Thresholds.parse("50,100")


def test_a_blunder_must_clear_the_threshold_by_the_margin():
    # the default: two men, and a tenth of a man above them for a ?? (from 200 to 210 a
    # ?: the band where a search twice as long does not hold two men nine times in ten)
    assert (Thresholds().blunder, BLUNDER_MARGIN) == (200.0, 10.0)
    t = Thresholds()
    assert [t.mark(x) for x in (199.9, 200, 205, 209.9, 210, 1e9)] == [
        "?", "?", "?", "?", "??", "??"]
    assert [t.within_margin(x) for x in (199.9, 200, 209.9, 210)] == [
        False, True, True, False]
    t = Thresholds(40, 90, 180, blunder_margin=30)  # the margin is above any blunder mark
    assert [t.mark(x) for x in (179.9, 180, 209.9, 210)] == ["?", "?", "?", "??"]


def test_a_move_within_the_margin_is_a_mistake_with_its_reason():
    # the hand-built game of above with P3 at -215 for Black instead of -130: 14x23 then
    # loses -215 + 420 = 205, two men and a twentieth: a blunder with no margin, a mistake
    # with the default one (205 < 200 + 10); 19-23 (150) is a mistake either way
    game = _game()
    positions = _positions([20, 10, 140, -215, 420], ["32-28", "18-22", "28x19", "13x24",
                                                        "34-29"])
    plain = make_review(game, positions, "test", 0.2, Thresholds(blunder_margin=0))
    assert [(m.loss, m.mark) for m in plain.moves] == [
        (0.0, ""), (150.0, "?"), (0.0, ""), (205.0, "??")]
    review = make_review(game, positions, "test", 0.2)
    assert [m.mark for m in review.moves] == ["", "?", "", "?"]
    assert review.summary()[1].marks == {"?!": 0, "?": 2, "??": 0}
    comment = review.move_comment(review.moves[3])
    assert comment.startswith("+4.20; mistake (2.05 men, within the search's margin of a "
                              "blunder); better 13x24")
    assert "within" not in review.move_comment(review.moves[1])  # 1.50 men: no band
    assert review.to_dict()["blunder_margin"] == 10.0
    # at -130 (loss 290) the move clears the margin: a blunder with or without it
    positions[3] = replace(positions[3], value=-130)
    assert make_review(game, positions, "test", 0.2).moves[3].mark == "??"


def test_value_texts():
    assert value_text(125.0) == "+1.25"
    assert value_text(-40.0) == "-0.40"
    assert value_text(125.0, scoring=True) == "+12.5"  # Sci-Damath: 10 units a point
    assert value_text(WIN - 12) == "W12"
    assert value_text(-(WIN - 3)) == "L3"
    assert value_text(KNOWN_WIN - 9 - 4) == "Wdb"  # the endgame database's win at ply 9
    assert value_text(-(KNOWN_WIN - 2)) == "Ldb"


def test_the_annotated_pdn_reads_back_with_its_marks_and_lines():
    game = _game()
    positions = _positions([20, 10, 140, -130, 420], ["32-28", "18-22", "28x19", "13x24",
                                                        "34-29"])
    text = make_review(game, positions, "pretrained:international", 0.2).annotated().to_text()
    assert "19-23?" in text and "14x23??" in text and "32-28 {" in text
    assert "better 13x24" in text and "blunder (2.90 men)" in text
    assert '[Annotator "damii analyse pretrained:international, 0.2 s a position"]' in text
    back = loads(text)[0]
    assert back.moves == MOVES  # the marks are skipped by the reader
    assert back.comments[0] == "-0.10"  # White's view after 32-28: -(+10 for Black)


def test_the_number_of_positions_must_fit_the_moves():
    with pytest.raises(ReviewError, match="one more position than moves"):
        review_moves(_game(), _positions([0, 0, 0, 0, 0], [None] * 5)[:4])


# --- bad PDNs ----------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "match"), [
    ('[Variant "international"]\n1. 32-28 19-30 *', r"move 1\.\.\. 19-30 \(ply 2\) cannot be "
                                                   r"played"),
    ('[Variant "international"]\n1. 32-28 19-23 2. 31-27 *', r"move 2\. 31-27 \(ply 3\)"),
    ('[Variant "chess"]\n1. 32-28 *', "unknown variant"),
    ('[Event "x"]\n1. 32-28 *', "no Variant or GameType tag"),
    ('[Variant "damii"]\n*', "no moves"),
    ('[Variant "international"]\n[FEN "W:W99:B1"]\n1. 32-28 *', "start cannot be set up"),
])
def test_bad_pdns_name_the_move_and_the_reason(text, match):
    with pytest.raises(PdnError, match=match):
        replay_checked(loads(text)[0])


def test_a_move_after_the_end_is_named():
    # 28x19 takes Black's last man: the game is over before 19-13
    text = '[Variant "international"]\n[FEN "W:W28:B23"]\n1. 28x19 19-13 1-0'
    with pytest.raises(PdnError, match=r"19-13 \(ply 2\) comes after the game ended"):
        replay_checked(loads(text)[0])


# --- a real search ------------------------------------------------------------------------
def test_a_move_that_hangs_two_men_is_marked():
    """White men 32, 39, 46-48 against Black 1-5 and 22: 32-28 lets 22x33x44 take two men
    (no white man can take back on 44: 49 and 50 are empty and 40, 43 hold none), a loss of
    at least a man by any sound evaluation; 48-43 loses nothing."""
    game = Game.from_fen("W:W32,39,46,47,48:B1,2,3,4,5,22", "international")
    for move in ("32-28", "22x33x44", "48-43"):
        game.push(move)
    review = analyse_game(record(game), "pretrained:international", seconds=0.1)
    blunder, capture, quiet = review.moves
    assert blunder.best not in ("32-28", "32-27")  # 32-27 hangs a man too (22x31)
    assert blunder.loss >= Thresholds().mistake and blunder.mark in ("?", "??")
    assert blunder.line[0] == blunder.best and len(blunder.line) >= 2
    assert capture.forced and capture.mark == ""
    assert quiet.mark in ("", "?!")


def test_marked_moves_are_searched_again_and_judged_on_the_longer_searches():
    game = _game()
    positions = _positions([20, 10, 140, -130, 420], ["32-28", "18-22", "28x19", "13x24",
                                                        "34-29"])
    # the moves reaching a mark by the first searches: 19-23 (ply 1, loss 150) and 14x23
    # (ply 3, loss 290), each with its two positions, twice the time
    jobs = verification_jobs(game, positions, "pretrained:international", 0.2)
    assert [(j.plies, j.seconds) for j in jobs] == [((1, 2), 0.4), ((3, 4), 0.4)]
    # the longer searches of 19-23's positions: Black +10 with 18-22, then White +40:
    # loss 10 + 40 = 50, an inaccuracy; the graph keeps the first searches' +140
    deeper = [PositionEval(ply=1, turn=1, value=10, best="18-22", line=("18-22", "33-28"),
                           legal=9),
              PositionEval(ply=2, turn=0, value=40, best="28x19", legal=1)]
    moves = review_moves(game, positions, verified=deeper)
    assert (moves[1].loss, moves[1].mark, moves[1].after_white) == (50.0, "?!", 140.0)
    assert moves[1].line == ("18-22", "33-28")
    assert (moves[3].loss, moves[3].mark) == (290.0, "??")  # not searched again here


def test_consecutive_marked_moves_are_searched_again_in_one_run():
    # White's 32-28 at P0 (+20, best 31-27) leaves Black +130: loss 150; Black's 19-23 at
    # P1 (+130) leaves White +140: loss 270. Both marked: one run of P0, P1, P2 (each
    # position once), the engine's move valued by its position at P0 and P1 (`judged`).
    positions = _positions([20, 130, 140, -130, 130], ["31-27", "18-22", "28x19", "14x23",
                                                        "34-29"])
    jobs = verification_jobs(_game(), positions, "pretrained:international", 0.2)
    assert [(j.plies, j.judged) for j in jobs] == [((0, 1, 2), (0, 1))]
    # a ply searched twice (by an older caller, or a job run again) is judged by the
    # search that valued the engine's move by its position, whatever the order
    first = PositionEval(ply=1, turn=1, value=130, best="18-22", legal=9)
    judged = replace(first, best_after=-100)
    deeper = [positions[0], first, judged, PositionEval(ply=2, turn=0, value=140, legal=1,
                                                        best="28x19")]
    for order in (deeper, deeper[::-1]):
        moves = review_moves(_game(), positions, verified=order)
        assert moves[1].loss == -100 + 140  # by best_after, not by the root's +130


@pytest.mark.slow
def test_blunders_hold_under_a_longer_search():
    """The issue's check of the marks, on a few games of ``damii eval`` between
    ``alphabeta:depth=2`` and ``pretrained:international`` (tests/data/review_games.pdn:
    six of the 40 games of docs/ANALYSE.md's figure, those where its review marked a
    ``??``, the one that did not hold included): the moves marked ``??`` at 0.2 s a
    position, searched again by a fresh player at 0.4 s (both their positions, each on a
    cleared table: :func:`recheck`), still lose at least the blunder threshold. The
    issue's target is 90% (docs/ANALYSE.md has the figures over 20 and 40 games); on a
    handful of marks, each near the threshold a coin's toss for a search of 0.4 s, this
    holds them to two in three."""
    from damii_agents.review import recheck, searchers
    from damii_env.pdn import read_file

    held = total = 0
    with searchers(2) as runner:
        for game in read_file(str(DATA / "review_games.pdn")):
            review = analyse_game(game, seconds=0.2, runner=runner)
            plies = [m.ply for m in review.moves if m.mark == "??"]
            losses = recheck(review, plies, 0.4)
            held += sum(1 for x in losses if x >= Thresholds().blunder)
            total += len(plies)
    assert total >= 3, f"{total} blunders in the six games: the check says little"
    assert held / total >= 2 / 3, f"{held} of {total} ?? moves held at 0.4 s"


def test_the_second_look_values_the_engines_move_by_the_position_it_leads_to():
    # Black +10 at P with 18-22 by P's own search, but the position after 18-22 searched
    # as long as the one after 19-23 gives 18-22 only -100 for Black; after 19-23 White
    # has +140 (Black -140): loss -100 + 140 = 40, no mark (by P's value it would be 150).
    before = PositionEval(ply=1, turn=1, value=10, best="18-22", legal=9, best_after=-100)
    after = PositionEval(ply=2, turn=0, value=140, best="28x19", legal=1)
    assert move_loss(before, after, "19-23") == 40.0
    assert move_loss(replace(before, best_after=None), after, "19-23") == 150.0


def test_the_principal_line_is_legal_and_leaves_the_roots_verdict():
    from damii_agents.review import build_searcher

    player = build_searcher("alphabeta:depth=5", "international", 0.2)
    game = Game("international")
    first = player.choose(game)
    value, depth = player.last_value, player.last_depth
    line = player.principal_line(game, plies=6)
    assert line[0] == first and 1 <= len(line) <= 6
    replay = game.copy()
    for move in line:  # each a legal move of the position it is played from
        assert move in replay.legal_moves()
        replay.push(move)
    assert (player.last_value, player.last_depth) == (value, depth)
    with pytest.raises(ValueError, match="at least one move"):
        player.principal_line(game, plies=0)

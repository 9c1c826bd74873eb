"""The repetition claim (rule option ``repetition_claim``): Damii's "either player may
claim a Draw" at the third occurrence, play going on until one does; the option's checks;
and the automatic rule left as it was by default."""

from __future__ import annotations

import pytest

import damii_env as d
from damii_env.errors import GameOverError, IllegalMoveError, InvalidOptionError
from damii_env.rules import make_rules

# two lone kings going back and forth: the start position comes back after four plies
SHUFFLE = ["46-41", "5-10", "41-46", "10-5"] * 3
CLAIMS = {"repetition": 0, "repetition_claim": 3}


def _shuffled(plies: int, **options: int) -> d.Game:
    game = d.Game.from_fen("W:WK46:BK5", "damii", **options)
    for text in SHUFFLE[:plies]:
        game.push(text)
    return game


def test_the_count_and_the_claim_at_the_third_occurrence():
    # the start position (White to move) stands at plies 0, 4 and 8; the one after 46-41
    # (Black to move) at plies 1, 5 and 9
    expected = [1, 1, 1, 1, 2, 2, 2, 2, 3, 3]
    for plies, count in enumerate(expected):
        game = _shuffled(plies, **CLAIMS)
        assert game.repetition_count() == count, plies
        assert game.can_claim_draw() is (count >= 3), plies
        assert not game.is_over()


def test_play_goes_on_until_a_player_claims():
    game = _shuffled(8, **CLAIMS)
    assert game.legal_moves() and game.result() == "*"
    game.push("46-41")  # nobody claimed: play goes on, and this position is there a 3rd time
    assert game.repetition_count() == 3 and game.can_claim_draw()
    outcome = game.claim_draw()
    assert (outcome.winner, outcome.termination) == (None, "threefold repetition claimed")
    assert game.is_over() and game.result() == "1/2-1/2" and game.status() == "draw"
    assert game.legal_moves() == []
    with pytest.raises(GameOverError, match="threefold repetition claimed"):
        game.push("5-10")
    game.pop()  # takes back the move and the claim
    assert not game.is_over() and game.ply == 8 and game.can_claim_draw()


def test_a_claim_before_the_third_occurrence_is_refused_and_changes_nothing():
    game = _shuffled(7, **CLAIMS)
    with pytest.raises(IllegalMoveError, match="occurred 2 times; a claim needs 3"):
        game.claim_draw()
    assert not game.is_over() and game.ply == 7


def test_without_the_option_the_automatic_rule_ends_the_game_as_before():
    game = _shuffled(8)
    assert game.is_over() and game.outcome().termination == "threefold repetition"
    assert game.rules.repetition_claim == 0 and not game.can_claim_draw()
    with pytest.raises(InvalidOptionError, match="repetition_claim is 0"):
        _shuffled(3).claim_draw()


def test_a_copy_keeps_the_claim():
    game = _shuffled(8, **CLAIMS)
    game.claim_draw()
    assert game.copy().is_over() and game.copy().result() == "1/2-1/2"


@pytest.mark.parametrize("options, message", [
    ({"repetition_claim": 3}, "would end by itself when the position occurs 3 times"),
    ({"repetition_claim": 1, "repetition": 0}, "0 \\(off\\) or at least 2, got 1"),
    ({"repetition_claim": -2, "repetition": 0}, "integer from 0 to 1000, got -2"),
    ({"repetition_claim": True, "repetition": 0}, "integer from 0 to 1000, got True"),
    ({"repetition_claim": "3", "repetition": 0}, "integer from 0 to 1000, got '3'"),
])
def test_bad_claim_options_are_refused_with_what_is_expected(options, message):
    with pytest.raises(InvalidOptionError, match=message):
        make_rules("damii", **options)


def test_a_claim_before_a_later_automatic_draw_is_allowed():
    rules = make_rules("damii", repetition=5, repetition_claim=3)
    assert (rules.repetition, rules.repetition_claim) == (5, 3)
    game = _shuffled(8, repetition=5, repetition_claim=3)
    assert game.can_claim_draw() and not game.is_over()


def test_the_option_travels_in_pdn():
    from damii_env.pdn import loads, record

    game = _shuffled(8, **CLAIMS)
    game.claim_draw()
    text = record(game).to_text()
    assert "repetition=0,repetition_claim=3" in text and '[Result "1/2-1/2"]' in text
    (again,) = loads(text)
    replayed = again.replay()
    assert replayed.rules.repetition_claim == 3 and replayed.can_claim_draw()


def test_a_sci_damath_claim_is_decided_by_the_totals():
    # a White dama of value 6 on 21 against a Black dama of value 2 on 4, no score yet:
    # totals 2 x 6 = 12 and 2 x 2 = 4 (damas double), so a claimed draw is decided by the
    # totals, as every Sci-Damath end: White wins
    fen = "W:WK21=6:BK4=2"
    game = d.Game.from_fen(fen, "damath", repetition=0, repetition_claim=2)
    moves = [m for m in game.legal_moves() if not m.is_capture]
    first = moves[0]
    game.push(first)
    back = [m for m in game.legal_moves()][0]
    game.push(back)
    game.push(f"{first.path[1]}-{first.path[0]}")
    game.push(f"{back.path[1]}-{back.path[0]}")
    assert game.repetition_count() == 2
    assert [str(t) for t in game.totals()] == ["12", "4"]  # damas count double
    outcome = game.claim_draw()
    assert outcome.winner == 0 and game.result() == "1-0"

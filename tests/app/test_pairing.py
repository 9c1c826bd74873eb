"""Tournament pairings and tie-breaks (damii_app.serve.pairing) against tables worked out
by hand: round robins (each pair once, colours even), Swiss rounds (no repeat, colour
balance, score groups, byes) and the Sonneborn-Berger and Buchholz tie-breaks."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("fastapi")  # the package damii_app.serve is the web app's

from damii_app.serve.pairing import (  # noqa: E402
    ROUND_ROBIN,
    SWISS,
    must_have,
    records,
    round_robin,
    standings,
    swiss_round,
)
from damii_app.serve.tournaments import max_swiss_rounds, normal_result  # noqa: E402


def test_a_round_robin_of_four_by_the_circle_method():
    # by hand: A fixed, B C D turning one place each round (D C B, then C B D); the
    # fixed player's colour alternates by round, board 2 has the turning pair reversed
    assert round_robin(["A", "B", "C", "D"]) == [
        [("A", "D"), ("C", "B")],
        [("C", "A"), ("B", "D")],
        [("A", "B"), ("D", "C")],
    ]


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7, 8, 9, 10])
def test_a_round_robin_meets_each_pair_once_with_even_colours(n):
    players = [f"p{i}" for i in range(n)]
    rounds = round_robin(players)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    games = [b for r in rounds for b in r if b[1] is not None]
    assert len({frozenset(g) for g in games}) == len(games) == n * (n - 1) // 2
    whites = {p: sum(1 for w, _ in games if w == p) for p in players}
    blacks = {p: sum(1 for _, b in games if b == p) for p in players}
    assert all(abs(whites[p] - blacks[p]) <= 1 for p in players)
    byes = [w for r in rounds for w, b in r if b is None]
    assert sorted(byes) == (sorted(players) if n % 2 else [])  # an odd count: once each


def test_a_swiss_of_five_first_round_and_its_bye():
    # all on 0: the bye to the lowest seed (E); the group A B C D in halves A B | C D:
    # A-C, B-D, White to the higher seed in round 1
    assert swiss_round(list("ABCDE"), [], 1) == [("A", "C"), ("B", "D"), ("E", None)]


def test_a_swiss_pairs_within_score_groups_and_gives_no_second_bye():
    games = [("A", "C", "1-0"), ("B", "D", "0-1"), ("E", None, "bye")]
    # by hand: A 1, D 1, E 1 (the bye); B 0, C 0. The bye: the lowest without one, C.
    # Group A D E: A meets the top of the bottom half, D (A had White, D Black: D
    # White); E floats down to B (E no game, B one White: E White)
    assert swiss_round(list("ABCDE"), games, 2) == [("D", "A"), ("E", "B"), ("C", None)]


def test_a_swiss_never_repeats_and_keeps_colours_balanced():
    for n in (4, 5, 6, 7, 8, 9, 12):
        for seed in range(20):
            rng = random.Random(seed)
            players = [f"p{i}" for i in range(n)]
            games: list = []
            for number in range(1, max_swiss_rounds(n) + 1):
                for white, black in swiss_round(players, games, number):
                    result = "bye" if black is None else rng.choice(["1-0", "0-1", "1/2-1/2"])
                    games.append((white, black, result))
            met = [frozenset((w, b)) for w, b, _ in games if b is not None]
            assert len(met) == len(set(met)), (n, seed)
            byes = [w for w, b, _ in games if b is None]
            assert len(byes) == len(set(byes)), (n, seed)
            for rec in records(players, games).values():
                assert abs(rec.balance) <= 2, (n, seed, rec)
                assert "www" not in "".join(rec.colours) and "bbb" not in "".join(rec.colours)
                if n % 2 == 0:  # no byes: whites and blacks differ by at most one
                    assert abs(rec.balance) <= 1, (n, seed, rec)


def test_colour_rules_by_hand():
    recs = records(list("ABCD"), [("A", "B", "1-0"), ("C", "A", "1-0"), ("A", "D", "1-0"),
                                  ("B", "C", "0-1")])
    # A: w b w (balance +1, last w): no absolute need; B: b w (0); C: w b; D: b
    assert [must_have(recs[p]) for p in "ABCD"] == [None, None, None, None]
    recs = records(list("AB"), [("A", "B", "1-0"), ("A", "B", "0-1")])
    assert must_have(recs["A"]) == "b" and must_have(recs["B"]) == "w"  # two in a row
    # round 2 after A-C 1-0 and B-D 1-0: the 1-point group A B, the 0 group C D; A and
    # B both had White once (even, and the same last colour): in an even round White
    # goes to the lower ranked, B; likewise D against C
    assert swiss_round(list("ABCD"), [("A", "C", "1-0"), ("B", "D", "1-0")], 2) == [
        ("B", "A"), ("D", "C")]


def test_a_swiss_that_cannot_avoid_a_repeat_says_so():
    games = [("A", "B", "1-0")]
    with pytest.raises(ValueError, match="no pairing of round 2 avoids a repeat"):
        swiss_round(["A", "B"], games, 2)
    assert max_swiss_rounds(2) == 1 and max_swiss_rounds(5) == 4 and max_swiss_rounds(8) == 5


def test_sonneborn_berger_against_a_hand_worked_round_robin():
    games = [("A", "B", "1-0"), ("C", "D", "1/2-1/2"), ("A", "C", "0-1"),
             ("B", "D", "1-0"), ("A", "D", "1-0"), ("B", "C", "1-0")]
    # points: A 1 + 0 + 1 = 2; B 0 + 1 + 1 = 2; C 1/2 + 1 + 0 = 1.5; D 1/2 + 0 + 0 = 0.5
    # Sonneborn-Berger = sum of (opponent's points x own score in that game):
    #   A: beat B 2x1 + lost to C 0 + beat D 0.5x1           = 2.5
    #   B: lost to A 0 + beat D 0.5x1 + beat C 1.5x1          = 2.0
    #   C: drew D 0.5x0.5 + beat A 2x1 + lost to B 0          = 2.25
    #   D: drew C 1.5x0.5                                     = 0.75
    table = standings(list("ABCD"), games, ROUND_ROBIN)
    assert [(r["rank"], r["name"], r["points"], r["tiebreak"]) for r in table] == [
        (1, "A", 2.0, 2.5), (2, "B", 2.0, 2.0), (3, "C", 1.5, 2.25), (4, "D", 0.5, 0.75)]
    assert (table[0]["wins"], table[0]["draws"], table[0]["losses"]) == (2, 0, 1)


def test_buchholz_against_a_hand_worked_swiss_with_a_bye():
    games = [("A", "C", "1-0"), ("B", "D", "1/2-1/2"), ("E", None, "bye"),
             ("E", "A", "0-1"), ("D", "B", "0-1"), ("C", None, "bye")]
    # points (a bye scores 1): A 1 + 1 = 2; B 1/2 + 1 = 1.5; C 0 + 1 = 1;
    # D 1/2 + 0 = 0.5; E 1 + 0 = 1
    # Buchholz = sum of the opponents' points (a bye adds nothing):
    #   A: C 1 + E 1 = 2;  B: D 0.5 + D 0.5 = 1;  C: A 2 = 2;
    #   D: B 1.5 + B 1.5 = 3;  E: A 2 = 2
    table = standings(list("ABCDE"), games, SWISS)
    assert [(r["rank"], r["name"], r["points"], r["tiebreak"]) for r in table] == [
        (1, "A", 2.0, 2.0), (2, "B", 1.5, 1.0), (3, "C", 1.0, 2.0), (3, "E", 1.0, 2.0),
        (5, "D", 0.5, 3.0)]
    # a result still missing counts for nobody; a round robin's bye scores nothing
    assert standings(list("AB"), [("A", "B", "")], SWISS)[0]["points"] == 0.0
    rr = standings(list("ABC"), [("A", None, "bye"), ("B", "C", "1-0")], ROUND_ROBIN)
    assert [(r["name"], r["points"]) for r in rr] == [("B", 1.0), ("A", 0.0), ("C", 0.0)]


def test_results_as_a_tournament_counts_them():
    assert [normal_result(r) for r in ("1-0", "2-0", "0-2", "1-1", "1/2-1/2", "*", "0-0",
                                       None)] == ["1-0", "1-0", "0-1", "1/2-1/2", "1/2-1/2",
                                                  "*", "*", None]
    with pytest.raises(ValueError, match="system must be"):
        standings(["A"], [], "knockout")

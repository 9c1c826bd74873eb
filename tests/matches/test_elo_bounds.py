"""Elo intervals after a sweep (issue 29): the unbounded end is said, the other end is the
one-sided binomial bound of the sweep, not a zero-width bootstrap interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from damii_agents.match.elo import rate, sweep_bound, unbounded
from damii_agents.match.reports import interval


def test_a_10_0_sweep_is_unbounded_above_with_a_one_sided_low_end():
    ratings = rate(["anchor", "winner"], [(0, 1, 0.0)] * 5 + [(1, 0, 1.0)] * 5, samples=200)
    winner = ratings[1]
    assert winner.high == math.inf
    # by hand: P(10 wins of 10) = p**10 = 0.025 at p = 0.025 ** 0.1 = 0.69150;
    # Elo = 400 log10(p / (1 - p)) = 400 log10(2.2415) = +140.2
    assert winner.low == pytest.approx(140.2, abs=0.1)
    assert winner.elo > winner.low  # the estimate itself is the prior's (+529)
    assert interval(winner.low, winner.high) == "[+140, +inf)"


def test_a_zero_score_is_unbounded_below():
    ratings = rate(["anchor", "loser"], [(0, 1, 1.0)] * 20, samples=100)
    assert ratings[1].low == -math.inf
    assert ratings[1].high == pytest.approx(-sweep_bound(20), abs=1e-9)
    assert interval(ratings[1].low, ratings[1].high).startswith("(-inf, -")


def test_sweep_bound_against_the_binomial_by_hand():
    # 20-0: p = 0.025 ** (1/20) = exp(-0.184444) = 0.831570,
    # Elo = 400 log10(0.831570 / 0.168430) = 400 log10(4.93718) = +277.39
    assert sweep_bound(20) == pytest.approx(277.39, abs=0.01)
    assert sweep_bound(10, level=0.9) == pytest.approx(  # p = 0.05 ** 0.1 = 0.74113
        400 * math.log10(0.74113 / 0.25887), abs=0.05)


def test_a_score_with_a_point_either_way_keeps_its_bootstrap_interval():
    games = [(0, 1, 0.0)] * 9 + [(0, 1, 1.0)]  # 9-1
    ratings = rate(["a", "b"], games, samples=300)
    assert math.isfinite(ratings[1].low) and math.isfinite(ratings[1].high)
    assert ratings[1].low < ratings[1].elo < ratings[1].high


def test_unbounded_follows_chains_of_points():
    # a (anchor) drew with b; b swept c; c swept d: c and d are unbounded below only
    W = np.array([[0, 1, 0, 0], [1, 0, 4, 0], [0, 0, 0, 4], [0, 0, 0, 0]], dtype=float)
    N = np.array([[0, 2, 0, 0], [2, 0, 4, 0], [0, 4, 0, 4], [0, 0, 4, 0]], dtype=float)
    above, below = unbounded(W, N, anchor=0)
    assert above.tolist() == [False, False, False, False]
    assert below.tolist() == [False, False, True, True]
    # with a draw between c and d, d is still cut off from the anchor (c never scored)
    ratings = rate(list("abcd"), [(1, 2, 1.0)] * 4 + [(2, 3, 1.0)] * 4 + [(0, 1, 0.5)] * 2,
                   samples=50)
    assert ratings[2].low == -math.inf and ratings[3].low == -math.inf
    assert math.isfinite(ratings[2].high)  # c never met the anchor: the bootstrap's end


def test_the_eval_footer_says_what_inf_means(tmp_path, capsys):
    from damii_app.cli import main

    rc = main(["eval", "random", "alphabeta:depth=2", "--games", "4", "--clock", "none",
               "--no-progress", "--out", str(tmp_path), "--seed", "1"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "alphabeta:depth=2 vs random" not in out  # random is the anchor, listed first
    assert "4 (100.0%)" in out and "+inf)" in out  # alpha-beta swept random here
    assert "one-sided binomial bound" in out
    import json

    data = json.loads((tmp_path / "results.json").read_text())
    swept = next(r for r in data["ratings"] if r["name"] == "alphabeta:depth=2")
    assert swept["high"] is None and swept["low"] == pytest.approx(sweep_bound(4), abs=1e-6)

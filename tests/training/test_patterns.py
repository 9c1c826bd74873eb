"""Training of the learned evaluation (damii_training.patterns): the labels' sign, the
fit's direction on positions made by hand, the config checks, and a whole tiny run
through ``damii train``."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from damii_agents.search import evaluation as EV
from damii_env import compiled as C
from damii_env.errors import DamiiError
from damii_training import patterns as P


def test_the_winner_gets_1_and_the_loser_0():
    mover = np.array([0, 1, 0, 1])
    assert P._labels(C.WHITE_WINS, mover).tolist() == [1.0, 0.0, 1.0, 0.0]
    assert P._labels(C.BLACK_WINS, mover).tolist() == [0.0, 1.0, 0.0, 1.0]
    assert P._labels(C.DRAW, mover).tolist() == [0.5] * 4
    assert P._labels(C.TRUNCATED, mover).tolist() == [0.5] * 4


def test_a_drawn_game_goes_to_the_side_enough_pieces_up_when_adjudicating():
    mover = np.array([0, 1, 0, 1])
    for undecided in (C.DRAW, C.TRUNCATED, C.ONGOING):  # by a rule, or cut
        assert P._labels(undecided, mover, 3, 2).tolist() == [1.0, 0.0, 1.0, 0.0]
        assert P._labels(undecided, mover, -2, 2).tolist() == [0.0, 1.0, 0.0, 1.0]
        assert P._labels(undecided, mover, 1, 2).tolist() == [0.5] * 4  # lead too small
        assert P._labels(undecided, mover, 5, 0).tolist() == [0.5] * 4  # off
    # a game won on the board keeps its result whatever the material says
    assert P._labels(C.BLACK_WINS, mover, 4, 2).tolist() == [0.0, 1.0, 0.0, 1.0]


def test_adjudication_changes_only_drawn_games_labels():
    """The same self-play games with and without adjudication: the same positions; the
    labels differ only in games labelled a draw without it, and there by colour."""
    base = {"variant": "triestine", "games": 20, "depth": 1, "eval_games": 0}
    plain, st0 = P.generate(P.config_from_dict(base), seed=3, progress=False)
    judged, st = P.generate(P.config_from_dict({**base, "adjudicate": 1}), seed=3,
                            progress=False)
    assert np.array_equal(plain.occupied, judged.occupied)
    assert st0["adjudicated"] == 0 and 0 < st["adjudicated"] <= st["drawn"] == st0["drawn"]
    changed = 0
    for g in np.unique(plain.game):
        rows = plain.game == g
        if not np.array_equal(plain.label[rows], judged.label[rows]):
            changed += 1
            assert np.all(plain.label[rows] == 0.5)
            assert set(judged.label[rows].tolist()) == {0.0, 1.0}  # one side won
            # the side ahead in the game's last quiet position is the one that won (a
            # drawn game's last moves take nothing)
            last = np.flatnonzero(rows)[-1]
            lead = judged.dense[last, EV.D_MEN] + judged.dense[last, EV.D_KINGS]
            assert abs(lead) >= 1 and (judged.label[last] == 1.0) == (lead > 0)
    assert changed == st["adjudicated"]


def _hand_positions(n: int, seed: int = 0) -> P.Positions:
    """Positions whose result follows the men difference: one man up wins, one down
    loses; every other feature is noise."""
    rng = np.random.default_rng(seed)
    R, S = 16, 50
    men = rng.choice([-1, 1], size=n)
    dense = np.zeros((n, EV.N_DENSE), dtype=np.float32)
    dense[:, EV.D_MEN] = men
    dense[:, EV.D_MOBILITY] = rng.integers(5, 15, size=n)
    dense[:, EV.D_TEMPO] = 1
    occupied = np.full((n, S), -1, dtype=np.int16)
    occupied[:, :3] = rng.integers(0, 4 * S, size=(n, 3))
    return P.Positions(rng.integers(0, EV.PATTERNS, size=(n, R)).astype(np.uint16), occupied,
                       dense, np.where(men > 0, 1.0, 0.0).astype(np.float32),
                       np.arange(n) // 10, np.full(n, np.nan, dtype=np.float32))


def test_fit_learns_that_a_man_up_wins():
    config = P.config_from_dict({"variant": "damii", "epochs": 3})
    weights, curve = P.fit(_hand_positions(4000), config, progress=False)
    assert weights.dense[EV.D_MEN] > 100  # a man up: better than e to 1 odds of winning
    assert curve["held_out"][-1] < 0.2 < curve["held_out"][0]
    assert len(weights.regions) == 0  # pattern_lr 0: no region tables
    flipped = _hand_positions(4000)
    flipped.label = 1 - flipped.label
    weights, _ = P.fit(flipped, config, progress=False)
    assert weights.dense[EV.D_MEN] < -100


def test_tapered_fit_learns_a_man_is_worth_more_in_the_ending():
    """Positions where a man up wins only when few pieces are left (a coin toss with a
    full board): the ending's men weight comes out large, the opening's near 0."""
    rng = np.random.default_rng(4)
    n, S = 8000, 50
    data = _hand_positions(n, seed=4)
    full = rng.random(n) < 0.5
    data.occupied[:] = -1
    pieces = np.where(full, 40, 6)
    for i in range(n):
        data.occupied[i, :pieces[i]] = rng.choice(4 * S, size=pieces[i], replace=False)
    men = data.dense[:, EV.D_MEN]
    data.label = np.where(full, (rng.random(n) < 0.5).astype(np.float32),
                          (men > 0).astype(np.float32))
    config = P.config_from_dict({"variant": "damii", "epochs": 4, "phases": 2})
    weights, _ = P.fit(data, config, progress=False)
    assert weights.tapered and weights.phase_pieces == 40
    assert weights.dense_end[EV.D_MEN] > 150
    assert abs(weights.dense[EV.D_MEN]) < 0.3 * weights.dense_end[EV.D_MEN]


@pytest.mark.parametrize("data, message", [
    ({"games": 3}, "games must be an integer in"),
    ({"gmaes": 30}, "unknown key"),
    ({"variant": "chess"}, "variant must be one of"),
    ({"random_plies": [5, 2]}, "random_plies"),
    ({"algorithm": "ppo"}, "algorithm must be patterns"),
    ({"learning_rate": "fast"}, "learning_rate must be a number"),
])
def test_bad_configs_say_what_is_wrong(data, message):
    with pytest.raises(P.PatternConfigError, match=message):
        P.config_from_dict(data)


@pytest.mark.parametrize("override, message", [
    ("games", "expected key=value"),
    ("games=many", "games must be an integer in"),
    ("gmaes=30", "unknown key.*did you mean games"),
    ("rule_options.turn_limitt=9", "unknown rule option"),
])
def test_bad_overrides_say_what_is_wrong(tmp_path, override, message):
    config = tmp_path / "c.yaml"
    config.write_text("algorithm: patterns\nvariant: damii\n")
    with pytest.raises(DamiiError, match=message):
        P.load_config(config, [override])


def test_damii_train_runs_a_tiny_pattern_config(tmp_path, capsys):
    from damii_app.cli import main

    config = tmp_path / "tiny.yaml"
    config.write_text("algorithm: patterns\nname: tiny\nvariant: triestine\ngames: 500\n"
                      "rounds: 2\ndepth: 1\nepochs: 2\neval_games: 4\neval_depth: 1\n")
    run = tmp_path / "run"
    assert main(["train", str(config), "--set", "games=12", "--set", "rule_options.turn_limit=200",
                 "--run-dir", str(run), "--no-progress"]) == 0
    out = capsys.readouterr().out
    saved = P.load_config(run / "config.yaml")  # the resolved config, overrides and all
    assert saved.games == 12 and saved.rule_options == {"turn_limit": 200}
    assert saved == P.load_config(config, ["games=12", "rule_options.turn_limit=200"])
    assert "| 2 | 12 |" in out and "vs handwritten" in out
    weights = EV.PatternWeights.load(run / "weights.npz")
    assert weights.size == 10 and weights.dense[EV.D_MEN] != 0
    metrics = json.loads((run / "metrics.json").read_text())
    assert [s["games"] for s in metrics["self_play"]] == [12, 12]
    assert sum(metrics["evaluation"][-1][k] for k in ("wins", "draws", "losses")) == 4
    assert (run / "curve.png").stat().st_size > 1000


def test_value_scale_recovers_the_logistic_slope():
    rng = np.random.default_rng(1)
    value = rng.uniform(-300, 300, size=200_000)
    result = (rng.random(len(value)) < 1 / (1 + np.exp(-0.02 * value))).astype(np.float32)
    value[::7] = np.nan  # not searched: left out
    assert P.value_scale(value, result) == pytest.approx(0.02, rel=0.03)


def test_blended_labels_mix_result_and_value():
    result = np.array([1.0, 0.0, 0.5, 1.0], dtype=np.float32)
    value = np.array([0.0, 100.0, -1e6, np.nan], dtype=np.float32)
    labels = P.blend_labels(result, value, 0.01, 0.25)
    sig = 1 / (1 + np.exp(-1.0))  # 100 units at 0.01 logits a unit
    expected = [0.75 + 0.25 * 0.5, 0.25 * sig, 0.375 + 0.25 / (1 + np.exp(20.0)), 1.0]
    assert labels.tolist() == pytest.approx(expected, abs=1e-6)  # a win clipped to 2000


def test_self_play_values_are_the_movers_and_agree_with_results():
    """The search's recorded value is for the player to move: positive where the mover
    is a man or more up, and, over the decided games, higher where the mover won."""
    config = P.config_from_dict({"variant": "damii", "games": 40, "depth": 2,
                                 "value_weight": 0.5})
    data, stats = P.generate(config, seed=5, progress=False)
    searched = np.isfinite(data.value)
    assert searched.mean() > 0.8  # all but forced and random moves
    material = data.dense[:, EV.D_MEN] + 3 * data.dense[:, EV.D_KINGS]
    up, down = searched & (material >= 2), searched & (material <= -2)
    assert np.median(data.value[up]) > 50 > -50 > np.median(data.value[down])
    plain, _ = P.generate(P.config_from_dict({"variant": "damii", "games": 40, "depth": 2}),
                          seed=5, progress=False)
    won, lost = searched & (plain.label == 1), searched & (plain.label == 0)
    assert data.value[won].mean() > 0 > data.value[lost].mean()
    assert stats["value_scale"] > 0
    # labels moved half-way towards the values' probabilities
    expected = P.blend_labels(plain.label, data.value, stats["value_scale"], 0.5)
    assert np.allclose(data.label, expected)


def test_every_pattern_config_key_is_documented():
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "TRAINING.md").read_text()
    for f in dataclasses.fields(P.PatternConfig):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        assert f"| `{f.name}` | `{default!r}` |" in doc, f.name

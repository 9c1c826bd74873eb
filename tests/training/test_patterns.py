"""Training of the learned evaluation (damii_training.patterns): the labels' sign, the
fit's direction on positions made by hand, the config checks of its ``patterns`` section,
a whole tiny run through ``damii train`` and its exact resume."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from damii_agents.search import patterns as EV
from damii_env import compiled as C
from damii_env.errors import DamiiError
from damii_training import patterns as P
from damii_training.config import ConfigError, PatternSettings, config_from_dict, load_config


def _config(variant: str = "damii", **patterns):
    """An ``algorithm: patterns`` config of `variant` with these ``patterns`` keys."""
    return config_from_dict({"algorithm": "patterns", "variant": variant, "patterns": patterns})


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
    base = {"games": 20, "depth": 1, "eval_games": 0}
    plain, st0 = P.generate(_config("triestine", **base), seed=3, progress=False)
    judged, st = P.generate(_config("triestine", **base, adjudicate=1), seed=3,
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
                       np.arange(n) // 10, np.full(n, np.nan, dtype=np.float32),
                       np.where(men > 0, 1.0, 0.0).astype(np.float32))


def test_fit_learns_that_a_man_up_wins():
    config = _config(epochs=3)
    weights, curve = P.fit(_hand_positions(4000), config, progress=False)
    assert weights.dense[EV.D_MEN] > 100  # a man up: better than e to 1 odds of winning
    assert curve["held_out"][-1] < 0.2 < curve["held_out"][0]
    assert len(weights.regions) == 0  # pattern_lr 0: no region tables
    assert curve["held_out_results"] == curve["held_out"]  # the labels are the results
    flipped = _hand_positions(4000)
    flipped.label = 1 - flipped.label
    weights, curve = P.fit(flipped, config, progress=False)
    assert weights.dense[EV.D_MEN] < -100
    # fitted to labels that contradict the results: the held-out loss on the labels
    # falls, the one on the results rises
    assert curve["held_out"][-1] < 0.2 < curve["held_out"][0]
    assert curve["held_out_results"][-1] > 1.0 > curve["held_out_results"][0]


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
    config = _config(epochs=4, phases=2)
    weights, _ = P.fit(data, config, progress=False)
    assert weights.tapered and weights.phase_pieces == 40
    assert weights.dense_end[EV.D_MEN] > 150
    assert abs(weights.dense[EV.D_MEN]) < 0.3 * weights.dense_end[EV.D_MEN]


def _king_xor_positions(n: int, seed: int) -> tuple[P.Positions, list[np.ndarray]]:
    """International positions whose result is an exclusive or within region 0 (PDN 1-2,
    6-7, 11-12, 16-17): the mover's king on 11 or 12, the opponent's man on 16 or 17; the
    mover wins when exactly one of them is on the first square. No sum of one-square
    weights, and no men-only pattern (a king reads as empty there), can tell the four
    apart; a base-5 region can. Noise men on the rows far from the region (rows 7-9).
    Returns the positions (features from the board, as self-play records them) and
    their boards."""
    rng = np.random.default_rng(seed)
    S = 50
    regions = EV.pattern_regions(10, "standard")
    R = len(regions)
    pattern = np.zeros((n, R), dtype=np.uint16)
    occupied = np.zeros((n, S), dtype=np.int16)
    dense = np.zeros((n, EV.N_DENSE), dtype=np.float32)
    label = np.zeros(n, dtype=np.float32)
    boards = []
    for i in range(n):
        board = np.zeros((1, S), dtype=np.int8)
        king_first, man_first = rng.integers(0, 2, size=2)
        board[0, 10 if king_first else 11] = 2
        board[0, 15 if man_first else 16] = -1
        for s in rng.choice(np.arange(35, 50), size=3, replace=False):
            board[0, s] = rng.choice([1, -1])
        index, occ, d = np.zeros(R, dtype=np.int64), np.zeros(S, dtype=np.int64), \
            np.zeros(EV.N_DENSE)
        EV.position_features(board, 0, S, regions, index, occ, d, 10, 0.0)
        pattern[i], occupied[i], dense[i] = index, occ, d
        label[i] = float(king_first != man_first)
        boards.append(board)
    data = P.Positions(pattern, occupied, dense, label, np.arange(n) // 10,
                       np.full(n, np.nan, dtype=np.float32), label.copy())
    return data, boards


def test_king_regions_learn_where_a_king_stands_among_the_men():
    """The exclusive or of :func:`_king_xor_positions`: with king regions the fit learns
    it (held-out loss near 0) and the search's value (``pattern_value`` with the fitted
    tables) has the result's sign on every position; without, it cannot (the loss stays
    near log 2)."""
    data, boards = _king_xor_positions(3000, seed=2)
    settings = {"epochs": 4, "learning_rate": 0.05, "pattern_lr": 1.0, "pattern_l2": 0.001}
    weights, curve = P.fit(data, _config("international", king_regions=True, **settings),
                           progress=False)
    assert weights.has_kings and curve["held_out"][-1] < 0.15
    for board, label in zip(boards[:200], data.label[:200], strict=True):
        value = EV.pattern_value(board, 0, 50, *weights.arrays, 10, 0.0)
        assert (value > 0) == (label == 1.0), value
    plain, curve = P.fit(data, _config("international", **settings), progress=False)
    assert not plain.has_kings and curve["held_out"][-1] > 0.6


@pytest.mark.parametrize("data, message", [
    ({"patterns": {"games": 3}}, r"patterns.games must be from 10 to 10,000,000, got 3"),
    ({"patterns": {"gmaes": 30}}, "unknown key.*in patterns: gmaes .did you mean games"),
    ({"variant": "chess"}, "variant must be damii or"),
    ({"patterns": {"random_plies": [5, 2]}}, "patterns.random_plies must be .low, high."),
    ({"patterns": {"learning_rate": "fast"}}, "patterns.learning_rate must be of type float"),
    ({"patterns": [1, 2]}, "patterns must be a mapping"),
    ({"algorithm": "ppo", "patterns": {"games": 30}}, "patterns is the section of algorithm"),
    ({"ray_address": "local"}, "ray_address is for ppo, alphazero and tdleaf"),
])
def test_bad_configs_say_what_is_wrong(data, message):
    with pytest.raises(ConfigError, match=message):
        config_from_dict({"algorithm": "patterns", **data})


@pytest.mark.parametrize("override, message", [
    ("patterns.games", "expected key=value"),
    ("patterns.games=many", "patterns.games must be of type int"),
    ("patterns.gmaes=30", "unknown key.*did you mean games"),
    ("rule_options.turn_limitt=9", "unknown rule option"),
])
def test_bad_overrides_say_what_is_wrong(tmp_path, override, message):
    config = tmp_path / "c.yaml"
    config.write_text("algorithm: patterns\nvariant: damii\n")
    with pytest.raises(DamiiError, match=message):
        load_config(config, [override])


def test_a_patterns_config_has_no_turn_limit_rule_unless_it_says_so(tmp_path):
    """Its self-play cuts games at patterns.turn_limit itself; rule_options default to none
    (the network trainers' default is a turn limit of 300)."""
    config = tmp_path / "c.yaml"
    config.write_text("algorithm: patterns\nvariant: damii\n")
    assert load_config(config).rule_options == {}
    assert load_config(config, ["rule_options.turn_limit=200"]).rule_options == \
        {"turn_limit": 200}
    assert load_config(config, ["patterns.games=50"]).patterns.games == 50
    assert load_config(None).rule_options == {"turn_limit": 300}


TINY = ("algorithm: patterns\nname: tiny\nvariant: triestine\ncheckpoint_every: 1\n"
        "patterns:\n  games: 500\n  rounds: 2\n  depth: 1\n  epochs: 2\n  eval_games: 4\n"
        "  eval_depth: 1\n")


def test_damii_train_runs_a_tiny_pattern_config(tmp_path, capsys):
    from damii_app.cli import main

    config = tmp_path / "tiny.yaml"
    config.write_text(TINY)
    run = tmp_path / "run"
    assert main(["train", str(config), "--set", "patterns.games=12", "--set",
                 "rule_options.turn_limit=200", "--run-dir", str(run), "--no-progress"]) == 0
    out = capsys.readouterr().out
    saved = load_config(run / "config.yaml")  # the resolved config, overrides and all
    assert saved.patterns.games == 12 and saved.rule_options == {"turn_limit": 200}
    assert saved == load_config(config, ["patterns.games=12", "rule_options.turn_limit=200"])
    assert "| 2 | 12 |" in out and "vs handwritten" in out and "weights:" in out
    weights = EV.PatternWeights.load(run / "weights.npz")
    assert weights.size == 10 and weights.dense[EV.D_MEN] != 0
    assert np.array_equal(EV.PatternWeights.load(run / "weights_round2.npz").dense,
                          weights.dense)
    metrics = (run / "metrics.csv").read_text().splitlines()
    assert metrics[0].startswith("iteration,samples,rollout_samples") and len(metrics) == 3
    assert [row.split(",")[:3] for row in metrics[1:]] == [["1", "12", "12"], ["2", "24", "12"]]
    evals = (run / "evals.csv").read_text().splitlines()
    assert len(evals) == 3 and all(",handwritten,4," in row for row in evals[1:])
    assert (run / "learning_curve.png").stat().st_size > 1000
    assert {p.name for p in (run / "checkpoints").iterdir()} == {"last.pt", "best.pt"}


def test_resume_of_a_patterns_run_writes_the_same_tables(tmp_path):
    """A run stopped after its first round and resumed (its finished round's self-play
    played again from the checkpoint's tables) writes the tables the straight run writes."""
    from damii_training.run import run_training

    config = tmp_path / "tiny.yaml"
    config.write_text(TINY.replace("rounds: 2", "rounds: 3"))
    overrides = ["patterns.games=12", "patterns.eval_games=0"]
    straight, cut = tmp_path / "straight", tmp_path / "cut"
    run_training(config, overrides, run_dir=straight, progress=False)
    run_training(config, [*overrides, "patterns.rounds=1"], run_dir=cut, progress=False)
    saved = (cut / "config.yaml").read_text()
    assert "  rounds: 1\n" in saved
    (cut / "config.yaml").write_text(saved.replace("  rounds: 1\n", "  rounds: 3\n"))
    run_training(resume=cut, progress=False)
    for name in ("weights_round1.npz", "weights_round2.npz", "weights_round3.npz",
                 "weights.npz"):
        a, b = np.load(straight / name), np.load(cut / name)
        assert sorted(a.files) == sorted(b.files)
        assert all(np.array_equal(a[k], b[k]) for k in a.files), name
    rows = [(cut / "metrics.csv").read_text().splitlines(),
            (straight / "metrics.csv").read_text().splitlines()]
    assert [r.split(",")[:3] for r in rows[0]] == [r.split(",")[:3] for r in rows[1]]
    data = torch_load(cut / "checkpoints" / "last.pt")
    assert data["iteration"] == 3 and data["trainer"]["samples"] == 36


def test_resume_refuses_a_patterns_checkpoint_of_other_rules(tmp_path):
    from damii_training.run import run_training
    from damii_training.rundir import ResumeError

    config = tmp_path / "tiny.yaml"
    config.write_text(TINY.replace("rounds: 2", "rounds: 1"))
    run = tmp_path / "run"
    run_training(config, ["patterns.games=10", "patterns.eval_games=0"], run_dir=run,
                 progress=False)
    text = (run / "config.yaml").read_text()
    (run / "config.yaml").write_text(text.replace("variant: triestine", "variant: damii"))
    with pytest.raises(ResumeError, match="trained for triestine"):
        run_training(resume=run, progress=False)


def torch_load(path):
    import torch

    return torch.load(path, weights_only=True)


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
    config = _config(games=40, depth=2, value_weight=0.5)
    data, stats = P.generate(config, seed=5, progress=False)
    searched = np.isfinite(data.value)
    assert searched.mean() > 0.8  # all but forced and random moves
    material = data.dense[:, EV.D_MEN] + 3 * data.dense[:, EV.D_KINGS]
    up, down = searched & (material >= 2), searched & (material <= -2)
    assert np.median(data.value[up]) > 50 > -50 > np.median(data.value[down])
    plain, _ = P.generate(_config(games=40, depth=2), seed=5, progress=False)
    won, lost = searched & (plain.label == 1), searched & (plain.label == 0)
    assert data.value[won].mean() > 0 > data.value[lost].mean()
    assert stats["value_scale"] > 0
    # labels moved half-way towards the values' probabilities
    expected = P.blend_labels(plain.label, data.value, stats["value_scale"], 0.5)
    assert np.allclose(data.label, expected)
    assert np.array_equal(data.result, plain.label)  # the results stay beside the labels


def test_every_pattern_config_key_is_documented():
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "TRAINING.md").read_text()
    for f in dataclasses.fields(PatternSettings):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        assert f"| `patterns.{f.name}` | `{default!r}` |" in doc, f.name


def test_a_log_resumed_by_a_newer_version_keeps_its_columns(tmp_path):
    """A metrics.csv written with fewer columns gets rows in its own columns (a run
    resumed after a version added statistics), so that every row still reads whole."""
    from damii_training.rundir import append_csv, read_csv

    log = tmp_path / "metrics.csv"
    append_csv(log, ["iteration", "seconds"], {"iteration": 1, "seconds": 2.5})
    append_csv(log, ["iteration", "seconds", "held_out_result_loss"],
               {"iteration": 2, "seconds": 3.0, "held_out_result_loss": 0.45})
    assert read_csv(log) == [{"iteration": "1", "seconds": "2.5"},
                             {"iteration": "2", "seconds": "3.0"}]

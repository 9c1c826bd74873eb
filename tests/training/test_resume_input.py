"""Resuming a run with bad input (issue 13): a file, a run without a checkpoint, a
checkpoint of other rules, network or games, overrides; logs and temporary files after a
kill; player specs checked before training."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest
import torch

from damii_agents.checkpoint import export_weights, load_checkpoint
from damii_app.cli import main
from damii_training.config import ConfigError
from damii_training.run import RESUMABLE_KEYS, ResumeError, run_training
from tests.training.test_training import TINY

QUICK = [*TINY, "eval_every=0", "final_eval_games=0"]  # two iterations of 128 samples


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny finished Damii run (two iterations, a checkpoint after each)."""
    run_dir = tmp_path_factory.mktemp("runs") / "finished"
    run_training("configs/damii_quick.yaml", QUICK, run_dir=run_dir, progress=False)
    return run_dir


@pytest.fixture
def run_copy(finished: Path, tmp_path: Path) -> Path:
    """A copy of the finished run to damage."""
    return Path(shutil.copytree(finished, tmp_path / "run"))


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _edit_config(run_dir: Path, old: str, new: str) -> None:
    path = run_dir / "config.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI, expect exit 2 with one clean error line; return that line."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1
    return err


# --- what --resume is given ---------------------------------------------------------------
def test_resume_of_a_weights_file_is_refused(finished, tmp_path, capsys):
    weights = export_weights(finished / "checkpoints" / "last.pt", tmp_path / "damii.pt")
    with pytest.raises(ResumeError, match="it is a file; --resume takes a run directory"):
        run_training(resume=weights, progress=False)
    err = _cli_error(["train", "--resume", str(weights)], capsys)
    assert f"init_weights: {weights}" in err


def test_resume_of_a_missing_directory_is_refused(tmp_path, capsys):
    err = _cli_error(["train", "--resume", str(tmp_path / "nope")], capsys)
    assert "no such run directory" in err


def test_an_exported_file_as_last_pt_is_refused(run_copy):
    last = run_copy / "checkpoints" / "last.pt"
    export_weights(last, last)
    with pytest.raises(ResumeError, match="exported weights file"):
        run_training(resume=run_copy, progress=False)


@pytest.mark.parametrize("old, new, message", [
    ("variant: damii", "variant: international", "trained for damii"),
    ("turn_limit: 200", "turn_limit: 100", "trained for damii"),
    ("channels: 8", "channels: 16", "its network is"),
    ("num_envs: 8", "num_envs: 16", "holds 8 games in progress.*num_envs: 16"),
    ("algorithm: ppo", "algorithm: tdleaf", "does not fit the run's config.yaml"),
])
def test_a_checkpoint_the_config_cannot_continue_is_refused(run_copy, old, new, message,
                                                             capsys):
    _edit_config(run_copy, old, new)
    with pytest.raises(ResumeError, match=message):
        run_training(resume=run_copy, progress=False)
    _cli_error(["train", "--resume", str(run_copy), "--no-progress"], capsys)


def test_a_run_killed_before_its_first_checkpoint(tmp_path, monkeypatch, capsys):
    from damii_training.ppo import PPOTrainer

    iterate, calls = PPOTrainer.iterate, []

    def interrupted_on_the_second(self):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return iterate(self)

    monkeypatch.setattr(PPOTrainer, "iterate", interrupted_on_the_second)
    run_dir = tmp_path / "run"
    args = [a for s in [*QUICK, "checkpoint_every=5"] for a in ("--set", s)]
    assert main(["train", "configs/damii_quick.yaml", *args, "--run-dir", str(run_dir),
                 "--no-progress"]) == 130
    again = f"damii train {run_dir / 'config.yaml'} --run-dir {run_dir}"
    assert f"before the first checkpoint; start the run again with: {again}" in \
        capsys.readouterr().err
    assert len(_rows(run_dir / "metrics.csv")) == 1  # iteration 1 was logged
    err = _cli_error(["train", "--resume", str(run_dir)], capsys)
    assert "has no checkpoint yet" in err and again in err
    monkeypatch.setattr(PPOTrainer, "iterate", iterate)
    assert main(again.split()[1:] + ["--no-progress"]) == 0  # what the message says works
    assert [r["iteration"] for r in _rows(run_dir / "metrics.csv")] == ["1", "2"]


# --- what comes with --resume -------------------------------------------------------------
def test_resume_refuses_a_config_and_a_run_dir(run_copy, capsys):
    err = _cli_error(["train", "configs/damii_quick.yaml", "--resume", str(run_copy)], capsys)
    assert "not both" in err
    err = _cli_error(["train", "--resume", str(run_copy), "--run-dir", "elsewhere"], capsys)
    assert "--run-dir cannot go with --resume" in err


@pytest.mark.parametrize("override", ["learning_rate=0.1", "num_envs=16", "seed=3",
                                      "rule_options.turn_limit=10"])
def test_resume_refuses_overrides_that_change_the_run(run_copy, override, capsys):
    before = (run_copy / "config.yaml").read_text()
    err = _cli_error(["train", "--resume", str(run_copy), "--set", override], capsys)
    assert f"a resumed run cannot change {override.split('=')[0].split('.')[0]}" in err
    assert ", ".join(RESUMABLE_KEYS) in err
    assert (run_copy / "config.yaml").read_text() == before


def test_resume_applies_the_safe_overrides_and_says_so(run_copy, capsys):
    rc = main(["train", "--resume", str(run_copy), "--set", "total_steps=512",
               "--set", "final_eval_games=2", "--no-progress"])
    assert rc == 0
    captured = capsys.readouterr()
    assert f"resuming {run_copy} with total_steps=512, final_eval_games=2" in captured.err
    assert "| random |" in captured.out  # the final evaluation was switched on
    assert load_checkpoint(run_copy / "checkpoints" / "last.pt")["step"] >= 512
    text = (run_copy / "config.yaml").read_text()
    assert "total_steps: 512" in text and "final_eval_games: 2" in text
    rows = _rows(run_copy / "metrics.csv")
    assert [int(r["iteration"]) for r in rows] == list(range(1, len(rows) + 1))


def test_bad_values_of_safe_overrides_are_refused(run_copy, capsys):
    assert "total_steps must be >= 1" in _cli_error(
        ["train", "--resume", str(run_copy), "--set", "total_steps=0"], capsys)
    assert "unknown agent" in _cli_error(
        ["train", "--resume", str(run_copy), "--set", "eval_opponents=[rando]"], capsys)


# --- logs and temporary files after a kill ------------------------------------------------
def test_a_resumed_run_logs_what_the_uninterrupted_one_logs(finished, tmp_path):
    """A kill after iteration 2's checkpoint but during iteration 3's log row, then a
    restart: rows past the checkpoint (and the half-written one) are dropped."""
    straight = tmp_path / "straight"
    run_training("configs/damii_quick.yaml", [*QUICK, "total_steps=512", "eval_every=1"],
                 run_dir=straight, progress=False)
    cut = tmp_path / "cut"
    run_training("configs/damii_quick.yaml", [*QUICK, "eval_every=1"], run_dir=cut,
                 progress=False)
    with (cut / "metrics.csv").open("a") as f:  # iteration 3 logged, then killed mid-row
        f.write("3,384,128,0.5,256.0,0.1,0.2,6.5,0.01,0.0,1,30,,\n4,51")
    with (cut / "evals.csv").open("a") as f:
        f.write("3,384,random,2,1,0,1,0.5,0.0\n")
    stale = cut / "checkpoints" / "last.pt.x1y2z3.tmp"
    stale.write_bytes(b"half a checkpoint")
    run_training(resume=cut, overrides=["total_steps=512"], progress=False)
    assert not stale.exists()
    for name, columns in (("metrics.csv", ("iteration", "samples", "rollout_samples")),
                          ("evals.csv", ("iteration", "samples", "opponent", "games"))):
        a, b = _rows(straight / name), _rows(cut / name)
        assert [[r[c] for c in columns] for r in a] == [[r[c] for c in columns] for r in b]
    assert len(_rows(cut / "metrics.csv")) == 4
    a = load_checkpoint(straight / "checkpoints" / "last.pt")["model"]
    b = load_checkpoint(cut / "checkpoints" / "last.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_stale_temporaries_are_removed_on_a_fresh_start(tmp_path):
    run_dir = tmp_path / "run"
    (run_dir / "checkpoints").mkdir(parents=True)
    stale = run_dir / "checkpoints" / "best.pt.abc.tmp"
    stale.write_bytes(b"")
    (run_dir / "metrics.csv").write_text("iteration,samples\n1,128\n")  # an earlier attempt
    run_training("configs/damii_quick.yaml", QUICK, run_dir=run_dir, progress=False)
    assert not stale.exists()
    assert [r["iteration"] for r in _rows(run_dir / "metrics.csv")] == ["1", "2"]


def test_a_checkpoint_with_an_older_history_width_resumes(run_copy):
    """Checkpoints written before the history was sized by the turn limit hold a wider
    one: it is fitted to this version's width."""
    last = run_copy / "checkpoints" / "last.pt"
    data = torch.load(last, weights_only=True)
    hist = data["trainer"]["games"]["hist"]
    data["trainer"]["games"]["hist"] = torch.cat(
        [hist, torch.zeros((hist.shape[0], 200), dtype=hist.dtype)], dim=1)
    torch.save(data, last)
    run_training(resume=run_copy, overrides=["total_steps=384"], progress=False)
    assert load_checkpoint(last)["iteration"] == 3


# --- player specs -------------------------------------------------------------------------
@pytest.mark.parametrize("override, message", [
    ("eval_opponents=[random, 'ckpt:missing.pt']", "eval_opponents: .*does not exist"),
    ("final_eval_opponents=['ckpt:missing.pt']", "final_eval_opponents: .*does not exist"),
    ("seat_opponent_spec=ckpt:missing.pt", "seat_opponent_spec: .*does not exist"),
    ("final_eval_opponents=['ckpt:{weights}']", "plays damii, not international"),
])
def test_every_player_spec_is_checked_before_training(finished, tmp_path, monkeypatch,
                                                      override, message):
    from damii_training.ppo import PPOTrainer

    def never(self):
        raise AssertionError("training started")

    monkeypatch.setattr(PPOTrainer, "iterate", never)
    weights = finished / "checkpoints" / "best.pt"
    variant = ["variant=international"] if "{weights}" in override else []
    with pytest.raises(ConfigError, match=message):
        run_training("configs/damii_quick.yaml",
                     [*QUICK, *variant, override.format(weights=weights)],
                     run_dir=tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def test_a_checkpoint_player_spec_is_checked_on_resume(run_copy, capsys):
    before = (run_copy / "config.yaml").read_text()
    err = _cli_error(["train", "--resume", str(run_copy), "--set",
                      "final_eval_opponents=['ckpt:missing.pt']"], capsys)
    assert "final_eval_opponents" in err and "missing.pt" in err
    assert (run_copy / "config.yaml").read_text() == before  # nothing saved


# --- crafted last.pt (issue 29, F11) ------------------------------------------------------
def _edit_last(run_dir: Path, edit) -> None:
    """Rewrite checkpoints/last.pt with `edit(data)` applied (valid checksums)."""
    last = run_dir / "checkpoints" / "last.pt"
    data = torch.load(last, weights_only=True)
    edit(data)
    torch.save(data, last)


def _trainer(key, value):
    return lambda data: data["trainer"].__setitem__(key, value)


def _games(fn):
    def edit(data):
        games = data["trainer"]["games"]
        for name in list(games):
            games[name] = fn(name, games[name])
    return edit


def _optimizer_moment(fn):
    """An edit of the first Adam ``exp_avg`` of the trainer's optimizer."""
    def edit(data):
        state = data["trainer"]["optimizer"]["state"]
        first = state[min(state)]
        first["exp_avg"] = fn(first["exp_avg"])
    return edit


def _pool_snapshot(fn):
    """An edit of every floating tensor of the first opponent-pool snapshot."""
    def edit(data):
        pool = data["trainer"]["pool"]
        assert pool, "the tiny run keeps a pool (snapshot_every=1)"
        pool[0] = {k: fn(v) if v.is_floating_point() else v for k, v in pool[0].items()}
    return edit


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.__setitem__("elapsed", "x"), "elapsed must be a finite number"),
    (lambda d: d.__setitem__("elapsed", float("inf")), "elapsed must be a finite number"),
    (lambda d: d.__setitem__("best_score", float("nan")), "best_score must be a finite"),
    (lambda d: d.__setitem__("best_score", 7.0), "best_score must be a finite number from -1"),
    (lambda d: d.__setitem__("rule_options", "x"), "rule_options must be a mapping"),
    (_trainer("iteration", -5), "iteration must be a non-negative integer"),
    (_trainer("samples", 2.5), "samples must be a non-negative integer"),
    (_trainer("optimizer", "x"), "trainer.optimizer must be a mapping"),
    (_trainer("seat", "x"), "trainer.seat must be a mapping"),
    (_trainer("pool", "x"), "trainer.pool must be a list"),
    (_trainer("learner_colour", torch.full((8,), 7, dtype=torch.int64)),
     "learner_colour must hold -1, 0 or 1"),
    (_trainer("pool_index", torch.full((8,), 10**6, dtype=torch.int64)), "pool_index must be"),
    (_games(lambda name, t: t.double() if name == "board" else t), "board is float64"),
    (_games(lambda name, t: t.double() if name == "hist" else t), "hist is float64"),
    (_games(lambda name, t: t * 0 + 9 if name == "board" else t), "board values must be"),
    (lambda d: d["trainer"]["games"].__setitem__("tag", torch.zeros(1)), "not an array"),
    (lambda d: d.__setitem__("model", {k: v * float("nan") if v.is_floating_point() else v
                                       for k, v in d["model"].items()}), "NaN or infinite"),
    (lambda d: d.__setitem__("model", {k: v.double() if v.is_floating_point() else v
                                       for k, v in d["model"].items()}), "are torch.float64"),
    # issue 45, G10 and G8: were a traceback or accepted silently
    (_optimizer_moment(lambda t: t.flatten()[:3].clone()), "optimizer state exp_avg of .* shape"),
    (_optimizer_moment(lambda t: t * float("nan")), "optimizer state exp_avg of .* NaN"),
    (_trainer("iteration", 10**18), "iteration must be a non-negative integer up to"),
    (_pool_snapshot(lambda t: t * float("nan")), "snapshot 0: the weights .* NaN or infinite"),
    (_pool_snapshot(lambda t: t[:1]), "snapshot 0.* do not fit|snapshot 0.*needs"),
    (lambda d: d["trainer"]["games"].pop("board"), "board missing"),
    (_trainer("episode_id", torch.full((8,), -5, dtype=torch.int64)),
     "episode_id must hold a non-negative count"),
    (lambda d: d.__setitem__("version", 2), "version .2. is not one this damii-env reads"),
])
def test_a_crafted_last_checkpoint_is_refused_in_one_line(run_copy, capsys, edit, message):
    """Each field of last.pt that is malformed or out of range: one line naming it, exit
    2, and the run left as it was."""
    _edit_last(run_copy, edit)
    before = (run_copy / "metrics.csv").read_text()
    err = _cli_error(["train", "--resume", str(run_copy), "--no-progress"], capsys)
    assert "cannot resume" in err or "checkpoint" in err
    assert re.search(message, err), err
    assert (run_copy / "metrics.csv").read_text() == before


def test_the_untouched_copy_resumes(run_copy):
    """The crafted files above differ from this one in their one field only."""
    run_training(resume=run_copy, overrides=["total_steps=384"], progress=False)
    assert load_checkpoint(run_copy / "checkpoints" / "last.pt")["iteration"] == 3


def test_last_pt_that_is_not_a_file_is_named(run_copy, capsys):
    """Issue 45, G10: a last.pt that is a link to a device was "no checkpoint yet"."""
    last = run_copy / "checkpoints" / "last.pt"
    last.unlink()
    last.symlink_to("/dev/null")
    err = _cli_error(["train", "--resume", str(run_copy), "--no-progress"], capsys)
    assert "last.pt is not a regular file" in err

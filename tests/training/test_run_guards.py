"""Issue 45: a run that diverges stops with one line and keeps its last good checkpoint
(G8); the README's quick run can be resumed, says where it resumes and its bar ends at the
samples it trained (D4)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
import yaml

from damii_agents.checkpoint import load_checkpoint
from damii_app.cli import main
from damii_training.ppo import PPOTrainer
from damii_training.run import run_training
from tests.training.test_training import TINY

QUICK = [*TINY, "eval_every=0", "final_eval_games=0"]  # two iterations of 128 samples


def test_a_loss_that_becomes_infinite_stops_the_run_and_keeps_the_last_checkpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """G8: the loss is checked before each optimizer step; the run stops with one line
    naming the iteration and the checkpoint kept, whose weights are the good ones."""
    iterate = PPOTrainer.iterate

    def diverging(self: PPOTrainer) -> dict:
        if self.iteration == 1:  # past the config's bounds: the guard must still hold
            self.config.value_coef = 1e300
        return iterate(self)

    monkeypatch.setattr(PPOTrainer, "iterate", diverging)
    run_dir = tmp_path / "run"
    assert main(["train", "configs/damii_quick.yaml", "--run-dir", str(run_dir),
                 "--no-progress", *[a for s in QUICK for a in ("--set", s)]]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    line = err[-1]
    assert re.search(r"the loss became NaN or infinite in iteration 2 \(policy loss .*value "
                     r"loss", line), line
    assert "the last good checkpoint (iteration 1) is kept" in line
    data = load_checkpoint(run_dir / "checkpoints" / "last.pt")
    assert data["iteration"] == 1
    assert all(bool(torch.isfinite(t).all()) for t in data["model"].values()
               if t.is_floating_point())


def test_guarded_step_leaves_the_weights_alone_on_a_nan_loss():
    """G8: nothing is stepped when the loss is NaN."""
    from damii_training.config import load_config
    from damii_training.selfplay import TrainingDiverged, guarded_step

    trainer = PPOTrainer(load_config("configs/damii_quick.yaml", QUICK))
    before = {k: v.clone() for k, v in trainer.net.state_dict().items()}
    loss = sum(p.sum() for p in trainer.net.parameters()) * float("nan")
    with pytest.raises(TrainingDiverged, match="the loss became NaN or infinite in iteration 1"):
        guarded_step(trainer, loss, {"value loss": loss})
    assert all(torch.equal(before[k], v) for k, v in trainer.net.state_dict().items())


def test_the_quick_config_checkpoints_every_iteration_and_trains_its_total():
    """D4: Ctrl-C anywhere in the README's main job leaves a checkpoint to resume (it
    used to checkpoint every 10 of its 10 iterations), and its total is whole
    iterations, so the bar and the report agree."""
    data = yaml.safe_load(Path("configs/damii_quick.yaml").read_text())
    assert data["checkpoint_every"] == 1
    assert data["total_steps"] % (data["num_envs"] * data["rollout_steps"]) == 0


def test_a_resumed_run_says_where_it_resumes_and_the_bar_ends_at_the_samples_trained(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """D4: "resuming from iteration N"; the bar's total is the samples trained (256),
    not total_steps (200)."""
    run_dir = tmp_path / "run"
    overrides = [*QUICK, "total_steps=128"]
    run_training("configs/damii_quick.yaml", overrides, run_dir=run_dir, progress=False)
    capsys.readouterr()
    run_training(resume=run_dir, overrides=["total_steps=200"], progress=True)
    err = capsys.readouterr().err
    assert "damii train: resuming from iteration 1 (128 samples done" in err
    last = err.replace("\r", "\n").strip().splitlines()[-1]
    assert "256/256" in last, last

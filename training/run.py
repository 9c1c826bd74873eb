"""A training run: the driver that iterates a trainer and keeps its run directory (its
layout: :mod:`damii_training.rundir`) up to date, with checkpoints, CSV logs, evaluations,
the learning curve (:mod:`damii_training.curves`) and the report.

``run_training(config)`` starts a run of any trainer (:data:`damii_training.trainers.TRAINERS`);
``run_training(resume=RUN_DIR)`` continues a killed one from its last checkpoint, at the
same iteration and with the same random state, so the resumed run computes what the
uninterrupted run would have.
"""

from __future__ import annotations

import datetime as dt
import sys
import time
from pathlib import Path
from typing import Any

import torch

from damii_env.errors import DamiiError
from damii_training.config import (
    ConfigError,
    TrainConfig,
    check_player_specs,
    config_to_yaml,
    load_config,
)
from damii_training.curves import plot_learning_curve
from damii_training.evaluate import MatchResult, evaluate
from damii_training.rundir import (
    EVAL_FIELDS,
    RESUMABLE_KEYS,
    ResumeError,
    TrainingDiverged,
    append_csv,
    interrupts_deferred,
    remove_stale_temporaries,
    resumed_config,
    truncate_csv,
)
from damii_training.trainers import TRAINERS, Trainer

__all__ = ["RESUMABLE_KEYS", "TRAINERS", "ResumeError", "Run", "TrainingDiverged",
           "TrainingInterrupted", "run_training"]

LOGGED_LOSSES = ("policy_loss", "value_loss", "entropy", "approx_kl", "imitation_loss",
                 "held_out_loss", "train_loss")
"""Statistics of an iteration also written to TensorBoard (those a trainer reports)."""


def _say(text: str) -> None:
    """A line on what the run is doing, on stderr beside the progress bar."""
    print(f"damii train: {text}", file=sys.stderr, flush=True)


class TrainingInterrupted(DamiiError):
    """Ctrl-C during training: nothing after the last checkpoint is kept; --resume goes on."""


class Run:
    """Drives a trainer and keeps its run directory up to date."""

    def __init__(self, config: TrainConfig, run_dir: Path, resume: bool = False) -> None:
        self.config = config
        self.dir = run_dir
        (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(run_dir / "checkpoints")
        self.trainer: Trainer
        if config.ray_address:  # self-play on Ray actors (training/distributed.py)
            from damii_training.distributed import distributed_trainer

            self.trainer = distributed_trainer(config)
        else:
            self.trainer = TRAINERS[config.algorithm](config)
        self.best_score = -1.0
        self.elapsed = 0.0
        self.saved_iteration: int | None = None  # iteration of the latest last.pt
        if resume:
            data = self.trainer.restore(run_dir / "checkpoints" / "last.pt")
            self.best_score = float(data.get("best_score", -1.0))
            self.elapsed = float(data.get("elapsed", 0.0))
            self.saved_iteration = self.trainer.iteration
            for name in ("metrics.csv", "evals.csv"):
                truncate_csv(run_dir / name, self.trainer.iteration)
        else:  # a run started again in its folder: no rows of an earlier attempt
            for name in ("metrics.csv", "evals.csv"):
                (run_dir / name).unlink(missing_ok=True)
            (run_dir / "config.yaml").write_text(config_to_yaml(config))
        self._writer = None

    @property
    def writer(self):
        if self._writer is None:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(str(self.dir / "tb"))
        return self._writer

    def checkpoint(self, name: str = "last.pt") -> Path:
        """Write a checkpoint; Ctrl-C or SIGTERM during the write acts after it."""
        t = self.trainer
        with interrupts_deferred():
            path = t.save(self.dir / "checkpoints" / name, best_score=self.best_score,
                          elapsed=self.elapsed)
            if name == "last.pt":
                self.saved_iteration = t.iteration
        return path

    def evaluate(self, opponents: list[str], games: int,
                 progress: bool = False) -> list[MatchResult]:
        """The trainer's player against each opponent spec, logged."""
        results = evaluate(self.trainer.player(), opponents, games, self.config.variant,
                           self.config.rule_options, seed=self.config.seed + self.trainer.iteration,
                           progress=progress)
        self._log_evaluations(results)
        return results

    def _log_evaluations(self, results: list[MatchResult]) -> None:
        t = self.trainer
        for r in results:
            row = {"iteration": t.iteration, "samples": t.samples, "opponent": r.opponent,
                   "games": r.games, "wins": r.wins, "draws": r.draws, "losses": r.losses,
                   "score": round(r.score, 4), "elo_diff": round(r.elo_diff, 1)}
            append_csv(self.dir / "evals.csv", EVAL_FIELDS, row)
            self.writer.add_scalar(f"eval/score_vs_{r.opponent}", r.score, t.samples)

    def train(self, progress: bool = True) -> Path:
        """Train until the trainer's goal (``total_steps`` samples), then evaluate and write
        the report."""
        from tqdm import tqdm

        cfg, t = self.config, self.trainer
        t.progress = progress
        final_games = cfg.final_eval_games if t.plays_opponents else 0
        if progress:
            then = (f", then {cfg.final_eval_games} games against each of "
                    f"{', '.join(cfg.final_eval_opponents) or 'no one'}"
                    if t.plays_opponents else "")
            _say(f"run directory {self.dir} ({cfg.algorithm}, {t.goal:,} {t.unit}{then})")
        if self.saved_iteration is not None:  # said with or without the bar
            _say(f"resuming from iteration {t.iteration} ({t.samples:,} {t.unit} done, "
                 f"its checkpoint)")
        bar = tqdm(total=t.goal, initial=min(t.samples, t.goal),
                   disable=not progress, unit=t.unit, dynamic_ncols=True,
                   desc=f"iteration {t.iteration + 1} (the first also compiles)")
        try:
            try:
                self._train_loop(bar)
            finally:  # Ray actors stop here (before the final evaluation)
                close = getattr(t, "close", None)
                if close is not None:
                    close()
        except TrainingDiverged as exc:
            bar.close()
            kept = (f"the last good checkpoint (iteration {self.saved_iteration}) is kept in "
                    f"{self.dir / 'checkpoints' / 'last.pt'}"
                    if self.saved_iteration is not None else "no checkpoint was written yet")
            raise TrainingDiverged(f"{exc}; {kept}") from None
        except KeyboardInterrupt:
            bar.close()
            if self.saved_iteration is None:
                raise TrainingInterrupted(
                    f"interrupted at iteration {t.iteration}, before the first checkpoint; "
                    f"start the run again with: damii train {self.dir / 'config.yaml'} "
                    f"--run-dir {self.dir}") from None
            raise TrainingInterrupted(
                f"interrupted at iteration {t.iteration}; the run continues from its last "
                f"checkpoint (iteration {self.saved_iteration}) with: damii train --resume "
                f"{self.dir}") from None
        bar.close()
        self.checkpoint("last.pt")
        if not (self.dir / "checkpoints" / "best.pt").exists():
            self.checkpoint("best.pt")
        if progress and final_games and cfg.final_eval_opponents:
            _say(f"final evaluation: {cfg.final_eval_games} games against each of "
                 f"{', '.join(cfg.final_eval_opponents)}")
        final = self.evaluate(cfg.final_eval_opponents, cfg.final_eval_games, progress) \
            if final_games else []
        self.plot()
        return self.report(final)

    def _train_loop(self, bar: Any) -> None:
        cfg, t = self.config, self.trainer
        latest = ""
        while t.samples < t.goal:
            t0 = time.perf_counter()
            stats = t.iterate()
            seconds = time.perf_counter() - t0
            self.elapsed += seconds
            own_results = stats.pop("evaluations", None)  # a trainer that evaluates itself
            row = {**stats, "iteration": t.iteration, "samples": t.samples,
                   "seconds": round(seconds, 3),
                   "samples_per_s": round(stats["rollout_samples"] / seconds, 1)}
            append_csv(self.dir / "metrics.csv", t.metric_fields, row)
            for k in LOGGED_LOSSES:
                if k in stats:
                    self.writer.add_scalar(f"train/{k}", stats[k], t.samples)
            self.writer.add_scalar("train/samples_per_s", row["samples_per_s"], t.samples)
            t.write_files(self.dir)
            bar.set_description_str("training", refresh=False)
            results = None
            if own_results is not None:
                self._log_evaluations(own_results)
                results = own_results or None
            elif cfg.eval_every and t.iteration % cfg.eval_every == 0:
                bar.set_postfix_str(f"it {t.iteration}: evaluating against "
                                    f"{', '.join(cfg.eval_opponents)}")
                results = self.evaluate(cfg.eval_opponents, cfg.eval_games)
            if results is not None:
                latest = " ".join(f"{r.opponent}:{r.score:.2f}" for r in results)
                score = sum(r.score for r in results) / max(len(results), 1)
                if score >= self.best_score:  # at equal scores the longer-trained network
                    self.best_score = score
                    self.checkpoint("best.pt")
            if t.iteration % cfg.checkpoint_every == 0 or t.samples >= t.goal:
                self.checkpoint("last.pt")
            if t.samples >= t.goal:  # the last iteration may go past the goal:
                bar.total = t.samples  # the bar ends at the samples trained
            bar.update(t.samples - bar.n)
            bar.set_postfix_str(f"it {t.iteration} {row['samples_per_s']:.0f} {t.unit}/s "
                                f"{latest}")

    def plot(self) -> Path | None:
        """Evaluation scores and losses against the run's progress, as a PNG."""
        unit = "training samples" if self.trainer.unit == "samples" else self.trainer.unit
        return plot_learning_curve([self.dir], [0], self.config.variant,
                                   self.dir / "learning_curve.png", unit=unit)

    def report(self, final: list[MatchResult]) -> Path:
        cfg, t = self.config, self.trainer
        lines = [
            f"# Training report: {cfg.name}",
            "",
            f"- variant: {cfg.variant}, rule options: {cfg.rule_options}",
            t.describe(),
            f"- {t.unit}: {t.samples:,}, iterations: {t.iteration}, training time: "
            f"{self.elapsed / 60:.1f} min ({t.samples / max(self.elapsed, 1e-9):,.0f} "
            f"{t.unit}/s)",
        ]
        if t.plays_opponents:
            lines += ["",
                      "| opponent | games | wins | draws | losses | score | Elo difference |",
                      "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in final:
            lines.append(f"| {r.opponent} | {r.games} | {r.wins} | {r.draws} | {r.losses} | "
                         f"{r.score:.3f} | {r.elo_diff:+.0f} |")
        lines += t.report_lines(self.dir)
        lines += ["", "![learning curve](learning_curve.png)", ""]
        path = self.dir / "report.md"
        path.write_text("\n".join(lines))
        if self._writer is not None:
            self._writer.close()
        return path


def run_training(config_path: str | Path | None = None, overrides: list[str] = (),
                 resume: str | Path | None = None, run_dir: str | Path | None = None,
                 progress: bool = True) -> Path:
    """Start (or resume) a run; returns the path of its report.

    A resumed run keeps its own ``config.yaml``: `overrides` may only change the keys of
    :data:`RESUMABLE_KEYS` (written back to ``config.yaml``), and `config_path` and
    `run_dir` must not be given."""
    if resume is not None:
        config, run_dir = resumed_config(Path(resume), config_path, run_dir, list(overrides))
        return Run(config, run_dir, resume=True).train(progress)
    config = load_config(config_path, list(overrides))
    check_player_specs(config, str(config_path) if config_path is not None else "defaults")
    per_iteration = config.num_envs * config.rollout_steps
    if config.algorithm != "patterns" and per_iteration > config.total_steps:
        _say(f"note: one iteration plays num_envs x rollout_steps = {per_iteration:,} samples, "
             f"more than total_steps = {config.total_steps:,}; the run stops after it")
    if run_dir is None:
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        run_dir = Path("runs") / f"{config.name}-{stamp}"
    run_dir = Path(run_dir)
    if (run_dir / "checkpoints" / "last.pt").exists():
        raise ConfigError(f"{str(run_dir)!r} already holds a run; use --resume {run_dir}")
    torch.set_num_threads(max(1, torch.get_num_threads()))
    return Run(config, run_dir).train(progress)

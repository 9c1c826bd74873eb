"""A training run: its directory, checkpoints, logs, evaluations, curve and report.

Layout of a run directory::

    config.yaml            the resolved config
    checkpoints/last.pt    written atomically every `checkpoint_every` iterations and at the end
    checkpoints/best.pt    the checkpoint with the best evaluation score so far
    metrics.csv            one row per iteration
    evals.csv              one row per evaluation and opponent
    tb/                    TensorBoard event files
    learning_curve.png     evaluation score and losses over training
    report.md              final evaluation table and run summary

``run_training(config)`` starts a run; ``run_training(resume=RUN_DIR)`` continues a
killed one from its last checkpoint, at the same iteration and with the same random
state, so the resumed run computes what the uninterrupted run would have.
"""

from __future__ import annotations

import csv
import datetime as dt
import time
from pathlib import Path
from typing import Any

import torch

from agents.checkpoint import load_checkpoint, save_checkpoint
from agents.neural import NeuralAgent
from damii_env.errors import DamiiError

from .alphazero import AlphaZeroTrainer
from .config import TrainConfig, config_from_dict, config_to_yaml, load_config
from .evaluate import MatchResult, evaluate
from .ppo import PPOTrainer
from .tdleaf import TDLeafTrainer

TRAINERS = {"ppo": PPOTrainer, "alphazero": AlphaZeroTrainer, "tdleaf": TDLeafTrainer}
"""The trainers by config ``algorithm``; both share the network, engine, run and evaluation."""

METRIC_FIELDS = ["iteration", "samples", "rollout_samples", "seconds", "samples_per_s",
                 "policy_loss", "value_loss", "entropy", "approx_kl", "clip_frac", "episodes",
                 "episode_plies", "replay", "imitation_loss"]
EVAL_FIELDS = ["iteration", "samples", "opponent", "games", "wins", "draws", "losses", "score",
               "elo_diff"]


def _append_csv(path: Path, fields: list[str], row: dict[str, Any]) -> None:
    new = not path.exists()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerow(row)


def _truncate_csv(path: Path, max_iteration: int) -> None:
    """Drop rows logged after the checkpoint a resumed run restarts from."""
    if not path.exists():
        return
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
        fields = rows[0].keys() if rows else None
    if fields is None:
        return
    kept = [r for r in rows if int(r["iteration"]) <= max_iteration]
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(fields))
        writer.writeheader()
        writer.writerows(kept)


def value_potential(config: TrainConfig) -> dict[str, float]:
    """The shaping a run's critic was trained with (see ``damii_env.episode.shaping_potential``):
    players that search with the value head add it back."""
    return {"material": float(config.material_shaping), "score": float(config.score_shaping)}


class TrainingInterrupted(DamiiError):
    """Ctrl-C during training: nothing after the last checkpoint is kept; --resume goes on."""


class Run:
    """Drives a trainer and keeps its run directory up to date."""

    def __init__(self, config: TrainConfig, run_dir: Path, resume: bool = False) -> None:
        self.config = config
        self.dir = run_dir
        (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
        self.trainer = TRAINERS[config.algorithm](config)
        self.best_score = -1.0
        self.elapsed = 0.0
        self.saved_iteration: int | None = None  # iteration of the latest last.pt
        if resume:
            data = load_checkpoint(run_dir / "checkpoints" / "last.pt", config.device)
            self.trainer.net.load_state_dict(data["model"])
            self.trainer.load_state_dict(data["trainer"])
            self.best_score = float(data.get("best_score", -1.0))
            self.elapsed = float(data.get("elapsed", 0.0))
            self.saved_iteration = self.trainer.iteration
            for name in ("metrics.csv", "evals.csv"):
                _truncate_csv(run_dir / name, self.trainer.iteration)
        else:
            (run_dir / "config.yaml").write_text(config_to_yaml(config))
        self._writer = None

    @property
    def writer(self):
        if self._writer is None:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(str(self.dir / "tb"))
        return self._writer

    def checkpoint(self, name: str = "last.pt") -> Path:
        t = self.trainer
        if name == "last.pt":
            self.saved_iteration = t.iteration
        return save_checkpoint(self.dir / "checkpoints" / name, t.net, self.config.variant,
                               self.config.rule_options, t.samples, iteration=t.iteration,
                               trainer=t.state_dict(), best_score=self.best_score,
                               elapsed=self.elapsed,
                               value_potential=value_potential(self.config))

    def agent(self) -> NeuralAgent:
        depth = self.config.eval_depth
        return NeuralAgent(self.trainer.net, self.config.variant, self.config.rule_options,
                           name="learner" if not depth else f"learner,depth={depth}",
                           depth=depth, value_potential=value_potential(self.config))

    def evaluate(self, opponents: list[str], games: int) -> list[MatchResult]:
        t = self.trainer
        results = evaluate(self.agent(), opponents, games, self.config.variant,
                           self.config.rule_options, seed=self.config.seed + t.iteration)
        for r in results:
            row = {"iteration": t.iteration, "samples": t.samples, "opponent": r.opponent,
                   "games": r.games, "wins": r.wins, "draws": r.draws, "losses": r.losses,
                   "score": round(r.score, 4), "elo_diff": round(r.elo_diff, 1)}
            _append_csv(self.dir / "evals.csv", EVAL_FIELDS, row)
            self.writer.add_scalar(f"eval/score_vs_{r.opponent}", r.score, t.samples)
        return results

    def train(self, progress: bool = True) -> Path:
        """Train until `total_steps` samples, then evaluate and write the report."""
        from tqdm import tqdm

        cfg, t = self.config, self.trainer
        bar = tqdm(total=cfg.total_steps, initial=min(t.samples, cfg.total_steps),
                   disable=not progress, unit="samples", dynamic_ncols=True)
        try:
            self._train_loop(bar)
        except KeyboardInterrupt:
            bar.close()
            saved = (f"its last checkpoint (iteration {self.saved_iteration})"
                     if self.saved_iteration is not None else "its start (no checkpoint yet)")
            raise TrainingInterrupted(
                f"interrupted at iteration {t.iteration}; the run continues from {saved} "
                f"with: damii train --resume {self.dir}") from None
        bar.close()
        self.checkpoint("last.pt")
        if not (self.dir / "checkpoints" / "best.pt").exists():
            self.checkpoint("best.pt")
        final = self.evaluate(cfg.final_eval_opponents, cfg.final_eval_games) \
            if cfg.final_eval_games else []
        self.plot()
        return self.report(final)

    def _train_loop(self, bar: Any) -> None:
        cfg, t = self.config, self.trainer
        latest = ""
        while t.samples < cfg.total_steps:
            t0 = time.perf_counter()
            stats = t.iterate()
            seconds = time.perf_counter() - t0
            self.elapsed += seconds
            row = {**stats, "iteration": t.iteration, "samples": t.samples,
                   "seconds": round(seconds, 3),
                   "samples_per_s": round(stats["rollout_samples"] / seconds, 1)}
            _append_csv(self.dir / "metrics.csv", METRIC_FIELDS, row)
            for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "imitation_loss"):
                if k in stats:
                    self.writer.add_scalar(f"train/{k}", stats[k], t.samples)
            self.writer.add_scalar("train/samples_per_s", row["samples_per_s"], t.samples)
            if cfg.eval_every and t.iteration % cfg.eval_every == 0:
                results = self.evaluate(cfg.eval_opponents, cfg.eval_games)
                latest = " ".join(f"{r.opponent}:{r.score:.2f}" for r in results)
                score = sum(r.score for r in results) / max(len(results), 1)
                if score >= self.best_score:  # at equal scores the longer-trained network
                    self.best_score = score
                    self.checkpoint("best.pt")
            if t.iteration % cfg.checkpoint_every == 0 or t.samples >= cfg.total_steps:
                self.checkpoint("last.pt")
            bar.update(min(t.samples, cfg.total_steps) - bar.n)
            bar.set_postfix_str(f"it {t.iteration} {row['samples_per_s']:.0f} samples/s {latest}")

    def plot(self) -> Path | None:
        """Evaluation scores and losses against samples, as a PNG."""
        return plot_learning_curve([self.dir], [0], self.config.variant,
                                   self.dir / "learning_curve.png")

    def report(self, final: list[MatchResult]) -> Path:
        cfg, t = self.config, self.trainer
        lines = [
            f"# Training report: {cfg.name}",
            "",
            f"- variant: {cfg.variant}, rule options: {cfg.rule_options}",
            f"- algorithm: {cfg.algorithm}, network: {cfg.blocks} blocks x {cfg.channels} "
            f"channels, {cfg.policy_head} policy head, value prior {cfg.value_prior:g}",
            f"- samples: {t.samples:,}, iterations: {t.iteration}, training time: "
            f"{self.elapsed / 60:.1f} min ({t.samples / max(self.elapsed, 1e-9):,.0f} samples/s)",
            "",
            "| opponent | games | wins | draws | losses | score | Elo difference |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in final:
            lines.append(f"| {r.opponent} | {r.games} | {r.wins} | {r.draws} | {r.losses} | "
                         f"{r.score:.3f} | {r.elo_diff:+.0f} |")
        lines += ["", "![learning curve](learning_curve.png)", ""]
        path = self.dir / "report.md"
        path.write_text("\n".join(lines))
        if self._writer is not None:
            self._writer.close()
        return path


def plot_learning_curve(run_dirs: list[Path], offsets: list[int], variant: str,
                        out: Path, limits: list[int | None] | None = None) -> Path:
    """Evaluation scores and losses of one run, or of runs each continuing the previous
    one's weights (their samples shifted by `offsets`, stage starts marked; rows past a
    run's `limits` entry, after the checkpoint the next run started from, left out), as a
    PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    colours: dict[str, Any] = {}
    limits = limits or [None] * len(run_dirs)
    for k, (run_dir, offset) in enumerate(zip(run_dirs, offsets, strict=True)):
        def kept(rows: list[dict[str, str]], limit: int | None = limits[k]) -> list[dict]:
            return [r for r in rows if limit is None or int(r["samples"]) <= limit]

        evals = kept(_read_csv(Path(run_dir) / "evals.csv"))
        for opponent in sorted({e["opponent"] for e in evals}):
            pts = [(offset + int(e["samples"]), float(e["score"])) for e in evals
                   if e["opponent"] == opponent]
            line, = ax1.plot(*zip(*pts, strict=True), marker="o", color=colours.get(opponent),
                             label=None if opponent in colours else opponent)
            colours.setdefault(opponent, line.get_color())
        metrics = kept(_read_csv(Path(run_dir) / "metrics.csv"))
        if metrics:
            x = [offset + int(m["samples"]) for m in metrics]
            ax2.plot(x, [float(m["value_loss"]) for m in metrics], color="C0",
                     label="value loss" if k == 0 else None)
            if metrics[0].get("entropy"):
                ax2.plot(x, [float(m["entropy"]) for m in metrics], color="C1",
                         label="policy entropy" if k == 0 else None)
            else:
                ax2.plot(x, [float(m["policy_loss"]) for m in metrics], color="C1",
                         label="policy loss" if k == 0 else None)
        if k > 0:
            for ax in (ax1, ax2):
                ax.axvline(offset, color="grey", linestyle="--", linewidth=0.8)
    ax1.set_xlabel("training samples")
    ax1.set_ylabel("score (win = 1, draw = 0.5)")
    ax1.set_ylim(-0.02, 1.02)
    title = f"{variant}: score against baselines"
    ax1.set_title(title if len(run_dirs) == 1 else f"{title} ({len(run_dirs)} stages)")
    if colours:
        ax1.legend()
    ax2.set_xlabel("training samples")
    if ax2.lines:
        ax2.legend()
    ax2.set_title("training")
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def _read_csv(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def run_training(config_path: str | Path | None = None, overrides: list[str] = (),
                 resume: str | Path | None = None, run_dir: str | Path | None = None,
                 progress: bool = True) -> Path:
    """Start (or resume) a run; returns the path of its report."""
    if resume is not None:
        run_dir = Path(resume)
        if not (run_dir / "config.yaml").is_file():
            from .config import ConfigError

            raise ConfigError(f"cannot resume {str(run_dir)!r}: it has no config.yaml")
        import yaml

        config = config_from_dict(yaml.safe_load((run_dir / "config.yaml").read_text()),
                                  str(run_dir / "config.yaml"))
        return Run(config, run_dir, resume=True).train(progress)
    config = load_config(config_path, list(overrides))
    if run_dir is None:
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        run_dir = Path("runs") / f"{config.name}-{stamp}"
    run_dir = Path(run_dir)
    if (run_dir / "checkpoints" / "last.pt").exists():
        from .config import ConfigError

        raise ConfigError(f"{str(run_dir)!r} already holds a run; use --resume {run_dir}")
    torch.set_num_threads(max(1, torch.get_num_threads()))
    return Run(config, run_dir).train(progress)

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

import contextlib
import csv
import datetime as dt
import io
import math
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from damii_agents.checkpoint import CheckpointError, check_model, load_checkpoint, save_checkpoint
from damii_agents.players.network_player import NetworkPlayer
from damii_agents.players.neural import NetworkOptions
from damii_agents.search.evaluator import NetworkEvaluator
from damii_env.errors import DamiiError
from damii_training.alphazero import AlphaZeroTrainer
from damii_training.config import (
    ConfigError,
    TrainConfig,
    check_player_specs,
    config_from_dict,
    config_to_yaml,
    load_config,
    parse_override,
)
from damii_training.evaluate import MatchResult, evaluate
from damii_training.ppo import PPOTrainer
from damii_training.tdleaf import TDLeafTrainer

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


RESUMABLE_KEYS = ("total_steps", "checkpoint_every", "eval_every", "eval_games",
                  "eval_opponents", "final_eval_games", "final_eval_opponents", "eval_depth",
                  "ray_address", "ray_actors", "ray_weights_every", "ray_max_staleness")
"""Config keys ``--resume`` may change with ``--set``: how long the run goes on, how often
it checkpoints, how it is evaluated and where its self-play runs (``--ray``), none of
which changes what it trains."""


class ResumeError(ConfigError):
    """``--resume`` of something that is not a run this config can continue: a file, a run
    stopped before its first checkpoint, a checkpoint of other rules, network or games."""


def _write_atomic(path: Path, text: str) -> None:
    """Replace a file's text in one step (a temporary file in the same folder, then a rename)."""
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM until the block ends, then act on them as their handlers
    would: a checkpoint is never cut short half-written (a signal inside ``torch.save``
    turns into an error from the zip writer instead of a clean stop)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous: dict[int, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(sig)
        if handler is not signal.SIG_IGN and handler is not None:
            previous[sig] = signal.signal(sig, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if caught:
        handler = previous[caught[0]]
        if callable(handler):
            handler(caught[0], None)
        raise KeyboardInterrupt


def _truncate_csv(path: Path, max_iteration: int) -> None:
    """Drop rows logged after the checkpoint a resumed run restarts from (and a row cut
    short by a kill), atomically, so that the log reads as the uninterrupted run's."""
    if not path.exists():
        return
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        rows, fields = list(reader), reader.fieldnames
    if not fields:
        return

    def kept(row: dict[str, Any]) -> bool:
        it = row.get("iteration") or ""
        return it.isdigit() and int(it) <= max_iteration and None not in row.values()

    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(fields))
    writer.writeheader()
    writer.writerows(r for r in rows if kept(r))
    _write_atomic(path, out.getvalue())


def _remove_stale_temporaries(folder: Path) -> list[Path]:
    """Delete the ``*.pt.*.tmp`` files a kill during a checkpoint write left behind."""
    stale = sorted(folder.glob("*.pt.*.tmp"))
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


def _check_resumable(data: dict[str, Any], config: TrainConfig, path: Path,
                     shape: dict[str, Any]) -> None:
    """Refuse a checkpoint the run's config cannot continue, naming what differs."""
    from damii_env.rules import make_rules

    if "trainer" not in data:
        raise ResumeError(
            f"cannot resume from {str(path)!r}: it is an exported weights file (no optimizer, "
            f"random state or games), not a training checkpoint; to train on from these "
            f"weights, start a new run with init_weights: {path}")
    ours = config.rules
    try:
        theirs = make_rules(data["variant"], **data["rule_options"])
    except DamiiError:
        theirs = None
    if theirs != ours:
        raise ResumeError(
            f"cannot resume from {str(path)!r}: it was trained for {data['variant']} "
            f"{data['rule_options']}, but the run's config.yaml says {config.variant} "
            f"{config.rule_options}; a run continues under its own rules")
    if data["network"] != shape:
        raise ResumeError(
            f"cannot resume from {str(path)!r}: its network is {data['network']}, the run's "
            f"config.yaml builds {shape}; channels, blocks, trunk and heads cannot change")
    games = data["trainer"].get("games", {}) if isinstance(data["trainer"], dict) else {}
    board = games.get("board")
    if board is not None and board.shape[0] != config.num_envs:
        raise ResumeError(
            f"cannot resume from {str(path)!r}: it holds {board.shape[0]} games in progress, "
            f"but the run's config.yaml has num_envs: {config.num_envs}; num_envs cannot "
            f"change in a run (set it back to {board.shape[0]}, or start a new run with "
            f"init_weights: {path})")


def _check_resume_fields(data: dict[str, Any], path: Path) -> None:
    """The run's own counters in a checkpoint: finite numbers in range, and the trainer's
    state a mapping; raises :class:`ResumeError` naming the field."""
    def refuse(field: str, what: str, value: Any) -> None:
        raise ResumeError(f"cannot resume from {str(path)!r}: it does not fit: {field} must be "
                          f"{what}, got {str(value)[:40]!r}")

    for field, low, high, default in (("elapsed", 0.0, math.inf, 0.0),
                                      ("best_score", -1.0, 1.0, -1.0)):
        value = data.get(field, default)
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not (math.isfinite(value) and low <= value <= high):
            refuse(field, f"a finite number from {low:g} to {high:g}", value)
    trainer = data["trainer"]
    if not isinstance(trainer, dict):
        refuse("trainer", "the trainer's state (a mapping)", type(trainer).__name__)
    for field in ("games", "seat", "optimizer"):
        if field in trainer and not isinstance(trainer[field], dict):
            refuse(f"trainer.{field}", "a mapping", type(trainer[field]).__name__)
    pool = trainer.get("pool", [])
    if not isinstance(pool, list) or not all(isinstance(p, dict) for p in pool):
        refuse("trainer.pool", "a list of network snapshots", type(pool).__name__)


def _check_loaded_games(trainer: Any) -> None:
    """Values a trainer keeps per game, in range after loading (raises ValueError): the
    pieces on the board, PPO's learner colour (-1: both seats, 0, 1) and its opponent's
    index (-1: alpha-beta, else a snapshot of the pool)."""
    board = trainer.state.board
    if board.size and (board.min() < -2 or board.max() > 2):
        raise ValueError(f"games in progress: board values must be from -2 to 2, got "
                         f"{int(board.min())} to {int(board.max())}")
    colour = getattr(trainer, "learner_colour", None)
    if colour is not None:
        colour = np.asarray(colour)
        if colour.shape != board.shape[:1] or not np.isin(colour, (-1, 0, 1)).all():
            raise ValueError("learner_colour must hold -1, 0 or 1 for each game")
    index = getattr(trainer, "pool_index", None)
    if index is not None:
        index, pool = np.asarray(index), len(getattr(trainer, "pool", []))
        if index.shape != board.shape[:1] or (index < -1).any() or (index >= max(pool, 1)).any():
            raise ValueError(f"pool_index must be -1 (alpha-beta) or the index of one of the "
                             f"pool's {pool} snapshots for each game")


def value_potential(config: TrainConfig) -> dict[str, float]:
    """The shaping a run's critic was trained with (see ``damii_env.episode.shaping_potential``):
    players that search with the value head add it back."""
    return {"material": float(config.material_shaping), "score": float(config.score_shaping)}


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
        _remove_stale_temporaries(run_dir / "checkpoints")
        if config.ray_address:  # self-play on Ray actors (training/distributed.py)
            from damii_training.distributed import distributed_trainer

            self.trainer = distributed_trainer(config)
        else:
            self.trainer = TRAINERS[config.algorithm](config)
        self.best_score = -1.0
        self.elapsed = 0.0
        self.saved_iteration: int | None = None  # iteration of the latest last.pt
        if resume:
            path = run_dir / "checkpoints" / "last.pt"
            data = load_checkpoint(path, config.device)
            _check_resumable(data, config, path, self.trainer.shape.to_dict())
            _check_resume_fields(data, path)
            try:
                check_model(data["model"], self.trainer.net.state_dict(), path)
                self.trainer.net.load_state_dict(data["model"])
                self.trainer.load_state_dict(data["trainer"])
                _check_loaded_games(self.trainer)
            except (KeyError, TypeError, ValueError, RuntimeError, AttributeError,
                    IndexError, CheckpointError) as exc:  # malformed fields or other config
                raise ResumeError(
                    f"cannot resume from {str(path)!r}: it does not fit the run's config.yaml "
                    f"(algorithm {config.algorithm}): {type(exc).__name__}: "
                    f"{str(exc)[:300]}; was config.yaml edited after the run started, or "
                    f"the checkpoint changed?") from None
            self.best_score = float(data.get("best_score", -1.0))
            self.elapsed = float(data.get("elapsed", 0.0))
            self.saved_iteration = self.trainer.iteration
            for name in ("metrics.csv", "evals.csv"):
                _truncate_csv(run_dir / name, self.trainer.iteration)
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
        with _interrupts_deferred():
            path = save_checkpoint(self.dir / "checkpoints" / name, t.net, self.config.variant,
                                   self.config.rule_options, t.samples, iteration=t.iteration,
                                   trainer=t.state_dict(), best_score=self.best_score,
                                   elapsed=self.elapsed,
                                   value_potential=value_potential(self.config))
            if name == "last.pt":
                self.saved_iteration = t.iteration
        return path

    def agent(self) -> NetworkPlayer:
        """The learner as a player: its network alone, or with minimax to ``eval_depth``,
        on the trainer's engine, the run's shaping added back to its values."""
        t, depth = self.trainer, self.config.eval_depth
        evaluator = NetworkEvaluator(t.net, t.engine, t.device,
                                     value_potential=value_potential(self.config))
        return NetworkOptions(depth=depth).player(
            evaluator, name="learner" if not depth else f"learner,depth={depth}")

    def evaluate(self, opponents: list[str], games: int,
                 progress: bool = False) -> list[MatchResult]:
        t = self.trainer
        results = evaluate(self.agent(), opponents, games, self.config.variant,
                           self.config.rule_options, seed=self.config.seed + t.iteration,
                           progress=progress)
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
        if progress:
            _say(f"run directory {self.dir} ({cfg.algorithm}, {cfg.total_steps:,} samples, "
                 f"then {cfg.final_eval_games} games against each of "
                 f"{', '.join(cfg.final_eval_opponents) or 'no one'})")
        bar = tqdm(total=cfg.total_steps, initial=min(t.samples, cfg.total_steps),
                   disable=not progress, unit="samples", dynamic_ncols=True,
                   desc=f"iteration {t.iteration + 1} (the first also compiles)")
        try:
            try:
                self._train_loop(bar)
            finally:  # Ray actors stop here (before the final evaluation)
                close = getattr(t, "close", None)
                if close is not None:
                    close()
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
        if progress and cfg.final_eval_games and cfg.final_eval_opponents:
            _say(f"final evaluation: {cfg.final_eval_games} games against each of "
                 f"{', '.join(cfg.final_eval_opponents)}")
        final = self.evaluate(cfg.final_eval_opponents, cfg.final_eval_games, progress) \
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
            bar.set_description_str("training", refresh=False)
            if cfg.eval_every and t.iteration % cfg.eval_every == 0:
                bar.set_postfix_str(f"it {t.iteration}: evaluating against "
                                    f"{', '.join(cfg.eval_opponents)}")
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
    """Start (or resume) a run; returns the path of its report.

    A resumed run keeps its own ``config.yaml``: `overrides` may only change the keys of
    :data:`RESUMABLE_KEYS` (written back to ``config.yaml``), and `config_path` and
    `run_dir` must not be given."""
    if resume is not None:
        config, run_dir = _resumed_config(Path(resume), config_path, run_dir, list(overrides))
        return Run(config, run_dir, resume=True).train(progress)
    config = load_config(config_path, list(overrides))
    check_player_specs(config, str(config_path) if config_path is not None else "defaults")
    per_iteration = config.num_envs * config.rollout_steps
    if per_iteration > config.total_steps:  # an iteration is played whole
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


def _resumed_config(run_dir: Path, config_path: str | Path | None, run_dir_arg: Any,
                    overrides: list[str]) -> tuple[TrainConfig, Path]:
    """The config of a run to resume, with the allowed `overrides` applied and saved;
    raises :class:`ResumeError` for anything that cannot be resumed."""
    if config_path is not None:
        raise ResumeError(
            f"give a CONFIG file or --resume {run_dir}, not both: a resumed run keeps its own "
            f"config.yaml (change {', '.join(RESUMABLE_KEYS)} with --set)")
    if run_dir_arg is not None:
        raise ResumeError(f"--run-dir cannot go with --resume: the run continues in "
                          f"{str(run_dir)!r}")
    if run_dir.is_file():
        raise ResumeError(
            f"cannot resume {str(run_dir)!r}: it is a file; --resume takes a run directory "
            f"(with config.yaml and checkpoints/last.pt); to train on from a weights file, "
            f"start a new run with init_weights: {run_dir}")
    if not run_dir.is_dir():
        raise ResumeError(f"cannot resume {str(run_dir)!r}: no such run directory")
    source = run_dir / "config.yaml"
    if not source.is_file():
        raise ResumeError(f"cannot resume {str(run_dir)!r}: it has no config.yaml (is it a "
                          f"run directory?)")
    if not (run_dir / "checkpoints" / "last.pt").is_file():
        raise ResumeError(
            f"cannot resume {str(run_dir)!r}: it has no checkpoint yet (it stopped before "
            f"its first checkpoints/last.pt), so there is nothing to continue; start it "
            f"again with: damii train {source} --run-dir {run_dir}")
    from damii_training.config import _yaml

    data = _yaml(source.read_text(encoding="utf-8", errors="replace"), str(source))
    if not isinstance(data, dict):
        raise ResumeError(f"{source}: expected a mapping of keys to values")
    config_from_dict(dict(data), str(source))  # the saved config itself must be valid
    applied = []
    for item in overrides:
        key, value = parse_override(item)
        if key not in RESUMABLE_KEYS:
            raise ResumeError(
                f"--set {key}: a resumed run cannot change {key} (it would not continue the "
                f"same run); on --resume, --set takes only {', '.join(RESUMABLE_KEYS)}")
        data[key] = value
        applied.append(f"{key}={value}")
    config = config_from_dict(data, f"{source} with --set")
    check_player_specs(config, str(source))
    if applied:
        _write_atomic(source, config_to_yaml(config))
        print(f"damii train: resuming {run_dir} with {', '.join(applied)} (saved in {source})",
              file=sys.stderr)
    return config, run_dir

"""A run directory's files and the checks before a run goes on in it.

Layout of a run directory::

    config.yaml            the resolved config
    checkpoints/last.pt    written atomically every `checkpoint_every` iterations and at the end
    checkpoints/best.pt    the checkpoint with the best evaluation score so far
    metrics.csv            one row per iteration
    evals.csv              one row per evaluation and opponent
    tb/                    TensorBoard event files
    learning_curve.png     evaluation score and losses over training
    report.md              final evaluation table and run summary

(``algorithm: patterns`` adds ``weights.npz`` and ``weights_round<r>.npz``, the learned
tables.) Here: the CSV logs, the signal deferral around a checkpoint write, and the
checks that refuse a ``--resume`` the run cannot continue.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from damii_agents.io import write_atomic
from damii_env.errors import DamiiError
from damii_training.config import (
    ConfigError,
    TrainConfig,
    check_player_specs,
    config_from_dict,
    config_to_yaml,
    parse_override,
)

METRIC_FIELDS = ["iteration", "samples", "rollout_samples", "seconds", "samples_per_s",
                 "policy_loss", "value_loss", "entropy", "approx_kl", "clip_frac", "episodes",
                 "episode_plies", "replay", "imitation_loss"]
"""Columns of the network trainers' ``metrics.csv`` (a trainer's ``metric_fields``)."""
EVAL_FIELDS = ["iteration", "samples", "opponent", "games", "wins", "draws", "losses", "score",
               "elo_diff"]
"""Columns of ``evals.csv``."""

RESUMABLE_KEYS = ("total_steps", "checkpoint_every", "eval_every", "eval_games",
                  "eval_opponents", "final_eval_games", "final_eval_opponents", "eval_depth",
                  "ray_address", "ray_actors", "ray_weights_every", "ray_max_staleness")
"""Config keys ``--resume`` may change with ``--set``: how long the run goes on, how often
it checkpoints, how it is evaluated and where its self-play runs (``--ray``), none of
which changes what it trains."""


class ResumeError(ConfigError):
    """``--resume`` of something that is not a run this config can continue: a file, a run
    stopped before its first checkpoint, a checkpoint of other rules, network or games."""


class TrainingDiverged(DamiiError):
    """The loss or the gradient became NaN or infinite: the trainer stops before the
    optimizer step, so the last checkpoint written still holds good weights."""


def append_csv(path: Path, fields: list[str], row: dict[str, Any]) -> None:
    """Add `row` to the CSV log at `path` (its header first when the file is new). A log
    written before with other columns keeps its own (a run resumed by a newer version)."""
    new = not path.exists()
    if not new:
        with path.open(newline="") as f:
            header = next(csv.reader(f), None)
        if header:
            fields = header
        else:
            new = True
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerow(row)


def read_csv(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV log ([] when there is none)."""
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def truncate_csv(path: Path, max_iteration: int) -> None:
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
    write_atomic(path, out.getvalue())


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
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


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Delete the ``*.pt.*.tmp`` files a kill during a checkpoint write left behind."""
    stale = sorted(folder.glob("*.pt.*.tmp"))
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


def check_same_rules(data: dict[str, Any], config: TrainConfig, path: Path) -> None:
    """Refuse a checkpoint of other rules than the run's config."""
    from damii_env.rules import make_rules

    try:
        theirs = make_rules(data["variant"], **data["rule_options"])
    except DamiiError:
        theirs = None
    if theirs != config.rules:
        raise ResumeError(
            f"cannot resume from {str(path)!r}: it was trained for {data['variant']} "
            f"{data['rule_options']}, but the run's config.yaml says {config.variant} "
            f"{config.rule_options}; a run continues under its own rules")


def check_resumable(data: dict[str, Any], config: TrainConfig, path: Path,
                    shape: dict[str, Any]) -> None:
    """Refuse a network checkpoint the run's config cannot continue, naming what differs."""
    if "trainer" not in data:
        raise ResumeError(
            f"cannot resume from {str(path)!r}: it is an exported weights file (no optimizer, "
            f"random state or games), not a training checkpoint; to train on from these "
            f"weights, start a new run with init_weights: {path}")
    check_same_rules(data, config, path)
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


def check_resume_fields(data: dict[str, Any], path: Path) -> None:
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


def check_loaded_games(trainer: Any) -> None:
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


def resumed_config(run_dir: Path, config_path: str | Path | None, run_dir_arg: Any,
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
    last = run_dir / "checkpoints" / "last.pt"
    if last.exists() and not last.is_file():
        raise ResumeError(f"cannot resume {str(run_dir)!r}: its checkpoints/last.pt is not a "
                          f"regular file (a folder, a device or a link to one); restore the "
                          f"checkpoint file")
    if not last.is_file():
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
        write_atomic(source, config_to_yaml(config))
        print(f"damii train: resuming {run_dir} with {', '.join(applied)} (saved in {source})",
              file=sys.stderr)
    return config, run_dir

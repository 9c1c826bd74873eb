"""The trainers by config ``algorithm`` (the one table) and what the run driver
(:class:`damii_training.run.Run`) asks of each of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from damii_training.alphazero import AlphaZeroTrainer
from damii_training.patterns import PatternTrainer
from damii_training.ppo import PPOTrainer
from damii_training.tdleaf import TDLeafTrainer

TRAINERS: dict[str, type] = {"ppo": PPOTrainer, "alphazero": AlphaZeroTrainer,
                             "tdleaf": TDLeafTrainer, "patterns": PatternTrainer}
"""The trainers by config ``algorithm``. The network trainers share the network, engine
and evaluation (:class:`damii_training.selfplay.SelfPlayTrainer`); ``patterns`` fits the
compiled alpha-beta's learned evaluation."""


class Trainer(Protocol):
    """What the run driver asks of a trainer."""

    iteration: int
    """Iterations done."""
    samples: int
    """Progress in :attr:`unit` (training samples, or the learned evaluation's games)."""
    unit: str
    metric_fields: list[str]
    """The columns of the run's ``metrics.csv``."""
    plays_opponents: bool
    """True: the run evaluates :meth:`player` against the config's opponent specs; False:
    the trainer evaluates itself, its :meth:`iterate` stats carry ``evaluations``."""
    progress: bool
    """Whether the trainer may draw progress bars of its own (set by the run)."""

    @property
    def goal(self) -> int:
        """The :attr:`samples` after which the run stops."""

    def iterate(self) -> dict[str, Any]:
        """One iteration; returns its statistics (a row of ``metrics.csv``)."""

    def save(self, path: Path, best_score: float, elapsed: float) -> Path:
        """Write the checkpoint ``--resume`` continues from, with the run's counters."""

    def restore(self, path: Path) -> dict[str, Any]:
        """Continue from :meth:`save`'s checkpoint; returns its data (``best_score``,
        ``elapsed``); raises :class:`damii_training.rundir.ResumeError`."""

    def player(self) -> Any:
        """The learner as a player (with :attr:`plays_opponents`)."""

    def describe(self) -> str:
        """The report's line on what was trained."""

    def write_files(self, run_dir: Path) -> None:
        """Write what the run keeps beside its checkpoints (after each iteration)."""

    def report_lines(self, run_dir: Path) -> list[str]:
        """Lines the report adds after its evaluation table."""


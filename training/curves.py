"""The learning curve of a run (``learning_curve.png``): evaluation scores and training
losses against the run's progress, read from its ``evals.csv`` and ``metrics.csv``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from damii_training.rundir import read_csv


def _loss_curves(row: dict[str, str]) -> list[tuple[str, str, str]]:
    """(column, label, colour) of the two losses plotted, by the metrics' first `row`: a
    network's value loss and its policy entropy (else its policy loss), or the learned
    evaluation's held-out and training cross-entropy."""
    if "value_loss" not in row:
        return [("held_out_loss", "held-out loss", "C0"), ("train_loss", "training loss", "C1")]
    second = ("entropy", "policy entropy") if row.get("entropy") else ("policy_loss",
                                                                      "policy loss")
    return [("value_loss", "value loss", "C0"), (*second, "C1")]


def plot_learning_curve(run_dirs: list[Path], offsets: list[int], variant: str,
                        out: Path, limits: list[int | None] | None = None,
                        unit: str = "training samples") -> Path:
    """Evaluation scores and losses of one run, or of runs each continuing the previous
    one's weights (their samples shifted by `offsets`, stage starts marked; rows past a
    run's `limits` entry, after the checkpoint the next run started from, left out), as a
    PNG; `unit` names the x axis (the logs' ``samples`` column)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    colours: dict[str, Any] = {}
    limits = limits or [None] * len(run_dirs)
    for k, (run_dir, offset) in enumerate(zip(run_dirs, offsets, strict=True)):
        def kept(rows: list[dict[str, str]], limit: int | None = limits[k]) -> list[dict]:
            return [r for r in rows if limit is None or int(r["samples"]) <= limit]

        evals = kept(read_csv(Path(run_dir) / "evals.csv"))
        for opponent in sorted({e["opponent"] for e in evals}):
            pts = [(offset + int(e["samples"]), float(e["score"])) for e in evals
                   if e["opponent"] == opponent]
            line, = ax1.plot(*zip(*pts, strict=True), marker="o", color=colours.get(opponent),
                             label=None if opponent in colours else opponent)
            colours.setdefault(opponent, line.get_color())
        metrics = kept(read_csv(Path(run_dir) / "metrics.csv"))
        if metrics:
            x = [offset + int(m["samples"]) for m in metrics]
            for column, label, colour in _loss_curves(metrics[0]):
                ax2.plot(x, [float(m[column]) for m in metrics], color=colour,
                         label=label if k == 0 else None)
        if k > 0:
            for ax in (ax1, ax2):
                ax.axvline(offset, color="grey", linestyle="--", linewidth=0.8)
    ax1.set_xlabel(unit)
    ax1.set_ylabel("score (win = 1, draw = 0.5)")
    ax1.set_ylim(-0.02, 1.02)
    title = f"{variant}: score against baselines"
    ax1.set_title(title if len(run_dirs) == 1 else f"{title} ({len(run_dirs)} stages)")
    if colours:
        ax1.legend()
    ax2.set_xlabel(unit)
    if ax2.lines:
        ax2.legend()
    ax2.set_title("training")
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out

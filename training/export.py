"""Ship a run: one of its checkpoints as a small playing file (weights and metadata, no
trainer state) that records how it was trained, and its learning curve.

A network may come from a chain of runs, each started from the previous one's weights
(``init_weights``). :func:`export_run` takes the runs of the chain in order and adds up
their samples and training time: for every run but the last, what the checkpoint that
seeded the next run had reached (a seed that is itself an exported file counts its last
stage, that run's share); for the last, the exported checkpoint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from damii_agents.checkpoint import load_checkpoint, load_network, save_checkpoint
from damii_env.errors import DamiiError
from damii_training.config import TrainConfig, _yaml, config_from_dict
from damii_training.curves import plot_learning_curve
from damii_training.selfplay import value_potential


class ExportError(DamiiError):
    """Runs that cannot be exported as one network's history."""


def _run_config(run_dir: Path) -> TrainConfig:
    path = run_dir / "config.yaml"
    if not path.is_file():
        raise ExportError(f"{str(run_dir)!r} is not a run directory (it has no config.yaml)")
    text = path.read_text(encoding="utf-8", errors="replace")
    return config_from_dict(_yaml(text, str(path)), str(path))


def _seconds(data: dict[str, Any]) -> float:
    """Training time recorded in a checkpoint (a run's or an exported one)."""
    return float(data.get("elapsed", data.get("training_seconds", 0.0)))


def export_run(run_dirs: list[str | Path], out: str | Path, checkpoint: str = "best.pt",
               plot: str | Path | None = None) -> dict[str, Any]:
    """Write the last run's `checkpoint` to `out` with the chain's samples, training time,
    samples/s and stages; optionally the chained learning curve as a PNG. Returns the
    metadata written."""
    dirs = [Path(d) for d in run_dirs]
    if not dirs:
        raise ExportError("give at least one run directory")
    configs = [_run_config(d) for d in dirs]
    final_path = dirs[-1] / "checkpoints" / checkpoint
    net, final = load_network(final_path)
    stages = []
    for k, (run_dir, cfg) in enumerate(zip(dirs, configs, strict=True)):
        if cfg.variant != configs[-1].variant:
            raise ExportError(f"{str(run_dir)!r} trained {cfg.variant}, "
                              f"{str(dirs[-1])!r} trained {configs[-1].variant}")
        if k + 1 < len(dirs):
            seed_path = configs[k + 1].init_weights
            if not seed_path:
                raise ExportError(f"{str(dirs[k + 1])!r} did not start from the weights of "
                                  f"{str(run_dir)!r} (its config has no init_weights)")
            seed = load_checkpoint(seed_path)
            if "stages" in seed:  # an exported file: its step is the whole chain's
                last = seed["stages"][-1]
                if last["run"] != run_dir.name:
                    raise ExportError(
                        f"{str(dirs[k + 1])!r} started from {seed_path}, exported from run "
                        f"{last['run']!r}, not from {str(run_dir)!r}")
                reached = (int(last["samples"]), float(last["seconds"]))
            else:
                reached = (int(seed["step"]), _seconds(seed))
        else:
            reached = (int(final["step"]), _seconds(final))
        stages.append({"run": run_dir.name, "config": cfg.name, "algorithm": cfg.algorithm,
                       "samples": reached[0], "seconds": round(reached[1], 1)})
    samples = sum(s["samples"] for s in stages)
    seconds = sum(s["seconds"] for s in stages)
    info = {"training_seconds": round(seconds, 1),
            "samples_per_second": round(samples / seconds, 1) if seconds else 0.0,
            "stages": stages, "source": f"{dirs[-1].name}/checkpoints/{checkpoint}",
            "value_potential": final.get("value_potential", value_potential(configs[-1]))}
    save_checkpoint(out, net, final["variant"], final["rule_options"], samples, **info)
    if plot is not None:
        offsets = [sum(s["samples"] for s in stages[:k]) for k in range(len(stages))]
        limits = [s["samples"] for s in stages[:-1]] + [None]
        plot_learning_curve(dirs, offsets, final["variant"], Path(plot), limits)
    return {"step": samples, **info}

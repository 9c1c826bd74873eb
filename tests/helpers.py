"""Helpers that only the tests use, kept out of the shipped packages."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from damii_agents.search.evaluator import Evaluator, LeafFunction, Levels
from damii_agents.search.minimax import SearchResult
from damii_env.engine import State

LevelValues = Callable[[State, np.ndarray], np.ndarray]
"""``values_of(states, rows)``: values (len(rows),) of the games at `rows` (int64, in
increasing order) of `states`, for their player to move (the game's result where it is
over). :func:`leaf_state` gives them as a state of their own where needed."""


# --- minimax (damii_agents.search.minimax) ------------------------------------------------
def per_level(values_of: LevelValues) -> Evaluator:
    """An :class:`~damii_agents.search.evaluator.Evaluator` that calls `values_of` once
    per level."""
    def leaf_values(levels: Levels) -> np.ndarray:
        return (np.concatenate([np.asarray(values_of(s, r), dtype=np.float64)
                                for s, r in levels]) if levels else np.zeros(0))
    return LeafFunction(leaf_values)


def leaf_state(states: State, rows: np.ndarray) -> State:
    """The games at `rows` of `states` as a state of their own (`states` itself, not a
    copy, where `rows` are all of its games)."""
    return states if len(rows) == states.batch_size else states.take(rows)


def best(result: SearchResult, n_roots: int) -> np.ndarray:
    """The best value of each root of a minimax result (-inf where a root has no legal
    hop)."""
    out = np.full(n_roots, -np.inf)
    np.maximum.at(out, result.root, result.values)
    return out


def of_root(result: SearchResult, r: int) -> np.ndarray:
    """The values of root r's hops in a minimax result, in the order of its legal list."""
    return result.values[result.root == r]


# --- the Gymnasium environment's opponent (damii_env.gym_env.Policy) ----------------------
class RandomPolicy:
    """Uniformly random legal actions."""

    def __init__(self, seed: int | np.random.Generator | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.rng.choice(np.flatnonzero(action_mask)))


def build_wheel(dest: Path) -> Path:
    """The project's wheel, built from a copy of its sources (an in-tree build would leave
    build/ and an egg-info in the repository, whose entry points would then shadow the
    installed ones), without build isolation where setuptools is at hand (no download)."""
    import shutil
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    src = dest.parent / "src"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "*.nbi", "*.nbc")
    for name in ("damii_env", "agents", "training", "app", "configs"):
        shutil.copytree(repo / name, src / name, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(repo / name, src / name)
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dest), str(src)]
    try:
        import setuptools  # noqa: F401

        cmd.insert(5, "--no-build-isolation")
    except ImportError:
        pass
    subprocess.run(cmd, check=True, timeout=600, capture_output=True)
    (wheel,) = dest.glob("damii_env-*.whl")
    return wheel

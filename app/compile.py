"""``damii compile``: compile the engine, the searches and the trainers' kernels for this
machine now, rather than at their first use (for an image, a container or a Ray node);
``damii compile --ship`` makes the cache the packages ship (``damii_env/compile_cache.py``).

The warm-up plays a little of everything a user starts with, in all four variants: the
PettingZoo, Gymnasium and vector environments, the ``Game`` API and perft, the alpha-beta
with both evaluations (``pretrained:NAME``), and, where torch is installed, the shipped
networks and a few games of the pattern trainer's self-play.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from tqdm import tqdm

VARIANTS = ("damii", "international", "triestine", "damath")


def _environments(variant: str) -> None:
    import gymnasium

    import damii_env

    rng = np.random.default_rng(0)
    env = damii_env.env(variant=variant)
    env.reset(seed=0)
    for _agent in env.agent_iter(max_iter=60):
        observation, _reward, termination, truncation, _info = env.last()
        action = (None if termination or truncation
                  else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        env.step(action)
    env.close()
    single = gymnasium.make(f"damii_env/{variant.capitalize()}-v0")
    _obs, info = single.reset(seed=0)
    single.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    for num_envs in (4, 256):  # the serial and the parallel stepping
        vector = damii_env.DraughtsVectorEnv(num_envs=num_envs, variant=variant)
        _obs, info = vector.reset(seed=0)
        for _ in range(3):
            masks = info["action_mask"]
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            _obs, _rewards, _terms, _truncs, info = vector.step(actions)


def _games(variant: str) -> None:
    import damii_env

    game = damii_env.Game(variant)
    for _ in range(6):
        game.push(game.legal_moves()[0])
    game.fen()
    damii_env.perft(2, variant)


def _searches(variant: str) -> None:
    from damii_env import Game, make_player

    for spec in (f"pretrained:{variant},depth=2", "alphabeta:depth=2"):
        game = Game(variant)
        game.push(make_player(spec, variant, seed=0).choose(game))


def _networks(variant: str) -> None:
    from damii_env import Game, make_player

    for spec in (f"pretrained:{variant},net=policy", f"pretrained:{variant},net=search,depth=1"):
        game = Game(variant)
        game.push(make_player(spec, variant, seed=0).choose(game))


def _pattern_self_play(variant: str) -> None:
    from damii_agents.search.patterns import learned_weights
    from damii_training import patterns
    from damii_training.config import config_from_dict

    config = config_from_dict({"variant": variant, "algorithm": "patterns",
                               "patterns": {"games": 10, "depth": 1}})
    patterns.generate(config, progress=False)  # the first round: the handwritten evaluation
    patterns.generate(config, learned_weights(config.rules), progress=False)


def warm_up_tasks(with_torch: bool) -> list[tuple[str, Callable[[str], None]]]:
    """The warm-up's parts (name, function of a variant), the torch ones where it loads."""
    tasks = [("environments", _environments), ("games", _games), ("searches", _searches)]
    if with_torch:
        tasks += [("networks", _networks), ("pattern self-play", _pattern_self_play)]
    return tasks


def _torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def warm_up(progress: bool = True) -> float:
    """Compile (or load from the cache) everything the warm-up touches; its seconds."""
    start = time.perf_counter()
    tasks = [(name, fn, v) for name, fn in warm_up_tasks(_torch_available()) for v in VARIANTS]
    with tqdm(tasks, desc="compiling", unit="part", disable=not progress) as bar:
        for name, fn, variant in bar:
            bar.set_postfix_str(f"{name} ({variant})")
            fn(variant)
    return time.perf_counter() - start


def ship(progress: bool = True) -> list[Path]:
    """Compile everything into an empty cache and copy it into the packages' shipped
    folders (replacing what they held); the folders written."""
    from damii_env import compile_cache

    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, DAMII_CACHE_DIR=folder, DAMII_SHIPPED_CACHE="0")
        subprocess.run([sys.executable, "-m", "damii_app.compile"] +
                       ([] if progress else ["--no-progress"]), env=env, check=True)
        import damii_agents  # noqa: F401  (registers its package)
        import damii_training  # noqa: F401

        written = []
        for name, package in compile_cache.registered_packages().items():
            made = Path(folder) / f"{name}-{compile_cache.package_stamp(name)}"
            shipped = package / compile_cache.SHIPPED_FOLDER
            shutil.rmtree(shipped, ignore_errors=True)
            if made.is_dir():
                shutil.copytree(made, shipped / made.name)
                (shipped / made.name / compile_cache.MACHINE_FILE).write_text(
                    compile_cache.machine() + "\n")
                written.append(shipped / made.name)
        return written


def add_parser(sub: argparse._SubParsersAction, command: Callable[..., int]) -> None:
    """``damii compile``'s arguments, run by `command`."""
    p = sub.add_parser("compile", help="compile the engine and searches for this machine now "
                                       "(an image, a container, a Ray node), not at first use")
    p.add_argument("--ship", action="store_true",
                   help="developers: make the compiled cache the packages ship")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=command)


def main(argv: list[str] | None = None) -> int:
    """Run the warm-up in this process (``python -m damii_app.compile``)."""
    argv = sys.argv[1:] if argv is None else argv
    seconds = warm_up(progress="--no-progress" not in argv)
    print(f"compiled in {seconds:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The examples in examples/ run, a few steps each (skipped where their library is not
installed; CI installs them with the `examples` extra). Their full runs and measured
results are in each example's docstring."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example(name: str, *needs: str):
    for module in needs:
        pytest.importorskip(module, reason=f"examples/{name}.py needs {module}")
    sys.path.insert(0, str(EXAMPLES))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(EXAMPLES))


def _check(result: dict[str, float], steps: int) -> None:
    assert result["steps"] >= steps and result["steps_per_second"] > 0
    assert 0.0 <= result["score"] <= 1.0


@pytest.mark.parametrize("policy", ["mlp", "cnn"])
def test_sb3_maskable_ppo(policy):
    example = _example("sb3_maskable_ppo", "sb3_contrib")
    _check(example.run(policy, steps=256, games=2, n_envs=2, n_steps=128, turn_limit=40),
           256)


def test_sb3_cnn_extractor_takes_every_variant_shape():
    example = _example("sb3_maskable_ppo", "sb3_contrib")
    import gymnasium
    import torch

    for env_id in ("damii_env/Damath-v0", "damii_env/Triestine-v0"):
        space = gymnasium.make(env_id).observation_space
        net = example.DraughtsCNN(space, features_dim=16)
        assert net(torch.zeros((3, *space.shape))).shape == (3, 16)


def test_sb3_selfplay_over_the_aec_env():
    example = _example("sb3_selfplay_aec", "sb3_contrib")
    _check(example.run(steps=256, games=2, n_steps=128, turn_limit=40), 256)


def test_tianshou_multi_agent_dqn():
    example = _example("tianshou_dqn", "tianshou")
    _check(example.run(epochs=1, epoch_steps=64, games=2, n_envs=2, turn_limit=30), 64)


def test_rllib_ppo_with_action_masking(monkeypatch):
    """Runs where RLlib is installed: in CI, the virtualenv of its own that .ci/run makes
    (RLlib pins gymnasium==1.2.2). No hop reaches the env that its mask forbids: the env
    runner lives in this process (num_env_runners=0), so PettingZoo's "Illegal move made"
    warning is counted here. RLlib's env check, on unless the config turns it off, steps
    one unmasked random action after building the env and made that warning once per
    env runner."""
    example = _example("rllib_ppo", "ray.rllib")
    from pettingzoo.utils.env_logger import EnvLogger

    illegal: list[int] = []
    monkeypatch.setattr(EnvLogger, "warn_on_illegal_move",
                        staticmethod(lambda: illegal.append(1)))
    _check(example.run(iterations=1, batch=200, games=2, turn_limit=30), 200)
    assert illegal == []


@pytest.mark.parametrize("name", ["rllib_ppo", "sb3_maskable_ppo", "sb3_selfplay_aec",
                                  "tianshou_dqn"])
def test_help_of_each_example_prints_whole_and_without_its_framework(name):
    """Issue 45, D8: --help cut the description mid-sentence, had no option texts, and
    rllib_ppo.py --help was a traceback where ray is missing. The frameworks are hidden
    here (as where they are not installed): --help must not need them."""
    import subprocess

    hide = ("import sys; sys.modules.update(dict.fromkeys(['ray', 'sb3_contrib', "
            "'stable_baselines3', 'tianshou'])); sys.argv = ['x', '--help']; "
            f"import runpy; runpy.run_path('examples/{name}.py', run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", hide], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Traceback" not in done.stderr and out.startswith("usage:")
    description = out.split("\n\n")[1]
    assert description.rstrip().endswith((".", ")")), description
    assert "(default:" in out and "Needs " in out

"""Gymnasium conventions checked in issue 29: ``same_step`` autoreset gives ``final_info``
beside ``final_obs``; ``render_mode="human"`` without pygame is said at construction."""

from __future__ import annotations

import numpy as np
import pytest

import damii_env
import damii_env.render
from damii_env.vector_env import DraughtsVectorEnv


def _first_legal(info: dict) -> list[int]:
    """The first legal hop of each game (0, ignored, in a game that ended)."""
    return [int(np.flatnonzero(row)[0]) if row.any() else 0 for row in info["action_mask"]]


def test_same_step_gives_the_final_info_of_the_games_that_ended():
    envs = DraughtsVectorEnv(4, "damii", autoreset_mode="same_step", turn_limit=6)
    _, info = envs.reset(seed=0)
    for _ in range(20):
        before = info["action_mask"].copy()
        _, _, term, trunc, info = envs.step(_first_legal(info))
        if (term | trunc).any():
            break
    done = term | trunc
    assert done.any()
    final = info["final_info"]
    assert (info["_final_info"] == done).all() and (info["_final_obs"] == done).all()
    # the ended games' last info: their outcome (4: truncated by the turn limit) and an
    # all-zero mask, while the top level already holds the new games' masks
    assert (final["outcome"][done] == 4).all()
    assert (final["action_mask"][done].sum(axis=1) == 0).all()
    assert (info["action_mask"][done].sum(axis=1) > 0).all()
    assert (final["_outcome"] == done).all()
    assert before.shape == final["action_mask"].shape


def test_next_step_gives_no_final_info():
    envs = DraughtsVectorEnv(2, "damii", turn_limit=4)
    _, info = envs.reset(seed=0)
    for _ in range(6):
        _, _, _, _, info = envs.step(_first_legal(info))
        assert "final_info" not in info


def test_human_mode_without_pygame_is_said_at_construction(monkeypatch):
    monkeypatch.setattr(damii_env.render, "pygame_installed", lambda: False)
    with pytest.warns(UserWarning,
                      match=r'pygame is not installed: pip install "damii-env\[human\]"'):
        damii_env.raw_env("damii", render_mode="human")


def test_human_mode_with_pygame_says_nothing(monkeypatch, recwarn):
    monkeypatch.setattr(damii_env.render, "pygame_installed", lambda: True)
    damii_env.raw_env("damii", render_mode="human")
    assert not [w for w in recwarn if "pygame" in str(w.message)]


def test_human_mode_without_pygame_prints_text_in_both_apis(monkeypatch, capsys):
    """Issue 45, D8: the AEC env warned, then failed at reset(); gymnasium.make wrapped
    the env in its HumanRendering and asked for gymnasium[classic-control]. Now both
    say our hint once and print each board as text."""
    import gymnasium

    monkeypatch.setattr(damii_env.render, "pygame_installed", lambda: False)
    with pytest.warns(UserWarning, match=r'pip install -e "\.\[human\]"'):
        env = gymnasium.make("damii_env/Damii-v0", render_mode="human")
    assert type(env.unwrapped).__name__ == "DraughtsEnv"
    assert "HumanRendering" not in str(env)
    env.reset(seed=0)
    assert "46-50" in capsys.readouterr().out
    with pytest.warns(UserWarning, match="prints each board as text"):
        aec = damii_env.env("damii", render_mode="human")
    aec.reset(seed=0)
    assert "46-50" in capsys.readouterr().out


def test_info_gives_the_colour_under_both_spellings():
    """Issue 45, D8: info["colour"] had no info["color"]."""
    env = damii_env.gym_env.DraughtsEnv("damii", play_as="black")
    _, info = env.reset(seed=0)
    assert info["colour"] == info["color"] == 1

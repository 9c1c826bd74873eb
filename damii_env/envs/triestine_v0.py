"""Triestine draughts as a PettingZoo AEC environment: 10x10, short kings, men capture forwards
only and never kings, Italian-style capture precedence.

>>> from damii_env.envs import triestine_v0
>>> env = triestine_v0.env(render_mode="ansi")

Observation, actions and rewards: see :mod:`damii_env.aec`.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv

from ..aec import raw_env as _raw_env
from ..aec import wrap

VARIANT = "triestine"


class raw_env(_raw_env):
    """Triestine draughts without the standard wrappers."""

    metadata = {**_raw_env.metadata, "name": "triestine_v0"}

    def __init__(self, render_mode: str | None = None, **rule_options: Any) -> None:
        super().__init__(VARIANT, render_mode=render_mode, **rule_options)


def env(render_mode: str | None = None, **rule_options: Any) -> AECEnv:
    """Triestine draughts, wrapped like PettingZoo's classic environments."""
    return wrap(raw_env(render_mode=render_mode, **rule_options))

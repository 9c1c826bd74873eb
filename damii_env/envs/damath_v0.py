"""Sci-Damath as a PettingZoo AEC environment: 8x8 math draughts, chips with values,
each capture scores `taker OP taken`; the totals decide the game (rewards +1/-1/0 by totals).

>>> from damii_env.envs import damath_v0
>>> env = damath_v0.env(render_mode="ansi")

Observation, actions and rewards: see :mod:`damii_env.aec`.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv

from ..aec import raw_env as _raw_env
from ..aec import wrap

VARIANT = "damath"


class raw_env(_raw_env):
    """Sci-Damath without the standard wrappers."""

    metadata = {**_raw_env.metadata, "name": "damath_v0"}

    def __init__(self, render_mode: str | None = None, **rule_options: Any) -> None:
        super().__init__(VARIANT, render_mode=render_mode, **rule_options)


def env(render_mode: str | None = None, **rule_options: Any) -> AECEnv:
    """Sci-Damath, wrapped like PettingZoo's classic environments."""
    return wrap(raw_env(render_mode=render_mode, **rule_options))

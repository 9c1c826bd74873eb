"""Damii (Ghanaian draughts) as a PettingZoo AEC environment: 10x10, flying kings, free choice
among captures; orientation `mirrored` (dark corner bottom-right) by default,
`orientation="standard"` for the other.

>>> from damii_env.envs import damii_v0
>>> env = damii_v0.env(render_mode="ansi")

Observation, actions and rewards: see :mod:`damii_env.aec`.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv

from ..aec import raw_env as _raw_env
from ..aec import wrap

VARIANT = "damii"


class raw_env(_raw_env):
    """Damii (Ghanaian draughts) without the standard wrappers."""

    metadata = {**_raw_env.metadata, "name": "damii_v0"}

    def __init__(self, render_mode: str | None = None, **rule_options: Any) -> None:
        super().__init__(VARIANT, render_mode=render_mode, **rule_options)


def env(render_mode: str | None = None, **rule_options: Any) -> AECEnv:
    """Damii (Ghanaian draughts), wrapped like PettingZoo's classic environments."""
    return wrap(raw_env(render_mode=render_mode, **rule_options))

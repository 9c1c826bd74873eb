"""Damii (Ghanaian draughts) as a PettingZoo AEC environment: 10x10, flying kings, free choice
among captures; orientation `mirrored` (dark corner bottom-right) by default,
`orientation="standard"` for the other.

>>> from damii_env.envs import damii_v0
>>> env = damii_v0.env(render_mode="ansi")

Observation, actions and rewards: see :mod:`damii_env.aec`.
"""

from damii_env.aec import variant_api

raw_env, env = variant_api("damii", __name__)

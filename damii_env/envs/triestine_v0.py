"""Triestine draughts as a PettingZoo AEC environment: 10x10, short kings, men capture forwards
only and never kings, Italian-style capture precedence.

>>> from damii_env.envs import triestine_v0
>>> env = triestine_v0.env(render_mode="ansi")

Observation, actions and rewards: see :mod:`damii_env.aec`.
"""

from damii_env.aec import variant_api

raw_env, env = variant_api("triestine", __name__)

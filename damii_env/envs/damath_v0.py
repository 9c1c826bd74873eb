"""Sci-Damath as a PettingZoo AEC environment: 8x8 math draughts, chips with values,
each capture scores `taker OP taken`; the totals decide the game (rewards +1/-1/0 by totals).

>>> from damii_env.envs import damath_v0
>>> env = damath_v0.env(render_mode="ansi")

Observation, actions and rewards: see :mod:`damii_env.aec`.
"""

from damii_env.aec import variant_api

raw_env, env = variant_api("damath", __name__)

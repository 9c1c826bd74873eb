"""International draughts as a PettingZoo AEC environment: 10x10, flying kings, the most pieces
must be captured; the reference variant.

>>> from damii_env.envs import international_v0
>>> env = international_v0.env(render_mode="ansi")

Observation, actions and rewards: see :mod:`damii_env.aec`.
"""

from damii_env.aec import variant_api

raw_env, env = variant_api("international", __name__)

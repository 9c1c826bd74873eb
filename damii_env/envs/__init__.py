"""One PettingZoo module per variant, in the style of ``pettingzoo.classic``.

>>> from damii_env.envs import damath_v0, damii_v0, international_v0, triestine_v0
>>> env = damii_v0.env()
>>> sorted(all_environments)
['damath_v0', 'damii_v0', 'international_v0', 'triestine_v0']
"""

from __future__ import annotations

from types import ModuleType

from damii_env.envs import damath_v0, damii_v0, international_v0, triestine_v0

all_environments: dict[str, ModuleType] = {
    "damii_v0": damii_v0,
    "international_v0": international_v0,
    "triestine_v0": triestine_v0,
    "damath_v0": damath_v0,
}
"""Environment modules by name (``name`` in their metadata)."""

__all__ = ["all_environments", "damath_v0", "damii_v0", "international_v0", "triestine_v0"]

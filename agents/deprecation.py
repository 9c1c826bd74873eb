"""The names removed in 0.2.0: they keep working, with a DeprecationWarning that names
their replacement, until :data:`REMOVED_IN` (CHANGELOG.md; the public names: docs/API.md).
This module imports nothing of the project, so any module can offer its old names."""

from __future__ import annotations

import warnings

DEPRECATED: dict[str, str] = {
    "make_agent": "damii_env.make_player(spec, variant) (or PlayerSpec.parse(spec)"
                  ".build(variant))",
    "AgentSpecError": "damii_env.PlayerSpecError",
    "parse_spec": "PlayerSpec.parse(spec) (its .kind and .options)",
    "Agent": "damii_env.Player (the player protocol; damii_agents.BaseAgent to subclass)",
}
"""Old name -> what to use instead."""
REMOVED_IN = "0.3.0"


def warn(module: str, name: str, stacklevel: int = 3) -> None:
    """The DeprecationWarning of `module`'s old `name`, at the line that used it:
    `stacklevel` 3 when a module's ``__getattr__`` calls this (its caller is the
    importer), one more for each function between."""
    warnings.warn(f"{module}.{name} is deprecated since damii-env 0.2.0 and goes in "
                  f"{REMOVED_IN}: use {DEPRECATED[name]}", DeprecationWarning,
                  stacklevel=stacklevel)

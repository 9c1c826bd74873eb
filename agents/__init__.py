"""Players, searches and matches for damii-env (installed as ``damii_agents``): three wings,
:mod:`~damii_agents.players` (random, greedy, alpha-beta, the trained networks, a person),
:mod:`~damii_agents.search` (alpha-beta, minimax, PUCT, Gumbel) and
:mod:`~damii_agents.match` (the referee of a game, matches, Elo, reports); beside them the
player interface (:mod:`~damii_agents.base`), the spec registry
(:mod:`~damii_agents.registry`), the network and its checkpoints.

>>> from damii_agents import PlayerSpec
>>> spec = PlayerSpec.parse("alphabeta:depth=3")
>>> player = spec.build(variant="damii")
"""

from pathlib import Path

from damii_env import compile_cache

# before any module of this package defines a compiled function (damii_env/compile_cache.py)
compile_cache.register_package("damii_agents", Path(__file__).parent)

from damii_agents.base import BaseAgent  # noqa: E402
from damii_agents.players.simple import GreedyAgent, RandomAgent  # noqa: E402
from damii_agents.registry import PlayerSpec  # noqa: E402
from damii_agents.registry import deprecated_name as _deprecated_name  # noqa: E402

__all__ = ["BaseAgent", "GreedyAgent", "PlayerSpec", "RandomAgent"]


def __getattr__(name: str) -> object:
    """The names removed in 0.2.0 (``make_agent``, ``Agent``, ``AgentSpecError``,
    ``parse_spec``), with a DeprecationWarning naming the replacement, until 0.3.0."""
    return _deprecated_name(__name__, name)

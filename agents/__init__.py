"""Players, searches and matches for damii-env (installed as ``damii_agents``): three wings,
:mod:`~damii_agents.players` (random, greedy, alpha-beta, the trained networks, a person),
:mod:`~damii_agents.search` (alpha-beta, minimax, PUCT, Gumbel) and
:mod:`~damii_agents.match` (the referee of a game, matches, Elo, reports); beside them the
player interface (:mod:`~damii_agents.base`), the spec registry
(:mod:`~damii_agents.registry`), the network and its checkpoints.

>>> from damii_agents import make_agent
>>> player = make_agent("alphabeta:depth=3", variant="damii")
"""

from damii_agents.base import Agent, BaseAgent
from damii_agents.players.simple import GreedyAgent, RandomAgent
from damii_agents.registry import AgentSpecError, make_agent, parse_spec

__all__ = ["Agent", "AgentSpecError", "BaseAgent", "GreedyAgent", "RandomAgent", "make_agent",
           "parse_spec"]

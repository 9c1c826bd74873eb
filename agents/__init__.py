"""Built-in players for damii-env: random, greedy, alpha-beta, and checkpoints (neural).

>>> from agents import make_agent
>>> player = make_agent("alphabeta:depth=3", variant="damii")
"""

from .base import Agent, BaseAgent
from .registry import AgentSpecError, make_agent, parse_spec
from .simple import GreedyAgent, RandomAgent

__all__ = ["Agent", "AgentSpecError", "BaseAgent", "GreedyAgent", "RandomAgent", "make_agent",
           "parse_spec"]

"""Evaluation of a network during and after training: short matches against agents."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from agents import make_agent
from agents.arena import game_options, play_game
from agents.base import Agent
from damii_env import Game


@dataclass
class MatchResult:
    """Result of a match from the first player's (the learner's) point of view."""

    opponent: str
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0

    @property
    def elo_diff(self) -> float:
        """Elo difference implied by the score (clamped at +-800 for 0% and 100%)."""
        s = min(max(self.score, 1e-3), 1 - 1e-3)
        return max(-800.0, min(800.0, -400.0 * math.log10(1.0 / s - 1.0)))


def evaluate(agent: Agent, opponents: list[str], games: int, variant: str,
             rule_options: dict[str, Any], seed: int = 0) -> list[MatchResult]:
    """`games` games against each opponent spec, seats alternated (no clock)."""
    results = []
    options = game_options(variant, **rule_options)
    for j, spec in enumerate(opponents):
        opponent = make_agent(spec, variant, seed=seed + 7919 * j, **rule_options)
        w = d = l_ = 0
        for i in range(games):
            for a in (agent, opponent):
                if hasattr(a, "reset"):
                    a.reset(seed + 1000 * j + i)
            learner_white = i % 2 == 0
            white, black = (agent, opponent) if learner_white else (opponent, agent)
            end = play_game(Game(variant, **options), (white, black))
            if end.winner is None:
                d += 1
            elif (end.winner == 0) == learner_white:
                w += 1
            else:
                l_ += 1
        results.append(MatchResult(spec, w, d, l_))
    return results

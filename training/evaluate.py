"""Evaluation of a network during and after training: short matches against agents.

The games are the arena's (:mod:`damii_agents.match`): a gauntlet of the learner against each
opponent spec, on shared random opening ballots with seats alternated, without a clock,
played in this process (the learner is a ready-made object, not a spec).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from damii_agents.match import MatchConfig, run_match
from damii_env.player import Player


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


def evaluate(agent: Player, opponents: list[str], games: int, variant: str,
             rule_options: dict[str, Any], seed: int = 0,
             progress: bool = False) -> list[MatchResult]:
    """`games` games of `agent` against each opponent spec, in the arena's gauntlet.

    As in the arena, an odd number of games is rounded up to even: each random opening
    (2 plies) is played once with the learner on each seat. There is no clock. The games
    depend only on `seed` (and the agents), so a resumed run evaluates as the original.
    `progress` shows the match's bar on stderr.
    """
    if games < 1 or not opponents:
        return [MatchResult(spec, 0, 0, 0) for spec in opponents]
    label = getattr(agent, "name", None) or "learner"
    config = MatchConfig(variant, (label, *opponents), games=games, clock=None, workers=1,
                         seed=seed, rule_options=dict(rule_options), event="damii-env train eval",
                         gauntlet=True, players={0: agent})
    match = run_match(config, progress=progress, elo_samples=0)
    # a gauntlet's pairings are (learner, opponent j) in the order of `opponents`,
    # tallied from the learner's side
    return [MatchResult(spec, p.wins, p.draws, p.losses)
            for spec, p in zip(opponents, match.pairings, strict=True)]

"""What a match produced: each game (:class:`GameResult`), the tally of each pairing
(:class:`PairingStats`) and the Elo ratings of the players (:class:`MatchResult`, rated
with :func:`damii_agents.match.elo.rate`). Its output formats
(text, Markdown, JSON, the saved files) are the functions of :mod:`damii_agents.match.reports`."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from damii_agents.match.elo import Rating, rate
from damii_agents.match.game_loop import GameEnd
from damii_env.pdn import PdnGame

if TYPE_CHECKING:
    from damii_agents.match.config import MatchConfig


@dataclass
class GameResult:
    """One finished game of a match."""

    index: int
    white: str
    black: str
    end: GameEnd
    plies: int
    final_fen: str
    seconds: float
    pdn: PdnGame

    def summary(self) -> dict[str, Any]:
        """The game in one flat dict (round, players, result, plies, seconds)."""
        return {"round": self.index + 1, "white": self.white, "black": self.black,
                "result": self.end.result, "termination": self.end.termination,
                "plies": self.plies, "seconds": round(self.seconds, 3)}


@dataclass
class PairingStats:
    """Results of one pairing from the first player's side."""

    a: str
    b: str
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws


@dataclass
class MatchResult:
    """All games of a match, the pairings' tallies and the Elo ratings."""

    config: MatchConfig
    games: list[GameResult]
    pairings: list[PairingStats]
    """Pairings that played, in seat order (a gauntlet: the first player against each)."""
    ratings: list[Rating]

    @classmethod
    def from_games(cls, config: MatchConfig, games: list[GameResult],
                   elo_samples: int = 1000) -> MatchResult:
        """Tally `games` by pairing and rate the players (`elo_samples` bootstrap
        samples for the confidence intervals; 0 for none)."""
        names = config.names
        index = {n: i for i, n in enumerate(names)}
        stats = {(a, b): PairingStats(names[a], names[b])
                 for a, b in itertools.combinations(range(len(names)), 2)}
        scores = []
        for g in sorted(games, key=lambda g: g.index):
            w, b = index[g.white], index[g.black]
            pts = g.end.white_points
            scores.append((w, b, pts))
            s = stats[(min(w, b), max(w, b))]
            a_points = pts if w < b else 1.0 - pts
            if a_points == 1.0:
                s.wins += 1
            elif a_points == 0.0:
                s.losses += 1
            else:
                s.draws += 1
        ratings = rate(names, scores, anchor=config.anchor, samples=elo_samples,
                       seed=config.seed)
        played = [s for s in stats.values() if s.games]  # a gauntlet leaves pairs unplayed
        return cls(config, sorted(games, key=lambda g: g.index), played, ratings)

    def terminations(self) -> Counter[str]:
        """How many games ended in each way (``win``, ``time forfeit``, ...)."""
        return Counter(g.end.termination for g in self.games)

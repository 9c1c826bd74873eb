"""Baseline players: uniformly random, and greedy one-ply material (Damath: points)."""

from __future__ import annotations

import random

from damii_agents.base import BaseAgent
from damii_env import Game, Move


class SeededAgent(BaseAgent):
    """An agent with its own seeded random generator, reseeded by ``reset(seed)``."""

    def __init__(self, seed: int | None = None, name: str = "agent") -> None:
        self.name = name
        self.rng = random.Random(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng.seed(seed)


class RandomAgent(SeededAgent):
    """Uniform over the legal full moves, seeded."""

    def __init__(self, seed: int | None = None, name: str = "random") -> None:
        super().__init__(seed, name)

    def choose(self, game: Game) -> Move:
        moves = game.legal_moves()
        if not moves:
            raise ValueError("no legal move: the game is over")
        return self.rng.choice(moves)


def move_gain(game: Game, move: Move, king_value: float = 3.0) -> float:
    """What a move wins at once: captured material (kings count `king_value`) plus
    promotion; in Damath, the points it scores."""
    if move.score is not None:
        return float(move.score)
    board = game.board()
    gain = sum(king_value if abs(int(board[s - 1])) == 2 else 1.0 for s in move.captured)
    if move.crowns:
        gain += king_value - 1.0
    return gain


class GreedyAgent(SeededAgent):
    """One ply: the move that wins the most material (Damath: the most points) at once;
    ties broken at random."""

    def __init__(self, seed: int | None = None, name: str = "greedy") -> None:
        super().__init__(seed, name)

    def choose(self, game: Game) -> Move:
        moves = game.legal_moves()
        if not moves:
            raise ValueError("no legal move: the game is over")
        sign = -1.0 if game.rules.lower_wins else 1.0
        gains = [sign * move_gain(game, m) for m in moves]
        best = max(gains)
        return self.rng.choice([m for m, g in zip(moves, gains, strict=True) if g == best])

"""Shared helpers for the test suite."""

from __future__ import annotations

import random

import pytest

import damii_env as d


def random_placement_fen(rng: random.Random, n_squares: int = 50, size: int = 10,
                         max_pieces: int = 12, king_share: float = 0.5) -> str:
    """A random legal-looking position: up to `max_pieces` a side, many kings."""
    squares = list(range(1, n_squares + 1))
    rng.shuffle(squares)
    nw, nb = rng.randint(1, max_pieces), rng.randint(1, max_pieces)
    half = size // 2

    def token(sq: int, white: bool) -> str:
        king = rng.random() < king_share
        if white and sq <= half:
            king = True
        if not white and sq > n_squares - half:
            king = True
        return ("K" if king else "") + str(sq)

    white = ",".join(token(s, True) for s in squares[:nw])
    black = ",".join(token(s, False) for s in squares[nw:nw + nb])
    return f"{rng.choice('WB')}:W{white}:B{black}"


def random_game_fens(variant: str, n_games: int, seed: int, max_plies: int = 200,
                     **options) -> list[str]:
    """Every position (FEN) of `n_games` random games played with the single-game API."""
    rng = random.Random(seed)
    fens = []
    for _ in range(n_games):
        g = d.Game(variant, **options)
        for _ in range(max_plies):
            if g.is_over():
                break
            fens.append(g.fen())
            g.push(rng.choice(g.legal_moves()))
    return fens


@pytest.fixture(scope="session")
def international_game_fens() -> list[str]:
    return random_game_fens("international", n_games=12, seed=7)

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


def replay_batched_games(eng, state, games: list, rng, max_steps: int = 100_000):
    """Step random hops in the batch `state` and replay every completed turn on `games[b]`.

    Yields ``(b, continuing)`` after each hop of game b: ``continuing`` is True while a
    capture goes on; otherwise the turn's hops have just been pushed on ``games[b]`` as
    the one legal move whose actions they are.
    """
    hops: list[list[int]] = [[] for _ in games]
    for _ in range(max_steps):
        if state.done.all():
            return
        turns = state.turn.copy()
        actions = eng.sample_actions(state, rng)
        eng.step(state, actions)
        for b in range(len(games)):
            if actions[b] < 0:
                continue
            hops[b].append(int(actions[b]))
            if state.turn[b] == turns[b]:
                yield b, True
                continue
            g = games[b]
            match = [m for m in g.legal_moves() if m.actions == tuple(hops[b])]
            assert len(match) == 1, (g.fen(), hops[b])
            g.push(match[0])
            hops[b] = []
            yield b, False

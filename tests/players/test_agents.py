"""Built-in players: legality, strength, forced wins, spec parsing."""

from __future__ import annotations

import pytest

import damii_env as d
from damii_agents import GreedyAgent, PlayerSpec, RandomAgent
from damii_agents.players.alphabeta import AlphaBetaAgent
from damii_env.player import PlayerSpecError, make_player

VARIANTS = ["damii", "international", "triestine", "damath"]


def play(game: d.Game, white, black, max_plies: int = 400) -> str:
    players = (white, black)
    for _ in range(max_plies):
        if game.is_over():
            break
        move = players[game.turn].choose(game)
        game.push(move)  # push raises IllegalMoveError on anything not legal
    return game.result()


@pytest.mark.parametrize("variant", VARIANTS)
def test_agents_play_only_legal_moves(variant):
    specs = ["random", "greedy", "alphabeta:depth=2", "alphabeta:time=0.02"]
    for i, a in enumerate(specs):
        b = specs[(i + 1) % len(specs)]
        game = d.Game(variant, turn_limit=160)
        play(game, make_player(a, variant, seed=i), make_player(b, variant, seed=i + 10))
        assert game.is_over()
        assert len(game.move_stack) > 10


# A brute-force minimax over the single-game API, independent of the compiled search.
def _wins(game: d.Game, k: int) -> bool:
    """The side to move wins by force within k of its own moves."""
    if game.is_over():
        return False
    for m in game.legal_moves():
        game.push(m)
        ok = _loses(game, k)
        game.pop()
        if ok:
            return True
    return False


def _loses(game: d.Game, k: int) -> bool:
    """The side to move loses by force before the opponent's k-th next move ends."""
    if game.is_over():
        o = game.outcome()
        return o.winner is not None and o.winner != game.turn
    if k <= 1:
        return False
    for m in game.legal_moves():
        game.push(m)
        ok = _wins(game, k - 1)
        game.pop()
        if not ok:
            return False
    return True


def winning_moves(game: d.Game, k: int) -> set[str]:
    out = set()
    for m in game.legal_moves():
        game.push(m)
        if _loses(game, k):
            out.add(str(m))
        game.pop()
    return out


# (FEN, moves to mate) in Damii with the standard orientation (square 1 top-left dark).
# Shots: a quiet sacrifice forces a capture and the reply takes everything.
SHOTS = [
    ("W:WK1,6,30,35,39:B21,25,37", 2),
    ("W:WK4,7,20,34,50:B19,38", 2),
    ("W:WK1,20,28:B27,39", 2),
    ("W:W13,32,42:B16", 2),
]
# Breakthroughs: a man runs to the crowning row (or the king traps the last man).
BREAKTHROUGHS = [
    ("W:W38,42:B11", 3),
    ("W:WK5,33:B45", 3),
    ("W:W7,29,42,44:B2", 3),
]


@pytest.mark.parametrize("fen,k", SHOTS + BREAKTHROUGHS)
def test_alphabeta_finds_forced_wins(fen, k):
    game = d.Game.from_fen(fen, "damii", orientation="standard")
    winners = winning_moves(game, k)
    assert winners, "the test position must be a forced win"
    assert len(winners) < len(game.legal_moves()), "some move must fail to win"
    agent = AlphaBetaAgent("damii", depth=2 * k, orientation="standard", seed=0)
    move = agent.choose(game)
    assert str(move) in winners
    assert agent.last_value >= 1e5  # it knows the win is forced


def test_greedy_misses_a_shot_that_alphabeta_finds():
    fen = "W:WK1,6,30,35,39:B21,25,37"
    game = d.Game.from_fen(fen, "damii", orientation="standard")
    winners = winning_moves(game, 2)
    assert str(GreedyAgent(seed=0).choose(game)) not in winners
    assert str(AlphaBetaAgent("damii", depth=3, orientation="standard").choose(game)) in winners


def test_alphabeta_depth3_beats_random_on_damii():
    wins = 0
    for i in range(100):
        ab = make_player("alphabeta:depth=3", "damii", seed=i)
        rnd = RandomAgent(seed=1000 + i)
        game = d.Game("damii", turn_limit=400)
        white, black = (ab, rnd) if i % 2 == 0 else (rnd, ab)
        result = play(game, white, black)
        wins += result == ("1-0" if i % 2 == 0 else "0-1")
    assert wins >= 95, wins


def test_greedy_takes_the_most_material():
    # White can take one man (28x17? no: 28x19) or two (the king's double capture).
    game = d.Game.from_fen("W:WK47,28:B22,32,33,12", "damii", orientation="standard")
    move = GreedyAgent(seed=0).choose(game)
    assert len(move.captured) == 2


def test_damath_greedy_maximises_points():
    game = d.Game("damath")
    rng = RandomAgent(seed=3)
    for _ in range(60):
        if game.is_over():
            break
        moves = game.legal_moves()
        if any(m.is_capture for m in moves):
            best = max(float(m.score) for m in moves)
            assert float(GreedyAgent(seed=0).choose(game).score) == best
        game.push(rng.choose(game))


def test_agent_specs():
    spec = PlayerSpec.parse("alphabeta:depth=4")
    assert (spec.kind, spec.options, spec.get("depth")) == ("alphabeta", (("depth", 4),), 4)
    spec = PlayerSpec.parse("ckpt:runs/a/best.pt,mode=sample")
    assert (spec.kind, dict(spec.options)) == ("ckpt", {"path": "runs/a/best.pt",
                                                        "mode": "sample"})
    assert PlayerSpec.parse(spec) is spec  # parsed once: a parsed spec is taken as it is
    assert make_player("alphabeta:time=0.5").time_limit == 0.5
    assert make_player("alphabeta").depth == 4
    for bad, msg in [("minimax", "unknown agent"), ("alphabeta:depth=x", "must be a int"),
                     ("alphabeta:depth=0", ">= 1"), ("random:speed=3", "unknown option"),
                     ("alphabeta:depth", "key=value"), ("ckpt:", "needs a path"), ("", "empty")]:
        with pytest.raises(PlayerSpecError, match=msg):
            PlayerSpec.parse(bad)


def test_alphabeta_resigns_only_on_a_verdict_about_the_position_in_front_of_it():
    agent = AlphaBetaAgent("international", depth=2)
    agent.last_value = -1e6  # as if the previous game had been lost
    agent._last_fen = "a position of the previous game"
    assert not agent.wants_resign(d.Game("international"))
    agent.last_value = -1e6
    agent.reset(seed=1)
    assert agent.last_value == 0.0 and not agent.wants_resign(d.Game("international"))
    # a lost position: White's last man is taken whatever it plays
    lost = d.Game.from_fen("W:W46:BK5,K37", "international")
    assert agent.wants_resign(lost) == _loses(lost, 2)

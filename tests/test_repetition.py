"""The repetition count of a position, by hand, and the policy player that avoids
repeating a position when its value head says it is ahead."""

from __future__ import annotations

import numpy as np
import pytest

import damii_env as d

# two lone kings going back and forth: the start position comes back after four plies
SHUFFLE = ["46-37", "15-4", "37-46", "4-15", "46-37", "15-4", "37-46", "4-15"]


def _shuffled(plies: int) -> d.Game:
    game = d.Game.from_fen("W:WK46:BK15", "international")
    for text in SHUFFLE[:plies]:
        game.push(game.parse_move(text))
    return game


def test_repetitions_counts_earlier_occurrences():
    # positions (side to move matters): W46 B15 w, W37 B15 b, W37 B4 w, W46 B4 b, then the
    # first again (1), the second (1), ... and the first a third time: the draw
    expected = [0, 0, 0, 0, 1, 1, 1, 1, 2]
    for plies, count in enumerate(expected):
        game = _shuffled(plies)
        assert int(game.state.repetitions[0]) == count, plies
    assert _shuffled(8).is_over() and int(_shuffled(8).state.reason[0]) == 2  # repetition
    assert _shuffled(7).is_over() is False


def test_a_capture_or_man_move_forgets_earlier_positions():
    game = d.Game.from_fen("W:W45,K46:BK15", "international")
    for text in ["46-37", "15-4", "37-46", "4-15"]:
        game.push(game.parse_move(text))
    assert int(game.state.repetitions[0]) == 1
    game.push(game.parse_move("45-40"))  # a man move: irreversible
    assert int(game.state.repetitions[0]) == 0


torch = pytest.importorskip("torch", reason="the network player needs the train extra")


@pytest.mark.parametrize("spec, value, expected", [
    ("pretrained:international", 0.5, "46-41"),   # ahead: the best move repeats, the next
    ("pretrained:international", -0.5, "46-37"),  # behind: a draw is welcome
    ("pretrained:international,repeat=allow", 0.5, "46-37"),
])
def test_policy_ahead_avoids_a_position_seen_before(monkeypatch, spec, value, expected):
    from agents import make_agent

    game = _shuffled(4)  # the start again, White to move: 46-37 leads to a position seen
    player = make_agent(spec, "international")
    moves = {str(m): m for m in game.legal_moves()}
    prefer = ["46-37", "46-41"]  # the policy's first and second choice

    def evaluate(state, engine=None):
        p = np.zeros((1, game.engine.n_actions))
        for rank, text in enumerate(prefer):
            p[0, moves[text].actions[0]] = 0.6 - 0.2 * rank
        rest = [m for t, m in moves.items() if t not in prefer]
        for m in rest:
            p[0, m.actions[0]] = 0.2 / len(rest)
        return p, np.array([value])

    monkeypatch.setattr(player, "evaluate", evaluate)
    assert str(player.choose(game)) == expected


def test_a_reply_that_draws_by_repetition_is_seen():
    from agents.neural import _reply_repeats

    engine = d.Engine("international")
    # after 7 plies Black's 4-15 brings the start position a third time: the draw
    assert _reply_repeats(engine, _shuffled(7).state)
    # after 3 plies the same reply brings it a second time only
    assert not _reply_repeats(engine, _shuffled(3).state)

"""The repetition count of a position, by hand, and the policy player that avoids
repeating a position, and the no-progress draw, when its value head says it is ahead."""

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
    ("pretrained:international,net=policy", 0.5, "46-41"),   # ahead: the best move repeats,
    ("pretrained:international,net=policy", -0.5, "46-37"),  # the next; behind: a draw is welcome
    ("pretrained:international,net=policy,repeat=allow", 0.5, "46-37"),
])
def test_policy_ahead_avoids_a_position_seen_before(monkeypatch, spec, value, expected):
    from damii_env.player import make_player

    game = _shuffled(4)  # the start again, White to move: 46-37 leads to a position seen
    player = make_player(spec, "international")  # 46-37, then 46-41 preferred:
    _stub_policy(monkeypatch, player, game, ["46-37", "46-41"], value)
    assert str(player.choose(game)) == expected


def _stub_policy(monkeypatch, player, game, prefer, value):
    """The player's network, stubbed: its policy prefers the moves `prefer` in that order
    (the rest share what is left) and its value head says `value`."""
    moves = {str(m): m for m in game.legal_moves()}

    def evaluate(state, engine=None):
        p = np.zeros((1, game.engine.n_actions))
        for rank, text in enumerate(prefer):
            p[0, moves[text].actions[0]] = 0.6 - 0.2 * rank
        rest = [m for t, m in moves.items() if t not in prefer]
        for m in rest:
            p[0, m.actions[0]] = 0.2 / len(rest)
        return p, np.array([value])

    # every evaluator of the player's network (one per engine the player meets)
    monkeypatch.setattr(type(player.evaluator), "action_probs", lambda self, state: evaluate(state))


def test_a_reply_that_draws_by_repetition_is_seen():
    from damii_agents.players.policy_player import _reply_draws

    engine = d.Engine("international")
    # after 7 plies Black's 4-15 brings the start position a third time: the draw
    assert _reply_draws(engine, _shuffled(7).state)
    # after 3 plies the same reply brings it a second time only
    assert not _reply_draws(engine, _shuffled(3).state)


def _no_progress_game(first: str, plies: list[str]) -> d.Game:
    """International with the no-progress draw after 2 moves each (4 king plies), `first`
    ("W" or "B") to move: White, a man and a king against a king, is ahead."""
    game = d.Game.from_fen(f"{first}:W45,K46:BK15", "international", no_progress_moves=2)
    for text in plies:
        game.push(game.parse_move(text))
    return game


AT_ONCE = ("B", ["15-4", "46-37", "4-9"])  # 3 king plies made: a 4th ends the game drawn
BY_REPLY = ("W", ["46-37", "15-4"])  # 2 made: a 3rd is no draw yet, Black's king reply is


@pytest.mark.parametrize("start, value, repeat, expected", [
    (AT_ONCE, 0.5, "avoid", "45-40"),   # ahead: the man move, which resets the count
    (BY_REPLY, 0.5, "avoid", "45-40"),
    (AT_ONCE, -0.5, "avoid", "37-28"),  # behind: a draw is welcome
    (AT_ONCE, 0.5, "allow", "37-28"),
    (BY_REPLY, 0.5, "allow", "37-28"),
])
def test_policy_ahead_avoids_the_no_progress_draw(monkeypatch, start, value, repeat, expected):
    from damii_agents.network import NetworkShape, PolicyValueNet
    from damii_agents.players.policy_player import PolicyPlayer
    from damii_agents.search.evaluator import NetworkEvaluator

    game = _no_progress_game(*start)
    assert int(game.state.no_progress_plies[0]) == len(start[1]) and game.turn == 0  # White
    net = PolicyValueNet(NetworkShape(8, 10, 1800, channels=4, blocks=0))  # evaluate is stubbed
    player = PolicyPlayer(NetworkEvaluator(net, d.Engine("international", no_progress_moves=2)),
                          avoid_rule_draws=repeat == "avoid")
    _stub_policy(monkeypatch, player, game, ["37-28", "45-40"], value)
    assert str(player.choose(game)) == expected
    # the king move does draw: at once, or by Black's king reply
    after = game.copy()
    after.push(after.parse_move("37-28"))
    if start is BY_REPLY:
        assert not after.is_over()
        after.push(after.parse_move("4-15"))
    assert after.is_over() and int(after.state.reason[0]) == int(d.EndReason.NO_PROGRESS)

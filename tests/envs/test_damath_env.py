"""Sci-Damath in the environments: observation planes with chip values, operations, scores."""

from __future__ import annotations

import numpy as np
import pytest

import damii_env as d
from damii_env.observation import observe, plane_names


def planes(game: d.Game, colour: int) -> dict[str, np.ndarray]:
    obs = observe(game.engine, game.state, colour)[0]
    return dict(zip(plane_names(game.rules), obs, strict=True))


def test_start_planes_from_both_sides():
    game = d.Game("damath")  # integer chips: the largest |value| is 11
    white, black = planes(game, 0), planes(game, 1)
    # White's chip -9 stands on Damath (1, 2) = row 5, column 1; its twin (Black's -9)
    # on (6, 5) = row 2, column 6, which Black sees turned 180 degrees at row 5, column 1.
    assert white["own_chip_values"][5, 1] == np.float32(-9 / 22)
    assert black["own_chip_values"][5, 1] == np.float32(-9 / 22)
    assert white["opponent_chip_values"][2, 6] == np.float32(-9 / 22)
    # Damath (7, 0) = row 7, column 7 holds White's 2 (v[11]); its twin is on row 0, column 0
    assert white["own_chip_values"][7, 7] == np.float32(2 / 22)
    assert white["opponent_chip_values"][0, 0] == np.float32(2 / 22)
    # operations: the top row reads x / - + on columns 0, 2, 4, 6 (DAMATH.md)
    for op, col in (("op_mul", 0), ("op_div", 2), ("op_sub", 4), ("op_add", 6)):
        assert white[op][0, col] == 1 and black[op][0, col] == 1
        assert white[op].sum() == 8
    assert not white["score_difference"].any()


def test_score_difference_plane_has_the_observer_sign():
    # play random moves up to the first capture that scores
    game = d.Game("damath", chip_set="counting")
    rng = np.random.default_rng(0)
    while not game.is_over():
        moves = game.legal_moves()
        capture = [m for m in moves if m.is_capture and float(m.score) != 0]
        game.push(capture[0] if capture else moves[rng.integers(len(moves))])
        if capture:
            break
    sw, sb = (float(x) for x in game.scores())
    assert sw != sb
    w = planes(game, 0)["score_difference"]
    b = planes(game, 1)["score_difference"]
    assert np.all(w == w[0, 0]) and np.all(b == -w[0, 0])
    assert np.sign(w[0, 0]) == np.sign(sw - sb)


def test_damath_env_plays_to_the_end_with_rewards_by_totals():
    env = d.env("damath")
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    rewards = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter(5000):
        obs, reward, term, trunc, _ = env.last()
        rewards[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    game_totals = env.unwrapped.game_state.scores[0, 2:]
    if game_totals[0] != game_totals[1]:
        winner = "player_0" if game_totals[0] > game_totals[1] else "player_1"
        assert rewards[winner] == 1 and sum(rewards.values()) == 0


def test_damath_pictures_show_values_operations_and_scores():
    from damii_env.render import to_ansi, to_rgb_array, to_svg

    game = d.Game("damath", chip_set="radical")
    svg = to_svg(game)
    for label in ("-√8", "4√18", "144√8"):
        assert f">{label}<" in svg
    assert ">x<" in svg and ">/<" in svg and "scores 0.00 : 0.00" in svg
    image = to_rgb_array(game)
    assert image.shape == (8 * 64 + 32, 8 * 64, 3)
    assert "damath" in to_ansi(game)


def test_score_shaping_pays_the_change_of_the_score_lead():
    from damii_env.observation import chip_scale

    # counting chips: White's 3 on 23 must take Black's 5 on 19, landing on 14, a '-'
    # square: 3 - 5 = -2 points. Black's dama on 1 keeps the game going.
    fen = "W:W23=3:BK1=10,19=5:S0,0"
    env = d.raw_env("damath", score_shaping=0.5, chip_set="counting")
    env.reset(options={"fen": fen})
    assert env.fen() == fen
    mask = env.observe("player_0")["action_mask"]
    assert mask.sum() == 1
    env.step(int(np.flatnonzero(mask)[0]))
    assert chip_scale(env.engine) == 12
    assert env.rewards["player_0"] == pytest.approx(0.5 * -2 / 12)
    assert env.rewards["player_1"] == pytest.approx(0.5 * 2 / 12)
    assert not env.terminations["player_0"]
    assert env.fen() == "B:W14=3:BK1=10:S-2,0"
    with pytest.raises(d.InvalidOptionError, match="score_shaping"):
        d.raw_env("damii", score_shaping=1.0)


def test_score_shaping_is_reversed_where_the_lower_total_wins():
    # the position above: White's jump scores 3 - 5 = -2 points. Where the lower total
    # wins, losing 2 points is good for White: +0.5 * 2 / 12 (it was -0.5 * 2 / 12 before
    # the shaping moved into damii_env.episode, whatever lower_wins said)
    fen = "W:W23=3:BK1=10,19=5:S0,0"
    env = d.raw_env("damath", score_shaping=0.5, chip_set="counting", lower_wins=True)
    env.reset(options={"fen": fen})
    env.step(int(np.flatnonzero(env.observe("player_0")["action_mask"])[0]))
    assert env.fen() == "B:W14=3:BK1=10:S-2,0"
    assert env.rewards["player_0"] == pytest.approx(0.5 * 2 / 12)
    assert env.rewards["player_1"] == pytest.approx(-0.5 * 2 / 12)


def test_one_shaping_potential_for_the_envs_and_the_trainers():
    from damii_env.episode import score_lead, shaping_potential, totals

    fen = "W:W23=3:BK1=10,19=5:S-2,4"
    for lower_wins, sign in ((False, 1.0), (True, -1.0)):
        engine = d.Engine("damath", chip_set="counting", lower_wins=lower_wins)
        state = d.Game.from_fen(fen, engine.rules).state
        # White's lead is -2 - 4 = -6 points; the largest counting chip is worth 12
        assert score_lead(engine, state)[0] == pytest.approx(sign * -6 / 12)
        assert shaping_potential(engine, state, score=2.0)[0] == pytest.approx(sign * -1.0)
        # totals: points plus chips, the dama doubled: White -2 + 3, Black 4 + 2 * 10 + 5
        assert totals(engine, state)[0].tolist() == pytest.approx([1.0, 29.0])
    # material: men 1, flying kings 3 (short kings 2); White to move is irrelevant
    state = d.Game.from_fen("W:W31,32,K33:B1,K2", "international").state
    assert shaping_potential(d.Engine("international"), state, material=0.5)[0] == \
        pytest.approx(0.5 * ((1 + 1 + 3) - (1 + 3)))
    state = d.Game.from_fen("W:W31,32,K33:B1,K2", "triestine").state
    assert shaping_potential(d.Engine("triestine"), state, material=1.0)[0] == \
        pytest.approx((1 + 1 + 2) - (1 + 2))

"""The vector env's readable games mid-capture: ``game(i)`` stands at the start of the move
in progress and ``action_text(i, a)`` knows the hops played in it, as in the AEC env.

The references are independent of the vector env's record: one AEC env per game driven
through the same hops, the test's own copy of each game at its move's start, and hand-set
positions whose text is known."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import damii_env as d
from damii_env.engine import PARALLEL_MIN_BATCH, State
from damii_env.vector_env import DraughtsVectorEnv

FEN = "W:W28,K47:B22,32,33,12"  # White plays 28x17x8, 47x29x7 or 47x29x1


def _same_state(a: d.Game | State, b: d.Game | State) -> None:
    """Two games at the same turn start: every array of the engine state alike."""
    sa, sb = getattr(a, "state", a), getattr(b, "state", b)
    for name in ("board", "pending", "meta", "hist", "chip", "scores"):
        assert np.array_equal(getattr(sa, name), getattr(sb, name)), name
    n = int(sa.n_legal[0])
    assert np.array_equal(sa.legal[0, :n], sb.legal[0, :n])


def _hand_set(envs: DraughtsVectorEnv, fen: str) -> None:
    """Put every game of `envs` at `fen` (the vector env reads no FEN), at a turn start."""
    eng = envs.engine
    boards = eng.absolute_boards(d.Game.from_fen(fen, "international").state)
    envs.game_state = eng.from_boards(np.repeat(boards, envs.num_envs, axis=0),
                                      np.zeros(envs.num_envs, dtype=np.int8))


def _hop(envs: DraughtsVectorEnv, i: int, text: str) -> int:
    """The legal hop of game i written `text`."""
    hops = [int(a) for a in envs.engine.legal_actions(envs.game_state, i)
            if envs.action_text(i, int(a)).hop == text]
    assert len(hops) == 1
    return hops[0]


def test_hand_set_multi_capture():
    envs = DraughtsVectorEnv(2, "international")
    envs.reset(seed=0)
    _hand_set(envs, FEN)
    hop = _hop(envs, 0, "28x17")
    first = envs.action_text(0, hop)
    assert (first.hop, first.move, first.moves, first.played) == (
        "28x17", "28x17x8", ("28x17x8",), ())
    king = _hop(envs, 1, "47x29")
    text = envs.action_text(1, king)
    assert (text.move, set(text.moves)) == (None, {"47x29x7", "47x29x1"})
    envs.step([hop, king])
    assert envs.fen(0) == "W:W17,K47:B12,22,32,33"  # the position now
    assert envs.game(0).fen() == envs.game(1).fen() == "W:W28,K47:B12,22,32,33"  # move start
    hop = _hop(envs, 0, "17x8")
    second = envs.action_text(0, hop)
    assert (second.hop, second.move, second.played) == ("17x8", "28x17x8", ("28x17",))
    with pytest.raises(d.IllegalActionError, match="not a legal hop"):
        envs.action_text(0, 0)
    king = _hop(envs, 1, "29x1")
    assert envs.action_text(1, king) == d.turn_text.ActionText(
        hop="29x1", move="47x29x1", moves=("47x29x1",), played=("47x29",))
    envs.step([hop, king])
    for i, move in enumerate(["28x17x8", "47x29x1"]):
        after = d.Game.from_fen(FEN, "international")
        after.push(move)
        assert envs.game(i).fen() == envs.fen(i) == after.fen()
        _same_state(envs.game(i), after)
        nxt = int(envs.engine.legal_actions(envs.game_state, i)[0])
        assert envs.action_text(i, nxt).played == ()


def test_reset_mid_capture_forgets_the_move():
    envs = DraughtsVectorEnv(2, "international")
    envs.reset(seed=0)
    _hand_set(envs, FEN)
    hop = _hop(envs, 0, "28x17")
    envs.step([hop, hop])
    assert envs.action_text(1, _hop(envs, 1, "17x8")).played == ("28x17",)
    envs.reset(seed=1)
    start = d.Game("international")
    for i in range(2):
        assert envs.game(i).fen() == start.fen()
        a = int(envs.engine.legal_actions(envs.game_state, i)[0])
        assert envs.action_text(i, a).played == ()
    assert not envs._hop_n.any()


def test_state_stepped_outside_the_env_still_raises():
    """A state moved on by the engine itself has no record: Game.at refuses mid-capture."""
    envs = DraughtsVectorEnv(1, "international")
    envs.reset(seed=0)
    _hand_set(envs, FEN)
    envs.engine.step(envs.game_state, np.array([_hop(envs, 0, "28x17")]))
    with pytest.raises(d.InvalidOptionError, match="middle of a capture"):
        envs.game(0)


@pytest.mark.parametrize("variant", ["damii", "international", "triestine", "damath"])
def test_mid_capture_matches_the_aec_env(variant):
    """64 random games, 200 steps, one AEC env per game played alongside."""
    B, steps = 64, 200
    envs = DraughtsVectorEnv(B, variant, turn_limit=50)
    _obs, info = envs.reset(seed=0)
    aecs = [d.raw_env(variant, turn_limit=50) for _ in range(B)]
    for e in aecs:
        e.reset()
    eng, rng = envs.engine, np.random.default_rng(3)
    move_start = [e.game_state.copy() for e in aecs]  # the test's own record of each
    played = [[] for _ in range(B)]  # move in progress: its start and its hops so far
    checked = moves_checked = restarts = 0
    for t in range(steps):
        st = envs.game_state
        actions = eng.sample_actions(st, rng)
        texts = {}
        for i in range(B):
            if actions[i] < 0:
                continue
            mid = int(st.continuing_square[i]) >= 0
            capturing = bool(st.capturing[i])
            if not (mid or (capturing and t % 4 == 0) or t % 25 == 0):
                continue
            a = int(actions[i])
            text, ref = envs.action_text(i, a), aecs[i].action_text(a)
            assert text == ref
            assert len(text.played) == len(played[i])
            if mid:
                assert len(played[i]) > 0
                # the hops played so far form one path: 28x17, 17x8, ...
                for h, k in zip(text.played, text.played[1:], strict=False):
                    assert h.split("x")[1] == k.split("x")[0]
                assert text.move is None or text.move.startswith(
                    "x".join([text.played[0].split("x")[0]]
                             + [h.split("x")[1] for h in text.played]))
            game = envs.game(i)
            assert game.fen() == aecs[i].board.fen()
            _same_state(game, move_start[i])
            texts[i] = (game, text)
            checked += mid
        _obs, _r, _term, _trunc, info = envs.step(actions)
        st = envs.game_state
        for i in range(B):
            e = aecs[i]
            if info["actor"][i] < 0:  # restarted (next_step): the action was ignored
                e.reset()
                restarts += 1
                move_start[i], played[i] = e.game_state.copy(), []
                assert envs.fen(i) == e.fen()
                a = int(eng.legal_actions(st, i)[0])
                assert envs.action_text(i, a).played == ()
                continue
            if actions[i] < 0:
                continue
            e.step(int(actions[i]))
            assert np.array_equal(st.board[i], e.game_state.board[0])
            if int(st.continuing_square[i]) >= 0:
                played[i].append(int(actions[i]))
                continue
            # the move ended: the Game stands at the position after it
            move_start[i], played[i] = e.game_state.copy(), []
            if i in texts:
                assert envs.game(i).fen() == envs.fen(i) == e.fen()
                game, text = texts[i]
                assert text.move is not None
                game.push(text.move)
                assert game.fen().split(":S")[0] == envs.game(i).fen().split(":S")[0]
                moves_checked += 1
    assert checked > 20 and moves_checked > 100 and restarts > 0


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_record_matches_own_copy_of_each_move_start(mode):
    """Many games (the parallel step when numba has threads): every game mid-capture stands,
    as a Game, at the test's own copy of its state at the move's start; restarted games
    have no record."""
    B = PARALLEL_MIN_BATCH
    envs = DraughtsVectorEnv(B, "international", autoreset_mode=mode, turn_limit=40)
    envs.reset(seed=0)
    eng, rng = envs.engine, np.random.default_rng(5)
    start = envs.game_state.copy()
    hops = np.zeros(B, dtype=np.int64)
    checked = restarted = 0
    for _ in range(120):
        st = envs.game_state
        turn_start = st.continuing_square < 0
        start.put(turn_start, st.take(turn_start))
        hops[turn_start] = 0
        _obs, _r, term, trunc, info = envs.step(eng.sample_actions(st, rng))
        st = envs.game_state
        mid = st.continuing_square >= 0
        hops[mid] += 1
        restart = (info["actor"] < 0) if mode == "next_step" else (term | trunc)
        restarted += int(restart.sum())
        for i in np.flatnonzero(restart):
            assert envs.game(int(i)).fen() == d.Game("international").fen()
            assert envs._hop_n[i] == 0
        for i in np.flatnonzero(mid)[:8]:
            i = int(i)
            game = envs.game(i)
            ref = d.Game.at(eng, start, i)
            assert game.fen() == ref.fen()
            _same_state(game, ref)
            a = int(eng.legal_actions(st, i)[0])
            assert len(envs.action_text(i, a).played) == hops[i]
            checked += 1
    assert checked > 20 and restarted > 0
    assert envs.metadata["autoreset_mode"] is (
        AutoresetMode.NEXT_STEP if mode == "next_step" else AutoresetMode.SAME_STEP)

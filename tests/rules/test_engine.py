"""The batched engine: agreement with the single-game API, mask soundness, invariants."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import damii_env as d
from damii_env.engine import Engine
from damii_env.errors import InvalidArgumentError
from tests.conftest import random_placement_fen, replay_batched_games

VARIANTS = ["damii", "international", "triestine"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_batched_engine_agrees_with_single_game_api(variant):
    """Random hops in a batch of games; every completed turn is a legal move of Game.
    Checks bookkeeping, not the rules: Game runs the same kernels as the batched engine."""
    eng = Engine(variant, turn_limit=160)
    B = 24
    state = eng.init(B)
    games = [d.Game(variant, turn_limit=160) for _ in range(B)]
    completed = 0
    for b, continuing in replay_batched_games(eng, state, games, np.random.default_rng(1),
                                              max_steps=2000):
        if continuing:
            # mid-capture: the same player goes on with the same piece
            assert state.continuing_square[b] >= 0
            continue
        g = games[b]
        assert g.fen() == eng.fen(state, b)
        assert g.is_over() == bool(state.done[b])
        completed += 1
    assert completed > 500
    for b, g in enumerate(games):
        if g.is_over():
            assert g.status() == {1: "white wins", 2: "black wins", 3: "draw",
                                  4: "truncated"}[int(state.outcome[b])]


def _mask_sequences(eng: Engine, state, prefix=()):
    """All hop sequences the mask allows until the turn passes (DFS over the public API)."""
    mask = eng.legal_action_mask(state)[0]
    out = []
    for a in np.flatnonzero(mask):
        child = state.copy()
        eng.step(child, np.array([a]))
        seq = prefix + (int(a),)
        if child.turn[0] != state.turn[0]:
            out.append(seq)
        else:
            out.extend(_mask_sequences(eng, child, seq))
    return out


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_mask_sequence_is_a_legal_full_move(variant):
    """Checks bookkeeping (mask against move list), not the rules: both come from one engine."""
    rng = random.Random(17)
    for _ in range(60):
        fen = random_placement_fen(rng)
        g = d.Game.from_fen(fen, variant, orientation="standard")
        eng = g.engine
        seqs = _mask_sequences(eng, g.state.copy())
        assert sorted(seqs) == sorted(m.actions for m in g.legal_moves()), fen


def test_mask_sequences_match_pydraughts_paths():
    draughts = pytest.importorskip("draughts")
    rng = random.Random(23)
    for _ in range(80):
        fen = random_placement_fen(rng)
        g = d.Game.from_fen(fen, "international")
        paths = set()
        for seq in _mask_sequences(g.engine, g.state.copy()):
            path = []
            for a in seq:
                s, dd, k = g.engine.geometry.decode(a)
                if not path:
                    path.append(s)
                path.append(int(g.engine.ray[s, dd, k - 1]))
            S = g.engine.n_squares
            paths.add(tuple((S - x) if g.turn == 1 else x + 1 for x in path))
        oracle = {tuple(m.steps_move)
                  for m in draughts.Board(variant="standard", fen=fen).legal_moves()}
        assert paths == oracle, fen


def test_illegal_action_is_rejected_and_leaves_state_unchanged():
    eng = Engine("damii")
    state = eng.init(3)
    before = state.copy()
    actions = eng.sample_actions(state, 0)
    actions[1] = 0  # square 1 is Black's man seen from White: never legal at the start
    with pytest.raises(d.IllegalActionError, match="not legal in game 1"):
        eng.step(state, actions)
    for name in ("board", "meta", "legal"):
        assert np.array_equal(getattr(state, name), getattr(before, name))
    with pytest.raises(d.IllegalActionError, match="expected 3 actions"):
        eng.step(state, actions[:2])


def test_state_copy_is_independent_and_reset_where_restarts():
    eng = Engine("international")
    state = eng.init(4)
    snap = state.copy()
    eng.step(state, eng.sample_actions(state, 1))
    assert not np.array_equal(state.board, snap.board)
    assert np.array_equal(snap.board, eng.init(4).board)
    state.meta[2, 10] = 3  # force game 2 to be over (outcome column)
    rows = eng.reset_where(state)
    assert list(rows) == [2]
    assert np.array_equal(state.board[2], eng.init(1).board[0])


@pytest.mark.parametrize("variant", [*VARIANTS, "damath"])
def test_children_are_the_games_after_each_legal_hop(variant):
    eng = Engine(variant)
    rng = np.random.default_rng(3)
    state = eng.init(12, rng)
    for _ in range(30):  # varied positions, some mid-capture, some over
        eng.step(state, eng.sample_actions(state, rng))
    state.meta[4, 10] = 3  # game 4 is over (outcome column): it has no children
    rows = np.array([7, 4, 0, 11, 7])
    children, parent = eng.children(state, rows)
    counts = [0 if state.done[r] else int(state.n_legal[r]) for r in rows]
    assert parent.tolist() == np.repeat(rows, counts).tolist()
    hop = np.concatenate([np.arange(c) for c in counts])
    expected = state.take(parent)
    eng.step(expected, state.legal[parent, hop].astype(np.int64))
    for a, b in zip(children.arrays, expected.arrays, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert children.tag == state.tag
    everything, parent = eng.children(state)
    assert parent.tolist() == np.repeat(np.arange(12), [
        0 if state.done[r] else int(state.n_legal[r]) for r in range(12)]).tolist()
    assert eng.children(state, np.zeros(0, dtype=np.int64))[0].batch_size == 0
    with pytest.raises(InvalidArgumentError, match="rows"):
        eng.children(state, [12])


def test_mask_shape_and_action_count():
    for variant, n in (("damii", 1800), ("international", 1800), ("triestine", 1800)):
        eng = Engine(variant)
        assert eng.n_actions == n == eng.rules.n_squares * 4 * 9
        mask = eng.legal_action_mask(eng.init(2))
        assert mask.shape == (2, n) and mask.dtype == np.int8
        assert mask.sum(axis=1).tolist() == [9, 9]


@settings(max_examples=25, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**31 - 1),
       orientation=st.sampled_from(["standard", "mirrored"]))
def test_random_game_invariants(variant, seed, orientation):
    eng = Engine(variant, orientation=orientation, turn_limit=300)
    state = eng.init(8)
    rng = np.random.default_rng(seed)
    counts = np.abs(eng.absolute_boards(state)).astype(bool).sum(axis=1)
    men_white = (eng.absolute_boards(state) == 1).sum(axis=1)
    for _ in range(1500):
        if state.done.all():
            break
        mask = eng.legal_action_mask(state)
        ongoing = ~state.done
        # the mask is never empty while the game goes on, and empty once it is over
        assert (mask[ongoing].sum(axis=1) > 0).all()
        assert (mask[~ongoing].sum(axis=1) == 0).all()
        eng.step(state, eng.sample_actions(state, rng))
        boards = eng.absolute_boards(state)
        new_counts = (boards != 0).sum(axis=1)
        assert (new_counts <= counts).all()  # piece counts never grow
        new_men_white = (boards == 1).sum(axis=1)
        assert (new_men_white <= men_white).all()  # men only disappear (captured or crowned)
        counts, men_white = new_counts, new_men_white
        assert set(np.unique(boards)) <= {-2, -1, 0, 1, 2}
    # finished games are over for both sides: stepping them changes nothing
    done = state.done.copy()
    snap = state.copy()
    eng.step(state, np.full(8, -1))
    assert np.array_equal(state.board[done], snap.board[done])
    assert (eng.legal_action_mask(state)[done] == 0).all()


def test_pieces_stay_on_dark_squares_in_both_orientations():
    for orientation in ("standard", "mirrored"):
        g = d.Game("damii", orientation=orientation)
        rng = random.Random(4)
        for _ in range(80):
            if g.is_over():
                break
            g.push(rng.choice(g.legal_moves()))
        geo = g.engine.geometry
        rows = g.board_text().splitlines()[: g.rules.board_size]
        for r, line in enumerate(rows):
            for c in range(g.rules.board_size):
                ch = line[2 * c: 2 * c + 2].strip()
                if ch:
                    assert geo.is_dark(r, c), (orientation, r, c, ch)


@pytest.mark.parametrize("variant", ["damii", "triestine", "damath"])
def test_legal_padded_lists_each_games_legal_actions_then_minus_one(variant):
    eng = Engine(variant)
    rng = np.random.default_rng(4)
    state = eng.init(16, rng)
    for _ in range(30):
        eng.step(state, eng.sample_actions(state, rng))
        padded = state.legal_padded
        assert padded.shape == state.legal.shape
        for b in np.flatnonzero(~state.done):
            actions = eng.legal_actions(state, b)
            assert padded[b, :len(actions)].tolist() == actions.tolist()
            assert (padded[b, len(actions):] == -1).all()


@pytest.mark.parametrize("variant, fen", [
    ("damii", "B:W21,22,K30:B1,2,K10"),
    ("international", "W:W28,K47:B12,22,32,33"),
    ("damath", "W:W11=0,K23=-9,24=4:B1=2,4=-11,8=0:S-98,1/3"),
])
def test_engine_reads_and_writes_fen(variant, fen):
    """Engine.read_fen / from_fen / start_state(fen=) give one game at the FEN, and
    Engine.fen writes it back as the Game does (Sci-Damath: the FEN's exact scores)."""
    eng = Engine(variant)
    state, scores = eng.read_fen(fen)
    game = d.Game.from_fen(fen, variant)
    assert state.batch_size == 1 and eng.fen(state, 0, game.scores()) == game.fen()
    assert (scores is None) == (variant != "damath")
    if scores is not None:
        assert scores == game.scores() and eng.fen(state, 0, list(scores)) == fen
        assert [float(x) for x in eng.exact_scores(state)] == pytest.approx([-98, 1 / 3])
    else:
        assert eng.fen(state) == fen
    for other in (eng.from_fen(fen), eng.start_state(fen=fen)):
        assert all((a == b).all() for a, b in zip(other.arrays, state.arrays, strict=True))
    assert eng.fen(eng.start_state()) == d.Game(variant).fen()


def test_without_draw_rules_turns_off_only_the_draw_rules():
    rules = d.make_rules("international", turn_limit=90)
    quiet = rules.without_draw_rules()
    off = {"repetition": 0, "no_progress_moves": 0, "turn_limit": 0,
           "endgame_three_moves": 0, "endgame_two_moves": 0}
    assert quiet == rules.replace(**off) and quiet.replace(**{
        k: getattr(rules, k) for k in off}) == rules


def test_outcome_rewards_pay_the_winner_one_and_the_loser_minus_one():
    from damii_env import compiled as C
    from damii_env.engine import OutcomeCode
    from damii_env.episode import outcome_rewards

    for code in OutcomeCode:
        for colour in (0, 1):
            won = {OutcomeCode.WHITE_WINS: 0, OutcomeCode.BLACK_WINS: 1}.get(code, -1)
            expected = 0.0 if won < 0 else (1.0 if won == colour else -1.0)
            assert C.winner(int(code)) == won
            assert C.outcome_reward(int(code), colour) == expected
            assert outcome_rewards(code, colour) == expected
    both = outcome_rewards(np.array([[1], [2]]), np.array([0, 1]))
    assert both.dtype == np.float32 and both.tolist() == [[1.0, -1.0], [-1.0, 1.0]]

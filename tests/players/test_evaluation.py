"""The learned evaluation of the compiled alpha-beta (damii_agents.search.patterns):
pattern indices by hand, the compiled value against the sum of its features' weights,
the weights file, the search's use of it, and the sign of what the fit learns."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from damii_agents.search import alphabeta as AB
from damii_agents.search import patterns as EV
from damii_agents.search.evaluation import learned as as_learned
from damii_env import Game


def _row(game: Game):
    state = game.state
    return state.arrays[0], int(state.n_legal[0])


def test_regions_are_4x4_windows_of_8_dark_squares():
    regions = EV.pattern_regions(10, "standard")
    assert regions.shape == (16, 8)
    # standard orientation: dark squares where row + column is odd; square 0 is (0, 1)
    # the first window (rows 0-3, columns 0-3): (0,1) (0,3) (1,0) (1,2) (2,1) (2,3) (3,0)
    # (3,2): squares 0, 1, 5, 6, 10, 11, 15, 16 in reading order (5 per row)
    assert regions[0].tolist() == [0, 1, 5, 6, 10, 11, 15, 16]
    assert EV.pattern_regions(8, "standard").shape == (9, 8)
    # every square of the board is in some region
    assert set(regions.ravel()) == set(range(50))


def test_pattern_indices_by_hand():
    # White to move (the mover): men on 6 and 7, a king on 11, a Black man on 16
    game = Game.from_fen("W:W6,7,K11:B16", "international")
    board, n = _row(game)
    regions = EV.pattern_regions(10, "standard")
    index = np.zeros(len(regions), dtype=np.int64)
    occupied = np.zeros(50, dtype=np.int64)
    dense = np.zeros(EV.N_DENSE)
    EV.position_features(board, 0, 50, regions, index, occupied, dense, n, 0.0)
    # region 0 holds squares 0,1,5,6,10,11,15,16 (PDN 1,2,6,7,11,12,16,17), read as base-3
    # digits from the first: 0, 0, 1 (own man on 6), 1 (own man on 7), 0 (a king counts
    # as empty), 0, 2 (the opponent's man on 16), 0
    assert index[0] == 1 * 3**5 + 1 * 3**4 + 2 * 3**1
    assert dense[EV.D_MEN] == 2 - 1 and dense[EV.D_KINGS] == 1
    # advancement: own men on row 1 (squares 6, 7): 8 rows each; the opponent's man on
    # square 16 is on row 3, three rows from its start
    assert dense[EV.D_ADVANCE] == (8 + 8) - 3
    assert dense[EV.D_MOBILITY] == n and dense[EV.D_TEMPO] == 1
    # piece-square entries: kind * 50 + square (own man 0, own king 1, opponent's man 2)
    assert sorted(occupied[occupied >= 0].tolist()) == [5, 6, 1 * 50 + 10, 2 * 50 + 15]


def _random_weights(size: int, orientation: str, seed: int) -> EV.PatternWeights:
    rng = np.random.default_rng(seed)
    w = EV.PatternWeights.zeros("x", size, orientation)
    return dataclasses.replace(w, pattern=rng.normal(size=w.pattern.shape),
                               square=rng.normal(size=w.square.shape),
                               dense=rng.normal(size=w.dense.shape))


@pytest.mark.parametrize("variant", ["damii", "international", "triestine", "damath"])
def test_compiled_value_is_the_sum_of_the_features_weights(variant):
    rng = random.Random(7)
    game = Game(variant)
    size, orientation = game.rules.board_size, game.rules.orientation
    w = _random_weights(size, orientation, 3)
    S = size * size // 2
    R = len(w.regions)
    for _ in range(40):
        if game.is_over():
            break
        board, n = _row(game)
        index = np.zeros(R, dtype=np.int64)
        occupied = np.zeros(S, dtype=np.int64)
        dense = np.zeros(EV.N_DENSE)
        EV.position_features(board, 0, S, w.regions, index, occupied, dense, n, 2.5)
        expected = (sum(w.pattern[r, index[r]] for r in range(R))
                    + sum(w.square.ravel()[o] for o in occupied if o >= 0) + w.dense @ dense)
        got = EV.pattern_value(board, 0, S, *w.arrays, n, 2.5)
        assert got == pytest.approx(expected, abs=1e-9)
        game.push(rng.choice(game.legal_moves()))


@pytest.mark.parametrize("variant", ["damii", "international", "triestine", "damath"])
def test_the_value_from_bit_masks_is_the_value_from_the_board(variant):
    """The search values its leaves from a ply-stack row's bit masks
    (:func:`pattern_value_bits`); it must give pattern_value's value exactly (the same
    terms in the same order), with region tables and ending tables."""
    from damii_env import compiled as C
    rng = random.Random(11)
    game = Game(variant)
    size, orientation = game.rules.board_size, game.rules.orientation
    S = size * size // 2
    gen = np.random.default_rng(4)
    w = _random_weights(size, orientation, 5)
    w = dataclasses.replace(w, square_end=gen.normal(size=(4, S)),
                            dense_end=gen.normal(size=EV.N_DENSE), phase_pieces=S - 10)
    T = game.engine.tables
    P = C.new_plies(T, 4, 256, 256)
    rbits = EV.region_bits(w.regions, P.layout)
    arrays = w.arrays
    compared = 0
    for _ in range(150):
        if game.is_over():
            break
        if game.state.continuing_square[0] < 0:  # a turn's start: a ply stack's root
            n = C.ply_root(T, game.state.arrays, 0, P)
            expected = EV.pattern_value(P.board, 0, S, *arrays, n, 2.5)
            got = EV.pattern_value_bits(P.bits, 0, P.layout, S, rbits, *arrays[1:], n, 2.5)
            assert got == expected
            compared += 1
        game.push(rng.choice(game.legal_moves()))
    assert compared > 40


def test_king_region_indices_by_hand():
    # the position of test_pattern_indices_by_hand: region 0 read in base 5 from its first
    # square (PDN 1, 2, 6, 7, 11, 12, 16, 17): 0, 0, 1 (own man), 1 (own man), 3 (own
    # king on 11), 0, 2 (the opponent's man on 16), 0
    game = Game.from_fen("W:W6,7,K11:B16", "international")
    board, _n = _row(game)
    regions = EV.pattern_regions(10, "standard")
    assert EV.king_region_index(board, 0, regions, 0) == \
        1 * 5**5 + 1 * 5**4 + 3 * 5**3 + 2 * 5**1
    # a region without a king is not read in base 5; the opponent's king is digit 4
    far = [r for r in range(len(regions)) if 10 not in regions[r]]
    assert all(EV.king_region_index(board, 0, regions, r) == -1 for r in far)
    board, _n = _row(Game.from_fen("W:W6:BK1", "international"))
    assert EV.king_region_index(board, 0, regions, 0) == 4 * 5**7 + 1 * 5**5


def _king_positions(variant: str, seed: int, wanted: int = 40):
    """Random games' positions at the start of a turn, each holding at least one king
    (random play makes kings within a few dozen plies)."""
    rng = random.Random(seed)
    found = []
    while len(found) < wanted:
        game = Game(variant)
        for _ in range(300):
            if game.is_over():
                break
            board = game.state.arrays[0]
            if game.state.continuing_square[0] < 0 and (np.abs(board[0]) == 2).any():
                found.append(game.copy())
            game.push(rng.choice(game.legal_moves()))
    return found[:wanted]


def _with_random_kings(w: EV.PatternWeights, seed: int) -> EV.PatternWeights:
    gen = np.random.default_rng(seed)
    return dataclasses.replace(w, kings=gen.normal(size=(len(w.regions), EV.KING_PATTERNS))
                               .astype(np.float32))


@pytest.mark.parametrize("variant", ["damii", "international", "triestine", "damath"])
def test_king_tables_add_the_base5_weight_of_each_region_holding_a_king(variant):
    """With king tables the value is the sum of the features' weights plus, for each region
    holding a king, its king table's weight at the region's base-5 index (computed here
    digit by digit from the board); the value from the bit masks is the same."""
    from damii_env import compiled as C
    game = Game(variant)
    size, orientation = game.rules.board_size, game.rules.orientation
    S = size * size // 2
    w = _with_random_kings(_random_weights(size, orientation, 3), 8)
    plain = dataclasses.replace(w, kings=None)
    digit = {0: 0, 1: 1, -1: 2, 2: 3, -2: 4}
    T = game.engine.tables
    P = C.new_plies(T, 4, 256, 256)
    rbits = EV.region_bits(w.regions, P.layout)
    read = 0
    for position in _king_positions(variant, 6):
        board, n = _row(position)
        extra = 0.0
        for r, squares in enumerate(w.regions):
            states = [int(board[0, s]) for s in squares]
            if any(abs(v) == 2 for v in states):
                index = 0
                for v in states:
                    index = index * 5 + digit[v]
                extra += float(w.kings[r, index])
                read += 1
        without = EV.pattern_value(board, 0, S, *plain.arrays, n, 2.5)
        got = EV.pattern_value(board, 0, S, *w.arrays, n, 2.5)
        assert got == pytest.approx(without + extra, abs=1e-6)
        n_root = C.ply_root(T, position.state.arrays, 0, P)
        assert EV.pattern_value_bits(P.bits, 0, P.layout, S, rbits, *w.arrays[1:], n_root,
                                     2.5) == EV.pattern_value(P.board, 0, S, *w.arrays,
                                                              n_root, 2.5)
    assert read >= 40


def test_king_tables_file_round_trip_stores_only_the_entries_set(tmp_path):
    w = EV.PatternWeights.zeros("damii", 10, "standard", phase_pieces=40, kings=True)
    w.kings[3, 12345] = 7.25
    w.kings[15, EV.KING_PATTERNS - 1] = -2.5
    path = w.save(tmp_path / "k.npz")
    with np.load(path) as z:
        assert int(z["format"]) == EV.FORMAT_KINGS and z["king_index"].tolist() == [
            3 * EV.KING_PATTERNS + 12345, 16 * EV.KING_PATTERNS - 1]
    back = EV.PatternWeights.load(path)
    assert back.has_kings and back.tapered and np.array_equal(back.kings, w.kings)
    assert path.stat().st_size < 100_000  # 6.25 million entries, two of them set
    assert not EV.PatternWeights.load(
        dataclasses.replace(w, kings=None).save(tmp_path / "n.npz")).has_kings
    with np.load(path) as z:
        damaged = dict(z)
    damaged["king_index"] = np.array([16 * EV.KING_PATTERNS, 0])
    np.savez(tmp_path / "bad.npz", **damaged)
    with pytest.raises(EV.PatternWeightsError, match="king tables that do not fit"):
        EV.PatternWeights.load(tmp_path / "bad.npz")
    with pytest.raises(EV.PatternWeightsError, match="king tables must have shape"):
        dataclasses.replace(w, kings=np.zeros((2, 5), dtype=np.float32))


@pytest.mark.parametrize("variant", ["damii", "damath"])
def test_tapered_value_blends_opening_and_ending_by_the_pieces_on_the_board(variant):
    """With ending tables the value is t x (opening tables' sum) + (1 - t) x (ending
    tables' sum), t = pieces / the start's pieces, computed here from the features."""
    rng = random.Random(5)
    game = Game(variant)
    size, orientation = game.rules.board_size, game.rules.orientation
    S = size * size // 2
    start_pieces = 24 if size == 8 else 40  # 12 / 20 men a side
    gen = np.random.default_rng(9)
    w = dataclasses.replace(
        EV.PatternWeights.zeros("x", size, orientation, patterns=False,
                                phase_pieces=start_pieces),
        square=gen.normal(size=(4, S)), dense=gen.normal(size=EV.N_DENSE),
        square_end=gen.normal(size=(4, S)), dense_end=gen.normal(size=EV.N_DENSE))
    seen = set()
    for _ in range(120):
        if game.is_over():
            break
        board, n = _row(game)
        index = np.zeros(0, dtype=np.int64)
        occupied = np.zeros(S, dtype=np.int64)
        dense = np.zeros(EV.N_DENSE)
        EV.position_features(board, 0, S, w.regions, index, occupied, dense, n, 1.5)
        pieces = int(np.count_nonzero(board[0]))
        t = pieces / start_pieces
        opening = sum(w.square.ravel()[o] for o in occupied if o >= 0) + w.dense @ dense
        ending = sum(w.square_end.ravel()[o] for o in occupied if o >= 0) + w.dense_end @ dense
        got = EV.pattern_value(board, 0, S, *w.arrays, n, 1.5)
        assert got == pytest.approx(t * opening + (1 - t) * ending, abs=1e-9)
        seen.add(pieces)
        game.push(rng.choice(game.legal_moves()))
    assert max(seen) == start_pieces and min(seen) < start_pieces - 4  # t = 1 and below


def test_tapered_weights_file_round_trip_and_the_format_1_file_still_loads(tmp_path):
    w = EV.PatternWeights.zeros("damii", 10, "standard", patterns=False, phase_pieces=40)
    w.square_end[0, 3] = 12.5
    w.dense_end[EV.D_KINGS] = 250.0
    back = EV.PatternWeights.load(w.save(tmp_path / "t.npz"))
    assert back.tapered and back.phase_pieces == 40
    assert back.square_end[0, 3] == 12.5 and back.dense_end[EV.D_KINGS] == 250.0
    plain = EV.PatternWeights.zeros("damii", 10, "standard", patterns=False)
    with np.load(plain.save(tmp_path / "p.npz")) as z:
        assert int(z["format"]) == EV.FORMAT and "square_end" not in z.files
    assert not EV.PatternWeights.load(tmp_path / "p.npz").tapered
    with pytest.raises(EV.PatternWeightsError, match="ending tables need"):
        dataclasses.replace(w, dense_end=None)


def test_weights_file_round_trip_and_bad_files(tmp_path):
    w = _random_weights(10, "mirrored", 1)
    path = w.save(tmp_path / "w.npz")
    back = EV.PatternWeights.load(path)
    assert back.size == 10 and back.orientation == "mirrored"
    assert np.allclose(back.pattern, w.pattern, atol=1e-5)  # stored as float32
    assert np.array_equal(back.dense, w.dense)
    with pytest.raises(EV.PatternWeightsError, match="does not exist"):
        EV.PatternWeights.load(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip file")
    with pytest.raises(EV.PatternWeightsError, match="not a pattern weights file"):
        EV.PatternWeights.load(tmp_path / "junk.npz")
    bad = dataclasses.replace(w, dense=np.full(EV.N_DENSE, np.nan))
    bad.save(tmp_path / "nan.npz")
    with pytest.raises(EV.PatternWeightsError, match="not finite"):
        EV.PatternWeights.load(tmp_path / "nan.npz")


@pytest.mark.parametrize("variant", ["damii", "triestine"])
def test_search_with_material_tables_equals_the_handwritten_material(variant):
    """Learned tables that hold only the men and king values give the same search values
    as the handwritten evaluation with advancement and mobility off."""
    rng = random.Random(11)
    game = Game(variant)
    engine = game.engine
    hand = AB.default_weights(engine)
    hand[AB.E_ADVANCE] = 0.0
    hand[AB.E_MOBILITY] = 0.0
    learned = EV.PatternWeights.zeros(variant, engine.rules.board_size,
                                      engine.rules.orientation)
    learned.dense[EV.D_MEN] = hand[AB.E_MAN]
    learned.dense[EV.D_KINGS] = hand[AB.E_KING]
    for _ in range(12):
        for _ in range(3):
            if not game.is_over():
                game.push(rng.choice(game.legal_moves()))
        if game.is_over():
            break
        values = []
        for evaluation in (AB.handwritten(hand), as_learned(learned, engine.tables)):
            stack = engine.empty_state(64)
            stack.put(0, game.state.take(slice(0, 1)))
            result = np.zeros(AB.RESULT_SIZE)
            AB.search(engine.tables, stack.arrays, 2, evaluation, AB.new_table(10), 10**7,
                      result)
            values.append(result[0])
        assert values[0] == pytest.approx(values[1])


@pytest.mark.parametrize("variant", ["damii", "international", "triestine", "damath"])
def test_the_shipped_learned_evaluation_plays_by_spec(variant):
    from damii_env.player import make_player

    agent = make_player("alphabeta:depth=2,eval=learned", variant, seed=1)
    game = Game(variant)
    assert agent.choose(game) in game.legal_moves()
    weights = EV.learned_weights(game.engine.rules)
    S = game.rules.board_size ** 2 // 2
    if variant == "damath":  # the totals decide: a lead in them is good for the mover,
        # at the start and (the ending tables, where the file has them) with few pieces left
        rng = random.Random(3)
        ending = Game(variant)
        while not ending.is_over() and np.count_nonzero(_row(ending)[0][0]) > 8:
            ending.push(rng.choice(ending.legal_moves()))
        assert np.count_nonzero(_row(ending)[0][0]) <= 8, "the random game ended too early"
        for position in (game, ending):
            board, n = _row(position)
            assert EV.pattern_value(board, 0, S, *weights.arrays, n, 20.0) > \
                EV.pattern_value(board, 0, S, *weights.arrays, n, -20.0)
        return
    # its sign: a position where the mover is a king and a man up is good for the mover,
    # and bad for the other side to move
    for fen, sign in (("W:WK46,47:B5", 1), ("B:WK46,47:B5", -1)):
        ahead = Game.from_fen(fen, variant)
        board, n = _row(ahead)
        assert sign * EV.pattern_value(board, 0, S, *weights.arrays, n, 0.0) > 0


def test_a_variant_without_a_learned_evaluation_says_so(monkeypatch):
    from damii_env.player import make_player

    # every variant has one shipped now: look for a file that is not there
    monkeypatch.setattr(EV, "LEARNED_FILE", "{variant}_not_shipped.npz")
    with pytest.raises(EV.PatternWeightsError, match="no learned evaluation is shipped"):
        make_player("alphabeta:depth=2,eval=learned", "triestine")
    monkeypatch.undo()
    # rules on another board than the shipped file's: said as such
    with pytest.raises(EV.PatternWeightsError, match="these rules are triestine .8x8"):
        make_player("alphabeta:depth=2,eval=learned", "triestine", board_size=8, men_rows=3)


@pytest.mark.parametrize("variant", ["damii", "international", "triestine"])
def test_the_shipped_evaluation_favours_the_side_a_man_or_a_king_up(variant):
    """Hand-built quiet positions (no capture for either side): the side with more
    material gets the positive value, whichever colour it is and whoever is to move."""
    weights = EV.learned_weights(Game(variant).engine.rules)
    S = 50

    def value(fen: str) -> float:
        board, n = _row(Game.from_fen(fen, variant))
        return float(EV.pattern_value(board, 0, S, *weights.arrays, n, 0.0))

    # White: men on 46, 47, 48 (its back row), Black: men on 3, 4 (its back row)
    # (the fit also gave the side to move a tempo penalty of about a third of a man, and a
    # king is worth about half a man more than a man: a king for a man alone is not
    # "ahead" by these weights, so the cases are a whole piece up)
    for up, down in (("W:W46,47,48:B3,4", "B:W46,47,48:B3,4"),  # a man up
                     ("W:W46,K47:B3", "B:W46,K47:B3"),          # a king and a man against a man
                     ("B:W46,47:B2,3,4", "W:W46,47:B2,3,4"),    # Black a man up
                     ("B:W46:B3,K4", "W:W46:B3,K4")):           # Black a king up
        assert value(up) > 0, (up, value(up))     # the mover is the side ahead
        assert value(down) < 0, (down, value(down))  # the mover is the side behind
    # with the board almost full (a tapered file's opening tables): the start position
    # less one back-row man of one side
    white, black = range(31, 51), range(1, 21)

    def start_less(side: str, mover: str) -> str:
        w = [s for s in white if not (side == "W" and s == 46)]
        b = [s for s in black if not (side == "B" and s == 1)]
        return f"{mover}:W{','.join(map(str, w))}:B{','.join(map(str, b))}"

    for side, other in (("B", "W"), ("W", "B")):  # `side` is a man down
        assert value(start_less(side, other)) > 0, (side, value(start_less(side, other)))
        assert value(start_less(side, side)) < 0, (side, value(start_less(side, side)))


@pytest.mark.parametrize("fen, ahead", [
    # 8x8, squares 1-4 on Black's back row, 29-32 on White's; two chips a side, far apart
    # (no capture for either side); integer chips. The totals: points + chips on the board
    ("{m}:W29=6,30=4:B3=6,4=4:S40,0", "W"),    # White 40 points up, the same chips
    ("{m}:W29=6,30=4:B3=6,4=4:S0,40", "B"),    # Black 40 points up
    ("{m}:W29=10,30=4:B3=-9,4=4", "W"),        # no points: White's chips 14, Black's -5
    ("{m}:W29=-11,30=-7:B3=8,4=6", "B"),       # no points: White's chips -18, Black's 14
    ("{m}:W29=6,K30=4:B3=6,K4=4:S0,20", "B"),  # a dama each (counted double): Black 20 up
])
def test_the_shipped_sci_damath_evaluation_favours_the_side_ahead_in_the_totals(fen, ahead):
    """Hand-built quiet Sci-Damath positions (the FEN's scores and chip values): the side
    whose total (points plus its chips on the board, a dama's doubled) is higher gets the
    positive value, whichever colour is to move; the lead is the engine's
    (:func:`damii_env.compiled.totals_lead`), the value the shipped evaluation's."""
    from damii_env import compiled as C
    weights = EV.learned_weights(Game("damath").engine.rules)
    for mover in ("W", "B"):
        game = Game.from_fen(fen.format(m=mover), "damath")
        assert not game.is_over() and not game.legal_moves()[0].is_capture
        board, n = _row(game)
        lead = float(C.totals_lead(game.engine.tables, game.state.arrays, 0))
        value = float(EV.pattern_value(board, 0, 32, *weights.arrays, n, lead))
        assert (value > 0) == (mover == ahead), (fen, mover, lead, value)


def test_eval_takes_a_weights_file(tmp_path):
    """``eval=FILE.npz`` searches with a run's weights: a file saved with the shipped
    tables plays the shipped player's moves; a missing file or another variant's says so."""
    from damii_env.player import make_player

    path = tmp_path / "weights.npz"
    EV.learned_weights(Game("damii").engine.rules).save(path)
    game = Game("damii")
    for _ in range(6):
        from_file = make_player(f"alphabeta:depth=3,eval={path}", "damii", seed=1).choose(game)
        shipped = make_player("alphabeta:depth=3,eval=learned", "damii", seed=1).choose(game)
        assert from_file == shipped
        game.push(shipped)
    with pytest.raises(EV.PatternWeightsError, match="no weights file"):
        make_player(f"alphabeta:depth=3,eval={tmp_path / 'none.npz'}", "damii")
    with pytest.raises(EV.PatternWeightsError, match="is for damii .* these rules are "
                       "international"):
        make_player(f"alphabeta:depth=3,eval={path}", "international")
    with pytest.raises(Exception, match="eval must be handwritten, learned or a .npz"):
        make_player("alphabeta:depth=3,eval=best", "damii")

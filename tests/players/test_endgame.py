"""Endgame databases (damii_agents.search.endgame): every value agrees with its successors'
values recomputed over the Game API's moves, hand-built positions have the values that
reasoning gives them, won positions are played out to the win under the full rules (draw
counts included), the draw limits are the engine's, and the compiled probe of a ply stack
row equals the Python probe."""

from __future__ import annotations

import os

import numpy as np
import pytest

from damii_agents.search import endgame as E
from damii_env import compiled as C
from damii_env.engine import Engine
from damii_env.errors import InvalidArgumentError, InvalidOptionError
from damii_env.game import Game
from damii_env.rules import make_rules

_DBS: dict[tuple[str, str | None, int], E.EndgameDatabase] = {}


def database(variant: str, pieces: int = 3, orientation: str | None = None
             ) -> E.EndgameDatabase:
    """One database a test session (3 pieces: seconds once compiled)."""
    key = (variant, orientation, pieces)
    if key not in _DBS:
        rules = make_rules(variant, orientation=orientation)
        made = (E.database_for(rules, os.environ["DAMII_MADE_ENDGAME_DIR"]) if pieces > 3
                else None)  # `damii endgame make`'s, if a developer made it (tests/conftest)
        if made is not None and made.max_pieces == pieces:
            _DBS[key] = made
        else:
            _DBS[key] = E.build(rules, pieces)
    return _DBS[key]


def expected_code(db: E.EndgameDatabase, game: Game) -> int:
    """A position's code recomputed from its successors' stored codes, over the Game API's
    whole moves (not the ply stack the database was built with): a win in d plies (+d)
    if a move leads to the opponent's loss, d = 1 for a zeroing move (capture, promotion,
    man's move where it resets the count) else 1 + the opponent's distance; a loss in d
    plies (-(d + 1)) if every move leads to the opponent's win, d the longest; results
    beyond the material's draw limit are draws (0)."""
    moves = game.legal_moves()
    if not moves:
        return -1
    board = game.state.board[0]
    material = db.material(board)
    limit, men_zero = E.draw_limit(db.rules, material)
    wins, losses, draw = [], [], False
    for move in moves:
        after = game.copy()
        after.push(move)
        if after.is_over():  # the opponent has no piece or no move left
            assert after.outcome().winner == game.turn, after.fen()
            wins.append(1)
            continue
        was_man = abs(int(game.board()[move.path[0] - 1])) == 1
        zeroing = move.is_capture or db.material(after.state.board[0]).swapped() != material \
            or (men_zero and was_man)
        code = db.code(after.state.board[0])
        assert code is not None, after.fen()
        if code < 0:
            wins.append(1 if zeroing else -code)
        elif code > 0:
            losses.append(1 if zeroing else code + 1)
        else:
            draw = True
    wins = [d for d in wins if limit == 0 or d <= limit]
    if wins:
        return min(wins)
    if draw or any(limit and d > limit for d in losses):
        return 0
    return -(max(losses) + 1)


def play_out(db: E.EndgameDatabase, game: Game, loser_random: np.random.Generator | None,
             max_plies: int = 400) -> Game:
    """Both sides play the database's best moves (the loser at random if given) under the
    game's full rules, draw counts included, until the game ends."""
    winner = game.turn if db.probe(game)[0] == E.WIN else 1 - game.turn
    for _ in range(max_plies):
        if game.is_over():
            break
        if game.turn != winner and loser_random is not None:
            moves = game.legal_moves()
            game.push(moves[int(loser_random.integers(len(moves)))])
        else:
            game.push(db.best_move(game))
    return game


# --- hand-built positions ----------------------------------------------------------------------
# International squares: 1 = (row 0, col 1) ... 46 = (9, 0); the long diagonal is
# 46-41-37-32-28-23-19-14-10-5. White moves up (towards squares 1-5).
HAND = [
    # a king on the long diagonal takes the lone man at 28 (landing 23..5): won in 1
    ("international", "W:WK46:B28", (1, 1)),
    # White man 32 and Black man 27 touch with free squares behind both: whoever is to
    # move takes the other's last piece
    ("international", "W:W32:B27", (1, 1)),
    ("international", "B:W32:B27", (1, 1)),
    # the king in corner 46 can only move up the long diagonal, where the king on 5 takes
    # it: lost in 2 plies
    ("international", "W:WK46:BK5", (-1, 2)),
    # 50-28 puts a king on the long diagonal: Black must take it (5x32, 5x37 or 5x41) and
    # 46 takes the Black king back: the zeroing move (Black's capture) comes at ply 2
    ("international", "W:WK46,K50:BK5", (1, 2)),
    # Damii is mirrored: the long diagonal runs from corner 50 (9, 9) to 1 (0, 0); the same
    # corner trap as above
    ("damii", "W:WK50:BK1", (-1, 2)),
    # Triestine: a king takes a man next to it (short kings capture in every direction)
    ("triestine", "B:W32:BK27", (1, 1)),
]


@pytest.mark.parametrize(("variant", "fen", "value"), HAND)
def test_hand_built_positions(variant: str, fen: str, value: tuple[int, int]) -> None:
    assert E.probe(fen, variant, db=database(variant)) == value


def test_hand_built_terminal_and_rule_differences() -> None:
    db = database("international")
    # Black's man on 45 is blocked by the White man on 50 (its only step; no landing
    # behind 50): no legal move, lost. The game is over, so probe says None.
    game = Game.from_fen("B:W50:B45", "international")
    assert game.is_over() and E.probe(game, db=db) is None
    assert db.code(game.state.board[0]) == -1
    # a man takes a king in International, not in Triestine (a king is a wall to a man)
    assert E.probe("W:W32:BK27", "international", db=db) == (1, 1)
    tri = Game.from_fen("W:W32:BK27", "triestine")
    assert not any(m.is_capture for m in tri.legal_moves())
    assert E.probe(tri, db=database("triestine")) != (1, 1)


def test_a_king_against_a_king_in_the_open_is_a_draw() -> None:
    # neither king on the other's lines: a lone king is taken only by a capture, and a
    # king in the open always keeps a square off the other's diagonals
    for variant, fen in (("international", "W:WK28:BK3"), ("damii", "W:WK28:BK3")):
        assert E.probe(fen, variant, db=database(variant)) == (0, 0)


@pytest.mark.slow
def test_three_kings_against_a_king_on_the_long_diagonal() -> None:
    """Draughts theory: a lone king on the long diagonal holds three kings (they cannot
    drive it off: it always has the diagonal's squares to go to and is taken only if it
    leaves); in Damii (no FMJD rule, mirrored: the long diagonal is 1-6-12-17-23-28-34-39-
    45-50) and in International (46-41-37-32-28-23-19-14-10-5)."""
    damii = database("damii", 4)
    assert E.probe("B:WK2,K3,K4:BK28", "damii", db=damii) == (0, 0)
    assert E.probe("W:WK2,K3,K4:BK28", "damii", db=damii) == (0, 0)
    international = database("international", 4)
    assert E.probe("B:WK1,K2,K3:BK28", "international", db=international) == (0, 0)


# --- the draw counts ----------------------------------------------------------------------------
@pytest.mark.parametrize(("variant", "fen", "plies"), [
    ("international", "W:WK28:BK3", 10),          # a king against a lone king: 5 moves each
    ("international", "W:WK1,K2:BK50", 10),       # two kings: 5 moves each
    ("international", "W:WK3,38:BK50", 10),       # king and man: a man's move resets nothing
    ("international", "W:WK28,K33:BK3,12", 50),   # no lone king: 25 moves each of kings
    ("damii", "W:WK28:BK3", 50),                  # no FMJD rule: 25 moves each of kings
])
def test_draw_limits_are_the_engines(variant: str, fen: str, plies: int) -> None:
    """draw_limit (stated in endgame.py) against the ply at which the engine's own game
    ends drawn when both sides avoid captures and crowning (a man steps while it can,
    then the kings move), and game_counts against the counts kept by hand meanwhile."""
    for seed in range(20):  # a line that meets a forced capture is tried again
        game = Game.from_fen(fen, variant)
        limit, men_zero = E.draw_limit(game.rules, E.material_of(game.state.board[0]))
        assert limit == plies
        rng = np.random.default_rng(seed)
        no_progress = endgame = 0
        while not game.is_over():
            assert E.game_counts(game) == (no_progress, endgame)
            moves = [m for m in game.legal_moves() if not m.is_capture and not _crowns(game, m)]
            safe = [m for m in moves if not _gives_capture(game, m)]
            if not safe:
                break
            men = [m for m in safe if abs(int(game.board()[m.path[0] - 1])) == 1]
            pick = men or safe
            move = pick[int(rng.integers(len(pick)))]
            man = abs(int(game.board()[move.path[0] - 1])) == 1
            game.push(move)
            no_progress = 0 if man else no_progress + 1
            endgame += 1
        if not game.is_over():
            continue
        assert game.outcome().winner is None
        # the count that ended it: plies since the last man's move, or since the start
        assert (no_progress if men_zero else endgame) == plies, (game.fen(), game.outcome())
        return
    pytest.fail("every line met a forced capture")


def _gives_capture(game: Game, move) -> bool:
    after = game.copy()
    after.push(move)
    return any(m.is_capture for m in after.legal_moves())


def _crowns(game: Game, move) -> bool:
    far_row = move.path[-1] <= 5 if game.turn == 0 else move.path[-1] > 45
    return abs(int(game.board()[move.path[0] - 1])) == 1 and far_row


def test_value_at_count() -> None:
    assert E.value_at_count(3, 10, 7) == (1, 3)
    assert E.value_at_count(3, 10, 8) == (0, 0)
    assert E.value_at_count(-4, 10, 7) == (-1, 3)
    assert E.value_at_count(-4, 10, 8) == (0, 0)
    assert E.value_at_count(-1, 10, 40) == (-1, 0)  # no legal move: lost at any count
    assert E.value_at_count(90, 0, 500) == (1, 90)  # no limit


def test_probe_takes_the_games_counts() -> None:
    db = database("international")
    # the corner trap, lost in 2 plies, is drawn once 9 of the 10 plies are gone
    game = Game.from_fen("W:WK46:BK5", "international")
    assert db.probe(game, counts=(9, 8)) == (-1, 2)
    assert db.probe(game, counts=(9, 9)) == (0, 0)
    assert db.probe(game) == (-1, 2)


# --- consistency with the successors -----------------------------------------------------------
def _check_consistent(variant: str, n: int, seed: int, pieces: int = 3,
                      orientation: str | None = None) -> None:
    db = database(variant, pieces, orientation)
    rng = np.random.default_rng(seed)
    for board in db.sample(rng, n):
        game = db.game_at(board)
        code = db.code(board)
        assert code == expected_code(db, game), game.fen()


@pytest.mark.parametrize("variant", ["international", "damii", "triestine"])
def test_values_agree_with_their_successors(variant: str) -> None:
    _check_consistent(variant, 150, seed=7)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["international", "damii", "triestine"])
def test_values_agree_with_their_successors_many(variant: str) -> None:
    _check_consistent(variant, 3000, seed=8)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["international", "damii", "triestine"])
def test_four_pieces_agree_with_their_successors(variant: str) -> None:
    _check_consistent(variant, 1500, seed=9, pieces=4)


def test_the_mirrored_orientation_is_the_reflection() -> None:
    """Damii's mirrored board is the standard one reflected (row r, column c -> 9 - c):
    square j of a row becomes square 4 - j of that row, and every value is kept."""
    mirrored, standard = database("damii"), database("damii", orientation="standard")
    rng = np.random.default_rng(3)
    for board in standard.sample(rng, 2000):
        reflected = board.reshape(10, 5)[:, ::-1].reshape(-1)
        assert mirrored.code(reflected) == standard.code(board)


# --- playing won positions out ------------------------------------------------------------------
def _play_won(variant: str, n: int, seed: int, loser_random: bool, pieces: int = 3) -> None:
    db = database(variant, pieces)
    rng = np.random.default_rng(seed)
    played = 0
    for board in db.sample(rng, 40 * n):
        if played == n:
            break
        game = db.game_at(board)
        result = None if game.is_over() else db.probe(game)
        if result is None or result[0] == E.DRAW:
            continue
        winner = game.turn if result[0] == E.WIN else 1 - game.turn
        start = game.fen()
        play_out(db, game, rng if loser_random else None)
        outcome = game.outcome()
        assert outcome is not None and outcome.winner == winner, \
            (start, [str(m) for m in game.move_stack], outcome)
        played += 1
    assert played == n


@pytest.mark.parametrize("variant", ["international", "damii", "triestine"])
def test_won_positions_are_won_in_play(variant: str) -> None:
    _play_won(variant, 12, seed=11, loser_random=False)
    _play_won(variant, 8, seed=12, loser_random=True)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["international", "damii", "triestine"])
def test_won_positions_are_won_in_play_many(variant: str) -> None:
    _play_won(variant, 150, seed=13, loser_random=False)
    _play_won(variant, 100, seed=14, loser_random=True)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["international", "damii", "triestine"])
def test_four_piece_wins_are_won_in_play(variant: str) -> None:
    _play_won(variant, 60, seed=15, loser_random=False, pieces=4)


# --- the compiled probe (the search's seam) ------------------------------------------------------
def test_probe_bits_of_a_ply_stack_row_equals_probe() -> None:
    for variant in ("international", "damii"):
        db = database(variant)
        engine = Engine(db.rules)
        T = engine.tables
        P = C.new_plies(T, 2)
        rng = np.random.default_rng(5)
        for board in db.sample(rng, 300):
            game = db.game_at(board)
            if game.is_over():
                continue
            C.ply_root(T, game.state.arrays, 0, P)
            men, kings, enemy_men, enemy_kings = (int(x) for x in P.bits[0])
            for counts in ((0, 0), (3, 7), (9, 9)):
                got = E.probe_bits(db.tables, P.layout, men, kings, enemy_men, enemy_kings,
                                   *counts)
                assert tuple(int(x) for x in got) == db.probe(game, counts=counts)
                got = E.probe_board(db.tables, game.state.board[0], *counts)
                assert tuple(int(x) for x in got) == db.probe(game, counts=counts)
        # five pieces: not held
        game = Game.from_fen("W:WK46,K50,K45:BK5,K1", variant)
        C.ply_root(T, game.state.arrays, 0, P)
        assert int(E.probe_bits(db.tables, P.layout, *(int(x) for x in P.bits[0]), 0, 0)[0]) \
            == E.MISSING
        assert db.probe(game) is None


# --- the search probes the database ----------------------------------------------------------
def _search_value(db: E.EndgameDatabase | None, game: Game, depth: int) -> float:
    from damii_agents.search import alphabeta as S
    from damii_agents.search.evaluation import with_endgame

    engine = Engine(db.rules if db is not None else game.rules)
    evaluation = with_endgame(S.handwritten(S.default_weights(engine)), db)
    result = np.zeros(S.RESULT_SIZE)
    S.search(engine.tables, game.state.arrays, depth, evaluation, S.new_table(12), 10**7,
             result)
    assert result[3] == 0  # not stopped
    return float(result[0])


@pytest.mark.parametrize("variant", ["international", "damii", "triestine"])
def test_the_search_backs_up_the_databases_verdict(variant: str) -> None:
    """A search of one move from a held position: every child is held (or over), so the
    root's value has the sign of the database's verdict on the root, which the search
    never probes itself (the root is searched); a draw is exactly 0."""
    from damii_agents.search.alphabeta import WIN

    db = database(variant)
    rng = np.random.default_rng(21)
    seen = {1: 0, 0: 0, -1: 0}
    for board in db.sample(rng, 240):
        game = db.game_at(board)
        if game.is_over():
            continue
        verdict = db.probe(game)[0]
        value = _search_value(db, game, 1)
        if verdict == 1:
            assert value >= WIN / 2, (game.fen(), value)
        elif verdict == -1:
            assert value <= -WIN / 2, (game.fen(), value)
        else:
            assert value == 0.0, (game.fen(), value)
        seen[verdict] += 1
    assert min(seen.values()) >= 5, seen  # each verdict checked


def test_without_the_database_the_search_does_not_see_the_win() -> None:
    """Won positions three plies or more from their next capture or promotion (rare at
    three pieces: about one in 300): a search of one move (captures resolved) with the
    database sees every one won, without it not all."""
    db = database("international")
    rng = np.random.default_rng(23)
    far = []
    for board in db.sample(rng, 8000):
        game = db.game_at(board)
        if not game.is_over() and db.probe(game)[0] == 1 and db.probe(game)[1] >= 3:
            far.append(game)
    assert len(far) >= 8
    assert all(_search_value(db, game, 1) >= 1.0e6 / 2 for game in far)
    unseen = [game.fen() for game in far if _search_value(None, game, 1) < 1.0e6 / 2]
    assert unseen, "the search alone saw every win: pick positions further from the end"


def _player_wins(variant: str, pieces: int, count: int, monkeypatch) -> None:
    from damii_agents.players.alphabeta import AlphaBetaAgent

    db = database(variant, pieces)
    monkeypatch.setattr(E, "database_for", lambda rules, folder=None: db)
    rng = np.random.default_rng(31)
    won = 0
    for board in db.sample(rng, 100 * count):
        game = db.game_at(board)
        if game.is_over() or db.probe(game)[0] != 1 or db.probe(game)[1] < 2:
            continue
        winner = game.turn
        player = AlphaBetaAgent(variant, depth=2, seed=1)
        for _ in range(300):
            if game.is_over():
                break
            game.push(player.choose(game) if game.turn == winner else db.best_move(game))
        outcome = game.outcome()
        assert outcome is not None and outcome.winner == winner, \
            (db.game_at(board).fen(), [str(m) for m in game.move_stack])
        won += 1
        if won == count:
            break
    assert won == count


@pytest.mark.parametrize("variant", ["international", "damii"])
def test_the_player_wins_held_positions_against_the_best_defence(variant: str,
                                                                 monkeypatch) -> None:
    """The alpha-beta player with the database (found as `damii endgame make` leaves it)
    plays won positions out to the win under the full rules, draw counts included, against
    the database's best defence: the values lead it forward, it does not go round."""
    _player_wins(variant, 3, 6, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["international", "damii", "triestine"])
def test_the_player_wins_four_piece_positions(variant: str, monkeypatch) -> None:
    _player_wins(variant, 4, 20, monkeypatch)


# --- files and bad input ------------------------------------------------------------------------
def test_save_load_and_find(tmp_path) -> None:
    db = database("international")
    folder = tmp_path / E.folder_name(db.rules, 3)
    db.save(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["meta.json", "values.npy"]
    assert E.find(db.rules, tmp_path) == folder
    assert E.find(make_rules("damii"), tmp_path) is None
    loaded = E.EndgameDatabase.load(folder)
    assert np.array_equal(np.asarray(loaded.values), db.values)
    assert E.probe("W:WK46,K50:BK5", "international", db=loaded) == (1, 2)
    with pytest.raises(InvalidArgumentError, match="other rules"):
        E.EndgameDatabase.load(folder, make_rules("damii"))
    with pytest.raises(InvalidArgumentError, match="no endgame database"):
        E.EndgameDatabase.load(tmp_path / "nothing")


def test_bad_input_is_refused() -> None:
    with pytest.raises(InvalidOptionError, match="score totals"):
        E.build("damath", 3)
    assert E.probe(Game("damath")) is None
    assert E.database_for(make_rules("damath")) is None
    with pytest.raises(InvalidArgumentError, match="pieces must be"):
        E.build("international", 9)
    with pytest.raises(InvalidArgumentError, match="Game or a FEN"):
        E.probe(42)  # type: ignore[arg-type]

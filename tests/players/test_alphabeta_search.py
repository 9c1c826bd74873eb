"""The compiled alpha-beta's parts (PVS, killers, history, aspiration windows, the clock):
values equal a plain minimax's over the Game API, the chosen move is among the best, the
time is kept."""

from __future__ import annotations

import random
import time
from typing import Any

import numpy as np
import pytest
from numba import njit

import damii_env as d
from damii_agents.players.alphabeta import AlphaBetaAgent
from damii_agents.search import alphabeta as S
from damii_agents.search.alphabeta import default_weights
from damii_agents.search.evaluation import material, with_totals
from damii_env import compiled as C

VARIANTS = ["damii", "international", "triestine", "damath"]

# hand-picked: the opening position, endgames with kings (transpositions, long captures)
HAND = {
    "damii": [("W:WK1,6,30,35,39:B21,25,37", "standard"), ("W:WK4,7,20,34,50:B19,38", "standard")],
    "international": [("W:WK46,31,32:BK5,19,20", None)],
    "triestine": [],
    "damath": [],
}


@njit(cache=True)
def static_value(T, G, c, weights, mobility):
    """The handwritten evaluation of row c, from the search's own helpers (the search
    inlines the same at its horizon); `mobility` is the number of legal moves."""
    value = material(G.board, c, C.n_squares(T), C.board_size(T), weights, mobility)
    if C.is_scoring(T):
        value = with_totals(value, C.totals_lead(T, G, c), weights)
    return value


def other_side_could_capture(game: d.Game) -> bool:
    """Whether the player not to move could capture, by the engine's move generation for
    the same position with the other side to move (the FEN's first letter swapped)."""
    fen = game.fen()
    other = d.Game.from_fen(("B" if fen[0] == "W" else "W") + fen[1:], game.rules)
    return not other.is_over() and bool(other.state.capturing[0])


def negamax(game: d.Game, rem: int, plies: int, weights: np.ndarray,
            record: list[str] | None = None, extra: Any = None,
            threat: bool = False) -> float:
    """Plain minimax over the Game API, as the search defines its value: depth in moves,
    captures that must be made searched past the horizon, a finished game worth
    +-(WIN - moves from the root), the static evaluation at the horizon. Given a `record`
    (the FENs since the last capture; the positions then hold kings only, so a capture is
    the one irreversible move), a position already in it, the line included, is a draw
    below the root (the search's `twofold`). `extra(game)` is added to the static
    evaluation (the mover's view). With `threat`, a quiet position at the horizon (rem 0,
    not the root) from which the other side could capture is searched one move more (its
    children at rem -1: captures only)."""
    if game.is_over():
        winner = game.outcome().winner
        if winner is None:
            return 0.0
        v = S.WIN - plies
        return v if winner == game.turn else -v
    fen = game.fen() if record is not None else ""
    if record is not None and plies > 0 and fen in record:
        return 0.0
    moves = game.legal_moves()
    extend = threat and rem == 0 and plies > 0 and other_side_could_capture(game)
    if rem <= 0 and not bool(game.state.capturing[0]) and not extend:
        value = float(static_value(game.engine.tables, game.state.arrays, 0, weights,
                                   len(moves)))
        return value + (extra(game) if extra is not None else 0.0)
    best = -S.INF
    for m in moves:
        game.push(m)
        line = None
        if record is not None:
            line = record + [fen] if game.fen().count(",") == fen.count(",") else []
        best = max(best, -negamax(game, rem - 1, plies + 1, weights, line, extra, threat))
        game.pop()
    return best


def random_positions(variant: str, count: int, seed: int) -> list[d.Game]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        game = d.Game(variant)
        for _ in range(rng.randrange(6, 40)):
            if game.is_over():
                break
            game.push(rng.choice(game.legal_moves()))
        if not game.is_over() and len(game.legal_moves()) > 1:
            out.append(game)
    return out


def positions(variant: str) -> list[d.Game]:
    games = [d.Game(variant)]
    games += [d.Game.from_fen(f, variant, **({"orientation": o} if o else {}))
              for f, o in HAND[variant]]
    return games + random_positions(variant, 4, seed=len(variant))


def compiled_value(game: d.Game, depth: int, **parts) -> float:
    """One call of the compiled search from the game's position, a fresh table."""
    eng = game.engine
    result = np.zeros(S.RESULT_SIZE)
    S.search(eng.tables, game.state.arrays, depth, S.handwritten(default_weights(eng)),
             S.new_table(16), 1 << 40,
             result, S.make_options(**parts), np.zeros((2, eng.n_squares ** 2)),
             np.full((S.ROWS, 2), -1, dtype=np.int64))
    assert result[3] == 0
    return float(result[0])


ALL_EXACT = {"pvs": True, "killers": True, "history": True}


@pytest.mark.parametrize("variant", VARIANTS)
def test_search_value_equals_plain_minimax(variant):
    weights = None
    for game in positions(variant):
        weights = default_weights(game.engine)
        for depth in (1, 2):
            expected = negamax(game, depth, 0, weights)
            assert compiled_value(game, depth) == pytest.approx(expected, abs=1e-6), game.fen()
            got = compiled_value(game, depth, **ALL_EXACT)
            assert got == pytest.approx(expected, abs=1e-6), (game.fen(), depth)
    assert weights is not None


@pytest.mark.parametrize("variant", VARIANTS)
def test_player_with_every_exact_part_finds_the_minimax_value_and_a_best_move(variant):
    """Iterative deepening with PVS, killers, history and an aspiration window narrow
    enough to fail (re-searches), LMR on (it needs 3 full moves left at a node below the
    root, so it never reduces at depth 3: LMR is not exact, see docs/SEARCH.md). Where
    the player extends threats (Triestine) the minimax extends the same positions."""
    for i, game in enumerate(positions(variant)[:4]):
        depth = 3 if variant == "damii" else 2
        weights = default_weights(game.engine)
        agent = AlphaBetaAgent(variant, depth=depth, seed=i, pvs=True, killers=True,
                               history=True, lmr=1, aspiration=5.0)
        threat = agent.threat_in_search()
        move = agent.choose(game)
        expected = negamax(game, depth, 0, weights, threat=threat)
        assert agent.last_value == pytest.approx(expected, abs=1e-6), game.fen()
        game.push(move)
        got = -negamax(game, depth - 1, 1, weights, threat=threat)
        game.pop()
        assert got == pytest.approx(expected, abs=1e-6), (game.fen(), str(move))


def test_aspiration_window_that_fails_is_searched_again():
    game = random_positions("damii", 1, seed=3)[0]
    expected = negamax(game, 2, 0, default_weights(game.engine))
    for lo, hi in ((expected + 1, expected + 2), (expected - 2, expected - 1)):
        v = compiled_value(game, 2, pvs=True, alpha=lo, beta=hi)
        # fail-soft: a bound on the right side of the window
        assert (v <= lo and expected <= lo) or (v >= hi and expected >= hi)
    agent = AlphaBetaAgent("damii", depth=3, aspiration=0.5, seed=0)
    agent.choose(game)
    assert agent.last_value == pytest.approx(negamax(game, 3, 0, default_weights(game.engine)))


@pytest.mark.parametrize("variant", ["damii", "international"])
def test_time_limited_search_keeps_its_deadline_and_uses_most_of_it(variant):
    limit = 0.3
    agent = AlphaBetaAgent(variant, depth=None, time_limit=limit, seed=0)
    game = random_positions(variant, 1, seed=5)[0]
    agent.choose(d.Game(variant))  # compile, warm up
    t0, cpu0 = time.perf_counter(), time.thread_time()
    agent.choose(game)
    took, cpu = time.perf_counter() - t0, time.thread_time() - cpu0
    # it stops at its deadline: the search (in this thread) works at most its time and a
    # little more. Its CPU time, not the wall clock, says so on a busy machine too, where
    # the process waits for a core: the wait counts on the deadline's clock, not here
    assert cpu < limit + 0.25
    assert took > 0.5 * limit  # it searches on until the deadline (a wait only adds)
    assert agent.last_depth >= 2


def test_ordering_lists_the_table_move_first_then_killers_and_every_move_once():
    """The table's move first, then the killers that are legal here, then the others in
    the given order, each once (the reference player's ordering listed the table's move
    twice and dropped the last one)."""
    codes = np.array([[50, 60, 70, 80]])
    moves = np.full((1, 5), -9, dtype=np.int64)
    order = np.array([3, 2, 1, 0])
    S._order(0, 4, 1, moves, codes, 80, 99, np.zeros((2, 1)), 0, np.zeros((1, 5)), order)
    assert list(moves[0, :4]) == [1, 3, 2, 0]


def test_the_table_gives_back_what_it_stored():
    """A slot of the packed table holds the key (all 64 bits), the value, the depth, the
    bound flag and the best move (-1 too): a probe deep enough decides the node by the
    flag and the window, a shallower one gives only the move, another key nothing."""
    game = d.Game("international")
    P = C.new_plies(game.engine.tables, 4)
    C.ply_root(game.engine.tables, game.state.arrays, 0, P)
    info = P.info  # row 1 untouched: a game going on there
    # the evaluation (without an endgame database: nothing is probed), the tables, the rows
    seam = (S.handwritten(S.default_weights(game.engine)), game.engine.tables, P)
    key = np.uint64(0xF00D_0000_0000_0005)  # the top bit set: the key is kept as bits
    table = S.new_table(3)
    values = table.view(np.float64)
    for move, (alpha0, beta), flag in ((7, (-100.0, 100.0), S.TT_EXACT),
                                       (-1, (-100.0, -20.0), S.TT_LOWER),
                                       (200, (0.0, 100.0), S.TT_UPPER)):
        S._store(table, values, key, -12.5, 3, move, alpha0, beta)
        assert table[5, S.TT_FLAG_MOVE] & 3 == flag
        for rem, window, kind in ((3, (alpha0, beta), S.LEAF), (4, (alpha0, beta), S.NODE)):
            got = S._probe(info, 1, rem, *window, False, key, table, values, False, False,
                           *seam)
            assert got == (kind, -12.5 if kind == S.LEAF else 0.0, move), (move, rem, got)
        # another key in the same slot: nothing
        other = np.uint64(0x0000_0000_0000_000D)
        assert S._probe(info, 1, 0, -1.0, 1.0, False, other, table, values, False,
                        True, *seam) == (S.NODE, 0.0, -1)
    # a bound that does not decide the window: the move only
    S._store(table, values, key, 50.0, 3, 4, -100.0, 20.0)  # a lower bound of 50
    assert S._probe(info, 1, 3, -100.0, 80.0, False, key, table, values, False,
                    False, *seam) == (S.NODE, 0.0, 4)
    with pytest.raises(ValueError, match="0 to 40 bits"):
        S.new_table(41)


def test_reset_forgets_a_search_as_a_fresh_player_would() -> None:
    """reset() skips clearing tables nothing has written to; once a search has written,
    it clears them: the next search is the fresh player's, node for node."""
    from damii_agents.players.alphabeta import AlphaBetaAgent
    from damii_env import Game

    game = Game("damii")
    for i in (3, 5, 1, 2):
        game.push(game.legal_moves()[i])
    fresh = AlphaBetaAgent("damii", depth=5, seed=0)
    fresh_move = fresh.choose(game)
    used = AlphaBetaAgent("damii", depth=5, seed=0)
    used.choose(Game("damii"))  # fills the table with another position's entries
    used.reset(seed=0)
    assert used.choose(game) == fresh_move
    assert used.nodes == fresh.nodes


def shuffled_back(game: d.Game, rng: random.Random) -> list[str]:
    """Play a move for each side and then two moves back to the game's position, no
    capture among them, so that the position occurs again; returns the FENs of the
    record before the root (the game's position first)."""
    start = game.fen()
    for _ in range(100):
        record = [start]
        for _ in range(2):
            game.push(rng.choice(game.legal_moves()))
            record.append(game.fen())
        for m in game.legal_moves():
            game.push(m)
            for r in game.legal_moves():
                game.push(r)
                if game.fen() == start:
                    return record + [_fen_before_last(game)]
                game.pop()
            game.pop()
        game.pop()
        game.pop()
    raise AssertionError("no way back")


def _fen_before_last(game: d.Game) -> str:
    last = game.pop()
    fen = game.fen()
    game.push(last)
    return fen


# the side to move is behind: going back to a position seen before is its best line
KINGS_ONLY = {"triestine": "B:WK28,K33,K39:BK12,K3", "damii": "B:WK46,K33:BK5",
              "international": "B:WK46,K33,K29:BK5,K10"}


@pytest.mark.parametrize("variant", sorted(KINGS_ONLY))
def test_twofold_search_scores_a_position_seen_before_a_draw(variant):
    """With `twofold`, a position that occurred before (in the game's record since the
    last irreversible move, or earlier in the line) is a draw below the root: the value
    equals such a minimax's; without it, plain minimax's (the rules' threefold only)."""
    game = d.Game.from_fen(KINGS_ONLY[variant], variant)
    record = shuffled_back(game, random.Random(len(variant)))
    assert game.fen() == record[0]  # the root occurs for the second time
    weights = default_weights(game.engine)
    differs = False
    for depth in (2, 3, 4):
        expected = negamax(game, depth, 0, weights, record)
        assert compiled_value(game, depth, twofold=True) == pytest.approx(expected, abs=1e-6)
        plain = negamax(game, depth, 0, weights)
        assert compiled_value(game, depth) == pytest.approx(plain, abs=1e-6)
        differs |= abs(plain - expected) > 1e-6
    assert differs  # the positions repeat within these depths


def test_the_player_counts_repetitions_as_draws_only_where_the_rules_draw_them():
    """`twofold` is on by default where a repetition is a draw; not in Sci-Damath (the
    totals decide a repeated game) nor with the repetition rule off."""
    on = {v: AlphaBetaAgent(v, depth=1, **o).twofold_in_search()
          for v, o in (("triestine", {}), ("damath", {}), ("damii", {"repetition": 0}))}
    assert on == {"triestine": True, "damath": False, "damii": False}
    assert not AlphaBetaAgent("triestine", depth=1, twofold=False).twofold_in_search()


def ending_by_hand(game: d.Game, trade: float, trap: float) -> float:
    """The ending term for the player to move, from the FEN of a Triestine position (10 x
    10, standard numbering: square k is on row (k - 1) // 5), written apart from the
    search: at most two men, the side ahead (a king two men) gains `trade` a piece fewer
    than 20 and loses `trap` an empty square next to a king of the side behind."""
    turn, *sides = game.fen().split(":")
    pieces = {}
    for side in sides:
        for item in filter(None, side[1:].split(",")):
            pieces[int(item.lstrip("K"))] = (side[0], item.startswith("K"))
    mover = turn
    men = sum(1 for _, king in pieces.values() if not king)
    if men > 2:
        return 0.0
    lead = sum((1 if colour == mover else -1) * (2 if king else 1)
               for colour, king in pieces.values())
    if lead == 0:
        return 0.0
    behind = {"W": "B", "B": "W"}[mover] if lead > 0 else mover
    free = 0
    for square, (colour, king) in pieces.items():
        if colour != behind or not king:
            continue
        r = (square - 1) // 5
        c = 2 * ((square - 1) % 5) + (1 if r % 2 == 0 else 0)
        for rr, cc in ((r - 1, c - 1), (r - 1, c + 1), (r + 1, c - 1), (r + 1, c + 1)):
            if 0 <= rr < 10 and 0 <= cc < 10 and rr * 5 + cc // 2 + 1 not in pieces:
                free += 1
    value = trade * (20 - len(pieces)) - trap * free
    return value if lead > 0 else -value


# (FEN, the ending term with trade 5 and trap 8, counted by hand)
ENDINGS = [
    # 4 kings against 2: 5 x (20 - 6) = 70; the kings on 46 and 50 can step to 41, 44, 45
    ("W:WK1,K2,K3,K4:BK46,K50", 46.0),
    ("B:WK1,K2,K3,K4:BK46,K50", -46.0),  # the same for Black to move, who is behind
    # 2 kings against a king and a man (3 men's worth against 2): 5 x 16 - 8 x 1 (41)
    ("W:WK28,K29:BK46,12", 72.0),
    ("W:WK1,K2:BK46,K50", 0.0),  # level
    ("W:WK1,K2,K3,11:BK46,40,45", 0.0),  # three men: not an ending of kings
]


@pytest.mark.parametrize("fen,value", ENDINGS)
def test_ending_term_counts_pieces_and_the_squares_of_the_kings_behind(fen, value):
    game = d.Game.from_fen(fen, "triestine")
    assert ending_by_hand(game, 5.0, 8.0) == value
    T = game.engine.tables
    P = C.new_plies(T, 4, 64, 64)
    C.ply_root(T, game.state.arrays, 0, P)
    for bitboard in (True, False):  # from the row's bit masks and from its board
        got = S._ending(P.board, P.bits, 0, C.n_squares(T), T.ray, 5.0, 8.0, bitboard)
        assert got == value


def test_search_with_the_ending_term_equals_minimax_with_it():
    """The search's value with the ending term equals plain minimax whose static value
    adds the term as counted apart (:func:`ending_by_hand`), on Triestine king endings."""
    rng = random.Random(11)
    differs = False
    for fen in ("W:WK1,K2,K3,K4:BK46,K50", "W:WK28,K29,K33:BK12,K7,4", "B:WK23,K31:BK5,K40,K45"):
        game = d.Game.from_fen(fen, "triestine")
        for _ in range(rng.randrange(3)):
            game.push(rng.choice(game.legal_moves()))
        weights = default_weights(game.engine)
        for depth in (1, 2, 3):
            expected = negamax(game, depth, 0, weights,
                               extra=lambda g: ending_by_hand(g, 5.0, 8.0))
            got = compiled_value(game, depth, ending_trade=5.0, ending_trap=8.0)
            assert got == pytest.approx(expected, abs=1e-6), (game.fen(), depth)
            differs |= abs(expected - negamax(game, depth, 0, weights)) > 1e-6
    assert differs


@pytest.mark.parametrize("part", ["ending", "threat"])
def test_the_player_adds_the_ending_term_and_threat_extension_only_where_kings_are_short(
        part):
    def used(variant: str, **options: Any) -> bool:
        return getattr(AlphaBetaAgent(variant, depth=1, **options), f"{part}_in_search")()

    on = {name: used(variant, **o)
          for name, variant, o in (("triestine", "triestine", {}),
                                   ("international", "international", {}),
                                   ("damii", "damii", {}), ("damath", "damath", {}),
                                   ("damii, short kings", "damii", {"king_range": "short"}))}
    assert on == {"triestine": True, "international": False, "damii": False,
                  "damath": False, "damii, short kings": True}
    assert not used("triestine", **{part: False})


@pytest.mark.parametrize("variant", VARIANTS)
def test_search_with_threat_extension_equals_minimax_with_it(variant):
    """With `threat`, the search's value equals plain minimax that searches a quiet
    horizon position the other side could capture from one move more (the threat found by
    the engine's move generation for the other side), and differs from plain minimax on
    some of these positions."""
    differs = False
    for game in positions(variant) + random_positions(variant, 4, seed=29):
        weights = default_weights(game.engine)
        for depth in (1, 2):
            expected = negamax(game, depth, 0, weights, threat=True)
            for parts in ({}, ALL_EXACT):
                got = compiled_value(game, depth, threat=True, **parts)
                assert got == pytest.approx(expected, abs=1e-6), (game.fen(), depth, parts)
            differs |= abs(expected - negamax(game, depth, 0, weights)) > 1e-6
    assert differs


"""The search's ply stack against the engine's own turns.

Each row of the stack (damii_env.compiled: ``ply_root``, ``ply_play``) keeps the board,
its bit masks and its position key up to date move by move, without a pass over the
board. Here random games are played twice: hop by hop through the engine (``Engine.step``,
which hashes the whole board each turn) and a whole move a row on the ply stack; after
every move the row must hold the engine's board, the masks read afresh from that board,
the engine's key and the engine's number of legal moves (the same number when the row is
played as a leaf, whose quiet moves are only counted).
"""

from __future__ import annotations

import numpy as np
import pytest

from damii_env import compiled as C
from damii_env.engine import Engine
from damii_env.game import Game

CASES = [("damii", {}), ("international", {}), ("triestine", {}), ("damath", {}),
         ("international", {"board_size": 12}),  # no bit layout: pieces listed from the board
         ("triestine", {"orientation": "mirrored"})]
ROWS = 120


def _masks(board: np.ndarray, engine: Engine) -> tuple[int, int, int, int]:
    """The four masks of a mover's-view board, from the bit layout written out by hand:
    square s of row r is bit s + (r + offset) // 2."""
    n = engine.rules.board_size
    half = n // 2
    offset = 1 if engine.rules.orientation == "mirrored" else 0
    out = [0, 0, 0, 0]
    for s, v in enumerate(board):
        if v:
            bit = 1 << (s + (s // half + offset) // 2)
            out[{1: 0, 2: 1, -1: 2, -2: 3}[int(v)]] |= bit
    return tuple(out)


def _whole_moves(engine: Engine, state) -> list[tuple[int, ...]]:
    """Every whole move (its hops) of game 0, by expanding the engine's hops."""
    moves = []
    stack = [(state, ())]
    while stack:
        st, hops = stack.pop()
        for a in engine.legal_actions(st):
            child = st.copy()
            engine.step(child, np.array([a]))
            line = hops + (int(a),)
            if child.continuing_square[0] >= 0 and not child.done[0]:
                stack.append((child, line))
            else:
                moves.append(line)
    return moves


@pytest.mark.parametrize(("variant", "options"), CASES)
def test_rows_follow_the_engine(variant, options):
    engine = Engine(variant, **options)
    rng = np.random.default_rng(5)
    T = engine.tables
    checked = 0
    for _game in range(3):
        state = engine.init(1, rng=rng)
        P = C.new_plies(T, ROWS, 256, 256)
        C.ply_root(T, state.arrays, 0, P)
        board, info, keys, paths, plen = P[0], P[4], P[5], P[6], P[8]
        bits = P[12]
        bitboard = engine.rules.board_size <= 10
        for row in range(ROWS - 1):
            if state.done[0]:
                break
            n = C.ply_n_moves(info, row)
            assert n == len(_whole_moves(engine, state))
            i = int(rng.integers(n))
            hops = [int(h) for h in paths[row, i, :plen[row, i]]]
            for h in hops:
                engine.step(state, np.array([h]))
            C.ply_play(T, P, row, i, True)  # as a leaf: quiet moves counted, not listed
            counted = C.ply_n_moves(info, row + 1)
            C.ply_play(T, P, row, i)
            q = row + 1
            assert counted == C.ply_n_moves(info, q), q
            assert np.array_equal(board[q], state.board[0]), (variant, q)
            if bitboard:
                assert tuple(int(x) for x in bits[q]) == _masks(board[q], engine), q
            hist_len = int(state.meta[0, 9])  # M_HIST_LEN: the record's last entry is this position
            assert int(keys[q]) == int(state.hist[0, (hist_len - 1) % state.hist.shape[1]]), q
            assert C.ply_outcome(info, q) == int(state.outcome[0]), q
            checked += 1
    assert checked > 60


@pytest.mark.parametrize(("variant", "fen", "seed", "repeats"),
                         [("triestine", "W:WK46,K50:BK1,K5", 3, 10),
                          ("international", "W:WK46,K36:BK5,K15", 4, 3)])
def test_rows_count_their_position_as_the_engines_record_does(variant, fen, seed, repeats):
    """``ply_seen``: how often a row's position has occurred, the game's record before the
    root and the line both counted, equals the count of its key in the engine's record
    (the hashes since the last irreversible move). Kings shuffling repeat often."""
    game = Game.from_fen(fen, variant)
    engine, state = game.engine, game.state.copy()
    rng = np.random.default_rng(seed)
    T = engine.tables
    for _ in range(6):  # a record before the root
        hops = _whole_moves(engine, state)[int(rng.integers(2))]
        for h in hops:
            engine.step(state, np.array([h]))
    P = C.new_plies(T, ROWS, 256, 256)
    C.ply_root(T, state.arrays, 0, P)
    info, paths, plen = P[4], P[6], P[8]
    repeated = 0
    for row in range(ROWS - 1):
        if state.done[0]:
            break
        i = int(rng.integers(min(2, C.ply_n_moves(info, row))))
        for h in paths[row, i, :plen[row, i]]:
            engine.step(state, np.array([int(h)]))
        C.ply_play(T, P, row, i)
        q = row + 1
        hist_len = int(state.meta[0, 9])
        record = state.hist[0, :min(hist_len, state.hist.shape[1])]
        assert C.ply_seen(info, q) == int(np.sum(record == P[5][q])), q
        repeated += C.ply_seen(info, q) >= 2
    assert repeated >= repeats  # (these seeds' games end by a draw rule: the rows all checked)


def _quiet_line_move(T, P, row: int, rng: np.random.Generator) -> int:
    """A random move of the row after which the other side has nothing to capture and a
    move that leaves the mover nothing to capture either (rows row + 1 and row + 2 are
    overwritten); any move where there is none."""
    info = P[4]
    order = [int(j) for j in rng.permutation(C.ply_n_moves(info, row))]
    for j in order:
        C.ply_play(T, P, row, j)
        if C.ply_capturing(info, row + 1) or C.ply_outcome(info, row + 1) != C.ONGOING:
            continue
        for k in range(C.ply_n_moves(info, row + 1)):
            C.ply_play(T, P, row + 1, k)
            if not C.ply_capturing(info, row + 2):
                return j
    return order[-1]


@pytest.mark.parametrize("fen", [
    "W:WK46,K47,K48:BK5",  # three kings against a lone king: drawn after 16 moves each
    "W:WK49,K50:BK5",  # two against one: after 5
    "B:WK1,K2:BK46",
    "W:WK46,K47,30:BK5",  # three pieces, a king among them
    "W:WK46,K47,K48,K49:BK5",  # four: no endgame draw (the 25-move rule instead)
])
def test_rows_end_where_the_engine_ends_international_endings(fen):
    """The FMJD endgame draws, counted on the ply stack from the rows' bit masks: every
    row's outcome equals the engine's along random lines of moves that leave nothing to
    capture where they can, and those lines reach the draw."""
    draws = 0
    for seed in range(16):
        game = Game.from_fen(fen, "international")
        engine, state = game.engine, game.state.copy()
        rng = np.random.default_rng(seed)
        T = engine.tables
        P = C.new_plies(T, ROWS, 256, 256)
        C.ply_root(T, state.arrays, 0, P)
        info, paths, plen = P[4], P[6], P[8]
        for row in range(ROWS - 2):
            if state.done[0]:
                break
            i = _quiet_line_move(T, P, row, rng)
            for h in paths[row, i, :plen[row, i]]:
                engine.step(state, np.array([int(h)]))
            C.ply_play(T, P, row, i)
            assert C.ply_outcome(info, row + 1) == int(state.outcome[0]), (seed, row + 1)
        draws += int(state.outcome[0] == C.DRAW)
    assert draws >= 4, (fen, draws)  # 4 to 16 of 16 at these seeds


def _other_side_could_capture(game: Game) -> bool:
    """The engine's own answer: the same position with the other side to move (the FEN's
    first letter swapped) has captures to make."""
    fen = game.fen()
    swapped = ("B" if fen[0] == "W" else "W") + fen[1:]
    other = Game.from_fen(swapped, game.rules)
    return not other.is_over() and bool(other.state.capturing[0])


@pytest.mark.parametrize(("variant", "options"), CASES)
def test_a_row_knows_whether_the_other_side_could_capture(variant, options):
    """``ply_threat`` (from the row's bit masks) equals the engine's move generation run
    for the other side on the same position, along random games; boards without a bit
    layout answer False."""
    rng = np.random.default_rng(8)
    seen = {True: 0, False: 0}
    for _game in range(6):  # played to the end: kings come late
        game = Game(variant, **options)
        for _ply in range(300):
            if game.is_over():
                break
            T = game.engine.tables
            P = C.new_plies(T, 2, 256, 256)
            C.ply_root(T, game.state.arrays, 0, P)
            expected = (_other_side_could_capture(game)
                        if game.engine.rules.board_size <= 10 else False)
            assert C.ply_threat(T, P, 0) == expected, game.fen()
            seen[expected] += 1
            moves = game.legal_moves()
            game.push(moves[int(rng.integers(len(moves)))])
    assert seen[False] > 20
    if options.get("board_size", 10) <= 10:
        assert seen[True] > 20, seen


def _random_fen(variant: str, rng: np.random.Generator) -> str:
    """A position with kings on both sides (men kept off their crowning rows); in Sci-Damath
    each piece carries one of its side's starting chips."""
    start = Game(variant)
    S, half = start.engine.n_squares, start.engine.rules.board_size // 2
    chips = {}
    for part in start.fen().split(":")[1:]:
        chips[part[0]] = [p.split("=")[1] for p in part[1:].split(",") if "=" in p]
    squares = [int(s) for s in rng.permutation(np.arange(1, S + 1))]
    sides = {"W": [], "B": []}
    for side in ("W", "B"):
        for _ in range(int(rng.integers(0 if side == "B" else 1, 5))):  # kings
            sides[side].append(f"K{squares.pop()}")
        for _ in range(int(rng.integers(0, 7))):  # men, never on their crowning row
            sq = squares.pop()
            if (side == "W" and sq <= half) or (side == "B" and sq > S - half):
                continue
            sides[side].append(str(sq))
    if not sides["B"]:
        sides["B"].append(f"K{squares.pop()}")
    parts = []
    for side in ("W", "B"):
        pieces = sides[side]
        if chips[side]:
            pieces = [f"{p}={chips[side][j % len(chips[side])]}" for j, p in enumerate(pieces)]
        parts.append(side + ",".join(pieces))
    return f"{'W' if rng.integers(2) else 'B'}:{parts[0]}:{parts[1]}"


@pytest.mark.parametrize("variant", ["damii", "international", "triestine", "damath"])
def test_positions_with_kings_count_the_engines_moves(variant):
    """With kings on the board: a row played as a leaf counts (``count_quiet``: the kings'
    moves a direction at a time from the masks, -1 where a piece can capture) as many
    moves as the engine's hop by hop expansion finds, and played as an inner row lists
    (``list_quiet``) the same moves, hop for hop; perft 1, whose count-only branch of
    ``turn_moves`` counts the kings the same way, agrees too."""
    rng = np.random.default_rng(11)
    leaves = kings_quiet = 0
    for _ in range(40):
        game = Game.from_fen(_random_fen(variant, rng), variant)
        if game.is_over():
            continue
        engine = game.engine
        assert engine.perft(game.state, 1) == len(_whole_moves(engine, game.state)), game.fen()
        T = engine.tables
        P = C.new_plies(T, 2, 256, 256)
        n = C.ply_root(T, game.state.arrays, 0, P)
        paths, plen, info = P[6], P[8], P[4]
        for i in range(n):
            child = game.state.copy()
            for h in paths[0, i, :plen[0, i]]:
                engine.step(child, np.array([int(h)]))
            C.ply_play(T, P, 0, i, True)
            if child.done[0]:
                assert C.ply_outcome(info, 1) == int(child.outcome[0])
                continue
            expected = sorted(_whole_moves(engine, child))
            assert C.ply_n_moves(info, 1) == len(expected), (game.fen(), i)
            C.ply_play(T, P, 0, i)  # as an inner row: the moves listed
            listed = sorted(tuple(int(h) for h in paths[1, j, :plen[1, j]])
                            for j in range(C.ply_n_moves(info, 1)))
            assert listed == expected, (game.fen(), i)
            leaves += 1
            kings_quiet += int(not child.capturing[0] and int(P[12][1, 1]) != 0)
    assert leaves > 150 and kings_quiet > 50, (leaves, kings_quiet)


@pytest.mark.parametrize("size", [4, 6, 8, 10, 12, 14, 16])
def test_every_hop_decodes_to_its_start_and_landing_square(size):
    """``move_ends`` (the start by a multiplication with the reciprocal of N - 1, the
    landing square through the ray table) against the geometry's own ``divmod`` decoding,
    for every hop action of every board size the rules allow."""
    engine = Engine("international", board_size=size, men_rows=min(4, size // 2 - 1))
    ray = engine.tables[1]
    n1 = size - 1
    count = engine.n_squares * 4 * n1
    paths = np.arange(count, dtype=np.int16).reshape(1, count, 1)
    plen = np.ones((1, count), dtype=np.int16)
    for a in range(count):
        s, d, k = engine.geometry.decode(a)  # k: steps, 1 or more
        assert C.move_ends(ray, n1, paths, plen, 0, a) == (s, ray[s, d, k - 1]), (size, a)

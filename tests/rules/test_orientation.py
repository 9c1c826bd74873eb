"""`mirrored` is the reflection of `standard` (columns reflected, c -> N-1-c).

The rules are symmetric under that reflection (RULES.md, "Orientation"), so a
position and its reflection must have exactly the reflected legal moves, the same
captured pieces in the same order, and the same perft counts. The reflection is
computed from the geometry tables only: square s of the standard board is at
(r, c) = square_rc[s-1]; its image is rc_square[r, N-1-c] + 1 on the mirrored board.
"""

from __future__ import annotations

import random

import pytest

from damii_env import Game, perft
from damii_env.geometry import geometry

N = 10
STD = geometry(N, "standard")
MIR = geometry(N, "mirrored")


def _reflect_table() -> dict[int, int]:
    table = {}
    for s0 in range(STD.n_squares):
        r, c = (int(x) for x in STD.square_rc[s0])
        image = int(MIR.rc_square[r, N - 1 - c])
        assert image >= 0, f"the reflection of square {s0 + 1} is not a mirrored dark square"
        table[s0 + 1] = image + 1
    return table


REFLECT = _reflect_table()


def test_reflection_is_a_bijection_on_rows() -> None:
    assert sorted(REFLECT.values()) == list(range(1, 51))
    # each row is read in the other direction: row 0 is 1..5 on both boards
    assert [REFLECT[s] for s in (1, 2, 3, 4, 5)] == [5, 4, 3, 2, 1]
    assert [REFLECT[s] for s in (46, 47, 48, 49, 50)] == [50, 49, 48, 47, 46]
    # standard bottom-left corner (9, 0) is square 46; its image (9, 9) is the
    # mirrored bottom-right corner, square 50
    assert REFLECT[46] == 50


def reflect_fen(fen: str) -> str:
    side, white, black = fen.split(":")

    def body(part: str) -> str:
        items = []
        for tok in part[1:].split(","):
            if tok:
                king = tok.startswith("K")
                sq = REFLECT[int(tok.lstrip("K"))]
                items.append((sq, f"K{sq}" if king else str(sq)))
        return ",".join(t for _, t in sorted(items))

    return f"{side}:W{body(white)}:B{body(black)}"


def move_set(game: Game, reflect: bool = False) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    f = (lambda s: REFLECT[s]) if reflect else (lambda s: s)
    return {(tuple(f(s) for s in m.path), tuple(f(s) for s in m.captured))
            for m in game.legal_moves()}


VARIANTS = ["damii", "international", "triestine"]


def random_positions(variant: str, seed: int, plies: int) -> list[str]:
    """FENs of a standard-orientation game played with seeded random moves."""
    rng = random.Random(seed)
    game = Game(variant, orientation="standard")
    fens = [game.fen()]
    for _ in range(plies):
        moves = game.legal_moves()
        if not moves:
            break
        game.push(rng.choice(moves))
        fens.append(game.fen())
    return fens


KING_POSITIONS = [
    "W:WK46:B31,33,37,43",
    "W:WK28:B12,13,22,K23",
    "W:WK46,K50:B32,34,K41,K44",
    "W:WK15,K46:BK20,K23,29,K32,38,41",
    "W:W31,32,K28,K3:B12,13,K22,K40,45",
    "B:W24,35,K19,K37:B7,8,K30,K26,K50",
    "B:WK1,K5,K46:BK50,K25,16,17",
    "W:W34,37,K47:B18,29,K42",
]


def assert_reflection(variant: str, fen: str, depth: int) -> None:
    std = Game.from_fen(fen, variant, orientation="standard")
    mfen = reflect_fen(std.fen())
    mir = Game.from_fen(mfen, variant, orientation="mirrored")
    assert mir.fen() == mfen
    assert move_set(mir) == move_set(std, reflect=True), (variant, fen, mfen)
    assert mir.is_over() == std.is_over() and mir.result() == std.result()
    if depth:
        assert perft(depth, variant, fen=mfen, orientation="mirrored") == \
            perft(depth, variant, fen=std.fen(), orientation="standard"), (variant, fen)


@pytest.mark.parametrize("variant", VARIANTS)
def test_start_position(variant: str) -> None:
    std = Game(variant, orientation="standard")
    mir = Game(variant, orientation="mirrored")
    # the start position is its own reflection (men on the same rows)
    assert reflect_fen(std.fen()) == mir.fen()
    assert move_set(mir) == move_set(std, reflect=True)
    for depth in (1, 2, 3):
        assert perft(depth, variant, orientation="mirrored") == \
            perft(depth, variant, orientation="standard")


def test_damii_default_orientation_is_mirrored() -> None:
    assert Game("damii").rules.orientation == "mirrored"
    # in the mirrored orientation square 1 is (0, 0): its only neighbour is 6 (1, 1)
    assert MIR.square_rc[0].tolist() == [0, 0]
    assert STD.square_rc[0].tolist() == [0, 1]
    assert STD.square_rc[45].tolist() == [9, 0]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("variant", VARIANTS)
def test_random_game_positions(variant: str, seed: int) -> None:
    fens = random_positions(variant, seed, plies=80)
    for i, fen in enumerate(fens):
        # perft 3 on a sample of the positions, legal moves on all of them
        assert_reflection(variant, fen, depth=3 if i % 10 == 5 else 0)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("variant", VARIANTS)
def test_play_in_parallel(variant: str, seed: int) -> None:
    """Play a random game on both boards at once, each move reflected."""
    rng = random.Random(1000 + seed)
    std = Game(variant, orientation="standard")
    mir = Game(variant, orientation="mirrored")
    for _ in range(120):
        if std.is_over():
            break
        move = rng.choice(std.legal_moves())
        played = mir.push("x".join(str(REFLECT[s]) for s in move.path) if move.is_capture
                          else "-".join(str(REFLECT[s]) for s in move.path))
        std.push(move)
        assert played.captured == tuple(REFLECT[s] for s in move.captured)
        assert mir.fen() == reflect_fen(std.fen())
    assert mir.is_over() == std.is_over() and mir.result() == std.result()


@pytest.mark.parametrize("fen", KING_POSITIONS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_king_positions(variant: str, fen: str) -> None:
    assert_reflection(variant, fen, depth=3)

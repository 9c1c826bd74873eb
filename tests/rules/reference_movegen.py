"""A plain, slow move generator written from the rules text, as an independent reference.

It is a test-only oracle for the engine: written from docs/RULES.md and docs/DAMATH.md,
sharing no code (and no tables) with ``damii_env``. Positions are a dict from
``(row, column)`` to a piece letter (``w``/``W`` White man/king, ``b``/``B`` Black man/king)
and the side to move; rows count from the top as White sees the board, White moves up.

What it knows, per variant:

- Damii: 10x10, mirrored orientation (dark squares where row + column is even), 20 men each.
  Men step one square forward and capture by the short jump forwards and backwards; kings
  fly (any distance, every diagonal) and capture at a distance, landing on any empty square
  behind the captured piece. Capturing is compulsory and the player chooses freely among all
  complete sequences. Captured pieces stay on the board until the sequence ends: they cannot
  be jumped again, passed over or landed on. The start square of the moving piece is empty
  during its own capture. A man that ends its move on the far row is crowned; one that jumps
  on out of it stays a man (so it goes on capturing as a man). ``crowning_ends=True`` is
  the rule option under which such a man is crowned there and its move ends.
- International: as Damii, standard orientation, and only the sequences that capture the
  most pieces are legal. (Used to check this reference against published perft.)
- Sci-Damath: 8x8, mirrored orientation, 12 chips each on the first three rows. Chips move
  and capture as Damii's men, a dama as Damii's king, but captured chips are removed at once
  (their squares may be crossed or landed on later in the same sequence). The sequences
  taking the most chips are required, and among those a dama's over an ordinary chip's.
  Promotion only where the move ends on the far row. Chip values and scores do not affect
  which moves are legal, so they are left out.

Draw and game-end rules are not applied (as in ``damii_env.perft``).
"""

from __future__ import annotations

from dataclasses import dataclass

DIAGONALS = ((-1, -1), (-1, 1), (1, -1), (1, 1))


@dataclass(frozen=True)
class RefRules:
    """The few rule choices that tell the three variants apart here."""

    size: int
    men_rows: int
    dark_parity: int  # dark squares are those with (row + column) % 2 == dark_parity
    precedence: str  # "free", "most" or "most_then_king"
    removal: str  # "end" (captured pieces stay until the sequence ends) or "immediate"
    crowning_ends: bool = False  # a man reaching the far row mid-capture is crowned and stops


DAMII = RefRules(size=10, men_rows=4, dark_parity=0, precedence="free", removal="end")
INTERNATIONAL = RefRules(size=10, men_rows=4, dark_parity=1, precedence="most", removal="end")
DAMATH = RefRules(size=8, men_rows=3, dark_parity=0, precedence="most_then_king",
                  removal="immediate")

Square = tuple[int, int]
Board = dict[Square, str]


@dataclass(frozen=True)
class RefMove:
    """A complete move: the squares it visits (start first) and the squares it captures."""

    path: tuple[Square, ...]
    captured: tuple[Square, ...]


def dark_squares(rules: RefRules) -> list[Square]:
    """The playable squares in reading order: index i is square number i + 1."""
    n = rules.size
    return [(r, c) for r in range(n) for c in range(n) if (r + c) % 2 == rules.dark_parity]


def start_position(rules: RefRules) -> tuple[Board, str]:
    """Black's men on the top `men_rows` rows, White's on the bottom ones; White to move."""
    board: Board = {}
    for r, c in dark_squares(rules):
        if r < rules.men_rows:
            board[(r, c)] = "b"
        elif r >= rules.size - rules.men_rows:
            board[(r, c)] = "w"
    return board, "w"


def from_fen(fen: str, rules: RefRules) -> tuple[Board, str]:
    """Read a PDN FEN (``W:W31,K45:B1,2``; ranges and Damath's ``=value`` tags allowed)."""
    squares = dark_squares(rules)
    side, *fields = fen.split(":")
    board: Board = {}
    for field in fields:
        colour = field[:1].lower()
        if colour not in ("w", "b"):
            continue  # Damath's score field
        for token in filter(None, field[1:].split(",")):
            token = token.split("=")[0]
            king = token.startswith("K")
            lo, _, hi = token.lstrip("K").partition("-")
            for number in range(int(lo), int(hi or lo) + 1):
                board[squares[number - 1]] = colour.upper() if king else colour
    return board, side.lower()


def _on_board(rules: RefRules, r: int, c: int) -> bool:
    return 0 <= r < rules.size and 0 <= c < rules.size


def _jumps(board: Board, rules: RefRules, at: Square, piece: str,
           captured: tuple[Square, ...]) -> list[tuple[Square, Square]]:
    """Every (captured square, landing square) of one jump of `piece` standing on `at`."""
    enemy = "b" if piece.lower() == "w" else "w"
    out = []
    for dr, dc in DIAGONALS:
        r, c = at[0] + dr, at[1] + dc
        if piece.isupper():  # a flying king: over empty squares to the first piece
            while _on_board(rules, r, c) and (r, c) not in board:
                r, c = r + dr, c + dc
        if not _on_board(rules, r, c):
            continue
        target = (r, c)
        if target not in board or board[target].lower() != enemy or target in captured:
            continue  # own piece, or a piece already taken in this sequence: a wall
        r, c = r + dr, c + dc
        while _on_board(rules, r, c) and (r, c) not in board:
            out.append((target, (r, c)))
            if not piece.isupper():
                break  # a man lands right behind
            r, c = r + dr, c + dc
    return out


def _captures_from(board: Board, rules: RefRules, start: Square) -> list[RefMove]:
    piece = board.pop(start)  # the start square is empty during the piece's own capture
    far_row = 0 if piece.lower() == "w" else rules.size - 1
    found: list[RefMove] = []

    def extend(at: Square, path: tuple[Square, ...], captured: tuple[Square, ...]) -> None:
        crowned = rules.crowning_ends and piece.islower() and captured and at[0] == far_row
        jumps = [] if crowned else _jumps(board, rules, at, piece, captured)
        if not jumps:
            if captured:
                found.append(RefMove(path, captured))
            return
        for target, landing in jumps:
            taken = None
            if rules.removal == "immediate":
                taken = board.pop(target)
            extend(landing, path + (landing,), captured + (target,))
            if taken is not None:
                board[target] = taken

    extend(start, (start,), ())
    board[start] = piece
    return found


def legal_moves(board: Board, turn: str, rules: RefRules) -> list[RefMove]:
    """Every legal complete move of the side `turn` ("w" or "b")."""
    own = [sq for sq, p in board.items() if p.lower() == turn]
    captures = [m for sq in own for m in _captures_from(board, rules, sq)]
    if captures:
        if rules.precedence in ("most", "most_then_king"):
            most = max(len(m.captured) for m in captures)
            captures = [m for m in captures if len(m.captured) == most]
        if rules.precedence == "most_then_king":
            by_king = [m for m in captures if board[m.path[0]].isupper()]
            captures = by_king or captures
        return list({m.path: m for m in captures}.values())
    forward = -1 if turn == "w" else 1
    moves = []
    for sq in own:
        king = board[sq].isupper()
        for dr, dc in DIAGONALS:
            if not king and dr != forward:
                continue
            r, c = sq[0] + dr, sq[1] + dc
            while _on_board(rules, r, c) and (r, c) not in board:
                moves.append(RefMove((sq, (r, c)), ()))
                if not king:
                    break
                r, c = r + dr, c + dc
    return moves


def play(board: Board, turn: str, move: RefMove, rules: RefRules) -> tuple[Board, str]:
    """The position after `move`: captured pieces lifted, a man ending on the far row crowned."""
    after = dict(board)
    piece = after.pop(move.path[0])
    for sq in move.captured:
        del after[sq]
    end = move.path[-1]
    far_row = 0 if turn == "w" else rules.size - 1
    if piece.islower() and end[0] == far_row:
        piece = piece.upper()
    after[end] = piece
    return after, "b" if turn == "w" else "w"


def perft(depth: int, rules: RefRules, fen: str | None = None) -> int:
    """The number of complete-move sequences of length `depth` from the start (or `fen`)."""
    board, turn = start_position(rules) if fen is None else from_fen(fen, rules)

    def count(board: Board, turn: str, depth: int) -> int:
        if depth == 0:
            return 1
        moves = legal_moves(board, turn, rules)
        if depth == 1:
            return len(moves)
        return sum(count(*play(board, turn, m, rules), depth - 1) for m in moves)

    return count(board, turn, depth)


def move_texts(fen: str, rules: RefRules) -> set[str]:
    """The legal moves of a FEN position in PDN text (``32-28``, ``28x19x10``)."""
    board, turn = from_fen(fen, rules)
    number = {sq: i + 1 for i, sq in enumerate(dark_squares(rules))}
    return {("x" if m.captured else "-").join(str(number[sq]) for sq in m.path)
            for m in legal_moves(board, turn, rules)}

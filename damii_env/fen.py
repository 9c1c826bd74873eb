"""PDN FEN: position text ``W:W31,32,K45:B1,2,K7`` (side to move, White's squares, Black's).

Square numbers are 1-based in reading order of the dark squares (row 0 first, as
White sees the board). ``K`` marks a king. Ranges such as ``W31-50`` are accepted
on input; output lists every square.
"""

from __future__ import annotations

import re

import numpy as np

from damii_env.errors import InvalidFenError

_TOKEN = re.compile(r"^(K?)([0-9]{1,4})(?:-([0-9]{1,4}))?$")
"""A piece list entry: ASCII digits only (``٣١`` or ``３１`` are refused), at most 4."""
_DAMATH_SQUARE = re.compile(r"^K?[0-9]{1,4}$")


def parse_fen(fen: str, n_squares: int, board_size: int) -> tuple[np.ndarray, int]:
    """Read a FEN: absolute board (S,) int8 (+ White, - Black; 1 man, 2 king), colour to move."""
    if not isinstance(fen, str):
        raise InvalidFenError(f"a FEN must be a string, got {type(fen).__name__}")
    text = fen.strip().strip('"').strip()
    if text.endswith("."):
        text = text[:-1]
    parts = [p.strip() for p in text.split(":")]
    expected = "expected 'W:W31,32,K45:B1,2,K7' (side to move, then White's and Black's squares)"
    if len(parts) != 3:
        raise InvalidFenError(f"FEN {fen!r} has {len(parts)} ':'-separated fields; {expected}")
    side = parts[0].upper()
    if side not in ("W", "B"):
        raise InvalidFenError(f"FEN {fen!r}: side to move must be W or B, got {parts[0]!r}")
    board = np.zeros(n_squares, dtype=np.int8)
    seen_colours = set()
    for part in parts[1:]:
        if not part or part[0].upper() not in ("W", "B"):
            raise InvalidFenError(
                f"FEN {fen!r}: each piece list must start with W or B, got {part!r}; {expected}"
            )
        colour = part[0].upper()
        if colour in seen_colours:
            raise InvalidFenError(f"FEN {fen!r}: the piece list of {colour} appears twice")
        seen_colours.add(colour)
        sign = 1 if colour == "W" else -1
        body = part[1:].strip()
        if not body:
            continue
        for token in body.split(","):
            token = token.strip().upper()
            m = _TOKEN.match(token)
            if not m:
                raise InvalidFenError(
                    f"FEN {fen!r}: cannot read {token!r}; expected a square number such as 31, "
                    f"a king such as K45, or a range such as 31-35"
                )
            king = m.group(1) == "K"
            lo = int(m.group(2))
            hi = int(m.group(3)) if m.group(3) else lo
            if lo > hi:
                raise InvalidFenError(
                    f"FEN {fen!r}: range {token!r} runs backwards; write the lower square first"
                )
            if not (1 <= lo <= hi <= n_squares):
                raise InvalidFenError(
                    f"FEN {fen!r}: square {token!r} is outside 1..{n_squares} "
                    f"(the dark squares of a {board_size}x{board_size} board)"
                )
            for sq in range(lo, hi + 1):
                if board[sq - 1] != 0:
                    raise InvalidFenError(f"FEN {fen!r}: square {sq} is given twice")
                board[sq - 1] = sign * (2 if king else 1)
    half = board_size // 2
    for sq in range(half):
        if board[sq] == 1:
            raise InvalidFenError(
                f"FEN {fen!r}: a White man on square {sq + 1}, White's crowning row; "
                f"it would be a king there (write K{sq + 1})"
            )
        if board[n_squares - 1 - sq] == -1:
            raise InvalidFenError(
                f"FEN {fen!r}: a Black man on square {n_squares - sq}, Black's crowning row; "
                f"it would be a king there (write K{n_squares - sq})"
            )
    return board, (0 if side == "W" else 1)


def format_fen(board: np.ndarray, turn: int) -> str:
    """Write an absolute board and the colour to move as a FEN."""
    lists = []
    for colour, sign in (("W", 1), ("B", -1)):
        items = []
        for i, v in enumerate(board):
            if v == sign:
                items.append(str(i + 1))
            elif v == 2 * sign:
                items.append(f"K{i + 1}")
        lists.append(colour + ",".join(items))
    return f"{'W' if turn == 0 else 'B'}:{lists[0]}:{lists[1]}"


# --- Damath: chips carry values, and the position carries both scores ----------------------
#
#   W:W21=-9,22=6,K23=-1:B1=2,4=-5:S10,-3/2
#
# Each piece is ``[K]square=value``, the value written as the chip set labels it
# (``-9``, ``7/10``, ``-√8``, ``36x²y``). The optional last field ``S<white>,<black>``
# holds the points scored so far, exact (``-48``, ``7/10``, ``10√2``, ``3-2√2``).


def parse_damath_fen(fen: str, n_squares: int, board_size: int, chip_set_name: str):
    """Read a Damath FEN: absolute board, colour to move, chip ids (S,), exact scores."""
    from damii_env.damath import Exact, chip_set

    if not isinstance(fen, str):
        raise InvalidFenError(f"a FEN must be a string, got {type(fen).__name__}")
    parts = [p.strip() for p in fen.strip().strip('"').split(":")]
    scores = [Exact(), Exact()]
    if len(parts) == 4 and parts[3][:1].upper() == "S":
        try:
            sw, sb = parts[3][1:].split(",")
            scores = [Exact.parse(sw), Exact.parse(sb)]
        except ValueError as exc:
            raise InvalidFenError(
                f"FEN {fen!r}: cannot read the scores {parts[3]!r}; expected e.g. 'S10,-3/2'"
            ) from exc
        parts = parts[:3]
    labels = [c.label for c in chip_set(chip_set_name)]
    plain = []
    chips = np.full(n_squares, -1, dtype=np.int8)
    pending_values = []
    for i, part in enumerate(parts):
        if i == 0 or not part:
            plain.append(part)
            continue
        colour, body = part[:1], part[1:]
        tokens = []
        for token in filter(None, (t.strip() for t in body.split(","))):
            if "=" not in token:
                raise InvalidFenError(
                    f"FEN {fen!r}: piece {token!r} has no value; Damath pieces are written "
                    f"square=value, e.g. 21=-9 or K5=6"
                )
            square, value = token.split("=", 1)
            if not _DAMATH_SQUARE.match(square.strip().upper()):
                raise InvalidFenError(
                    f"FEN {fen!r}: cannot read the square of {token!r}; Damath pieces are "
                    f"one square each (no ranges), written square=value, e.g. 21=-9 or K5=6"
                )
            tokens.append(square)
            pending_values.append((colour.upper(), square.strip().upper().lstrip("K"), value))
        plain.append(colour + ",".join(tokens))
    board, turn = parse_fen(":".join(plain), n_squares, board_size)
    used: set[int] = set()
    for colour, square, value in pending_values:
        if value not in labels:
            raise InvalidFenError(
                f"FEN {fen!r}: {value!r} is not a chip of the {chip_set_name} set; "
                f"its chips are: {', '.join(labels)}"
            )
        chip_id = labels.index(value) + (0 if colour == "W" else len(labels))
        if chip_id in used:
            raise InvalidFenError(f"FEN {fen!r}: {colour} has the chip {value} twice")
        used.add(chip_id)
        chips[int(square) - 1] = chip_id
    return board, turn, chips, scores


def format_damath_fen(board: np.ndarray, turn: int, chips: np.ndarray, scores,
                      chip_set_name: str) -> str:
    """Write a Damath position: pieces with their chip values, then both scores."""
    from damii_env.damath import chip_set

    labels = [c.label for c in chip_set(chip_set_name)]
    lists = []
    for colour, sign in (("W", 1), ("B", -1)):
        items = []
        for i, v in enumerate(board):
            if v == sign or v == 2 * sign:
                king = "K" if v == 2 * sign else ""
                items.append(f"{king}{i + 1}={labels[int(chips[i]) % len(labels)]}")
        lists.append(colour + ",".join(items))
    score_text = ",".join(str(x).replace(" ", "") for x in scores)
    return f"{'W' if turn == 0 else 'B'}:{lists[0]}:{lists[1]}:S{score_text}"

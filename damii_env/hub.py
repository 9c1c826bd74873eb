"""The text of the Hub protocol (the protocol of the draughts engine Scan, version 2):
reading and writing its lines, positions and moves. Pure: no processes here (the engine
loop is ``damii hub``, :mod:`damii_app.hub`; the client is
:class:`damii_agents.players.hub.HubPlayer`). docs/HUB.md describes the protocol as the
project speaks it.

A line is ``command key=value key="a value" flag``:

>>> parse_line('pos pos=Wbbe moves="32-28 19-23"')
('pos', {'pos': 'Wbbe', 'moves': '32-28 19-23'})
>>> format_line("info", depth=3, score="0.12", pv="32-28 19-23")
'info depth=3 score=0.12 pv="32-28 19-23"'

A position is the side to move (``W`` or ``B``) and one character a square in the
variant's own square order (``w`` ``b`` a man, ``W`` ``B`` a king, ``e`` empty); a quiet
move is ``32-28`` and a capture ``from x to x captured x captured...`` (the captured
squares in any order, the squares between the jumps not written):

>>> from damii_env import Game
>>> game = game_from_position("W" + "e" * 22 + "b" + "e" * 4 + "w" + "e" * 22,
...                           "international")
>>> [move_text(m) for m in game.legal_moves()]
['28x19x23']
>>> str(parse_move(game, "28x19x23"))
'28x19'

Sci-Damath positions need chip values and scores, which ``pos=`` cannot carry: the
project's extension ``pos fen="<the Damath FEN>"`` (:meth:`damii_env.Game.fen`) carries
them, and works for every variant.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from damii_env.errors import IllegalMoveError, InvalidFenError, InvalidOptionError
from damii_env.game import Game, Move

VARIANTS = {"normal": "international", "damii": "damii", "triestine": "triestine",
            "damath": "damath"}
"""The values of the ``variant`` parameter and the project's variant of each (``normal``
is International draughts, as Scan calls it)."""

PIECES = {"e": 0, "w": 1, "W": 2, "b": -1, "B": -2}
"""A square's character in a position: empty, a White man or king, a Black man or king."""
_CHAR = {v: k for k, v in PIECES.items()}

_MOVE = re.compile(r"^[0-9]{1,3}(-[0-9]{1,3}|(x[0-9]{1,3}){2,64})$")
"""A Hub move: ``32-28``, or ``from x to x captured...`` (at least one captured square)."""
MAX_LINE = 100_000
"""The longest line read (a longer one is cut: no position or move list is that long)."""


# --- lines ---------------------------------------------------------------------------
def parse_line(line: str) -> tuple[str, dict[str, str]]:
    """The command of a line and its arguments (a flag's value is ``""``); values may be
    double-quoted (a quote left open runs to the end of the line). An empty line gives
    ``("", {})``."""
    text = line[:MAX_LINE].strip()
    command, _, rest = text.partition(" ")
    args: dict[str, str] = {}
    i, n = 0, len(rest)
    while i < n:
        if rest[i].isspace():
            i += 1
            continue
        j = i
        while j < n and not rest[j].isspace() and rest[j] != "=":
            j += 1
        key = rest[i:j]
        if j >= n or rest[j] != "=":  # a flag
            args[key] = ""
            i = j
            continue
        j += 1
        if j < n and rest[j] == '"':
            end = rest.find('"', j + 1)
            end = n if end < 0 else end
            args[key] = rest[j + 1:end]
            i = end + 1
        else:
            end = j
            while end < n and not rest[end].isspace():
                end += 1
            args[key] = rest[j:end]
            i = end
    return command, args


def quote(value: Any) -> str:
    """A value as the protocol writes it: in double quotes when it is empty or holds a
    space, ``=`` or a quote (a double quote inside becomes a single one)."""
    text = " ".join(str(value).replace('"', "'").split()) if value is not None else ""
    return f'"{text}"' if not text or " " in text or "=" in text or "'" in text else text


def format_line(command: str, *flags: str, **args: Any) -> str:
    """One line: the command, its flags, then ``key=value`` for each argument (in order;
    an argument whose value is None is left out). Keys with ``-`` are given with ``_``
    (``move_time`` for ``move-time``)."""
    parts = [command, *flags]
    parts += [f"{key.replace('_', '-')}={quote(value)}" for key, value in args.items()
              if value is not None]
    return " ".join(parts)


# --- variants ------------------------------------------------------------------------
def variant_of(value: str) -> str:
    """The project's variant for a ``variant`` parameter's value; a clear error for any
    other value."""
    name = value.strip().lower()
    if name not in VARIANTS:
        raise InvalidOptionError(f"unknown variant {value!r:.40}; expected one of: "
                                 f"{', '.join(VARIANTS)} (normal is International)")
    return VARIANTS[name]


def hub_variant(variant: str) -> str:
    """The ``variant`` parameter's value for one of the project's variants."""
    for value, name in VARIANTS.items():
        if name == variant.lower():
            return value
    raise InvalidOptionError(f"variant {variant!r:.40} has no Hub name; the protocol plays "
                             f"{', '.join(VARIANTS.values())}")


# --- positions -----------------------------------------------------------------------
def position_text(game: Game) -> str:
    """The position of `game` as ``pos=`` writes it: side to move, one character a
    square. Sci-Damath is refused (chips and scores: use :func:`position_args`)."""
    if game.engine.scoring:
        raise InvalidOptionError("a Sci-Damath position needs its chip values and scores, "
                                 "which pos= cannot carry; send pos fen=\"<Damath FEN>\"")
    side = "W" if game.turn == 0 else "B"
    return side + "".join(_CHAR[int(v)] for v in game.board())


def game_from_position(text: str, variant: str = "international", **options: Any) -> Game:
    """A game at the position ``pos=`` gave (its side to move and square characters),
    for `variant` and its rule options; a clear error for a malformed position."""
    game = Game(variant, **options)
    if game.engine.scoring:
        raise InvalidFenError("a Sci-Damath position needs its chip values and scores, "
                              "which pos= cannot carry; send pos fen=\"<Damath FEN>\"")
    n = game.engine.n_squares
    text = text.strip()
    if len(text) != n + 1 or text[0] not in "WB":
        raise InvalidFenError(f"position {text!r:.80}: expected W or B (the side to move), "
                              f"then {n} squares, {n + 1} characters; got {len(text)}")
    bad = sorted({c for c in text[1:] if c not in PIECES})
    if bad:
        raise InvalidFenError(f"position {text!r:.80}: squares are w, b (men), W, B (kings) "
                              f"or e (empty); got {', '.join(repr(c) for c in bad[:5])}")
    lists: dict[str, list[str]] = {"W": [], "B": []}
    for square, c in enumerate(text[1:], start=1):
        if c != "e":
            lists[c.upper()].append(("K" if c.isupper() else "") + str(square))
    fen = f"{text[0]}:W{','.join(lists['W'])}:B{','.join(lists['B'])}"
    return Game.from_fen(fen, variant, **options)


def read_position(args: dict[str, str], variant: str, **options: Any) -> Game:
    """The game a ``pos`` command sets up: its ``pos=`` position or its ``fen=`` (the
    project's FEN, needed for Sci-Damath), then its ``moves=`` played on it."""
    if "fen" in args:
        game = Game.from_fen(args["fen"], variant, **options)
    elif "pos" in args:
        game = game_from_position(args["pos"], variant, **options)
    else:
        raise InvalidFenError("pos needs pos=<side and squares> (or fen=\"<FEN>\"), e.g. "
                              "pos pos=Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww")
    play_moves(game, args.get("moves", "").split())
    return game


def position_args(game: Game) -> tuple[dict[str, str], list[Move]]:
    """What a client sends for `game`: the ``pos`` arguments of the position after its
    last irreversible move (a man's move or a capture) and the reversible king moves
    played since (for the engine's repetition detection), as the Hub GUI does. Sci-Damath
    is sent as ``fen=``."""
    start = game.copy()
    tail: list[Move] = []
    while start.move_stack:
        move = start.pop()
        if move.is_capture or abs(int(start.board()[move.path[0] - 1])) != 2:
            start.push(move)
            break
        tail.insert(0, move)
    if start.engine.scoring:
        return {"fen": start.fen()}, tail
    return {"pos": position_text(start)}, tail


# --- moves ---------------------------------------------------------------------------
def move_text(move: Move) -> str:
    """A move in the protocol's notation: ``32-28``, or ``from x to x captured...``."""
    if not move.is_capture:
        return f"{move.path[0]}-{move.path[-1]}"
    return "x".join(str(s) for s in (move.path[0], move.path[-1], *move.captured))


def parse_move(game: Game, text: str) -> Move:
    """The legal move of `game` that the Hub move `text` names: a quiet move with the same
    two squares, or a capture with the same start, end and set of captured squares (where
    two capture paths take the same pieces, the first legal one). IllegalMoveError
    otherwise, naming the legal moves."""
    text = text.strip() if isinstance(text, str) else text
    if not isinstance(text, str) or not _MOVE.match(text):
        raise IllegalMoveError(f"cannot read the move {text!r:.60}; expected a quiet move "
                               f"such as 32-28 or a capture such as 28x19x23 (from, to, then "
                               f"the captured squares)")
    legal = game.legal_moves()
    if "-" in text:
        a, b = (int(t) for t in text.split("-"))
        found = [m for m in legal if not m.is_capture and m.path == (a, b)]
    else:
        start, end, *taken = (int(t) for t in text.split("x"))
        found = [m for m in legal if m.is_capture and m.path[0] == start
                 and m.path[-1] == end and sorted(m.captured) == sorted(taken)]
    if not found:
        raise IllegalMoveError(f"move {text} is not legal here; legal moves: "
                               f"{' '.join(move_text(m) for m in legal) or 'none'}")
    return found[0]


def play_moves(game: Game, moves: Iterable[str]) -> None:
    """Play Hub moves on `game` in turn (a clear error names the first that is not legal)."""
    for i, text in enumerate(moves):
        try:
            game.push(parse_move(game, text))
        except IllegalMoveError as exc:
            raise IllegalMoveError(f"moves: move {i + 1} ({text:.20}): {exc}") from None

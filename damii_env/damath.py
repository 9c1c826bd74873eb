"""Sci-Damath data: the operation grid, the seven chip sets, and exact arithmetic.

Decisions are in ``docs/DAMATH.md`` and ``docs/RULES.md``. Damath names squares
``(x, y)`` = (column, row counted from the first player's edge); with rows counted
from the top (``r``) that is ``x = c``, ``y = 7 - r``.

Values are exact: every chip value of every set lies in Q(sqrt 2) (the radicals are
all multiples of sqrt 2: sqrt 8 = 2 sqrt 2, sqrt 18 = 3 sqrt 2, sqrt 32 = 4 sqrt 2),
and polynomial chips become integers once x and y are known, so :class:`Exact`
(``a + b*sqrt(2)``, rational a and b) is closed under the four operations.
The batched engine uses the same tables as float64.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from damii_env.errors import InvalidOptionError

SIZE = 8
OPS = "+-x/"
"""Operation codes 0..3 as the kernels number them."""

# Operations of the playable squares, top row (r = 0, Damath row 7) first, left to right;
# rows r = 4..7 repeat rows 0..3.
MAX_DIGITS = 120
"""Digits of a numerator or denominator in score text. A score is a sum of at most 24
jumps' points (each jump takes a piece); with |chip value| <= 78 * 7**3 = 26,754 (the
polynomial set), a jump's denominator is at most that and its points at most 26,754**2
times the dama multiplier, so a score needs at most about 117 digits: what the engine
writes, its reader reads (issue 45, G11: 13 digits were seen after 35 plies)."""
_NUMBER = re.compile(rf"[0-9]{{1,{MAX_DIGITS}}}(?:\.[0-9]{{1,12}})?(?:/[0-9]{{1,{MAX_DIGITS}}})?")
"""A coefficient in score text: bounded ASCII digits (no exponents, so nothing huge)."""
_OP_ROWS = (("x", "/", "-", "+"), ("/", "x", "+", "-"), ("-", "+", "x", "/"), ("+", "-", "/", "x"))

# The first player's squares, in the order the values v[0..11] are placed, as (x, y).
PLACEMENT: tuple[tuple[int, int], ...] = (
    (1, 2), (3, 2), (5, 2), (7, 2),
    (0, 1), (2, 1), (4, 1), (6, 1),
    (1, 0), (3, 0), (5, 0), (7, 0),
)  # fmt: skip


@dataclass(frozen=True)
class Exact:
    """An exact number ``a + b*sqrt(2)`` with rational a and b."""

    a: Fraction = Fraction(0)
    b: Fraction = Fraction(0)

    @staticmethod
    def of(value: int | Fraction | Exact) -> Exact:
        return value if isinstance(value, Exact) else Exact(Fraction(value), Fraction(0))

    def __add__(self, o: Exact) -> Exact:
        o = Exact.of(o)
        return Exact(self.a + o.a, self.b + o.b)

    __radd__ = __add__

    def __neg__(self) -> Exact:
        return Exact(-self.a, -self.b)

    def __sub__(self, o: Exact) -> Exact:
        return self + (-Exact.of(o))

    def __mul__(self, o: Exact | int | Fraction) -> Exact:
        o = Exact.of(o)
        return Exact(self.a * o.a + 2 * self.b * o.b, self.a * o.b + self.b * o.a)

    __rmul__ = __mul__

    def __truediv__(self, o: Exact) -> Exact:
        o = Exact.of(o)
        norm = o.a * o.a - 2 * o.b * o.b  # never 0 for o != 0: sqrt 2 is irrational
        if norm == 0:
            raise ZeroDivisionError("division by zero")
        conj = Exact(o.a / norm, -o.b / norm)
        return self * conj

    def __repr__(self) -> str:
        return f"Exact({str(self)!r})"

    def __eq__(self, o: object) -> bool:
        if isinstance(o, (int, Fraction)):
            o = Exact.of(o)
        return isinstance(o, Exact) and (self.a, self.b) == (o.a, o.b)

    def __hash__(self) -> int:
        return hash((self.a, self.b))

    def is_zero(self) -> bool:
        return self.a == 0 and self.b == 0

    def __float__(self) -> float:
        return float(self.a) + float(self.b) * math.sqrt(2)

    def __str__(self) -> str:
        if self.b == 0:
            return str(self.a)
        mag = abs(self.b)
        coef = "" if mag == 1 else (str(mag) if mag.denominator == 1 else f"({mag})")
        sign = "-" if self.b < 0 else "+"
        if self.a == 0:
            return f"{'-' if self.b < 0 else ''}{coef}√2"
        return f"{self.a} {sign} {coef}√2"

    @staticmethod
    def parse(text: str) -> Exact:
        """Read what :meth:`__str__` writes: ``-48``, ``7/10``, ``10√2``, ``3 - (1/2)√2``."""
        t = text.replace(" ", "") if isinstance(text, str) else ""
        terms = re.findall(r"[+-]?(?:\([^)]*\)|[^+-])+", t)
        if not t or "".join(terms) != t or len(t) > 5 * MAX_DIGITS:
            raise ValueError(f"cannot read the number {text!r:.100}")
        for term in terms:
            coef = term.lstrip("+-").removesuffix("√2").strip("()").lstrip("+-")
            if coef and not _NUMBER.fullmatch(coef):
                raise ValueError(
                    f"cannot read the number {text!r:.100}: {coef!r:.40} is not a plain "
                    f"number (ASCII digits, at most {MAX_DIGITS} before the point, an optional "
                    f"/q)")
        a = b = Fraction(0)
        try:
            for term in terms:
                if term.endswith("√2"):
                    sign = -1 if term.startswith("-") else 1
                    coef = term[:-2].lstrip("+-").strip("()")
                    b += sign * (Fraction(coef) if coef else Fraction(1))
                else:
                    a += Fraction(term)
        except (ValueError, ZeroDivisionError) as exc:
            raise ValueError(f"cannot read the number {text!r}") from exc
        return Exact(a, b)


@dataclass(frozen=True)
class Chip:
    """A chip value: ``coef * x**x_exp * y**y_exp`` (x, y: where the chip stands or lands)."""

    label: str
    coef: Exact
    x_exp: int = 0
    y_exp: int = 0

    def value(self, x: int, y: int) -> Exact:
        return self.coef * Fraction(x**self.x_exp * y**self.y_exp)


def _integers(values: list[int], scale: int = 1) -> tuple[Chip, ...]:
    return tuple(Chip(str(Fraction(v, scale)), Exact.of(Fraction(v, scale))) for v in values)


def _radical(text: str) -> Chip:
    m = re.fullmatch(r"(-?)(\d*)√(\d+)", text)
    assert m, text
    k = int(m.group(2) or 1) * (-1 if m.group(1) else 1)
    inside = int(m.group(3))
    j = math.isqrt(inside // 2)
    assert 2 * j * j == inside, text
    return Chip(text, Exact(Fraction(0), Fraction(k * j)))


def _polynomial(text: str) -> Chip:
    m = re.fullmatch(r"(-?)(\d*)(x(²)?)?(y(²)?)?", text)
    assert m, text
    coef = int(m.group(2) or 1) * (-1 if m.group(1) else 1)
    xe = 0 if not m.group(3) else (2 if m.group(4) else 1)
    ye = 0 if not m.group(5) else (2 if m.group(6) else 1)
    return Chip(text, Exact.of(coef), xe, ye)


_COUNTING = [10, 7, 2, 5, 1, 4, 11, 8, 12, 9, 6, 3]
_WHOLE = [9, 6, 1, 4, 0, 3, 10, 7, 11, 8, 5, 2]
_INTEGER = [-9, 6, -1, 4, 0, -3, 10, -7, -11, 8, -5, 2]

CHIP_SETS: dict[str, tuple[Chip, ...]] = {
    "counting": _integers(_COUNTING),
    "whole": _integers(_WHOLE),
    "integer": _integers(_INTEGER),
    "fraction": _integers(_COUNTING, 10),
    "rational": _integers(_INTEGER, 10),
    "radical": tuple(_radical(t) for t in (
        "-9√2", "-√8", "4√18", "16√32", "-49√8", "-25√18", "36√32", "64√2",
        "-121√18", "-81√32", "100√2", "144√8")),
    "polynomial": tuple(_polynomial(t) for t in (
        "-3x²y", "-xy²", "6x", "10y", "-21xy²", "-15x", "28y", "36x²y",
        "-55x", "-45y", "66x²y", "78xy²")),
}  # fmt: skip
"""The values v[0..11] of each chip set, in placement order."""


def chip_set(name: str) -> tuple[Chip, ...]:
    if name not in CHIP_SETS:
        raise InvalidOptionError(
            f"unknown chip set {name!r}; expected one of: {', '.join(CHIP_SETS)}"
        )
    return CHIP_SETS[name]


def chips_of(name: str) -> tuple[Chip, ...]:
    """The 24 chips by id: 0..11 the first player's set, 12..23 the second player's."""
    chips = chip_set(name)
    return chips + chips


def xy(row: int, col: int) -> tuple[int, int]:
    """Damath (x, y) of a (row-from-top, column) square."""
    return col, SIZE - 1 - row


def operation_of(row: int, col: int) -> str:
    """The operation printed on a playable square."""
    return _OP_ROWS[row % 4][col // 2]


def square_table(square_rc: np.ndarray) -> np.ndarray:
    """int16 (S, 3): operation code, Damath x, Damath y of every square."""
    out = np.zeros((len(square_rc), 3), dtype=np.int16)
    for s, (r, c) in enumerate(square_rc):
        out[s] = (OPS.index(operation_of(int(r), int(c))), *xy(int(r), int(c)))
    return out


def chip_table(name: str) -> np.ndarray:
    """float64 (24, 3): coefficient, x exponent, y exponent of each chip id."""
    return np.array([(float(c.coef), c.x_exp, c.y_exp) for c in chips_of(name)],
                    dtype=np.float64)


def start_chips(square_rc: np.ndarray, rc_square: np.ndarray) -> np.ndarray:
    """int8 (S,) chip id on every square of the start position (-1 where none)."""
    chips = np.full(len(square_rc), -1, dtype=np.int8)
    for i, (x, y) in enumerate(PLACEMENT):
        r, c = SIZE - 1 - y, x
        chips[rc_square[r, c]] = i
        chips[rc_square[SIZE - 1 - r, SIZE - 1 - c]] = 12 + i  # the twin, turned 180 degrees
    return chips


def jump_score(op: str, taker: Exact, taken: Exact, multiplier: int) -> Exact:
    """Exact points of one jump: ``taker OP taken`` times the dama multiplier; x / 0 = 0."""
    if op == "+":
        r = taker + taken
    elif op == "-":
        r = taker - taken
    elif op == "x":
        r = taker * taken
    else:
        if Exact.of(taken).is_zero():
            return Exact()
        r = taker / taken
    return r * multiplier

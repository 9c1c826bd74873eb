"""A learned evaluation for the compiled alpha-beta: pattern tables over board regions
(the technique of the strong 10x10 engines), a piece-square table and a few whole-board
terms, all looked up and summed in compiled code at every leaf of the search.

The board is read from the player to move (the engine keeps it so: ``+1``/``+2`` the
mover's man/king, ``-1``/``-2`` the opponent's). It is cut into overlapping regions of
4 x 4 cells, each holding 8 playable squares (16 regions on 10 x 10, 9 on 8 x 8); a
region's men (empty, the mover's man, the opponent's man) form a base-3 number, the
index into that region's table of 3^8 = 6561 weights. Kings enter through the
piece-square table (a weight per piece kind per square: in Sci-Damath each square
carries its operation, so this table sees the operations), the king count and, where the
weights have them, the king-region tables: a region holding a king is also read in base 5
(empty, the mover's man, the opponent's man, the mover's king, the opponent's king), the
index into a second table of 5^8 = 390,625 weights a region, added to the men's weight.
Every square's state is then seen; a region without a king costs no second lookup (and a
position without kings none at all), so the openings and middle games are valued at the
same speed.
The whole-board terms are the men and kings differences, the men's advancement (as in the
handwritten evaluation), the mover's mobility, Sci-Damath's lead in the totals that decide
the game, and a constant (having the move). The whole-board terms carry what the tables
cannot: a pattern seen rarely in self-play keeps a weight near 0, so a position made of
rare patterns is valued by them, not by noise.

The value is the sum, in the search's units (about 100 for a man). The weights are fitted
by logistic regression of game results on quiet self-play positions
(:mod:`damii_training.patterns`); :class:`PatternWeights` holds them and reads and writes
their file (``.npz``, loaded without executing code).

:func:`position_features` is the one definition of the features: the compiled value
(:func:`pattern_value`) and the fitting both use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
from numba import njit

from damii_agents.io import write_atomic
from damii_env import compiled as C
from damii_env.errors import DamiiError
from damii_env.geometry import geometry
from damii_env.rules import Rules

REGION_CELLS = 4
"""Side of a region, in cells (rows and columns of the board)."""
REGION_SQUARES = REGION_CELLS * REGION_CELLS // 2
"""Playable squares in a region."""
PATTERNS = 3 ** REGION_SQUARES
"""Entries of one region's table."""
KING_PATTERNS = 5 ** REGION_SQUARES
"""Entries of one region's king table (every square's state: base 5)."""
PIECE_KINDS = 4
"""Rows of the piece-square table: the mover's man, king, the opponent's man, king."""

# the whole-board terms, by index
D_MEN = 0  # mover's men - opponent's men
D_KINGS = 1  # mover's kings - opponent's kings
D_MOBILITY = 2  # the mover's legal hops
D_LEAD = 3  # Sci-Damath: the mover's lead in the totals (0 elsewhere)
D_TEMPO = 4  # 1: having the move
D_ADVANCE = 5  # rows the mover's men have advanced - rows the opponent's have
N_DENSE = 6

FORMAT = 1
"""Version of the weights file (one set of tables)."""
FORMAT_TAPERED = 2
"""Version of a weights file with ending tables (blended by the game's phase)."""
FORMAT_KINGS = 3
"""Version of a weights file with king-region tables (and ending tables or not): the king
tables are stored as their non-zero entries (index, value)."""


class PatternWeightsError(DamiiError):
    """A pattern-weights file that cannot be used (missing, corrupt, another board)."""


def pattern_regions(size: int, orientation: str = "standard") -> np.ndarray:
    """(R, 8) squares of each region: 4 x 4 windows of cells at even offsets, squares in
    reading order within a window."""
    geo = geometry(size, orientation)
    regions = []
    for r0 in range(0, size - REGION_CELLS + 1, 2):
        for c0 in range(0, size - REGION_CELLS + 1, 2):
            squares = [int(geo.rc_square[r, c]) for r in range(r0, r0 + REGION_CELLS)
                       for c in range(c0, c0 + REGION_CELLS) if geo.rc_square[r, c] >= 0]
            assert len(squares) == REGION_SQUARES
            regions.append(squares)
    return np.array(regions, dtype=np.int64)


@njit(cache=True, inline="always")
def _rows(S):
    """(squares per row, index of the last row) of a board with S playable squares."""
    half = 1
    while 2 * half * half < S:
        half += 1
    return half, 2 * half - 1


@njit(cache=True, inline="always")
def _row_of_square(S):
    """``(half, last, magic)``: :func:`_rows` and the multiplier that gives a square's row
    as ``(s * magic) >> 32`` (s // half, exact for s < 2**16), as constants for the 10x10
    and 8x8 boards (computed, they cost a loop and a division at every leaf)."""
    if S == 50:
        return 5, 9, (1 << 32) // 5 + 1
    if S == 32:
        return 4, 7, (1 << 32) // 4 + 1
    half, last = _rows(S)
    return half, last, (1 << 32) // half + 1


@njit(cache=True, inline="always")
def _digit(piece):
    """A square's base-3 digit in a region: 0 empty or a king, 1 the mover's man, 2 the
    opponent's man."""
    if piece == 1:
        return 1
    if piece == -1:
        return 2
    return 0


@njit(cache=True, inline="always")
def _digit5(piece):
    """A square's base-5 digit in a king region: 0 empty, 1 the mover's man, 2 the
    opponent's man, 3 the mover's king, 4 the opponent's king."""
    if piece == 1:
        return 1
    if piece == -1:
        return 2
    if piece == 2:
        return 3
    if piece == -2:
        return 4
    return 0


@njit(cache=True, inline="always")
def _pst_row(piece):
    """Row of the piece-square table: 0 the mover's man, 1 king, 2 the opponent's man,
    3 king."""
    if piece == 1:
        return 0
    if piece == 2:
        return 1
    if piece == -1:
        return 2
    return 3


@njit(cache=True, inline="always")
def _region_index(board, c, regions, r):
    """The base-3 index of region r's men in row c."""
    idx = 0
    for k in range(regions.shape[1]):
        idx = idx * 3 + _digit(board[c, regions[r, k]])
    return idx


@njit(cache=True, inline="always")
def king_region_index(board, c, regions, r):
    """The base-5 index of region r of row c (every square's state, :func:`_digit5`),
    or -1 where the region holds no king (its king table is not read)."""
    idx = 0
    kings = False
    for k in range(regions.shape[1]):
        v = board[c, regions[r, k]]
        kings |= v == 2 or v == -2
        idx = idx * 5 + _digit5(v)
    return idx if kings else -1


@njit(cache=True, inline="always")
def material_terms(board, c, S):
    """(men difference, kings difference, advancement difference) of row c, for the
    player to move there."""
    half, last = _rows(S)
    men = 0
    kings = 0
    advance = 0
    for s in range(S):
        v = board[c, s]
        if v == 1:
            men += 1
            advance += last - s // half
        elif v == -1:
            men -= 1
            advance -= s // half
        elif v == 2:
            kings += 1
        elif v == -2:
            kings -= 1
    return men, kings, advance


@njit(cache=True)
def position_features(board, c, S, regions, pattern_index, occupied, dense, mobility, lead):
    """The features of row c of `board`: writes each region's pattern index into
    pattern_index (R,), ``kind * S + square`` of every piece into occupied (S,), padded
    with -1, and the whole-board terms into dense (N_DENSE,). `mobility` and `lead` are
    the mover's legal hops and totals lead (0 where the totals do not decide)."""
    for r in range(regions.shape[0]):
        pattern_index[r] = _region_index(board, c, regions, r)
    k = 0
    for s in range(S):
        v = board[c, s]
        if v != 0:
            occupied[k] = _pst_row(v) * S + s
            k += 1
    for j in range(k, S):
        occupied[j] = -1
    men, kings, advance = material_terms(board, c, S)
    dense[D_MEN] = men
    dense[D_KINGS] = kings
    dense[D_MOBILITY] = mobility
    dense[D_LEAD] = lead
    dense[D_TEMPO] = 1.0
    dense[D_ADVANCE] = advance


@njit(cache=True, inline="always")
def _dense_value(w_dense, men, kings, advance, mobility, lead):
    """The whole-board terms' part of a value."""
    return (w_dense[D_MEN] * men + w_dense[D_KINGS] * kings + w_dense[D_MOBILITY] * mobility
            + w_dense[D_LEAD] * lead + w_dense[D_TEMPO] + w_dense[D_ADVANCE] * advance)


@njit(cache=True, inline="always")
def pattern_value(board, c, S, regions, w_pattern, w_square, w_dense, w_square_end,
                  w_dense_end, phase_pieces, w_kings, mobility, lead):
    """The learned value of row c for the player to move there: the weights of the
    features :func:`position_features` writes (and, with king tables, `w_kings` of 0
    rows: none, the king regions' :func:`king_region_index`), summed without writing
    them out.

    With ending tables (`w_square_end` of 4 rows; 0 rows: none) the piece-square and
    whole-board part is blended by the game's phase, t = pieces on the board /
    `phase_pieces` (at most 1): t x the opening tables + (1 - t) x the ending ones."""
    value = 0.0
    with_kings = w_kings.shape[0] > 0
    for r in range(regions.shape[0]):
        value += w_pattern[r, _region_index(board, c, regions, r)]
        if with_kings:
            k = king_region_index(board, c, regions, r)
            if k >= 0:
                value += w_kings[r, k]
    tapered = w_square_end.shape[0] > 0
    opening = 0.0
    ending = 0.0
    pieces = 0
    for s in range(S):
        v = board[c, s]
        if v != 0:
            row = _pst_row(v)
            opening += w_square[row, s]
            if tapered:
                ending += w_square_end[row, s]
            pieces += 1
    men, kings, advance = material_terms(board, c, S)
    opening += _dense_value(w_dense, men, kings, advance, mobility, lead)
    if not tapered:
        return value + opening
    ending += _dense_value(w_dense_end, men, kings, advance, mobility, lead)
    t = min(1.0, pieces / phase_pieces)
    return value + t * opening + (1.0 - t) * ending


@njit(cache=True)
def region_bits(regions, layout):
    """(R, 4) the bit (in a ply stack's bit layout, ``P.layout``) of the first square of
    each of a region's four rows: a region's two squares on a row are neighbours, so
    they are that bit and the next."""
    out = np.empty((regions.shape[0], 4), dtype=np.int64)
    for r in range(regions.shape[0]):
        for k in range(4):
            out[r, k] = C.square_bit(layout, regions[r, 2 * k])
    return out


def base3_table() -> np.ndarray:
    """(256,) entry x: the base-3 number whose digit i (of 8, the first the most
    significant) is bit i of x: a region's men as a mask of its 8 squares in reading
    order give its index as ``base3[mover's] + 2 * base3[opponent's]``."""
    return np.array([sum(3 ** (REGION_SQUARES - 1 - i) for i in range(REGION_SQUARES)
                         if x >> i & 1) for x in range(256)], dtype=np.int64)


BASE3 = base3_table()
""":func:`base3_table` (a constant of the compiled code)."""


def base5_table() -> np.ndarray:
    """(256,) entry x: the base-5 number whose digit i (of 8, the first the most
    significant) is bit i of x: a region's index in its king table is
    ``base5[mover's men] + 2 * base5[opponent's men] + 3 * base5[mover's kings]
    + 4 * base5[opponent's kings]`` (:func:`_digit5`'s digits)."""
    return np.array([sum(5 ** (REGION_SQUARES - 1 - i) for i in range(REGION_SQUARES)
                         if x >> i & 1) for x in range(256)], dtype=np.int64)


BASE5 = base5_table()
""":func:`base5_table` (a constant of the compiled code)."""


@njit(cache=True, inline="always")
def _region_bytes(rbits, r, own, enemy):
    """Region r's eight squares in two masks, `own` and `enemy`, as two bytes (bit i the
    region's square i): its four bit pairs (`rbits[r]`, two squares a row) gathered."""
    own8 = 0
    enemy8 = 0
    for k in range(4):
        b = rbits[r, k]
        own8 |= ((own >> b) & 3) << (2 * k)
        enemy8 |= ((enemy >> b) & 3) << (2 * k)
    return own8, enemy8


@njit(cache=True, inline="always")
def pattern_value_bits(bits, c, layout, S, rbits, w_pattern, w_square, w_dense,
                       w_square_end, w_dense_end, phase_pieces, w_kings, mobility, lead):
    """:func:`pattern_value` of row c of a ply stack from its bit masks (``P.bits``, in
    the layout ``P.layout``; `rbits` from :func:`region_bits`): each region's index from
    two bits a row, the pieces one set bit at a time. The same terms summed in the same
    order: the same value. The kings' masks are read only when the weights have king
    tables and the row has a king."""
    men = bits[c, C.B_MEN]
    enemy_men = bits[c, C.B_ENEMY_MEN]
    kings = bits[c, C.B_KINGS]
    enemy_kings = bits[c, C.B_ENEMY_KINGS]
    with_kings = w_kings.shape[0] > 0 and (kings | enemy_kings) != 0
    value = 0.0
    for r in range(rbits.shape[0]):
        own8, enemy8 = _region_bytes(rbits, r, men, enemy_men)
        value += w_pattern[r, BASE3[own8] + 2 * BASE3[enemy8]]
        if with_kings:
            own_k8, enemy_k8 = _region_bytes(rbits, r, kings, enemy_kings)
            if own_k8 | enemy_k8:
                value += w_kings[r, BASE5[own8] + 2 * BASE5[enemy8] + 3 * BASE5[own_k8]
                                 + 4 * BASE5[enemy_k8]]
    return _pieces_value_bits(bits, c, layout, S, w_square, w_dense, w_square_end,
                              w_dense_end, phase_pieces, mobility, lead, value)


@njit(cache=True, inline="always")
def _pieces_value_bits(bits, c, layout, S, w_square, w_dense, w_square_end, w_dense_end,
                       phase_pieces, mobility, lead, value):
    """`value` (the regions' sum) plus the piece-square and whole-board terms of row c,
    from its bit masks, blended by the phase as :func:`pattern_value` does: the squares'
    weights summed in the order of the squares (the same float sum), each piece's row of
    the table from two of its bits (no branch on the piece's kind, which the processor
    cannot guess), the men's advancement as a sum of whole numbers."""
    men = bits[c, C.B_MEN]
    kings = bits[c, C.B_KINGS]
    enemy_men = bits[c, C.B_ENEMY_MEN]
    enemy_kings = bits[c, C.B_ENEMY_KINGS]
    kingly = kings | enemy_kings
    enemy = enemy_men | enemy_kings
    _half, last, magic = _row_of_square(S)
    tapered = w_square_end.shape[0] > 0
    opening = 0.0
    ending = 0.0
    x = men | kingly | enemy_men
    pieces = C.popcount(x)
    # indices unsigned (a piece's square is never -1): numba then adds no test for a
    # negative index to each lookup
    while x != 0:
        b = C.lowest_bit(x)
        x &= x - 1
        s = np.uint64(C.bit_square(layout, S, b))
        row = np.uint64(((kingly >> b) & 1) + 2 * ((enemy >> b) & 1))  # _pst_row's rows
        opening += w_square[row, s]
        if tapered:
            ending += w_square_end[row, s]
    advance = last * C.popcount(men)  # the rows as (s * magic) >> 32
    x = men
    while x != 0:
        b = C.lowest_bit(x)
        x &= x - 1
        advance -= (C.bit_square(layout, S, b) * magic) >> 32
    x = enemy_men
    while x != 0:
        b = C.lowest_bit(x)
        x &= x - 1
        advance -= (C.bit_square(layout, S, b) * magic) >> 32
    n_men = C.popcount(men) - C.popcount(enemy_men)
    n_kings = C.popcount(kings) - C.popcount(enemy_kings)
    opening += _dense_value(w_dense, n_men, n_kings, advance, mobility, lead)
    if not tapered:
        return value + opening
    ending += _dense_value(w_dense_end, n_men, n_kings, advance, mobility, lead)
    t = min(1.0, pieces / phase_pieces)
    return value + t * opening + (1.0 - t) * ending


@dataclass(frozen=True, eq=False)
class PatternWeights:
    """The fitted tables of one variant (values in the search's units)."""

    variant: str
    size: int
    orientation: str
    regions: np.ndarray
    """(R, 8) squares of each region (:func:`pattern_regions`); R = 0 for weights without
    region tables."""
    pattern: np.ndarray
    """(R, 6561) weight of each region's pattern."""
    square: np.ndarray
    """(4, S) weight of each piece kind on each square."""
    dense: np.ndarray
    """(N_DENSE,) weights of the whole-board terms."""
    square_end: np.ndarray | None = None
    """(4, S) the piece-square table of the ending, or None: one table for the whole game.
    With it the value blends the opening tables (`square`, `dense`) and the ending ones
    by the pieces on the board (:func:`pattern_value`)."""
    dense_end: np.ndarray | None = None
    """(N_DENSE,) the whole-board terms' weights of the ending (with `square_end`)."""
    phase_pieces: int = 0
    """Pieces on the board at the start: the phase is pieces / this (with `square_end`)."""
    kings: np.ndarray | None = None
    """(R, 390625) float32 weight of each region's state in base 5 (:func:`king_region_index`),
    read where the region holds a king and added to its men's weight; None: no king
    tables."""

    def __post_init__(self) -> None:
        if (self.square_end is None) != (self.dense_end is None) or (
                self.square_end is not None and self.phase_pieces <= 0):
            raise PatternWeightsError("ending tables need both square_end and dense_end "
                                      "and phase_pieces > 0")
        if self.kings is not None and self.kings.shape != (len(self.regions), KING_PATTERNS):
            raise PatternWeightsError(f"king tables must have shape ({len(self.regions)}, "
                                      f"{KING_PATTERNS}), got {self.kings.shape}")

    @property
    def tapered(self) -> bool:
        """Whether the value blends opening and ending tables by the game's phase."""
        return self.square_end is not None

    @property
    def has_kings(self) -> bool:
        """Whether regions holding a king are read in base 5 too (king tables)."""
        return self.kings is not None

    @classmethod
    def zeros(cls, variant: str, size: int, orientation: str, patterns: bool = True,
              phase_pieces: int = 0, kings: bool = False) -> PatternWeights:
        """Weights all 0; without `patterns`, no region tables at all (the value is the
        piece-square table and the whole-board terms, and costs no region lookups); with
        `phase_pieces` > 0 ending tables too (the value blended by the game's phase); with
        `kings` (and `patterns`) king-region tables."""
        regions = pattern_regions(size, orientation)
        if not patterns:
            regions = regions[:0]
        S = size * size // 2
        ends = ((np.zeros((PIECE_KINDS, S)), np.zeros(N_DENSE)) if phase_pieces > 0
                else (None, None))
        king_tables = (np.zeros((len(regions), KING_PATTERNS), dtype=np.float32)
                       if kings and len(regions) else None)
        return cls(variant, size, orientation, regions,
                   np.zeros((len(regions), PATTERNS)), np.zeros((PIECE_KINDS, S)),
                   np.zeros(N_DENSE), *ends, phase_pieces, king_tables)

    @property
    def arrays(self) -> tuple:
        """(regions, pattern, square, dense, square_end, dense_end, phase_pieces, kings) as
        the compiled search takes them (without ending tables: 0-row tables, phase 1;
        without king tables: a 0-row table; the king tables float32)."""
        kings = (np.zeros((0, KING_PATTERNS), dtype=np.float32) if self.kings is None
                 else np.ascontiguousarray(self.kings, dtype=np.float32))
        if self.square_end is None:
            S = self.square.shape[1]
            return (self.regions, self.pattern, self.square, self.dense,
                    np.zeros((0, S)), np.zeros(0), 1.0, kings)
        return (self.regions, self.pattern, self.square, self.dense, self.square_end,
                self.dense_end, float(self.phase_pieces), kings)

    def save(self, path: str | Path) -> Path:
        """Write the weights to `path` (``.npz``) atomically."""
        ends = {}
        fmt = FORMAT
        if self.tapered:  # format 2; a file without ending tables stays format 1
            ends = {"square_end": self.square_end.astype(np.float32),
                    "dense_end": self.dense_end.astype(np.float64),
                    "phase_pieces": np.array(self.phase_pieces)}
            fmt = FORMAT_TAPERED
        if self.kings is not None:  # format 3: the king tables' non-zero entries
            flat = np.asarray(self.kings, dtype=np.float32).ravel()
            at = np.flatnonzero(flat)
            ends.update(king_index=at.astype(np.int64), king_value=flat[at])
            fmt = FORMAT_KINGS
        return write_atomic(path, lambda f: np.savez_compressed(
            f, format=np.array(fmt),
            variant=np.array(self.variant),
            size=np.array(self.size), orientation=np.array(self.orientation),
            regions=self.regions, pattern=self.pattern.astype(np.float32),
            square=self.square.astype(np.float32),
            dense=self.dense.astype(np.float64), **ends))

    @classmethod
    def load(cls, path: str | Path) -> PatternWeights:
        """Read a weights file written by :meth:`save`; a clear error if it is not one."""
        path = Path(path)
        if not path.is_file():
            raise PatternWeightsError(f"pattern weights file {path.name!r} does not exist")
        try:
            with np.load(path, allow_pickle=False) as z:
                fmt = int(z["format"])
                variant, size = str(z["variant"]), int(z["size"])
                orientation = str(z["orientation"])
                regions, pattern = z["regions"].astype(np.int64), z["pattern"]
                square, dense = z["square"], z["dense"]
                square_end = dense_end = None
                phase_pieces = 0
                if fmt in (FORMAT_TAPERED, FORMAT_KINGS) and "square_end" in z:
                    square_end, dense_end = z["square_end"], z["dense_end"]
                    phase_pieces = int(z["phase_pieces"])
                king_entries = None
                if fmt == FORMAT_KINGS:
                    king_entries = (z["king_index"].astype(np.int64),
                                    z["king_value"].astype(np.float32))
        except (OSError, ValueError, KeyError) as exc:
            raise PatternWeightsError(f"{path.name!r} is not a pattern weights file "
                                      f"({exc})") from None
        if fmt not in (FORMAT, FORMAT_TAPERED, FORMAT_KINGS):
            raise PatternWeightsError(f"{path.name!r} has format {fmt}, expected one of "
                                      f"{FORMAT}, {FORMAT_TAPERED}, {FORMAT_KINGS}")
        expected = pattern_regions(size, orientation)
        if len(regions) == 0:  # a file without region tables
            expected = expected[:0]
        S = size * size // 2
        if (regions.shape != expected.shape or not np.array_equal(regions, expected)
                or pattern.shape != (len(expected), PATTERNS)
                or square.shape != (PIECE_KINDS, S) or dense.shape != (N_DENSE,)
                or (square_end is not None and (square_end.shape != (PIECE_KINDS, S)
                                                or dense_end.shape != (N_DENSE,)))):
            raise PatternWeightsError(f"{path.name!r}: tables of the wrong shape for a "
                                      f"{size}x{size} board")
        arrays = [pattern, square, dense]
        if square_end is not None:
            if not 0 < phase_pieces <= S:
                raise PatternWeightsError(f"{path.name!r}: phase_pieces {phase_pieces} is "
                                          f"not in 1..{S}")
            arrays += [square_end, dense_end]
            square_end = square_end.astype(np.float64)
            dense_end = dense_end.astype(np.float64)
        kings = None
        if king_entries is not None:
            at, values = king_entries
            n = len(expected) * KING_PATTERNS
            if len(expected) == 0 or at.shape != values.shape or at.ndim != 1 or (
                    len(at) and (at.min() < 0 or at.max() >= n)):
                raise PatternWeightsError(f"{path.name!r}: king tables that do not fit "
                                          f"{len(expected)} regions of {KING_PATTERNS} "
                                          f"entries")
            arrays.append(values)
            kings = np.zeros(n, dtype=np.float32)
            kings[at] = values
            kings = kings.reshape(len(expected), KING_PATTERNS)
        if not all(np.isfinite(a).all() for a in arrays):
            raise PatternWeightsError(f"{path.name!r} holds weights that are not finite")
        return cls(variant, size, orientation, expected, pattern.astype(np.float64),
                   square.astype(np.float64), dense.astype(np.float64), square_end,
                   dense_end, phase_pieces, kings)


EVALUATIONS = ("handwritten", "learned")
"""The evaluations the alpha-beta can use: the five handwritten terms, or the learned tables
shipped for the variant (:func:`learned_weights`); a path to a ``.npz`` weights file (a
pattern-training run's ``weights.npz``) is a third choice."""

LEARNED_FILE = "{variant}_patterns.npz"
"""The shipped learned evaluation of a variant, in the package's ``weights/`` folder
(``damii train configs/<variant>_patterns.yaml`` makes it; docs/SEARCH.md)."""


def learned_weights(rules: Rules, path: str | Path | None = None) -> PatternWeights:
    """The learned evaluation in the weights file at `path`, or the one shipped for the
    rules' variant; a clear error when there is none, or when its board differs from the
    rules' (another size or orientation). A file is read once a process (again only when
    it changes)."""
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise PatternWeightsError(f"no weights file {str(path)!r} (a pattern-training "
                                      "run writes runs/<name>/weights.npz)")
    else:
        name = LEARNED_FILE.format(variant=rules.name)
        path = Path(str(resources.files("damii_agents") / "weights" / name))
        if not path.is_file():
            raise PatternWeightsError(f"no learned evaluation is shipped for "
                                      f"{rules.name!r} (weights/{name})")
    stat = path.stat()
    weights = _load_once(str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if weights.variant != rules.name or (weights.size, weights.orientation) != (
            rules.board_size, rules.orientation):
        raise PatternWeightsError(
            f"the learned evaluation in {path.name} is for {weights.variant} "
            f"({weights.size}x{weights.size} {weights.orientation} board); these rules are "
            f"{rules.name} ({rules.board_size}x{rules.board_size} {rules.orientation})")
    return weights


@lru_cache(maxsize=16)
def _load_once(path: str, mtime_ns: int, size: int) -> PatternWeights:
    """:meth:`PatternWeights.load`, once for each version of a file (its time and size
    are part of the key)."""
    return PatternWeights.load(path)

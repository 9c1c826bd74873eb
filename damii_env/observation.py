"""Observation planes, shared by the PettingZoo, Gymnasium and vector environments.

:func:`observe` turns a batch of engine states into float32 planes ``(B, C, N, N)``
seen by one player (by default the player to move). The board is drawn in that
player's orientation: their own men always start at the bottom and move up, which
is the engine's own view of the board (turned 180 degrees for Black). Square ``s`` of
that view is drawn at ``geometry.square_rc[s]``; the turn maps dark squares onto dark
squares, so the picture is a legal board of the variant's orientation.

Planes (channel index: content) for Damii, International and Triestine:

==  ===================  ==========================================================
 0  ``own_men``          1 on each dark square holding one of the observer's men
 1  ``own_kings``        1 on each dark square holding one of the observer's kings
 2  ``opponent_men``     1 on each dark square holding an opponent man
 3  ``opponent_kings``   1 on each dark square holding an opponent king
 4  ``continuing``       1 on the square of the piece that must go on capturing
                         (mid multi-capture), else all 0
 5  ``pending_capture``  1 on each piece captured this turn and not yet lifted
                         (end-of-sequence removal; always 0 for Triestine)
 6  ``no_progress``      constant: king-only plies without capture so far, divided
                         by the plies that make the draw (0 when the rule is off)
 7  ``colour``           constant: 0 when the observer is White (``player_0``),
                         1 when Black (``player_1``)
==  ===================  ==========================================================

Square planes mark dark squares only (light squares stay 0); the constant planes
fill every cell. Planes are named data (:class:`Plane`), chosen per rule set by
:func:`planes_for`: the base planes, then a rule set's own from :data:`EXTRA_PLANES`
(keyed by its ``scoring``). Sci-Damath adds 7 planes (channels 8-14): own chip
values, opponent chip values (each where the chip stands, damas doubled, scaled to
[-1, 1]), one-hots of the four operations (+, -, x, /), and the score difference
(constant, scaled and clipped to [-1, 1]). The base planes and
Sci-Damath's are filled by one compiled kernel (:func:`observe_row`), so observing is
cheap for one game (AEC) and for thousands (vector environment).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cache

import numpy as np
from numba import njit

from damii_env import _kernels as K
from damii_env.engine import Engine, State, _int_array
from damii_env.geometry import geometry
from damii_env.rules import Rules

OBS_DTYPE = np.float32


@dataclass(frozen=True)
class Plane:
    """One observation channel: its name and its documentation (the compiled kernel
    :func:`observe_row` fills every plane)."""

    name: str
    doc: str


BASE_PLANES: tuple[Plane, ...] = (
    Plane("own_men", "the observer's men"),
    Plane("own_kings", "the observer's kings"),
    Plane("opponent_men", "the opponent's men"),
    Plane("opponent_kings", "the opponent's kings"),
    Plane("continuing", "the piece that must continue capturing"),
    Plane("pending_capture", "pieces captured this turn, not yet removed"),
    Plane("no_progress", "no-progress counter / its draw limit (constant)"),
    Plane("colour", "observer's colour, 0 White 1 Black (constant)"),
)
"""The planes every variant has, in channel order (filled by :func:`observe_row`)."""

@cache
def _chip_scale(chip_values: bytes, n: int) -> float:
    vals = np.frombuffer(chip_values).reshape(-1, 3)
    return float(np.max(np.abs(vals[:, 0]) * n ** vals[:, 1] * n ** vals[:, 2])) or 1.0


def chip_scale(engine: Engine) -> float:
    """Largest |value| a chip of the set can take on the board (the scale of the values
    and scores in observations and shaped rewards)."""
    return _chip_scale(engine.chip_values.tobytes(), engine.rules.board_size - 1)


DAMATH_PLANES: tuple[Plane, ...] = (
    Plane("own_chip_values", "value of each of the observer's chips where it stands, damas "
          "doubled, divided by twice the largest value a chip of the set can take"),
    Plane("opponent_chip_values", "the same for the opponent's chips"),
    Plane("op_add", "1 on the squares marked +"),
    Plane("op_sub", "1 on the squares marked -"),
    Plane("op_mul", "1 on the squares marked x"),
    Plane("op_div", "1 on the squares marked /"),
    Plane("score_difference", "constant: observer's score minus the opponent's, divided by "
          "8 times the largest chip value, clipped to [-1, 1]"),
)
"""Sci-Damath's planes, filled by the compiled kernel with the base planes."""

EXTRA_PLANES: dict[str, tuple[Plane, ...]] = {"damath": DAMATH_PLANES}
"""Further planes by the rule set's ``scoring`` (after the base planes)."""


def observation_low(rules: Rules) -> float:
    """Lowest value an observation holds: -1 where chip values or scores can be negative."""
    return -1.0 if rules.scoring in EXTRA_PLANES else 0.0


@njit(cache=True, inline="always")
def observe_row(b, colour, board, pending, meta, chip, scores, cells, limit, scoring,
                sqinfo, chip_table, value_scale, score_scale, o):  # pragma: no cover - numba
    """Write the compiled planes of game `b` seen by `colour` into ``o`` (C, N*N).

    Every cell of a dark square and every cell of a constant plane is written, so ``o``
    needs zeroing only once (its light squares are never touched): buffers are reused."""
    S = board.shape[1]
    flip = colour != meta[b, K.M_TURN]
    cont = meta[b, K.M_CONT]
    if cont >= 0 and flip:
        cont = S - 1 - cont
    for s in range(S):
        src = S - 1 - s if flip else s
        v = -board[b, src] if flip else board[b, src]
        cell = cells[s]
        o[0, cell] = np.float32(v == 1)
        o[1, cell] = np.float32(v == 2)
        o[2, cell] = np.float32(v == -1)
        o[3, cell] = np.float32(v == -2)
        o[4, cell] = np.float32(s == cont)
        o[5, cell] = np.float32(pending[b, src] != 0)
        if scoring:
            own = 0.0
            other = 0.0
            c = chip[b, src]
            if v != 0 and c >= 0:
                absq = s if colour == 0 else S - 1 - s
                value = chip_table[c, absq]
                value *= (2.0 if v == 2 or v == -2 else 1.0) / value_scale
                if v > 0:
                    own = value
                else:
                    other = value
            o[8, cell] = own
            o[9, cell] = other
            op = sqinfo[s, K.SQ_OP]  # the operation grid is the same from both sides
            for k in range(4):
                o[10 + k, cell] = np.float32(op == k)
    progress = 0.0
    if limit > 0:
        progress = min(meta[b, K.M_NO_PROGRESS] / limit, 1.0)
    o[6, :] = progress
    o[7, :] = colour
    if scoring:
        diff = (scores[b, colour] - scores[b, 1 - colour]) / score_scale
        o[14, :] = min(max(diff, -1.0), 1.0)


@njit(cache=True, _nrt=False)
def _observe_serial(rows, board, pending, meta, chip, scores, colours, cells, limit, scoring,
                    sqinfo, chip_table, value_scale, score_scale, out):  # pragma: no cover
    """Game rows[i] seen by colours[i] into out[i]."""
    for i in range(rows.shape[0]):
        observe_row(rows[i], colours[i], board, pending, meta, chip, scores, cells, limit,
                    scoring, sqinfo, chip_table, value_scale, score_scale, out[i])


@njit(cache=True)
def _chip_square_values(sqinfo, chipval):  # pragma: no cover - numba
    """(chips, S): value of each chip standing on each square (absolute numbering), by
    the engine's own rule (:func:`damii_env._kernels.chip_value`)."""
    out = np.zeros((chipval.shape[0], sqinfo.shape[0]))
    for c in range(chipval.shape[0]):
        for q in range(sqinfo.shape[0]):
            out[c, q] = K.chip_value(chipval, c, sqinfo[q, K.SQ_X], sqinfo[q, K.SQ_Y])
    return out


_KERNEL_ARGUMENTS: weakref.WeakKeyDictionary[Engine, tuple] = weakref.WeakKeyDictionary()


def kernel_arguments(engine: Engine) -> tuple:
    """The per-engine constants :func:`observe_row` takes after the state's arrays:
    cells, no-progress limit, scoring, square table, each chip's value on each square
    and the two scales (made once per engine)."""
    args = _KERNEL_ARGUMENTS.get(engine)
    if args is None:
        rules = engine.rules
        scale = chip_scale(engine) if engine.scoring else 1.0
        table = _chip_square_values(engine.square_info, engine.chip_values)
        table.setflags(write=False)
        args = (square_cells(rules.board_size, rules.orientation),
                int(engine.params[K.P_NO_PROGRESS]), bool(engine.scoring),
                engine.square_info, table, 2.0 * scale, 8.0 * scale)
        _KERNEL_ARGUMENTS[engine] = args
    return args


def fill_compiled(engine: Engine, state: State, colours: np.ndarray, flat: np.ndarray,
                  rows: np.ndarray) -> None:
    """Fill the compiled planes of the games at `rows` (int64), seen by `colours` (one per
    row), into ``flat`` (len(rows), C, N*N), whose light cells are zero."""
    args = (rows, state.board, state.pending, state.meta, state.chip, state.scores, colours,
            *kernel_arguments(engine), flat)
    _observe_serial(*args)  # memory-bound: threads gain little, and lose much under load


def planes_for(rules: Rules) -> tuple[Plane, ...]:
    """The observation planes of a rule set, in channel order."""
    return BASE_PLANES + EXTRA_PLANES.get(rules.scoring, ())


def plane_names(rules: Rules) -> tuple[str, ...]:
    """Channel names of a rule set's observation."""
    return tuple(p.name for p in planes_for(rules))


def observation_shape(rules: Rules) -> tuple[int, int, int]:
    """``(C, N, N)`` of a rule set's observation."""
    n = rules.board_size
    return (len(planes_for(rules)), n, n)


@cache
def square_cells(size: int, orientation: str) -> np.ndarray:
    """(S,) flat cell ``row * N + col`` of each square in the observation planes, for the
    observer's own view (square s of the mover's view: the square of action encoding)."""
    rc = geometry(size, orientation).square_rc.astype(np.int64)
    cells = rc[:, 0] * size + rc[:, 1]
    cells.setflags(write=False)
    return cells


def observe(engine: Engine, state: State, colour: np.ndarray | int | None = None,
            out: np.ndarray | None = None, rows: np.ndarray | None = None) -> np.ndarray:
    """Observation planes (B, C, N, N) float32 of every game, seen by `colour`.

    `colour` is 0 (White) or 1 (Black), per game or for all; ``None`` means the
    player to move in each game. `out`, if given, is filled and returned. `rows`, if
    given, observes only the games at those rows, in that order (B = len(rows)): the
    planes of ``observe(engine, state.take(rows), colour, out)`` without the copy of
    the games (a per-game `colour` then gives the observer of each of them).
    """
    planes = planes_for(engine.rules)
    rows = (np.arange(state.batch_size) if rows is None
            else _int_array("rows", rows, 1, 0, state.batch_size - 1).astype(np.int64))
    B, n = len(rows), engine.rules.board_size
    shape = (B, len(planes), n, n)
    if out is None:
        out = np.zeros(shape, dtype=OBS_DTYPE)
    else:
        if out.shape != shape or out.dtype != OBS_DTYPE or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous float32 array of shape {shape}")
        out.fill(0)
    flat = out.reshape(B, len(planes), n * n)
    colours = np.empty(B, dtype=np.int32)
    colours[:] = state.meta[rows, K.M_TURN] if colour is None else colour
    fill_compiled(engine, state, colours, flat, rows)
    return out

"""Board geometry, computed once per (board size, orientation) into lookup tables.

Conventions (see ``docs/RULES.md``):

* rows ``r`` from the top as White sees the board, columns ``c`` from the left;
* playable squares are numbered ``0..S-1`` internally in reading order, and
  ``1..S`` in text (PDN square numbers);
* directions: 0 = up-left, 1 = up-right, 2 = down-left, 3 = down-right, where
  "up" is towards row 0 (White's forward direction);
* an action is ``(square * 4 + direction) * (N - 1) + (distance - 1)``.

The engine keeps every board from the point of view of the player to move: for
Black the board is turned 180 degrees, which maps square ``s`` to ``S-1-s`` and
direction ``d`` to ``3-d``. Both orientations are closed under that turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

DIRECTIONS: tuple[tuple[int, int], ...] = ((-1, -1), (-1, 1), (1, -1), (1, 1))
"""(row step, column step) of directions 0..3, in White's view."""
DIRECTION_NAMES: tuple[str, ...] = ("up-left", "up-right", "down-left", "down-right")


@dataclass(frozen=True, eq=False)
class Geometry:
    """Lookup tables of one board size and orientation."""

    size: int
    orientation: str
    n_squares: int
    square_rc: np.ndarray
    """(S, 2) row and column of each square."""
    rc_square: np.ndarray
    """(N, N) square index of each (row, column), -1 on light squares."""
    ray: np.ndarray
    """(S, 4, N-1) square reached at distance k+1 in direction d, or -1 off the board."""

    @property
    def n_actions(self) -> int:
        return self.n_squares * 4 * (self.size - 1)

    def encode(self, square: int, direction: int, distance: int) -> int:
        """Action index of a hop (square and direction in the mover's view)."""
        return (square * 4 + direction) * (self.size - 1) + distance - 1

    def decode(self, action: int) -> tuple[int, int, int]:
        """(square, direction, distance) of an action index."""
        n1 = self.size - 1
        return action // (4 * n1), (action // n1) % 4, action % n1 + 1

    def is_dark(self, row: int, col: int) -> bool:
        parity = 1 if self.orientation == "standard" else 0
        return (row + col) % 2 == parity


@cache
def geometry(size: int, orientation: str) -> Geometry:
    """The (cached) tables for a board size and orientation."""
    parity = 1 if orientation == "standard" else 0
    rc_square = np.full((size, size), -1, dtype=np.int16)
    squares = []
    for r in range(size):
        for c in range(size):
            if (r + c) % 2 == parity:
                rc_square[r, c] = len(squares)
                squares.append((r, c))
    square_rc = np.array(squares, dtype=np.int16)
    n = len(squares)
    ray = np.full((n, 4, size - 1), -1, dtype=np.int16)
    for s, (r, c) in enumerate(squares):
        for d, (dr, dc) in enumerate(DIRECTIONS):
            for k in range(1, size):
                rr, cc = r + dr * k, c + dc * k
                if not (0 <= rr < size and 0 <= cc < size):
                    break
                ray[s, d, k - 1] = rc_square[rr, cc]
    for arr in (square_rc, rc_square, ray):
        arr.setflags(write=False)
    return Geometry(size, orientation, n, square_rc, rc_square, ray)

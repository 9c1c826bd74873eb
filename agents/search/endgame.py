"""Endgame databases: every position of up to N pieces solved from the project's own rules.

A database holds, for each position of at most N pieces (seen from the player to move, as
the engine's boards are), its value under the rules the project plays: won, lost or drawn
for the player to move, and the **distance** in plies to the next *zeroing* event on the
optimal line (the move that resets the draw count in force, or the end of the game).

The draw rules, modelled exactly (docs/ENDGAME.md):

- *Repetition* draws: a side that can force a win never needs to repeat a position, so
  "no forced result" is a draw, as in any retrograde analysis.
- *No progress* (``no_progress_moves``, 25 moves by each side in Damii, International and
  Triestine): a stretch of 2 x 25 plies of king moves without a capture draws. Its count
  is reset by a capture or any man move: those are the zeroing moves.
- *FMJD endgame draws* (International, ``endgame_three_moves`` 16, ``endgame_two_moves``
  5): a lone king against three pieces (a king among them) is drawn after 32 plies,
  against two pieces or fewer (a king among them) after 10; the count is reset only by a
  capture or a promotion (a man's ordinary move does not reset it): in those materials
  only captures and promotions are zeroing.

A position's stored value is its value when the count in force is 0 (as when the
material has just arisen: every capture and promotion resets both counts). With a count
of ``c`` plies already played and a limit of ``L`` plies, the stored result stands if its
distance is at most ``L - c``, else the position is a draw (:func:`value_at_count`). That
is the distance-to-zeroing scheme of chess's 50-move-rule tablebases: a win needing more
plies without progress than the count allows is a draw, and the tables know it.

Turn limits (truncation) are not modelled. Sci-Damath is refused: its games are decided
by the score totals, so a position's value depends on the points scored before it, not
on the pieces alone.

The seam for a search (docs/ENDGAME.md, "Probing from the search"):

- :func:`probe` (Python): ``probe(game) -> (value, distance)`` or None, from a
  :class:`~damii_env.game.Game` (its draw counts included) or a FEN and a variant.
- :func:`probe_bits` (compiled, numba): the same from a ply stack row's four bit masks
  and its two draw counts, for the compiled alpha-beta search.

Tables are built by :func:`build` (``damii endgame make``) and kept in one folder per
rule set and N: ``values.npy`` (one int8 a position, memory-mapped when read) and
``meta.json`` (the signatures, their offsets and draw limits), each written atomically,
``meta.json`` last.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from damii_agents.io import write_atomic
from damii_env import compiled as C
from damii_env.engine import Engine
from damii_env.errors import InvalidArgumentError, InvalidOptionError
from damii_env.game import Game
from damii_env.rules import Rules, make_rules

FORMAT = 1
"""Version of the on-disk format (``meta.json``'s ``format``)."""
MAX_PIECES = 6
"""The most pieces a database may be asked for (N = 4 already takes hours here)."""
MISSING = -32768
"""What the compiled probes return for a position the database does not hold."""
ENV_DIR = "DAMII_ENDGAME_DIR"
"""Environment variable naming the folder of the databases (default
``~/.cache/damii/endgame``)."""

WIN, DRAW, LOSS = 1, 0, -1
"""The values :func:`probe` gives, for the player to move."""


# --- the rule set's draw limits ---------------------------------------------------------------
@dataclass(frozen=True)
class Material:
    """A material signature in the mover's view: own men, own kings, enemy men and kings."""

    men: int
    kings: int
    enemy_men: int
    enemy_kings: int

    def swapped(self) -> Material:
        """The same pieces seen by the other player (after a move that keeps them)."""
        return Material(self.enemy_men, self.enemy_kings, self.men, self.kings)

    @property
    def pieces(self) -> int:
        return self.men + self.kings + self.enemy_men + self.enemy_kings

    @property
    def total_men(self) -> int:
        return self.men + self.enemy_men

    def as_tuple(self) -> tuple[int, int, int, int]:
        return (self.men, self.kings, self.enemy_men, self.enemy_kings)


def draw_limit(rules: Rules, material: Material) -> tuple[int, bool]:
    """The draw count that governs `material` under `rules`: ``(plies, men_zero)``, the
    plies without a zeroing move after which the game is drawn (0: no limit) and whether a
    man's move is zeroing (it resets the no-progress count, not the FMJD endgame count).

    The FMJD endgame draws (a lone king against three pieces, or two or fewer, a king among
    them) are stated as in docs/RULES.md; a test checks them against the engine's play."""
    no_progress = 2 * rules.no_progress_moves
    own, enemy = material.men + material.kings, material.enemy_men + material.enemy_kings
    endgame = 0
    for lone, lone_king, other, other_kings in (
            (own, material.kings, enemy, material.enemy_kings),
            (enemy, material.enemy_kings, own, material.kings)):
        if lone == 1 and lone_king == 1 and other_kings > 0:
            if other == 3:
                endgame = 2 * rules.endgame_three_moves
            elif other <= 2:
                endgame = 2 * rules.endgame_two_moves
            break
    if endgame > 0:
        if 0 < no_progress < endgame:
            raise InvalidOptionError(
                f"endgame databases need the FMJD endgame draw ({endgame} plies) no longer "
                f"than the no-progress draw ({no_progress} plies) where both apply; "
                f"got {rules.endgame_three_moves}/{rules.endgame_two_moves} moves against "
                f"no_progress_moves={rules.no_progress_moves}")
        return endgame, False
    return no_progress, True


def value_at_count(code: int, limit: int, count: int) -> tuple[int, int]:
    """``(value, distance)`` of a stored code for the player to move, when `count` plies
    of the draw count governing the material (limit `limit`, 0: none) are already played:
    a result whose distance exceeds ``limit - count`` is a draw (0, 0). A lost position
    without a legal move (distance 0) is lost whatever the count."""
    if code == 0:
        return DRAW, 0
    if code > 0:
        value, distance = WIN, int(code)
    else:
        value, distance = LOSS, int(-code - 1)
    if limit > 0 and distance > 0 and distance > limit - count:
        return DRAW, 0
    return value, distance


# --- position indexing -----------------------------------------------------------------------
# A position of material (a, b, c, e) is indexed by the colex ranks of its four groups of
# squares: own men on the squares past the mover's crowning row (squares half..S-1 of the
# mover's view), own kings anywhere, enemy men before the mover's first row (0..S-half-1),
# enemy kings anywhere. Index = ((r_men * K + r_kings) * EM + r_enemy_men) * EK +
# r_enemy_kings. Index values whose groups overlap on a square are no position; they are
# stored as draws and never probed.


def _binomials(n: int) -> np.ndarray:
    table = np.zeros((n + 2, MAX_PIECES + 2), dtype=np.int64)
    for i in range(n + 2):
        for k in range(MAX_PIECES + 2):
            table[i, k] = comb(i, k)
    return table


@njit(cache=True)
def _rank_group(board, S, start, stop, piece, binom):
    """Colex rank of the squares in [start, stop) holding `piece`, and their count."""
    rank = 0
    k = 0
    for s in range(start, stop):
        if board[s] == piece:
            k += 1
            rank += binom[s - start, k]
    return rank, k


@njit(cache=True)
def _board_code(board, S, half, sig_lookup, sig_dims, offsets, values, binom, max_pieces):
    """The stored code of a board in the mover's view (1 man, 2 king, negative: enemy),
    MISSING if the database does not hold its material. Returns (code, signature id,
    index)."""
    n = 0
    for s in range(S):
        if board[s] != 0:
            n += 1
    if n > max_pieces:
        return MISSING, -1, -1
    r_men, a = _rank_group(board, S, half, S, 1, binom)
    r_kings, b = _rank_group(board, S, 0, S, 2, binom)
    r_emen, c = _rank_group(board, S, 0, S - half, -1, binom)
    r_ekings, e = _rank_group(board, S, 0, S, -2, binom)
    if a + b + c + e != n or a + b == 0 or c + e == 0:
        return MISSING, -1, -1  # a man on its crowning row, or a side without pieces
    sig = sig_lookup[a, b, c, e]
    if sig < 0:
        return MISSING, -1, -1
    index = ((r_men * sig_dims[sig, 1] + r_kings) * sig_dims[sig, 2] + r_emen) \
        * sig_dims[sig, 3] + r_ekings
    return values[offsets[sig] + index], sig, index


@njit(cache=True)
def _unrank_group(rank, k, binom, start, piece, board):
    """Place k pieces on the squares of colex rank `rank` in [start, ...); False if one of
    those squares is taken already."""
    ok = True
    for i in range(k, 0, -1):
        p = i - 1
        while binom[p + 1, i] <= rank:
            p += 1
        rank -= binom[p, i]
        if board[start + p] != 0:
            ok = False
        board[start + p] = piece
    return ok


@njit(cache=True)
def _decode(sig_counts, sig_dims, index, S, half, binom, board):
    """Fill `board` with position `index` of a material; False if it is no position."""
    for s in range(S):
        board[s] = 0
    r_ekings = index % sig_dims[3]
    index //= sig_dims[3]
    r_emen = index % sig_dims[2]
    index //= sig_dims[2]
    r_kings = index % sig_dims[1]
    r_men = index // sig_dims[1]
    ok = _unrank_group(r_men, sig_counts[0], binom, half, 1, board)
    ok &= _unrank_group(r_kings, sig_counts[1], binom, 0, 2, board)
    ok &= _unrank_group(r_emen, sig_counts[2], binom, 0, -1, board)
    ok &= _unrank_group(r_ekings, sig_counts[3], binom, 0, -2, board)
    return ok


@njit(cache=True)
def _advance(board, S, half):
    """How far the men of both sides have come (rows), the same in both players' views:
    a man's move adds one, no other move changes it without changing the material."""
    total = 0
    for s in range(S):
        row = s // half
        if board[s] == 1:
            total += 2 * half - 1 - row
        elif board[s] == -1:
            total += row
    return total


@njit(cache=True, inline="always")
def _rank_bits(x, layout, S, start, binom):
    """Colex rank (squares from `start`) of the squares of the bit mask x, and their count."""
    rank = 0
    k = 0
    while x != 0:
        bit = C.lowest_bit(x)
        x &= x - 1
        k += 1
        rank += binom[C.bit_square(layout, S, bit) - start, k]
    return rank, k


@njit(cache=True, inline="always")
def _entry_bits(sig_lookup, sig_dims, binom, layout, S, half, men, kings, enemy_men,
                enemy_kings):
    """(material number, index) of a position given as the four bit masks of a ply stack
    row; (-1, -1) where a side has no piece or the database has no such material."""
    r_men, a = _rank_bits(men, layout, S, half, binom)
    r_kings, b = _rank_bits(kings, layout, S, 0, binom)
    r_emen, c = _rank_bits(enemy_men, layout, S, 0, binom)
    r_ekings, e = _rank_bits(enemy_kings, layout, S, 0, binom)
    if a + b == 0 or c + e == 0 or max(max(a, b), max(c, e)) >= sig_lookup.shape[0]:
        return -1, -1
    sig = sig_lookup[a, b, c, e]
    if sig < 0:
        return -1, -1
    index = ((r_men * sig_dims[sig, 1] + r_kings) * sig_dims[sig, 2] + r_emen) \
        * sig_dims[sig, 3] + r_ekings
    return sig, index


# --- building: successors of one component, then the value iteration --------------------------
EX_NONE = 0  # every move leaving the component loses (or there is none)
EX_DRAW = 1  # some move leaving the component draws
EX_WIN = 2  # some move leaving the component wins
EX_TERMINAL = 3  # no legal move: lost
EX_INVALID = -1  # no position


@njit(cache=True)
def _grow(a, n):
    b = np.empty(max(2 * a.shape[0], n), dtype=a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True, inline="always")
def _child_board(row, child, S, half, ray, n1, paths, pcaps, plen, i):
    """The board after whole move i of the ply stack's row 0 (whose board is `row`), in
    the other player's view: the piece from its start to its last landing square, the
    captured pieces off, a man ending on the far row crowned (the engine's
    ``compiled.move_ends`` and the row's lists of captured squares ``P.pcaps``)."""
    start, land = C.move_ends(ray, n1, paths, plen, 0, i)
    piece = row[start]
    for t in range(S):
        child[t] = -row[S - 1 - t]
    for j in range(plen[0, i]):
        c = pcaps[0, i, j]
        if c >= 0:
            child[S - 1 - c] = 0
    child[S - 1 - start] = 0
    if piece == 1 and land < half:
        piece = 2
    child[S - 1 - land] = -piece


@njit(cache=True)
def _successors(T, G, P, comp_sigs, local_off, sig_counts, sig_dims, sig_lookup, offsets,
                values, comp_of, comp, men_zero, binom, S, half, max_pieces, lo, hi,
                ex, estart, edges, n_edges, advance):
    """The whole moves of the component's positions lo..hi-1 (local numbers), listed by
    the engine's ply stack (:func:`damii_env.compiled.ply_root`), their boards made by
    :func:`_child_board`: moves that leave the component are valued from the solved
    tables at once (`ex`), the others kept as edges ``local target * 2 + zeroing``."""
    board = G.board
    ray = T.ray
    n1 = C.board_size(T) - 1
    paths, pcaps, plen = P.paths, P.pcaps, P.plen
    row = np.zeros(S, dtype=np.int8)
    child = np.zeros(S, dtype=np.int8)
    n_sigs = comp_sigs.shape[0]
    for u in range(lo, hi):
        k = 0
        while k + 1 < n_sigs and u >= local_off[k + 1]:
            k += 1
        sig = comp_sigs[k]
        estart[u] = n_edges
        if not _decode(sig_counts[sig], sig_dims[sig], u - local_off[k], S, half, binom, row):
            ex[u] = EX_INVALID
            continue
        for s in range(S):
            board[0, s] = row[s]
        here = _advance(row, S, half)
        advance[u] = here
        n = C.ply_root(T, G, 0, P)
        if n == 0:
            ex[u] = EX_TERMINAL
            continue
        best = EX_NONE
        for i in range(n):
            _child_board(row, child, S, half, ray, n1, paths, pcaps, plen, i)
            code, tsig, tindex = _board_code(child, S, half, sig_lookup, sig_dims, offsets,
                                             values, binom, max_pieces)
            if tsig < 0:  # the mover took the last enemy piece
                best = EX_WIN
                continue
            if comp_of[tsig] != comp:
                if comp_of[tsig] > comp:
                    raise ValueError("endgame build: a move leads to a material not solved "
                                     "yet (the components' order is wrong)")
                if code < 0:
                    best = EX_WIN
                elif code == 0 and best < EX_DRAW:
                    best = EX_DRAW
                continue
            j = 0
            while comp_sigs[j] != tsig:
                j += 1
            zeroing = 1 if men_zero and _advance(child, S, half) != here else 0
            if n_edges >= edges.shape[0]:
                edges = _grow(edges, n_edges + 1)
            edges[n_edges] = (local_off[j] + tindex) * 2 + zeroing
            n_edges += 1
        ex[u] = best
    estart[hi] = n_edges
    return edges, n_edges


@njit(cache=True)
def _solve_slice(nodes, ex, estart, edges, vals, cap):
    """Value iteration over one slice of a component (positions whose men stand alike):
    round d decides the wins in d plies and the losses in d plies; `cap` the most plies
    (0: until nothing changes). Codes: +d a win in d plies, -(d + 1) a loss in d plies,
    0 undecided (a draw at the end). Returns the rounds played."""
    d = 1
    while cap == 0 or d <= cap:
        changed = 0
        for u in nodes:
            if vals[u] != 0 or ex[u] == EX_INVALID or ex[u] == EX_TERMINAL:
                continue
            if ex[u] == EX_WIN:
                vals[u] = 1
                changed += 1
                continue
            win = False
            lost = ex[u] == EX_NONE
            for j in range(estart[u], estart[u + 1]):
                e = edges[j]
                v = vals[e >> 1]
                if e & 1:  # a zeroing move: its target's value is final, at count 0
                    if v < 0:
                        win = True
                        break
                    if v == 0:
                        lost = False
                else:
                    if v < 0 and -v - 1 <= d - 1:
                        win = True
                        break
                    if not (0 < v <= d - 1):
                        lost = False
            if win:
                vals[u] = d
                changed += 1
            elif lost:
                vals[u] = -(d + 1)
                changed += 1
        if changed == 0:
            break
        d += 1
    return d


@njit(cache=True)
def _tally(sig_counts, sig_dims, S, half, binom, values, start, n):
    """(positions, won, lost, longest win, longest loss) of one material's n entries."""
    board = np.zeros(S, dtype=np.int8)
    positions = won = lost = 0
    long_win = long_loss = 0
    for i in range(n):
        if not _decode(sig_counts, sig_dims, i, S, half, binom, board):
            continue
        positions += 1
        v = values[start + i]
        if v > 0:
            won += 1
            long_win = max(long_win, np.int64(v))
        elif v < 0:
            lost += 1
            long_loss = max(long_loss, np.int64(-v - 1))
    return positions, won, lost, long_win, long_loss


# --- the database ----------------------------------------------------------------------------
def materials(max_pieces: int) -> list[Material]:
    """Every material of 2..max_pieces pieces with a piece on each side."""
    out = []
    for n in range(2, max_pieces + 1):
        for own in range(1, n):
            for men in range(own + 1):
                for enemy_men in range(n - own + 1):
                    out.append(Material(men, own - men, enemy_men, n - own - enemy_men))
    return out


def components(max_pieces: int) -> list[list[Material]]:
    """The materials grouped as they must be solved together (a material and its swap,
    which quiet moves go between), in an order where captures and promotions only lead
    to groups solved before (fewer pieces, then fewer men)."""
    seen: set[Material] = set()
    groups = []
    for m in materials(max_pieces):
        if m in seen:
            continue
        group = [m] if m.swapped() == m else [m, m.swapped()]
        seen.update(group)
        groups.append(group)
    groups.sort(key=lambda g: (g[0].pieces, g[0].total_men))
    return groups


def rules_key(rules: Rules) -> str:
    """What a database depends on: the rules without the options that cannot change a
    position's value (turn limit, repetition counts, who moves first)."""
    if rules.scoring != "none":
        raise InvalidOptionError(
            f"no endgame database for {rules.name!r}: its games are decided by the score "
            "totals, so a position's value depends on the points scored before it")
    neutral = rules.replace(turn_limit=0, repetition=3, repetition_claim=0,
                            first_player="first")
    fields = {f.name: getattr(neutral, f.name) for f in dataclasses.fields(neutral)}
    fields.pop("name", None)
    return json.dumps(fields, sort_keys=True, default=str)


def default_dir() -> Path:
    """The folder where databases are kept: ``$DAMII_ENDGAME_DIR``, else
    ``~/.cache/damii/endgame``."""
    env = os.environ.get(ENV_DIR)
    return Path(env) if env else Path.home() / ".cache" / "damii" / "endgame"


def folder_name(rules: Rules, max_pieces: int) -> str:
    digest = hashlib.sha256(rules_key(rules).encode()).hexdigest()[:10]
    return f"{rules.name}-{max_pieces}-{digest}"


class EndgameDatabase:
    """The solved positions of up to `max_pieces` pieces of one rule set."""

    def __init__(self, rules: Rules, max_pieces: int, values: np.ndarray,
                 signatures: list[Material], info: dict[str, Any] | None = None) -> None:
        self.rules = rules
        self.max_pieces = max_pieces
        self.signatures = signatures
        self.info = dict(info or {})
        n = rules.board_size
        self.n_squares = rules.n_squares
        self.half = n // 2
        binom = _binomials(self.n_squares)
        self.binom = binom
        count = len(signatures)
        self.sig_counts = np.array([m.as_tuple() for m in signatures], dtype=np.int64)
        self.sig_dims = np.array([_dims(m, self.n_squares, self.half) for m in signatures],
                                 dtype=np.int64).reshape(count, 4)
        sizes = np.prod(self.sig_dims, axis=1)
        self.offsets = np.zeros(count + 1, dtype=np.int64)
        self.offsets[1:] = np.cumsum(sizes)
        self.sig_lookup = np.full((MAX_PIECES + 1,) * 4, -1, dtype=np.int64)
        for i, m in enumerate(signatures):
            self.sig_lookup[m.as_tuple()] = i
        self.limits = np.zeros((count, 2), dtype=np.int64)
        for i, m in enumerate(signatures):
            limit, men_zero = draw_limit(rules, m)
            self.limits[i] = (limit, 0 if men_zero else 1)
        if values.shape != (int(self.offsets[-1]),):
            raise InvalidArgumentError(
                f"endgame values hold {values.shape} entries, the signatures need "
                f"{int(self.offsets[-1])}")
        self.values = values

    def tally(self) -> list[dict[str, Any]]:
        """For each material: its positions (entries that are a position), how many are
        won, drawn and lost for the player to move, and the longest win and loss (plies
        to the next zeroing move)."""
        rows = []
        for i, m in enumerate(self.signatures):
            start, n = int(self.offsets[i]), int(self.offsets[i + 1] - self.offsets[i])
            positions, won, lost, long_win, long_loss = _tally(
                self.sig_counts[i], self.sig_dims[i], self.n_squares, self.half, self.binom,
                self.values, start, n)
            rows.append({"material": m, "positions": int(positions), "won": int(won),
                         "drawn": int(positions - won - lost), "lost": int(lost),
                         "longest_win": int(long_win), "longest_loss": int(long_loss),
                         "limit": int(self.limits[i, 0])})
        return rows

    # --- compiled access
    @property
    def tables(self) -> tuple:
        """The arrays :func:`probe_bits` and :func:`probe_board` take, in their order."""
        return (self.sig_lookup, self.sig_dims, self.offsets, self.values, self.binom,
                self.limits, np.array([self.n_squares, self.half, self.max_pieces],
                                      dtype=np.int64))

    def code(self, board: np.ndarray) -> int | None:
        """The stored code of a board in the mover's view (the engine's ``State.board``
        row: 1 own man, 2 own king, negative the enemy's), None if not held."""
        board = np.ascontiguousarray(board, dtype=np.int8)
        code, _sig, _ix = _board_code(board, self.n_squares, self.half, self.sig_lookup,
                                      self.sig_dims, self.offsets, self.values, self.binom,
                                      self.max_pieces)
        return None if code == MISSING else int(code)

    def board_at(self, sig: int, index: int) -> np.ndarray | None:
        """The board (mover's view) of entry `index` of material number `sig`, None where
        that entry is no position (two pieces on one square)."""
        board = np.zeros(self.n_squares, dtype=np.int8)
        ok = _decode(self.sig_counts[sig], self.sig_dims[sig], index, self.n_squares,
                     self.half, self.binom, board)
        return board if ok else None

    def sample(self, rng: np.random.Generator, n: int) -> list[np.ndarray]:
        """`n` positions drawn uniformly from the database's entries (boards in the mover's
        view; the entries that are no position are drawn again)."""
        out: list[np.ndarray] = []
        total = int(self.offsets[-1])
        while len(out) < n:
            entry = int(rng.integers(total))
            sig = int(np.searchsorted(self.offsets, entry, side="right") - 1)
            board = self.board_at(sig, entry - int(self.offsets[sig]))
            if board is not None:
                out.append(board)
        return out

    def game_at(self, board: np.ndarray) -> Game:
        """A game at a board in the mover's view, White to move, draw counts 0."""
        engine = Engine(self.rules)
        state = engine.from_boards(np.asarray(board, dtype=np.int8)[None],
                                   np.zeros(1, dtype=np.int8))
        return Game.at(engine, state)

    @staticmethod
    def material(board: np.ndarray) -> Material:
        """The material of a board in the mover's view (:func:`material_of`)."""
        return material_of(board)

    def probe(self, game: Game, counts: tuple[int, int] | None = None
              ) -> tuple[int, int] | None:
        """``(value, distance)`` of a game's position for the player to move: value 1 won,
        0 drawn, -1 lost; distance the plies to the next zeroing move (or the game's end)
        of the optimal line, 0 for a draw. None if the position is not in the database
        (more pieces, a game over or in the middle of a capture). The draw counts are the
        game's (``counts=(no_progress, endgame)`` overrides them; see :func:`game_counts`)."""
        if game.rules.scoring != "none" or rules_key(game.rules) != rules_key(self.rules):
            return None
        if game.is_over() or int(game.state.continuing_square[0]) >= 0:
            return None
        board = game.state.board[0]
        code = self.code(board)
        if code is None:
            return None
        limit, men_zero = draw_limit(self.rules, self.material(board))
        no_progress, endgame = counts if counts is not None else game_counts(game)
        return value_at_count(code, limit, no_progress if men_zero else endgame)

    def best_move(self, game: Game) -> Any:
        """The move that keeps the database's value best for the player to move (the win
        fastest to its next zeroing move, the loss slowest), for playing a won ending out."""
        here = self.probe(game)
        if here is None:
            raise InvalidArgumentError(f"position not in the database: {game.fen()}")
        best, best_key = None, None
        for move in game.legal_moves():
            after = game.copy()
            after.push(move)
            if after.is_over():
                o = after.outcome()
                won = o is not None and o.winner == game.turn
                key = (0, 0) if won else (1, 0)
            else:
                res = self.probe(after)
                if res is None:
                    continue
                value, distance = res
                zeroing = self._zeroing(game, after, move)
                if value == LOSS:
                    key = (0, 0 if zeroing else distance + 1)
                elif value == DRAW:
                    key = (1, 0)
                else:
                    key = (2, -(0 if zeroing else distance + 1))
            if best_key is None or key < best_key:
                best, best_key = move, key
        return best

    def _zeroing(self, game: Game, after: Game, move: Any) -> bool:
        before_m = self.material(game.state.board[0])
        after_m = self.material(after.state.board[0]).swapped()
        if move.is_capture or before_m != after_m:
            return True
        men_zero = draw_limit(self.rules, before_m)[1]
        was_man = int(game.board()[move.path[0] - 1]) in (1, -1)
        return men_zero and was_man

    # --- files
    def save(self, folder: str | Path) -> Path:
        """Write ``values.npy`` then ``meta.json`` into `folder`, each atomically."""
        folder = Path(folder)
        write_atomic(folder / "values.npy", lambda f: np.save(f, self.values))
        meta = {"format": FORMAT, "variant": self.rules.name, "rules": rules_key(self.rules),
                "max_pieces": self.max_pieces,
                "signatures": [m.as_tuple() for m in self.signatures],
                "positions": int(self.values.size), "dtype": str(self.values.dtype)}
        meta.update(self.info)
        write_atomic(folder / "meta.json", json.dumps(meta, indent=1) + "\n")
        return folder

    @classmethod
    def load(cls, folder: str | Path, rules: Rules | None = None) -> EndgameDatabase:
        """Read a database written by :meth:`save` (values memory-mapped)."""
        folder = Path(folder)
        try:
            meta = json.loads((folder / "meta.json").read_text())
        except (OSError, ValueError) as exc:
            raise InvalidArgumentError(f"no endgame database in {folder}: {exc}") from None
        if meta.get("format") != FORMAT:
            raise InvalidArgumentError(
                f"{folder}: endgame database format {meta.get('format')!r}, this version "
                f"reads format {FORMAT}; make it again with `damii endgame make`")
        if rules is None:
            rules = make_rules(meta["variant"])
        if meta["rules"] != rules_key(rules):
            raise InvalidArgumentError(f"{folder}: the database was made for other rules "
                                       f"than {rules.name!r} with these options")
        values = np.load(folder / "values.npy", mmap_mode="r")
        sigs = [Material(*m) for m in meta["signatures"]]
        info = {k: v for k, v in meta.items() if k not in ("signatures",)}
        return cls(rules, int(meta["max_pieces"]), values, sigs, info)


def material_of(board: np.ndarray) -> Material:
    """The material of a board in the mover's view (1 man, 2 king, negative the enemy's)."""
    b = np.asarray(board)
    return Material(int((b == 1).sum()), int((b == 2).sum()), int((b == -1).sum()),
                    int((b == -2).sum()))


def _dims(m: Material, S: int, half: int) -> tuple[int, int, int, int]:
    return (comb(S - half, m.men), comb(S, m.kings), comb(S - half, m.enemy_men),
            comb(S, m.enemy_kings))


def game_counts(game: Game) -> tuple[int, int]:
    """The game's two draw counts at its position: plies of king moves without a capture
    (the no-progress count, ``State.no_progress_plies``) and plies since the last capture or
    promotion (the FMJD endgame count), the latter recounted from the game's moves since
    its start position (a position set up by FEN starts both at 0). A game made with
    :meth:`Game.at` from a state with history takes the no-progress count for both (it
    is never larger than the endgame count)."""
    no_progress = int(game.state.no_progress_plies[0])
    moves = game.move_stack
    if not moves:
        return no_progress, no_progress
    replay = Game.from_fen(game.start_fen, game.rules)
    endgame = 0
    for move in moves:
        before = replay.board()
        replay.push(move)
        after = replay.board()
        promoted = abs(int(before[move.path[0] - 1])) == 1 \
            and abs(int(after[move.path[-1] - 1])) == 2
        endgame = 0 if move.is_capture or promoted else endgame + 1
    return no_progress, endgame


# --- building ----------------------------------------------------------------------------------
def count_positions(rules: Rules, max_pieces: int) -> int:
    """Index entries a database of `max_pieces` pieces takes (one byte each)."""
    S, half = rules.n_squares, rules.board_size // 2
    return sum(int(np.prod(_dims(m, S, half))) for m in materials(max_pieces))


def build(rules: Rules | str, max_pieces: int,
          progress: Callable[[int], None] | None = None,
          chunk: int = 1 << 18) -> EndgameDatabase:
    """Solve every position of up to `max_pieces` pieces under `rules` (a preset name or a
    Rules value). `progress(n)` is called with the number of positions whose moves were
    just generated (:func:`count_positions` in all)."""
    rules = make_rules(rules) if isinstance(rules, str) else rules
    rules_key(rules)  # refuses scoring variants
    if isinstance(max_pieces, bool) or not isinstance(max_pieces, int) or \
            not 2 <= max_pieces <= MAX_PIECES:
        raise InvalidArgumentError(
            f"pieces must be an integer from 2 to {MAX_PIECES}, got {max_pieces!r}")
    if rules.board_size > 10:
        raise InvalidOptionError("endgame databases need a board of at most 10 x 10")
    started = time.time()
    sigs = materials(max_pieces)
    index = {m: i for i, m in enumerate(sigs)}
    db = EndgameDatabase(rules, max_pieces, np.zeros(count_positions(rules, max_pieces),
                                                      dtype=np.int16), sigs)
    values16 = db.values
    engine = Engine(rules.without_draw_rules())
    T = engine.tables
    S, half = db.n_squares, db.half
    seed = np.zeros((1, S), dtype=np.int8)
    seed[0, 0], seed[0, S - 1] = 2, -2
    state = engine.from_boards(seed, np.zeros(1, dtype=np.int8))
    G = state.arrays
    P = C.new_plies(T, 2)
    groups = components(max_pieces)
    comp_of = np.zeros(len(sigs), dtype=np.int64)
    for c, group in enumerate(groups):
        for m in group:
            comp_of[index[m]] = c
    rounds_most = 0
    for c, group in enumerate(groups):
        ids = np.array([index[m] for m in group], dtype=np.int64)
        sizes = [int(db.offsets[i + 1] - db.offsets[i]) for i in ids]
        local_off = np.zeros(len(ids) + 1, dtype=np.int64)
        local_off[1:] = np.cumsum(sizes)
        nodes = int(local_off[-1])
        if 2 * nodes >= 2**31:
            raise InvalidArgumentError(f"endgame build: a component of {nodes:,} positions "
                                       "is more than this builder's edges can number")
        limit, men_zero = draw_limit(rules, group[0])
        men_zero = men_zero and limit > 0
        ex = np.zeros(nodes, dtype=np.int8)
        estart = np.zeros(nodes + 1, dtype=np.int64)
        advance = np.zeros(nodes, dtype=np.int64)
        edges = np.zeros(max(1024, 8 * nodes), dtype=np.int32)
        n_edges = 0
        for lo in range(0, nodes, chunk):
            hi = min(nodes, lo + chunk)
            edges, n_edges = _successors(
                T, G, P, ids, local_off, db.sig_counts, db.sig_dims, db.sig_lookup,
                db.offsets, values16, comp_of, c, men_zero, db.binom, S, half, max_pieces,
                lo, hi, ex, estart, edges, n_edges, advance)
            if progress is not None:
                progress(hi - lo)
        vals = np.zeros(nodes, dtype=np.int16)
        vals[ex == EX_TERMINAL] = -1
        if men_zero:
            order = np.argsort(-advance, kind="stable")
            cuts = np.flatnonzero(np.diff(advance[order])) + 1
            slices = np.split(order, cuts)
        else:
            slices = [np.arange(nodes)]
        for part in slices:
            rounds_most = max(rounds_most, int(_solve_slice(part.astype(np.int64), ex, estart,
                                                            edges, vals, limit)))
        for j, i in enumerate(ids):
            values16[db.offsets[i]:db.offsets[i + 1]] = vals[local_off[j]:local_off[j + 1]]
    low, high = int(values16.min(initial=0)), int(values16.max(initial=0))
    dtype = np.int8 if -128 <= low and high <= 127 else np.int16
    info = {"build_seconds": round(time.time() - started, 1),
            "built": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "most_rounds": rounds_most}
    return EndgameDatabase(rules, max_pieces, values16.astype(dtype), sigs, info)


def find(rules: Rules, folder: str | Path | None = None) -> Path | None:
    """The folder of the largest database made for `rules` in `folder` (default
    :func:`default_dir`), None if none."""
    root = Path(folder) if folder is not None else default_dir()
    for n in range(MAX_PIECES, 1, -1):
        path = root / folder_name(rules, n)
        if (path / "meta.json").is_file():
            return path
    return None


_LOADED: dict[str, EndgameDatabase | None] = {}


def database_for(rules: Rules, folder: str | Path | None = None) -> EndgameDatabase | None:
    """The largest database made for `rules` (loaded once a process), None if none (and
    for Sci-Damath, which has none)."""
    if rules.scoring != "none":
        return None
    key = rules_key(rules) + "|" + str(folder)
    if key not in _LOADED:
        path = find(rules, folder)
        _LOADED[key] = EndgameDatabase.load(path, rules) if path is not None else None
    return _LOADED[key]


def probe(game_or_position: Game | str, variant: str | Rules | None = None,
          db: EndgameDatabase | None = None) -> tuple[int, int] | None:
    """The seam a search calls: ``(value, distance)`` of a position for the player to move
    (value 1 won, 0 drawn, -1 lost; distance in plies to the next zeroing move or the end),
    or None where no database holds it (no database made for the rules, too many pieces, a
    game over or mid-capture, Sci-Damath).

    `game_or_position`: a :class:`Game` (its draw counts taken into account) or a FEN with
    its `variant` (counts 0, as a set-up position has). `db`: the database to use (default:
    the largest one made for the rules, :func:`database_for`)."""
    if isinstance(game_or_position, Game):
        game = game_or_position
    elif isinstance(game_or_position, str):
        game = Game.from_fen(game_or_position, variant if variant is not None else "damii")
    else:
        raise InvalidArgumentError(
            f"probe takes a Game or a FEN, got {type(game_or_position).__name__}")
    if game.rules.scoring != "none":
        return None
    db = db if db is not None else database_for(game.rules)
    return None if db is None else db.probe(game)


# --- the compiled probe (for the alpha-beta search) --------------------------------------------
@njit(cache=True)
def probe_board(tables, board, no_progress, endgame):
    """Compiled probe of a board in the mover's view (int8 S: 1 man, 2 king, negative the
    enemy's) with its two draw counts: ``(value, distance)``, value 1/0/-1 for the mover,
    or (MISSING, 0) if the database does not hold it. `tables`: ``db.tables``."""
    sig_lookup, sig_dims, offsets, values, binom, limits, dims = tables
    S, half, max_pieces = dims[0], dims[1], dims[2]
    code, sig, _ix = _board_code(board, S, half, sig_lookup, sig_dims, offsets, values, binom,
                                 max_pieces)
    if code == MISSING:
        return MISSING, 0
    return _apply_count(code, sig, limits, no_progress, endgame)


@njit(cache=True, inline="always")
def _apply_count(code, sig, limits, no_progress, endgame):
    """(value, distance) of a stored code with the draw counts of the position."""
    if code == 0:
        return 0, 0
    if code > 0:
        value = 1
        distance = np.int64(code)
    else:
        value = -1
        distance = np.int64(-code - 1)
    limit = limits[sig, 0]
    count = endgame if limits[sig, 1] == 1 else no_progress
    if limit > 0 and distance > 0 and distance > limit - count:
        return 0, 0
    return value, distance


@njit(cache=True)
def probe_bits(tables, layout, men, kings, enemy_men, enemy_kings, no_progress, endgame):
    """Compiled probe of a ply stack row: its four bit masks (``P.bits[p]``: the mover's
    men and kings, the enemy's men and kings, in the layout ``P.layout``) and its two draw
    counts (plies of king moves without capture, plies since the last capture or
    promotion). Returns ``(value, distance)`` for the mover, value 1 won, 0 drawn, -1
    lost, distance in plies to the next zeroing move or the end; ``(MISSING, 0)`` if the
    database does not hold the position. Makes no array. `tables`: ``db.tables``."""
    sig_lookup, sig_dims, offsets, values, binom, limits, dims = tables
    S, half, max_pieces = dims[0], dims[1], dims[2]
    if C.popcount(men) + C.popcount(kings) + C.popcount(enemy_men) \
            + C.popcount(enemy_kings) > max_pieces:
        return MISSING, 0
    sig, index = _entry_bits(sig_lookup, sig_dims, binom, layout, S, half, men, kings,
                             enemy_men, enemy_kings)
    if sig < 0:
        return MISSING, 0
    return _apply_count(values[offsets[sig] + index], sig, limits, no_progress, endgame)

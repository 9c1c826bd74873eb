"""Training of the learned evaluation of the compiled alpha-beta (``algorithm: patterns``,
``damii train configs/V_patterns.yaml``): self-play games of the compiled search, their
quiet positions labelled by the games' results, and a logistic regression of those
results on the pattern features of :mod:`damii_agents.search.patterns`.

1. **Self-play** (:func:`generate`): each game opens with a few random plies (the
   ballots that make the games differ), then both sides play the compiled alpha-beta
   to a fixed depth with the current evaluation (the handwritten one in the first
   round, the learned one after), with a small share of random moves. The whole game
   is played in compiled code; only the positions' features leave it.
2. **Positions**: those at the start of a turn where the mover has no capture to make
   (quiet), after the random opening; labelled 1 / 0.5 / 0 by the game's result for the
   player to move there (a draw or a cut game 0.5).
3. **Fit** (:func:`fit`): the value v of a position is the sum of its features'
   weights; the result's probability is sigmoid(v / SCALE); the weights minimise the
   cross-entropy plus an L2 penalty (stochastic gradient descent in compiled code; no
   torch). A tenth of the games is held out; the learning curve is the held-out loss
   after each epoch.

:class:`PatternTrainer` runs this under the one run driver (:class:`damii_training.run.Run`):
an iteration is a round (self-play, a fit on every position so far, and a match of the
learned against the handwritten evaluation), logged, checkpointed, plotted and reported
as any trainer's. Its keys are the config's ``patterns`` section
(:class:`damii_training.config.PatternSettings`). The run folder also holds
``weights.npz`` (the latest round's tables, :class:`PatternWeights`) and
``weights_round<r>.npz``.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from numba import njit
from tqdm import tqdm

from damii_agents.io import write_atomic
from damii_agents.search import alphabeta as AB
from damii_agents.search import patterns as EV
from damii_agents.search.evaluation import learned
from damii_env import compiled as C
from damii_env.engine import Engine
from damii_training.config import ConfigError, TrainConfig
from damii_training.evaluate import MatchResult
from damii_training.rundir import ResumeError, check_resume_fields, check_same_rules, read_csv

SCALE = 100.0
"""Search units per logit: a value of SCALE means odds of e to 1 of winning."""

HANDWRITTEN = "handwritten"
"""The opponent of a round's evaluation in the run's ``evals.csv``: the handwritten
evaluation, in the same compiled alpha-beta to the same depth."""


# --- self-play ---------------------------------------------------------------------------
@njit(cache=True)
def _row_features(T, G, c, regions, pattern_index, occupied, dense):
    """Features of row c (see :func:`damii_agents.search.patterns.position_features`)."""
    lead = C.totals_lead(T, G, c) if C.is_scoring(T) else 0.0
    EV.position_features(G.board, c, C.n_squares(T), regions, pattern_index, occupied, dense,
                         C.n_legal(G.meta, c), lead)


class GamePlan(NamedTuple):
    """How :func:`_play_games` plays its games (a record the compiled code unpacks)."""

    depth: int
    """Full moves each search looks ahead."""
    max_nodes: int
    """Node budget of one search."""
    plies_lo: int
    """Fewest random plies that open a game."""
    plies_hi: int
    """Most random plies that open a game."""
    random_rate: float
    """Share of later moves (at the start of a turn) played at random."""
    turn_limit: int
    """Plies after which a game is cut."""


class Recording(NamedTuple):
    """Where :func:`_play_games` writes the recorded positions (one row each)."""

    pattern: np.ndarray
    """(cap, R) pattern index of each region."""
    occupied: np.ndarray
    """(cap, S) piece-square indices, -1 padded."""
    dense: np.ndarray
    """(cap, N_DENSE) whole-board terms."""
    mover: np.ndarray
    """(cap,) colour to move."""
    game: np.ndarray
    """(cap,) game number (`game_offset` + the game's index)."""
    value: np.ndarray
    """(cap,) the search's value for the mover (NaN: not searched)."""


def _recording(cap: int, regions: int, squares: int) -> Recording:
    """Empty buffers for `cap` positions."""
    return Recording(np.zeros((cap, regions), dtype=np.int64),
                     np.zeros((cap, squares), dtype=np.int64), np.zeros((cap, EV.N_DENSE)),
                     np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64),
                     np.zeros(cap))


@njit(cache=True)
def _play_games(T, G, start, n_games, seed, plan, hand_evaluation, evaluation, learned_side, tt,
                regions, out, game_offset, hops_played):
    """Play `n_games` games of the compiled alpha-beta (as the :class:`GamePlan` `plan`
    says) from the start position `start` (row 0 of a one-row state), recording the quiet
    positions' features into the :class:`Recording` `out` from index 0; `tt` is the
    transposition table (:func:`AB.new_table`), `hops_played[0]` counts the hops played.

    The searches value their leaves by `evaluation` (an
    :class:`~damii_agents.search.evaluation.Evaluation`: the pattern tables, or the
    handwritten one in the first round). With `learned_side` 1 only one side uses it (the
    other `hand_evaluation`), White in even games
    and Black in odd ones, and games 2i and 2i+1 open with the same random plies (a
    match, seats alternated); with 0 both sides do (self-play). out_value gets the
    search's value of each recorded position for its mover (NaN where the move was not
    searched: the opening, a random or a forced move). Returns the number of
    positions written (the output full: no more are written), each game's outcome code,
    the index of its first position and White's lead in pieces (men and kings) at its
    end."""
    depth, max_nodes, plies_lo, plies_hi, random_rate, turn_limit = plan
    out_pattern, out_occupied, out_dense, out_mover, out_game, out_value = out
    board, _pending, meta, _hist, legal, _chip, _scores = G
    sb, sp, sm, sh, sl, sc, ss = start
    scratch = C.new_scratch(T)
    plies = C.new_plies(T, AB.ROWS, AB.ROOM, 256)
    result = np.zeros(AB.RESULT_SIZE)
    planned = 0  # hops of the searched move played so far, of planned_n
    planned_n = 0
    k = 0
    cap = out_pattern.shape[0]
    outcome_at = np.empty(n_games, dtype=np.int64)
    first = np.empty(n_games, dtype=np.int64)
    lead_at = np.empty(n_games, dtype=np.int64)
    S = C.n_squares(T)
    for g in range(n_games):
        np.random.seed(seed + (g - g % 2 if learned_side else g))
        first[g] = k
        board[0] = sb[0]
        _pending[0] = sp[0]
        meta[0] = sm[0]
        _hist[0] = sh[0]
        legal[0] = sl[0]
        _chip[0] = sc[0]
        _scores[0] = ss[0]
        tt[:, AB.TT_KEY] = 0
        opening = np.random.randint(plies_lo, plies_hi + 1)
        ply = 0
        hops = 0
        while C.outcome(meta, 0) == C.ONGOING and ply < turn_limit:
            n = C.n_legal(meta, 0)
            at_start = C.continuing_square(meta, 0) < 0
            recorded = ply >= opening and at_start and not C.capturing(meta, 0) and k < cap
            if recorded:
                out_value[k] = np.nan
                _row_features(T, G, 0, regions, out_pattern[k], out_occupied[k], out_dense[k])
                out_mover[k] = C.turn(meta, 0)
                out_game[k] = game_offset + g
                k += 1
            if not at_start and planned < planned_n:
                a = np.int64(result[AB.R_LINE_LEN + 1 + planned])  # the searched move goes on
                planned += 1
            elif not at_start or ply < opening or (random_rate > 0
                                                     and np.random.random() < random_rate):
                a = legal[0, np.random.randint(n)]  # a random move, hop by hop
            else:
                if learned_side:
                    tt[:, AB.TT_KEY] = 0  # the two sides' values must not meet in one table
                move_seed = np.random.randint(1 << 30)  # equal moves chosen at random
                if learned_side == 0 or C.turn(meta, 0) == g % 2:
                    AB.search(T, G, depth, evaluation, tt, max_nodes, result, None, None,
                              None, move_seed, plies)
                else:
                    AB.search(T, G, depth, hand_evaluation, tt, max_nodes, result, None, None,
                              None, move_seed, plies)
                planned_n = int(result[AB.R_LINE_LEN])
                a = np.int64(result[AB.R_LINE_LEN + 1])
                planned = 1
                if recorded and C.ply_n_moves(plies.info, 0) > 1:
                    out_value[k - 1] = result[0]
            turn = C.turn(meta, 0)
            C.play_hop(T, G, 0, a, scratch)
            hops += 1
            if C.turn(meta, 0) != turn:
                ply += 1
        hops_played[0] += hops
        outcome_at[g] = C.outcome(meta, 0)
        men, kings, _advance = EV.material_terms(board, 0, S)
        lead_at[g] = (men + kings) * (1 if C.turn(meta, 0) == 0 else -1)
    return k, outcome_at, first, lead_at


@dataclass
class Positions:
    """Quiet self-play positions: their features and result labels."""

    pattern: np.ndarray
    """(N, R) uint16 pattern index of each region."""
    occupied: np.ndarray
    """(N, S) int16 piece-square indices, -1 padded."""
    dense: np.ndarray
    """(N, N_DENSE) float32 whole-board terms."""
    label: np.ndarray
    """(N,) float32 the fit's target for the player to move: the result (1 win, 0.5
    draw, 0 loss), blended with the search's value where the config says so."""
    game: np.ndarray
    """(N,) int64 game of each position."""
    value: np.ndarray
    """(N,) float32 the self-play search's value for the player to move (NaN: not
    searched)."""
    result: np.ndarray
    """(N,) float32 the game's result for the player to move (1, 0.5, 0), whatever the
    label: the learning curve's held-out loss on results is measured against it."""

    def __len__(self) -> int:
        return len(self.label)

    @classmethod
    def concat(cls, parts: list[Positions]) -> Positions:
        return cls(*(np.concatenate([getattr(p, f.name) for p in parts])
                     for f in dataclasses.fields(cls)))


def _labels(outcome: int, mover: np.ndarray, white_lead: int = 0,
            adjudicate: int = 0) -> np.ndarray:
    """Each position's result for its mover: 1, 0.5 or 0; a game drawn or cut while
    still going goes to the side `white_lead` (pieces) says leads by at least
    `adjudicate` (0: off)."""
    decided = outcome in (C.WHITE_WINS, C.BLACK_WINS)
    if not decided and adjudicate > 0 and abs(white_lead) >= adjudicate:
        outcome = C.WHITE_WINS if white_lead > 0 else C.BLACK_WINS
    if outcome == C.WHITE_WINS:
        return np.where(mover == 0, 1.0, 0.0).astype(np.float32)
    if outcome == C.BLACK_WINS:
        return np.where(mover == 1, 1.0, 0.0).astype(np.float32)
    return np.full(len(mover), 0.5, dtype=np.float32)


def evaluate(config: TrainConfig, weights: EV.PatternWeights, games: int, depth: int,
             seed: int = 12345, progress: bool = True) -> MatchResult:
    """The learned evaluation against the handwritten one, both in the same compiled
    alpha-beta to the same `depth` (full moves), seats alternated over pairs of games
    opened by the same 2 random plies: the learned side's wins, draws and losses."""
    engine = Engine(config.rules)
    stack, start = engine.empty_state(256), engine.init(1)
    regions = EV.pattern_regions(engine.rules.board_size, engine.rules.orientation)
    out = _recording(1, len(regions), engine.rules.board_size ** 2 // 2)
    plan = GamePlan(depth, 10**8, 2, 2, 0.0, config.patterns.turn_limit)
    games += games % 2
    points = []
    chunk = 10
    with tqdm(total=games, desc=f"evaluate {config.variant} (learned vs handwritten, "
              f"depth {depth})", unit="game", disable=not progress) as bar:
        for done in range(0, games, chunk):
            n = min(chunk, games - done)
            _k, outcomes, _first, _lead = _play_games(
                engine.tables, stack.arrays, start.arrays, n, seed + done, plan,
                AB.handwritten(AB.default_weights(engine)), learned(weights, engine.tables),
                1, AB.new_table(16), regions,
                out, 0, np.zeros(1, dtype=np.int64))
            for g, o in enumerate(outcomes):
                learned_colour = g % 2  # within the chunk: chunks have even sizes
                if o in (C.WHITE_WINS, C.BLACK_WINS):
                    winner = 0 if o == C.WHITE_WINS else 1
                    points.append(1.0 if winner == learned_colour else 0.0)
                else:
                    points.append(0.5)
            bar.update(n)
    pts = np.array(points)
    return MatchResult(HANDWRITTEN, int((pts == 1).sum()), int((pts == 0.5).sum()),
                       int((pts == 0).sum()))


def score_interval(result: MatchResult) -> tuple[float, float]:
    """95% interval of a match's score (normal approximation over its games' points)."""
    n, s = result.games, result.score
    if n < 2:
        return s, s
    variance = (result.wins * (1 - s) ** 2 + result.draws * (0.5 - s) ** 2
                + result.losses * s ** 2) / (n - 1)
    half = 1.96 * math.sqrt(variance) / math.sqrt(n)
    return max(0.0, s - half), min(1.0, s + half)


def generate(config: TrainConfig, weights: EV.PatternWeights | None = None,
             seed: int | None = None, progress: bool = True) -> tuple[Positions, dict]:
    """Play ``patterns.games`` self-play games (with the learned `weights` when given,
    else the handwritten evaluation) and return their quiet positions and statistics
    (games, positions, hops, seconds)."""
    p = config.patterns
    engine = Engine(config.rules)
    if weights is not None and weights.size != engine.rules.board_size:
        raise ConfigError("pattern weights of another board size")
    stack = engine.empty_state(256)
    start = engine.init(1)
    regions = EV.pattern_regions(engine.rules.board_size, engine.rules.orientation)
    S = engine.rules.board_size ** 2 // 2
    hand = AB.default_weights(engine)
    tt = AB.new_table(16)
    chunk = 20
    bufs = _recording(chunk * p.turn_limit, len(regions), S)
    plan = GamePlan(p.depth, p.max_nodes, p.random_plies[0], p.random_plies[1],
                    p.random_move_rate, p.turn_limit)
    hand_evaluation = AB.handwritten(hand)
    evaluation = (learned(weights, engine.tables) if weights is not None
                  else hand_evaluation)
    hops = np.zeros(1, dtype=np.int64)
    parts: list[Positions] = []
    base_seed = config.seed if seed is None else seed
    t0 = time.perf_counter()
    done = cut = drawn = adjudicated = 0
    with tqdm(total=p.games, desc=f"self-play {config.variant}", unit="game",
              disable=not progress) as bar:
        while done < p.games:
            n = min(chunk, p.games - done)
            k, outcomes, first, leads = _play_games(
                engine.tables, stack.arrays, start.arrays, n,
                (base_seed * 1_000_003 + done) % (2**31), plan, hand_evaluation, evaluation, 0, tt,
                regions, bufs, done, hops)
            pattern, occupied, dense, mover, game, value = (b[:k].copy() for b in bufs)
            label = np.empty(k, dtype=np.float32)
            result = np.empty(k, dtype=np.float32)
            bounds = list(first) + [k]
            for g in range(n):
                lo, hi = bounds[g], bounds[g + 1]
                result[lo:hi] = _labels(int(outcomes[g]), mover[lo:hi])
                label[lo:hi] = _labels(int(outcomes[g]), mover[lo:hi], int(leads[g]),
                                       p.adjudicate)
            undecided = (outcomes[:n] != C.WHITE_WINS) & (outcomes[:n] != C.BLACK_WINS)
            cut += int(np.sum(outcomes[:n] == C.ONGOING))
            drawn += int(np.sum(undecided))
            adjudicated += int(np.sum(undecided & (p.adjudicate > 0)
                                      & (np.abs(leads[:n]) >= max(1, p.adjudicate))))
            parts.append(Positions(pattern.astype(np.uint16), occupied.astype(np.int16),
                                   dense.astype(np.float32), label, game,
                                   value.astype(np.float32), result))
            done += n
            bar.update(n)
            bar.set_postfix(positions=sum(len(p) for p in parts))
    seconds = time.perf_counter() - t0
    data = Positions.concat(parts)
    stats = {"games": p.games, "positions": len(data), "hops": int(hops[0]),
             "seconds": seconds, "drawn": drawn, "cut": cut, "adjudicated": adjudicated}
    if p.value_weight > 0:
        scale = value_scale(data.value, data.label)
        data.label = blend_labels(data.label, data.value, scale, p.value_weight)
        stats["value_scale"] = scale
    return data, stats


VALUE_CLIP = 2000.0
"""Search values beyond this (a won or lost position's +-WIN) count as this much."""


def value_scale(value: np.ndarray, result: np.ndarray, steps: int = 30) -> float:
    """The logistic scale a that makes sigmoid(a * value) fit the results best (maximum
    likelihood, Newton's method; positions without a value left out): how many logits a
    unit of the search's value is worth."""
    keep = np.isfinite(value)
    v = np.clip(value[keep].astype(np.float64), -VALUE_CLIP, VALUE_CLIP)
    y = result[keep].astype(np.float64)
    a = 1.0 / SCALE
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-a * v))
        grad = float(np.sum((p - y) * v))
        hess = float(np.sum(p * (1 - p) * v * v)) + 1e-9
        a = max(1e-6, a - grad / hess)
    return a


def blend_labels(result: np.ndarray, value: np.ndarray, scale: float,
                 weight: float) -> np.ndarray:
    """(1 - weight) * result + weight * sigmoid(scale * value) per position; the result
    alone where the search gave no value."""
    v = np.clip(np.nan_to_num(value.astype(np.float64), nan=0.0), -VALUE_CLIP, VALUE_CLIP)
    target = 1.0 / (1.0 + np.exp(-scale * v))
    blended = (1.0 - weight) * result + weight * target
    return np.where(np.isfinite(value), blended, result).astype(np.float32)


# --- fitting ---------------------------------------------------------------------------
@njit(cache=True)
def _logit(w, wd, pattern, kings, occupied, dense, phase, n_pattern, n_square, i):
    """The logit of position i. Its weights: region r's pattern ``pattern[i, r]`` in table
    r (``r * PATTERNS + pattern``), its regions' king-table entries ``kings[i]`` (absolute,
    -1: none), its pieces' piece-square entries ``occupied[i]`` after the n_pattern table
    weights (-1 padded). Pattern weights count once; with ending tables (wd twice the
    dense terms) each piece-square weight k and dense weight j have an ending copy
    (k + n_square, j + dense terms) and the two are blended by the position's phase t:
    t x opening + (1 - t) x ending."""
    nd = dense.shape[1]
    tapered = wd.shape[0] > nd
    t = phase[i]
    zp = 0.0
    z0 = 0.0
    z1 = 0.0
    for r in range(pattern.shape[1]):
        zp += w[r * EV.PATTERNS + pattern[i, r]]
    for r in range(kings.shape[1]):
        k = kings[i, r]
        if k >= 0:
            zp += w[k]
    for j in range(occupied.shape[1]):
        o = occupied[i, j]
        if o < 0:
            continue
        k = o + n_pattern
        z0 += w[k]
        if tapered:
            z1 += w[k + n_square]
    for j in range(nd):
        z0 += wd[j] * dense[i, j]
        if tapered:
            z1 += wd[j + nd] * dense[i, j]
    if tapered:
        return zp + t * z0 + (1.0 - t) * z1
    return zp + z0


@njit(cache=True)
def _loss(w, wd, pattern, kings, occupied, dense, phase, n_pattern, n_square, label, rows):
    """Mean cross-entropy of the results at `rows`."""
    total = 0.0
    for i in rows:
        z = _logit(w, wd, pattern, kings, occupied, dense, phase, n_pattern, n_square, i)
        y = np.float64(label[i])
        # log(1 + e^z) - y z, computed stably
        total += (z if z > 0 else 0.0) + np.log1p(np.exp(-abs(z))) - y * z
    return total / max(1, len(rows))


@njit(cache=True)
def _sgd_epoch(w, wd, pattern, kings, occupied, dense, phase, n_pattern, n_square, label,
               rows, lr, l2, pattern_lr, pattern_l2):
    """One pass of stochastic gradient descent on the cross-entropy, with an L2 pull
    on the weights each position uses (rare patterns move little)."""
    nd = dense.shape[1]
    tapered = wd.shape[0] > nd
    total = 0.0
    for i in rows:
        z = _logit(w, wd, pattern, kings, occupied, dense, phase, n_pattern, n_square, i)
        p = 1.0 / (1.0 + np.exp(-z))
        y = np.float64(label[i])
        total += (z if z > 0 else 0.0) + np.log1p(np.exp(-abs(z))) - y * z
        g = y - p
        t = phase[i] if tapered else 1.0
        for r in range(pattern.shape[1]):
            k = r * EV.PATTERNS + pattern[i, r]
            w[k] += pattern_lr * lr * (g - pattern_l2 * w[k])
        for r in range(kings.shape[1]):
            k = kings[i, r]
            if k >= 0:
                w[k] += pattern_lr * lr * (g - pattern_l2 * w[k])
        for j in range(occupied.shape[1]):
            o = occupied[i, j]
            if o < 0:
                continue
            k = o + n_pattern
            w[k] += lr * (g * t - l2 * w[k])
            if tapered:
                e = k + n_square
                w[e] += lr * (g * (1.0 - t) - l2 * w[e])
        for j in range(nd):
            wd[j] += lr * (g * t * dense[i, j] - l2 * wd[j])
            if tapered:
                e = j + nd
                wd[e] += lr * (g * (1.0 - t) * dense[i, j] - l2 * wd[e])
    return total / max(1, len(rows))


def start_pieces(rules) -> int:
    """Pieces on the board at the start of a game under `rules` (the phase's 1)."""
    engine = Engine(rules)
    return int(np.count_nonzero(engine.init(1).arrays[0][0]))


FIT_CHUNK = 1 << 18
"""Positions whose feature indices are built at once (the temporaries stay small)."""


@njit(cache=True)
def _king_features(occupied, S, regions, out):
    """out[i, r]: region r's index in its king table for position i
    (:func:`~damii_agents.search.patterns.king_region_index`, -1: no king there), the
    position rebuilt from its piece-square entries `occupied` (kind * S + square; kinds
    the mover's man, king, the opponent's man, king)."""
    piece_of = np.array([1, 2, -1, -2], dtype=np.int8)
    board = np.zeros((1, S), dtype=np.int8)
    for i in range(occupied.shape[0]):
        board[0, :] = 0
        for j in range(occupied.shape[1]):
            o = occupied[i, j]
            if o >= 0:
                board[0, o % S] = piece_of[o // S]
        for r in range(regions.shape[0]):
            out[i, r] = EV.king_region_index(board, 0, regions, r)


def _king_index(data: Positions, king_regions: np.ndarray | None
                ) -> tuple[np.ndarray, np.ndarray]:
    """(N, R) int32: each region's entry in the king tables (absolute: after the R men's
    tables; -1 where the region holds no king), built a chunk at a time from the
    positions' piece lists ((N, 0) without `king_regions`, the (R, 8) regions); and (N,)
    int16 the pieces on each position's board. The fit reads the men's patterns and the
    piece-square entries from the positions as they are stored (uint16, int16), so a
    position costs its stored 176 bytes (International) and about 130 more while it is
    fitted, where an int32 index of every feature took 330 (docs/TRAINING.md)."""
    N, S = data.occupied.shape
    R = 0 if king_regions is None else len(king_regions)
    kings = np.empty((N, R), dtype=np.int32)
    pieces_on = np.empty(N, dtype=np.int16)
    king_offsets = (R * EV.PATTERNS + np.arange(R) * EV.KING_PATTERNS).astype(np.int32)
    for lo in range(0, N, FIT_CHUNK):
        hi = min(N, lo + FIT_CHUNK)
        occ = data.occupied[lo:hi]
        if R:
            chunk = np.empty((hi - lo, R), dtype=np.int32)
            _king_features(occ.astype(np.int32), S, king_regions, chunk)
            kings[lo:hi] = np.where(chunk >= 0, chunk + king_offsets, np.int32(-1))
        pieces_on[lo:hi] = (occ >= 0).sum(axis=1)
    return kings, pieces_on


def fit(data: Positions, config: TrainConfig, progress: bool = True
        ) -> tuple[EV.PatternWeights, dict]:
    """Logistic regression of the results on the features by stochastic gradient descent
    (compiled; the module loads torch for its checkpoints); returns the weights in search
    units and the learning curve (held-out and training cross-entropy of the labels after
    each epoch, and the held-out cross-entropy of the games' results alone, comparable
    between labels)."""
    p, rules = config.patterns, config.rules
    size = rules.board_size
    regions = EV.pattern_regions(size, rules.orientation)
    R, S = len(regions), size * size // 2
    n_square = EV.PIECE_KINDS * S
    kings = p.king_regions and p.pattern_lr > 0
    n_pattern = R * EV.PATTERNS + (R * EV.KING_PATTERNS if kings else 0)
    n_table = n_pattern + n_square * p.phases
    king_index, pieces_on = _king_index(data, regions if kings else None)
    scale = data.dense.std(axis=0, dtype=np.float64)  # before the float64 copy is made
    scale[scale < 1e-9] = 1.0
    scale[EV.D_TEMPO] = 1.0
    dense = data.dense.astype(np.float64)
    dense /= scale
    pieces = start_pieces(rules)
    phase = np.minimum(1.0, pieces_on / pieces)
    del pieces_on
    rng = np.random.default_rng(config.seed)
    games = np.unique(data.game)
    held = rng.choice(games, size=max(1, int(len(games) * p.holdout)), replace=False)
    is_held = np.isin(data.game, held)
    tr = np.flatnonzero(~is_held).astype(np.int32)
    va = np.flatnonzero(is_held).astype(np.int32)
    del is_held
    w = np.zeros(n_table)
    wd = np.zeros(EV.N_DENSE * p.phases)
    features = (data.pattern, king_index, data.occupied, dense, phase, n_pattern, n_square)
    label, result = data.label, data.result  # float32, read as float64 in the kernels
    curve = {"epoch": [0], "held_out": [_loss(w, wd, *features, label, va)],
             "held_out_results": [_loss(w, wd, *features, result, va)],
             "train": [math.log(2.0)]}
    for epoch in tqdm(range(1, p.epochs + 1), desc="fit", unit="epoch",
                      disable=not progress):
        lr = p.learning_rate / (1.0 + 0.5 * (epoch - 1))
        train = _sgd_epoch(w, wd, *features, label, rng.permutation(tr), lr,
                           p.l2, p.pattern_lr, p.pattern_l2)
        curve["epoch"].append(epoch)
        curve["train"].append(float(train))
        curve["held_out"].append(float(_loss(w, wd, *features, label, va)))
        curve["held_out_results"].append(float(_loss(w, wd, *features, result, va)))
    w *= SCALE
    squares = w[n_pattern:].reshape(p.phases, EV.PIECE_KINDS, S)
    denses = (wd.reshape(p.phases, EV.N_DENSE) / scale * SCALE)
    king_tables = (w[R * EV.PATTERNS:n_pattern].reshape(R, EV.KING_PATTERNS)
                   .astype(np.float32) if kings else None)
    if p.pattern_lr == 0:  # the tables stayed 0: leave them out of the evaluation
        regions, R = regions[:0], 0
    pattern = w[:R * EV.PATTERNS].reshape(R, EV.PATTERNS)
    ends = ((squares[1].copy(), denses[1].copy(), pieces) if p.phases == 2
            else (None, None, 0))
    weights = EV.PatternWeights(rules.name, size, rules.orientation, regions, pattern.copy(),
                                squares[0].copy(), denses[0].copy(), *ends, king_tables)
    curve["positions"] = {"train": int(len(tr)), "held_out": int(len(va))}
    return weights, curve




# --- the trainer -----------------------------------------------------------------------
PATTERN_METRIC_FIELDS = ["iteration", "samples", "rollout_samples", "seconds", "samples_per_s",
                         "positions", "positions_per_s", "hops_per_s", "held_out_loss",
                         "train_loss", "drawn", "cut", "adjudicated", "value_scale",
                         "held_out_result_loss"]
"""Columns of a patterns run's ``metrics.csv`` (one row per round; ``samples`` counts the
self-play games)."""

CHECKPOINT_FORMAT = "damii-env-pattern-checkpoint"
"""The ``format`` of a patterns run's checkpoint: the round, the tables each round's
self-play searched with, the latest tables and the run's counters (plain tensors, loaded
without executing code). The positions are not kept: ``--resume`` plays the finished
rounds' self-play again (the same seeds and tables play the same games)."""


def _weights_data(weights: EV.PatternWeights | None) -> dict[str, Any] | None:
    """Tables as plain checkpoint data (exact: float64 tensors)."""
    if weights is None:
        return None
    data: dict[str, Any] = {}
    for f in dataclasses.fields(weights):
        value = getattr(weights, f.name)
        data[f.name] = torch.from_numpy(np.array(value)) if isinstance(value, np.ndarray) \
            else value
    return data


def _weights_from(data: dict[str, Any] | None) -> EV.PatternWeights | None:
    """The tables :func:`_weights_data` wrote."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise TypeError(f"pattern tables must be a mapping, got {type(data).__name__}")
    names = [f.name for f in dataclasses.fields(EV.PatternWeights)]
    return EV.PatternWeights(**{k: data[k].numpy().copy() if isinstance(data[k], torch.Tensor)
                                else data[k] for k in names})


class PatternTrainer:
    """The learned evaluation's trainer: an iteration is a round of ``patterns.games``
    self-play games (with the tables of the round before; the handwritten evaluation in
    the first), a fit on every position so far and, with ``patterns.eval_games``, a match
    of the learned against the handwritten evaluation (the round's ``evaluations``).
    :attr:`samples` counts the self-play games."""

    unit = "games"
    metric_fields = PATTERN_METRIC_FIELDS
    plays_opponents = False

    def __init__(self, config: TrainConfig) -> None:
        self.config = config
        self.progress = False
        self.iteration = 0
        self.samples = 0
        self.weights: EV.PatternWeights | None = None
        """The latest round's tables (None before the first round)."""
        self.played_with: list[EV.PatternWeights | None] = []
        """The tables each round's self-play searched with (None: the handwritten one)."""
        self.positions: list[Positions] = []
        """Each round's positions."""

    @property
    def goal(self) -> int:
        """Self-play games after which the run stops: ``patterns.rounds`` rounds."""
        return self.config.patterns.rounds * self.config.patterns.games

    def _self_play(self, r: int, weights: EV.PatternWeights | None) -> dict[str, Any]:
        """Round `r`'s self-play with `weights`; its positions are kept."""
        data, stats = generate(self.config, weights, seed=self.config.seed + 1000 * r,
                               progress=self.progress)
        data.game += 10_000_000 * r  # games of different rounds stay apart
        self.positions.append(data)
        self.played_with.append(weights)
        return stats

    def iterate(self) -> dict[str, Any]:
        """One round; its statistics, and its evaluation under ``evaluations``."""
        p = self.config.patterns
        r = self.iteration + 1
        st = self._self_play(r, self.weights)
        # one copy of the positions while they are fitted (the rounds' parts joined)
        self.positions = [Positions.concat(self.positions)]
        self.weights, curve = fit(self.positions[0], self.config, progress=self.progress)
        evaluations = []
        if p.eval_games:
            evaluations.append(evaluate(self.config, self.weights, p.eval_games, p.eval_depth,
                                        progress=self.progress))
        self.iteration, self.samples = r, self.samples + p.games
        seconds = max(st["seconds"], 1e-9)
        return {"rollout_samples": p.games, "episodes": p.games,
                "positions": st["positions"],
                "positions_per_s": round(st["positions"] / seconds, 1),
                "hops_per_s": round(st["hops"] / seconds, 1),
                "held_out_loss": curve["held_out"][-1], "train_loss": curve["train"][-1],
                "held_out_result_loss": curve["held_out_results"][-1],
                "drawn": st["drawn"], "cut": st["cut"], "adjudicated": st["adjudicated"],
                **({"value_scale": st["value_scale"]} if "value_scale" in st else {}),
                "evaluations": evaluations}

    def state_dict(self) -> dict[str, Any]:
        """The round, the tables of every round's self-play and the latest (plain data)."""
        return {"iteration": self.iteration, "samples": self.samples,
                "played_with": [_weights_data(w) for w in self.played_with],
                "weights": _weights_data(self.weights)}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Continue from :meth:`state_dict`'s data, playing the finished rounds' self-play
        again when rounds remain; raises KeyError, TypeError or ValueError for data that
        does not fit."""
        for key in ("iteration", "samples"):
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{key} must be a non-negative integer, got {value!r:.40}")
        played_with = [_weights_from(w) for w in data["played_with"]]
        if len(played_with) != data["iteration"]:
            raise ValueError(f"played_with must hold the tables of {data['iteration']} "
                             f"round(s), got {len(played_with)}")
        size = self.config.rules.board_size
        weights = _weights_from(data["weights"])
        if any(w is not None and w.size != size for w in [*played_with, weights]):
            raise ValueError(f"pattern tables of another board size than {size}")
        self.iteration, self.samples, self.weights = data["iteration"], data["samples"], weights
        self.played_with, self.positions = [], []
        if self.iteration >= self.config.patterns.rounds:
            self.played_with = played_with
            return
        print(f"damii train: playing the self-play of the {self.iteration} finished round(s) "
              f"again (a checkpoint keeps the tables, not the positions)", file=sys.stderr,
              flush=True)
        for r, tables in enumerate(played_with, 1):
            self._self_play(r, tables)

    def save(self, path: Path, best_score: float, elapsed: float) -> Path:
        """Write the checkpoint ``--resume`` continues from."""
        payload = {"format": CHECKPOINT_FORMAT, "variant": self.config.variant,
                   "rule_options": dict(self.config.rule_options), "step": self.samples,
                   "iteration": self.iteration, "trainer": self.state_dict(),
                   "best_score": best_score, "elapsed": elapsed}
        return write_atomic(path, lambda f: torch.save(payload, f))

    def restore(self, path: Path) -> dict[str, Any]:
        """Continue from the checkpoint :meth:`save` wrote; returns its data. Raises
        :class:`ResumeError` naming what does not fit."""
        try:
            data = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # torch raises many kinds for a damaged or foreign file
            raise ResumeError(f"cannot resume from {str(path)!r}: it cannot be read "
                              f"({type(exc).__name__}: {str(exc)[:200]})") from None
        if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
            raise ResumeError(f"cannot resume from {str(path)!r}: it is not the checkpoint of "
                              f"a patterns run (algorithm: patterns)")
        try:
            check_same_rules(data, self.config, path)
            check_resume_fields(data, path)
            self.load_state_dict(data["trainer"])
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise ResumeError(
                f"cannot resume from {str(path)!r}: it does not fit the run's config.yaml "
                f"(algorithm patterns): {type(exc).__name__}: {str(exc)[:300]}") from None
        return data

    def player(self) -> None:
        """No player of its own: each round evaluates the tables (:attr:`plays_opponents`)."""
        return None

    def describe(self) -> str:
        """The report's line on what was trained."""
        p = self.config.patterns
        return (f"- algorithm: patterns, {p.rounds} round(s) of {p.games:,} self-play games "
                f"at depth {p.depth}, {p.phases} phase(s) of tables")

    def write_files(self, run_dir: Path) -> None:
        """The latest round's tables: ``weights_round<r>.npz`` and ``weights.npz``."""
        if self.weights is not None:
            self.weights.save(run_dir / f"weights_round{self.iteration}.npz")
            self.weights.save(run_dir / "weights.npz")

    def report_lines(self, run_dir: Path) -> list[str]:
        """The rounds' table (self-play speed, held-out loss, score against the handwritten
        evaluation) and where the weights are, from the run's logs."""
        p = self.config.patterns
        scores = {int(e["iteration"]): e for e in read_csv(run_dir / "evals.csv")
                  if e["opponent"] == HANDWRITTEN}
        lines = ["", "| round | games | positions | positions/s | hops/s | held-out loss | "
                 "vs handwritten |", "| --- | --- | --- | --- | --- | --- | --- |"]
        for m in read_csv(run_dir / "metrics.csv"):
            e = scores.get(int(m["iteration"]))
            score = "-"
            if e is not None:
                result = MatchResult(HANDWRITTEN, int(e["wins"]), int(e["draws"]),
                                     int(e["losses"]))
                low, high = score_interval(result)
                score = (f"{100 * result.score:.1f}% [{100 * low:.1f}, {100 * high:.1f}] "
                         f"({result.wins}-{result.draws}-{result.losses})")
            lines.append(f"| {m['iteration']} | {m['rollout_samples']} | "
                         f"{int(m['positions']):,} | {float(m['positions_per_s']):,.0f} | "
                         f"{float(m['hops_per_s']):,.0f} | {float(m['held_out_loss']):.4f} | "
                         f"{score} |")
        if scores:
            lines += ["", f"vs handwritten: the same compiled alpha-beta to depth "
                          f"{p.eval_depth} on both sides, {p.eval_games + p.eval_games % 2} "
                          f"games, seats alternated, 2 random plies of opening per pair; 95% "
                          f"interval.",
                      "A steering figure: the final strength is measured with `damii eval`."]
        weights = run_dir / "weights.npz"
        lines += ["", f"weights: {weights} (play them: `alphabeta:time=0.1,eval={weights}`; "
                      f"to ship them as the variant's: copy to "
                      f"agents/weights/{self.config.variant}_patterns.npz)"]
        return lines

"""Training of the learned evaluation of the compiled alpha-beta (``damii train
configs/V_patterns.yaml``): self-play games of the compiled search, their quiet positions
labelled by the games' results, and a logistic regression of those results on the
pattern features of :mod:`damii_agents.search.evaluation`.

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

A run writes ``config.yaml`` (the resolved config), ``weights.npz`` (the tables,
:class:`PatternWeights`), ``curve.png`` and ``report.md`` (positions/s of the generation
beside the engine's hops/s, the fit's losses) into its run folder; rounds of self-play
with the learned weights follow the first if the config asks for them.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit
from tqdm import tqdm

from damii_agents.search import alphabeta as AB
from damii_agents.search import evaluation as EV
from damii_agents.search.alphabeta import default_weights
from damii_env import compiled as C
from damii_env.engine import Engine
from damii_env.errors import DamiiError
from damii_env.rules import PRESETS, make_rules

SCALE = 100.0
"""Search units per logit: a value of SCALE means odds of e to 1 of winning."""


class PatternConfigError(DamiiError):
    """A pattern-training config with a missing, unknown or out-of-range key."""


@dataclass(frozen=True)
class PatternConfig:
    """A pattern-evaluation training run (``algorithm: patterns``)."""

    name: str = "patterns"
    """Name of the run; its folder is ``runs/<name>`` unless ``--run-dir`` says otherwise."""
    variant: str = "damii"
    """Rule preset: damii, international, triestine or damath."""
    rule_options: dict[str, Any] = field(default_factory=dict)
    """Rule options for the variant (as for ``damii_env.Game``)."""
    seed: int = 0
    """Seeds the self-play games (round r plays seed + 1000 r), the held-out games and
    the fit's order."""
    games: int = 10000
    """Self-play games per round."""
    rounds: int = 1
    """Rounds of self-play and fitting; rounds after the first play with the weights
    fitted in the round before (their positions are added to the earlier ones)."""
    depth: int = 2
    """Full moves each side's alpha-beta searches in self-play."""
    max_nodes: int = 20000
    """Node budget of one self-play search."""
    random_plies: tuple[int, int] = (2, 12)
    """Random plies that open each game: drawn uniformly from this range."""
    random_move_rate: float = 0.03
    """Share of later moves played at random (for variety; their positions are kept)."""
    epochs: int = 6
    """Passes of the fit over all positions so far, each round."""
    learning_rate: float = 0.02
    """Step size of the fit's stochastic gradient descent (per position, in logits)."""
    l2: float = 1e-6
    """L2 penalty per weight (in logits squared), per position."""
    pattern_lr: float = 0.0
    """Learning rate of the region tables, relative to the other weights' (there are many
    more of them, each seen less often); 0 leaves the tables out. Measured on Damii
    (docs/SEARCH.md): the tables fit the results a little better but lost in play
    (48% against the handwritten evaluation at depth 3, where the piece-square table and
    whole-board terms alone scored 75%), so they are off by default."""
    pattern_l2: float = 0.01
    """L2 pull of the pattern weights (rare patterns stay near 0)."""
    holdout: float = 0.1
    """Share of the games held out to measure the fit."""
    turn_limit: int = 300
    """Plies after which a self-play game is cut (a draw for the labels, unless
    `adjudicate` says otherwise)."""
    adjudicate: int = 0
    """A game drawn (by a rule or cut at `turn_limit`) with one side at least this many
    pieces up at its end (men and kings alike) is labelled a win for that side; 0: off.
    For Triestine, where most shallow self-play games end drawn with one side several
    kings up that a depth-2 search cannot convert (men cannot take kings there)."""
    value_weight: float = 0.0
    """Share of each position's label taken from the self-play search's own value there
    (TD-leaf style), the rest from the game's result: the value becomes a probability
    through a logistic scale fitted to the round's results (the first round's values
    are the handwritten evaluation's, in other units). 0: results alone."""
    phases: int = 1
    """1: one set of piece-square and whole-board weights for the whole game; 2: an
    opening and an ending set, blended by the pieces on the board (a tapered evaluation,
    as the strong engines' is)."""
    eval_games: int = 200
    """Games of the learned against the handwritten evaluation after each round."""
    eval_depth: int = 3
    """Full moves both sides search in that evaluation."""

    @property
    def rules(self):
        return make_rules(self.variant, **self.rule_options)


_BOUNDS: dict[str, tuple[Any, Any]] = {
    "seed": (0, 2**31 - 1), "games": (10, 10_000_000), "rounds": (1, 20), "depth": (1, 6),
    "max_nodes": (100, 10_000_000), "random_move_rate": (0.0, 0.5), "epochs": (1, 200),
    "learning_rate": (1e-6, 10.0), "l2": (0.0, 1.0),
    "holdout": (0.01, 0.5), "turn_limit": (20, 2000), "pattern_lr": (0.0, 10.0),
    "pattern_l2": (0.0, 10.0), "eval_games": (0, 100_000), "eval_depth": (1, 8),
    "adjudicate": (0, 40), "value_weight": (0.0, 1.0), "phases": (1, 2),
}


def config_from_dict(data: dict[str, Any]) -> PatternConfig:
    """A checked :class:`PatternConfig` (``algorithm: patterns`` may be given)."""
    data = dict(data)
    algorithm = data.pop("algorithm", "patterns")
    if algorithm != "patterns":
        raise PatternConfigError(f"algorithm must be patterns here, got {algorithm!r}")
    names = {f.name for f in dataclasses.fields(PatternConfig)}
    unknown = sorted(set(data) - names)
    if unknown:
        from damii_training.config import unknown_keys_text

        raise PatternConfigError(f"unknown key(s) {unknown_keys_text(unknown, sorted(names))}; "
                                 f"expected some of: {', '.join(sorted(names))}")
    if "variant" in data and data["variant"] not in PRESETS:
        raise PatternConfigError(f"variant must be one of {', '.join(PRESETS)}, "
                                 f"got {data['variant']!r}")
    if "random_plies" in data:
        rp = data["random_plies"]
        if (not isinstance(rp, (list, tuple)) or len(rp) != 2
                or not all(isinstance(x, int) and 0 <= x <= 100 for x in rp) or rp[0] > rp[1]):
            raise PatternConfigError(f"random_plies must be [low, high] with 0 <= low <= high "
                                     f"<= 100, got {rp!r}")
        data["random_plies"] = tuple(rp)
    for key, (lo, hi) in _BOUNDS.items():
        if key in data:
            v = data[key]
            kind = float if isinstance(lo, float) else int
            if isinstance(v, bool) or not isinstance(v, (int, float)) or \
                    (kind is int and not isinstance(v, int)) or not lo <= v <= hi:
                what = "an integer" if kind is int else "a number"
                raise PatternConfigError(f"{key} must be {what} in [{lo}, {hi}], got {v!r}")
    config = PatternConfig(**data)
    config.rules  # noqa: B018 - checks the rule options
    return config


# --- self-play ---------------------------------------------------------------------------
@njit(cache=True)
def _row_features(T, G, c, regions, pattern_index, occupied, dense):
    """Features of row c (see :func:`damii_agents.search.evaluation.position_features`)."""
    lead = C.totals_lead(T, G, c) if C.is_scoring(T) else 0.0
    EV.position_features(G[0], c, C.n_squares(T), regions, pattern_index, occupied, dense,
                         C.n_legal(G[2], c), lead)


@njit(cache=True)
def _play_games(T, G, n_games, seed, depth, max_nodes, weights, tt_key, tt_val, tt_depth,
                tt_flag, tt_move, start, plies_lo, plies_hi, random_rate, turn_limit,
                regions, out_pattern, out_occupied, out_dense, out_mover, out_game,
                out_value, game_offset, hops_played, learned, learned_side):
    """Play `n_games` games of the compiled alpha-beta from the start position `start`
    (row 0 of a one-row state), recording the quiet positions' features from index 0.

    The searches value their leaves by `learned` (pattern tables; None: the handwritten
    `weights`). With `learned_side` 1 only one side uses `learned`, White in even games
    and Black in odd ones, and games 2i and 2i+1 open with the same random plies (a
    match, seats alternated); with 0 both sides do (self-play). out_value gets the
    search's value of each recorded position for its mover (NaN where the move was not
    searched: the opening, a random or a forced move). Returns the number of
    positions written (the output full: no more are written), each game's outcome code,
    the index of its first position and White's lead in pieces (men and kings) at its
    end."""
    board, _pending, meta, _hist, legal, _chip, _scores = G
    sb, sp, sm, sh, sl, sc, ss = start
    scratch = C.new_scratch(T)
    result = np.zeros(AB.RESULT_SIZE)
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
        tt_key[:] = 0
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
            if ply < opening or (at_start and random_rate > 0
                                 and np.random.random() < random_rate):
                a = legal[0, np.random.randint(n)]
            elif n == 1:
                a = legal[0, 0]
            else:
                for j in range(n - 1, 0, -1):  # shuffle: equal moves chosen at random
                    i = np.random.randint(j + 1)
                    legal[0, i], legal[0, j] = legal[0, j], legal[0, i]
                if learned_side:
                    tt_key[:] = 0  # the two sides' values must not meet in one table
                if learned_side == 0 or C.turn(meta, 0) == g % 2:
                    AB.search(T, G, depth, weights, tt_key, tt_val, tt_depth, tt_flag,
                              tt_move, max_nodes, result, None, None, None, learned)
                else:
                    AB.search(T, G, depth, weights, tt_key, tt_val, tt_depth, tt_flag,
                              tt_move, max_nodes, result, None, None, None, None)
                a = np.int64(result[1])
                if a < 0:
                    a = legal[0, 0]
                elif recorded:
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
    """(N,) float32 result for the player to move: 1 win, 0.5 draw, 0 loss."""
    game: np.ndarray
    """(N,) int64 game of each position."""
    value: np.ndarray
    """(N,) float32 the self-play search's value for the player to move (NaN: not
    searched)."""

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


def _tables(size: int = 1 << 16) -> tuple[np.ndarray, ...]:
    return (np.zeros(size, dtype=np.uint64), np.zeros(size), np.zeros(size, dtype=np.int64),
            np.zeros(size, dtype=np.int64), np.full(size, -1, dtype=np.int64))


def evaluate(config: PatternConfig, weights: EV.PatternWeights, games: int, depth: int,
             seed: int = 12345, progress: bool = True) -> dict[str, Any]:
    """The learned evaluation against the handwritten one, both in the same compiled
    alpha-beta to the same `depth` (full moves), seats alternated over pairs of games
    opened by the same 2 random plies: the learned side's wins, draws, losses and score
    with a 95% interval (normal approximation over the games' points)."""
    engine = Engine(config.rules)
    stack, start = engine.empty_state(256), engine.init(1)
    regions = EV.pattern_regions(engine.rules.board_size, engine.rules.orientation)
    S = engine.rules.board_size ** 2 // 2
    bufs = (np.zeros((1, len(regions)), dtype=np.int64), np.zeros((1, S), dtype=np.int64),
            np.zeros((1, EV.N_DENSE)), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
            np.zeros(1))
    games += games % 2
    points = []
    chunk = 10
    with tqdm(total=games, desc=f"evaluate {config.variant} (learned vs handwritten, "
              f"depth {depth})", unit="game", disable=not progress) as bar:
        for done in range(0, games, chunk):
            n = min(chunk, games - done)
            _k, outcomes, _first, _lead = _play_games(
                engine.tables, stack.arrays, n, seed + done, depth, 10**8,
                default_weights(engine), *_tables(), start.arrays, 2, 2, 0.0,
                config.turn_limit, regions, *bufs, 0, np.zeros(1, dtype=np.int64),
                weights.arrays, 1)
            for g, o in enumerate(outcomes):
                learned_colour = g % 2  # within the chunk: chunks have even sizes
                if o in (C.WHITE_WINS, C.BLACK_WINS):
                    winner = 0 if o == C.WHITE_WINS else 1
                    points.append(1.0 if winner == learned_colour else 0.0)
                else:
                    points.append(0.5)
            bar.update(n)
    pts = np.array(points)
    score = float(pts.mean())
    half = 1.96 * float(pts.std(ddof=1)) / math.sqrt(len(pts)) if len(pts) > 1 else 0.0
    return {"games": len(pts), "depth": depth, "wins": int((pts == 1).sum()),
            "draws": int((pts == 0.5).sum()), "losses": int((pts == 0).sum()),
            "score": score, "interval": (max(0.0, score - half), min(1.0, score + half))}


def generate(config: PatternConfig, weights: EV.PatternWeights | None = None,
             seed: int | None = None, progress: bool = True) -> tuple[Positions, dict]:
    """Play ``config.games`` self-play games (with the learned `weights` when given,
    else the handwritten evaluation) and return their quiet positions and statistics
    (games, positions, hops, seconds)."""
    engine = Engine(config.rules)
    if weights is not None and weights.size != engine.rules.board_size:
        raise PatternConfigError("pattern weights of another board size")
    stack = engine.empty_state(256)
    start = engine.init(1)
    regions = EV.pattern_regions(engine.rules.board_size, engine.rules.orientation)
    S = engine.rules.board_size ** 2 // 2
    hand = default_weights(engine)
    tt = _tables()
    chunk = 20
    cap = chunk * config.turn_limit
    bufs = (np.zeros((cap, len(regions)), dtype=np.int64), np.zeros((cap, S), dtype=np.int64),
            np.zeros((cap, EV.N_DENSE)), np.zeros(cap, dtype=np.int64),
            np.zeros(cap, dtype=np.int64), np.zeros(cap))
    hops = np.zeros(1, dtype=np.int64)
    parts: list[Positions] = []
    base_seed = config.seed if seed is None else seed
    t0 = time.perf_counter()
    done = cut = drawn = adjudicated = 0
    with tqdm(total=config.games, desc=f"self-play {config.variant}", unit="game",
              disable=not progress) as bar:
        while done < config.games:
            n = min(chunk, config.games - done)
            k, outcomes, first, leads = _play_games(
                engine.tables, stack.arrays, n, (base_seed * 1_000_003 + done) % (2**31),
                config.depth, config.max_nodes, hand, *tt, start.arrays,
                config.random_plies[0], config.random_plies[1], config.random_move_rate,
                config.turn_limit, regions, *bufs, done, hops,
                weights.arrays if weights is not None else None, 0)
            pattern, occupied, dense, mover, game, value = (b[:k].copy() for b in bufs)
            label = np.empty(k, dtype=np.float32)
            bounds = list(first) + [k]
            for g in range(n):
                lo, hi = bounds[g], bounds[g + 1]
                label[lo:hi] = _labels(int(outcomes[g]), mover[lo:hi], int(leads[g]),
                                       config.adjudicate)
            undecided = (outcomes[:n] != C.WHITE_WINS) & (outcomes[:n] != C.BLACK_WINS)
            cut += int(np.sum(outcomes[:n] == C.ONGOING))
            drawn += int(np.sum(undecided))
            adjudicated += int(np.sum(undecided & (config.adjudicate > 0)
                                      & (np.abs(leads[:n]) >= max(1, config.adjudicate))))
            parts.append(Positions(pattern.astype(np.uint16), occupied.astype(np.int16),
                                   dense.astype(np.float32), label, game,
                                   value.astype(np.float32)))
            done += n
            bar.update(n)
            bar.set_postfix(positions=sum(len(p) for p in parts))
    seconds = time.perf_counter() - t0
    data = Positions.concat(parts)
    stats = {"games": config.games, "positions": len(data), "hops": int(hops[0]),
             "seconds": seconds, "drawn": drawn, "cut": cut, "adjudicated": adjudicated}
    if config.value_weight > 0:
        scale = value_scale(data.value, data.label)
        data.label = blend_labels(data.label, data.value, scale, config.value_weight)
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
def _logit(w, wd, index, dense, phase, n_pattern, n_square, i):
    """The logit of position i. Pattern weights (indices below n_pattern) count once;
    with ending tables (wd twice the dense terms) each piece-square weight k and dense
    weight j have an ending copy (k + n_square, j + dense terms) and the two are blended
    by the position's phase t: t x opening + (1 - t) x ending."""
    nd = dense.shape[1]
    tapered = wd.shape[0] > nd
    t = phase[i]
    zp = 0.0
    z0 = 0.0
    z1 = 0.0
    for j in range(index.shape[1]):
        k = index[i, j]
        if k < 0:
            continue
        if k < n_pattern:
            zp += w[k]
        else:
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
def _loss(w, wd, index, dense, phase, n_pattern, n_square, label, rows):
    """Mean cross-entropy of the results at `rows`."""
    total = 0.0
    for i in rows:
        z = _logit(w, wd, index, dense, phase, n_pattern, n_square, i)
        y = label[i]
        # log(1 + e^z) - y z, computed stably
        total += (z if z > 0 else 0.0) + np.log1p(np.exp(-abs(z))) - y * z
    return total / max(1, len(rows))


@njit(cache=True)
def _sgd_epoch(w, wd, index, dense, phase, n_pattern, n_square, label, rows, lr, l2,
               pattern_lr, pattern_l2):
    """One pass of stochastic gradient descent on the cross-entropy, with an L2 pull
    on the weights each position uses (rare patterns move little)."""
    nd = dense.shape[1]
    tapered = wd.shape[0] > nd
    total = 0.0
    for i in rows:
        z = _logit(w, wd, index, dense, phase, n_pattern, n_square, i)
        p = 1.0 / (1.0 + np.exp(-z))
        y = label[i]
        total += (z if z > 0 else 0.0) + np.log1p(np.exp(-abs(z))) - y * z
        g = y - p
        t = phase[i] if tapered else 1.0
        for j in range(index.shape[1]):
            k = index[i, j]
            if k >= n_pattern:
                w[k] += lr * (g * t - l2 * w[k])
                if tapered:
                    e = k + n_square
                    w[e] += lr * (g * (1.0 - t) - l2 * w[e])
            elif k >= 0:
                w[k] += pattern_lr * lr * (g - pattern_l2 * w[k])
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


def fit(data: Positions, config: PatternConfig, progress: bool = True
        ) -> tuple[EV.PatternWeights, dict]:
    """Logistic regression of the results on the features by stochastic gradient descent
    (compiled; no torch needed); returns the weights in search units and the learning
    curve (held-out and training cross-entropy after each epoch)."""
    rules = config.rules
    size = rules.board_size
    regions = EV.pattern_regions(size, rules.orientation)
    R, S = len(regions), size * size // 2
    n_square = EV.PIECE_KINDS * S
    n_table = R * EV.PATTERNS + n_square * config.phases
    index = np.empty((len(data), R + S), dtype=np.int64)
    index[:, :R] = data.pattern.astype(np.int64) + np.arange(R) * EV.PATTERNS
    occ = data.occupied.astype(np.int64)
    index[:, R:] = np.where(occ >= 0, occ + R * EV.PATTERNS, -1)
    dense = data.dense.astype(np.float64)
    scale = dense.std(axis=0)
    scale[scale < 1e-9] = 1.0
    scale[EV.D_TEMPO] = 1.0
    dense = dense / scale
    label = data.label.astype(np.float64)
    pieces = start_pieces(rules)
    phase = np.minimum(1.0, (data.occupied >= 0).sum(axis=1) / pieces)
    rng = np.random.default_rng(config.seed)
    games = np.unique(data.game)
    held = rng.choice(games, size=max(1, int(len(games) * config.holdout)), replace=False)
    is_held = np.isin(data.game, held)
    tr, va = np.flatnonzero(~is_held), np.flatnonzero(is_held)
    w = np.zeros(n_table)
    wd = np.zeros(EV.N_DENSE * config.phases)
    n_pattern = R * EV.PATTERNS
    shape = (phase, n_pattern, n_square)
    curve = {"epoch": [0], "held_out": [_loss(w, wd, index, dense, *shape, label, va)],
             "train": [math.log(2.0)]}
    for epoch in tqdm(range(1, config.epochs + 1), desc="fit", unit="epoch",
                      disable=not progress):
        lr = config.learning_rate / (1.0 + 0.5 * (epoch - 1))
        train = _sgd_epoch(w, wd, index, dense, *shape, label, rng.permutation(tr), lr,
                           config.l2, config.pattern_lr, config.pattern_l2)
        curve["epoch"].append(epoch)
        curve["train"].append(float(train))
        curve["held_out"].append(float(_loss(w, wd, index, dense, *shape, label, va)))
    w *= SCALE
    squares = w[n_pattern:].reshape(config.phases, EV.PIECE_KINDS, S)
    denses = (wd.reshape(config.phases, EV.N_DENSE) / scale * SCALE)
    if config.pattern_lr == 0:  # the tables stayed 0: leave them out of the evaluation
        regions, R = regions[:0], 0
    pattern = w[:R * EV.PATTERNS].reshape(R, EV.PATTERNS)
    ends = ((squares[1].copy(), denses[1].copy(), pieces) if config.phases == 2
            else (None, None, 0))
    weights = EV.PatternWeights(rules.name, size, rules.orientation, regions, pattern.copy(),
                                squares[0].copy(), denses[0].copy(), *ends)
    curve["positions"] = {"train": int(len(tr)), "held_out": int(len(va))}
    return weights, curve


# --- a run -----------------------------------------------------------------------------
def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> PatternConfig:
    """Read a pattern-training YAML config (``algorithm: patterns``) and apply
    ``key=value`` overrides (``damii train CONFIG --set games=200``; the value is read as
    YAML, ``rule_options.turn_limit=200`` sets one rule option)."""
    import yaml

    from damii_training.config import ConfigError, parse_override

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PatternConfigError(f"cannot read config {str(path)!r}: "
                                 f"{exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise PatternConfigError(f"config {str(path)!r} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise PatternConfigError(f"config {str(path)!r} must be a mapping of keys to values")
    for item in overrides:
        try:
            key, value = parse_override(item)
        except ConfigError as exc:
            raise PatternConfigError(str(exc)) from None
        if key == "rule_options" and isinstance(value, dict):
            value = {**(data.get("rule_options") or {}), **value}
        data[key] = value
    return config_from_dict(data)


def config_to_yaml(config: PatternConfig) -> str:
    """The config as YAML that :func:`load_config` reads back to the same config."""
    import yaml

    data = {"algorithm": "patterns", **dataclasses.asdict(config)}
    data["random_plies"] = list(config.random_plies)
    return yaml.safe_dump(data, sort_keys=False)


def is_pattern_config(path: str | Path) -> bool:
    """Whether the YAML file at `path` asks for ``algorithm: patterns`` (False when it
    cannot be read: the network trainers' loader then says why)."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and data.get("algorithm") == "patterns"


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _plot(curves: list[dict], scores: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    x0 = 0
    for r, curve in enumerate(curves, 1):
        xs = [x0 + e for e in curve["epoch"]]
        ax1.plot(xs, curve["held_out"], marker="o", label=f"round {r} held out")
        ax1.plot(xs[1:], curve["train"][1:], linestyle="--", label=f"round {r} train")
        x0 = xs[-1]
    ax1.set_xlabel("epoch (rounds one after another)")
    ax1.set_ylabel("cross-entropy of the results")
    ax1.set_title("fit")
    ax1.legend(fontsize=7)
    if scores:
        rs = list(range(1, len(scores) + 1))
        ax2.errorbar(rs, [100 * s["score"] for s in scores],
                     yerr=[[100 * (s["score"] - s["interval"][0]) for s in scores],
                           [100 * (s["interval"][1] - s["score"]) for s in scores]],
                     marker="o", capsize=4)
        ax2.axhline(50, color="grey", linewidth=0.8)
        ax2.set_xticks(rs)
        ax2.set_xlabel("round")
        ax2.set_ylabel("score (%)")
        ax2.set_title(f"learned vs handwritten, depth {scores[0]['depth']}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def run_patterns(config: PatternConfig | str | Path, run_dir: str | Path | None = None,
                 progress: bool = True) -> Path:
    """Self-play, fit and evaluate for ``config.rounds`` rounds; writes ``weights.npz``
    (the last round's tables), ``curve.png``, ``metrics.json`` and ``report.md`` into the
    run folder (``runs/<name>`` by default) and returns the report's path."""
    import json

    if not isinstance(config, PatternConfig):
        config = load_config(config)
    out = Path(run_dir) if run_dir is not None else Path("runs") / config.name
    out.mkdir(parents=True, exist_ok=True)
    _write_text(out / "config.yaml", config_to_yaml(config))
    if progress:
        print(f"damii train: pattern evaluation of {config.variant}, run folder {out}",
              flush=True)
        print("compiling the self-play search (about half a minute the first time)...",
              flush=True)
    t_start = time.perf_counter()
    weights: EV.PatternWeights | None = None
    parts: list[Positions] = []
    stats, curves, scores = [], [], []
    for r in range(1, config.rounds + 1):
        data, st = generate(config, weights, seed=config.seed + 1000 * r, progress=progress)
        data.game += 10_000_000 * r  # games of different rounds stay apart
        parts.append(data)
        stats.append(st)
        weights, curve = fit(Positions.concat(parts), config, progress=progress)
        curves.append(curve)
        weights.save(out / f"weights_round{r}.npz")
        if config.eval_games:
            scores.append(evaluate(config, weights, config.eval_games, config.eval_depth,
                                   progress=progress))
    assert weights is not None
    weights.save(out / "weights.npz")
    minutes = (time.perf_counter() - t_start) / 60
    _plot(curves, scores, out / "curve.png")
    metrics = {"config": dataclasses.asdict(config), "self_play": stats, "fit": curves,
               "evaluation": scores, "minutes": minutes}
    _write_text(out / "metrics.json", json.dumps(metrics, indent=1, default=list))
    lines = [f"# Pattern evaluation: {config.variant} ({config.name})", "",
             f"{config.rounds} round(s), {minutes:.1f} min in all.", "",
             "| round | games | positions | positions/s | hops/s | held-out loss | "
             "vs handwritten |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r, (st, curve) in enumerate(zip(stats, curves, strict=True), 1):
        sc = scores[r - 1] if scores else None
        score = (f"{100 * sc['score']:.1f}% [{100 * sc['interval'][0]:.1f}, "
                 f"{100 * sc['interval'][1]:.1f}] ({sc['wins']}-{sc['draws']}-{sc['losses']})"
                 if sc else "-")
        lines.append(f"| {r} | {st['games']} | {st['positions']:,} | "
                     f"{st['positions'] / st['seconds']:,.0f} | {st['hops'] / st['seconds']:,.0f} "
                     f"| {curve['held_out'][-1]:.4f} | {score} |")
    if scores:
        lines += ["", f"vs handwritten: the same compiled alpha-beta to depth "
                      f"{config.eval_depth} on both sides, {scores[-1]['games']} games, seats "
                      "alternated, 2 random plies of opening per pair; 95% interval.",
                  "A steering figure: the final strength is measured with `damii eval`."]
    lines += ["", "![learning curve](curve.png)", ""]
    report = out / "report.md"
    _write_text(report, "\n".join(lines))
    return report

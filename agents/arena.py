"""Matches between agents: one game with clocks, resignation and agreed draws
(:func:`play_game`), and round robins on worker processes with results tables, Elo
ratings and a PDN file of every game (:func:`run_match`).

>>> from agents.arena import MatchConfig, run_match
>>> result = run_match(MatchConfig("damii", ("random", "greedy"), games=4, workers=1),
...                    progress=False)                                    # doctest: +SKIP
>>> print(result.to_text())                                               # doctest: +SKIP

Rules of a match (see ``shared/RULES.md``):

- **Clock**: a player whose move takes longer than the per-move clock loses on time
  (``standard`` 60 s, ``blitz`` 15 s); in Damath capturing moves are exempt.
- **Resignation and draws**: before each move the player is asked ``wants_resign`` and
  ``offers_draw`` (the opponent's ``accepts_draw`` decides). A player's ``choose`` may
  also raise :class:`Resign`, :class:`OfferDraw` or :class:`Abandon` (human play).
- **Game end**: the variant's own rules; a turn limit of 400 plies is added for safety
  where the variant has none (Damath keeps its own 100). A game cut by the turn limit is
  recorded with result ``*`` and scores as a draw.
- **Ballots**: for each pair of games one random opening of ``opening_plies`` plies is
  played once with each player on each seat.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import json
import multiprocessing as mp
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from damii_env import Game, Move
from damii_env.errors import DamiiError, InvalidOptionError
from damii_env.rules import make_rules

from .base import Agent
from .elo import Rating, rate
from .pdn import PdnGame, record, write_file
from .registry import make_agent, parse_spec

CLOCK_PRESETS: dict[str, float | None] = {"standard": 60.0, "blitz": 15.0, "none": None}
"""Seconds per move of the named clocks (Damii seed 000; Damath: one minute)."""
SAFETY_TURN_LIMIT = 400
"""Plies after which a game of a variant without its own turn limit is cut (a draw)."""


class Resign(Exception):
    """Raised by a player's ``choose`` to resign the game."""


class OfferDraw(Exception):
    """Raised by a player's ``choose`` to offer a draw; it is asked again if declined."""


class Abandon(Exception):
    """Raised by a player's ``choose`` to leave the game unfinished (result ``*``)."""


@dataclass(frozen=True)
class Clock:
    """A per-move time limit; ``seconds=None`` is no clock."""

    seconds: float | None = None
    captures_exempt: bool = False
    """Damath: a capturing move may take any time (rule 6)."""

    @classmethod
    def parse(cls, spec: str | float | None, variant: str = "damii", **options: Any) -> Clock:
        """``standard``, ``blitz``, ``none`` or a number of seconds, for a variant."""
        rules = make_rules(variant, **options)
        if spec is None or isinstance(spec, int | float):
            seconds = None if spec is None else float(spec)
        elif spec.strip().lower() in CLOCK_PRESETS:
            seconds = CLOCK_PRESETS[spec.strip().lower()]
        else:
            try:
                seconds = float(spec)
            except ValueError:
                raise InvalidOptionError(
                    f"clock {spec!r}: expected standard, blitz, none or seconds per move"
                ) from None
        if seconds is not None and not seconds > 0:
            raise InvalidOptionError(f"clock must be a positive number of seconds, got {spec!r}")
        return cls(seconds=seconds, captures_exempt=rules.scoring == "damath")

    def overstepped(self, elapsed: float, move: Move) -> bool:
        """Whether a move that took `elapsed` seconds loses on time."""
        if self.seconds is None or (self.captures_exempt and move.is_capture):
            return False
        return elapsed > self.seconds

    def __str__(self) -> str:
        if self.seconds is None:
            return "none"
        return f"{self.seconds:g} s/move" + (" (captures exempt)" if self.captures_exempt else "")


@dataclass(frozen=True)
class GameEnd:
    """How a game ended: the winner (0 White, 1 Black, None), PDN result and reason."""

    winner: int | None
    result: str
    termination: str

    @property
    def white_points(self) -> float:
        """Points of White: 1, 0, or 1/2 for a draw, a cut or an unfinished game."""
        return 0.5 if self.winner is None else 1.0 - self.winner


def _won_by(side: int, termination: str) -> GameEnd:
    return GameEnd(side, "1-0" if side == 0 else "0-1", termination)


def _ask(player: Agent, hook: str, game: Game) -> bool:
    """Call an optional boolean hook of a player (False when it has none)."""
    fn = getattr(player, hook, None)
    return bool(fn(game)) if callable(fn) else False


MoveCallback = Callable[[Game, Move, int], None]


def play_game(game: Game, players: Sequence[Agent], clock: Clock = Clock(),
              on_move: MoveCallback | None = None) -> GameEnd:
    """Play `game` on to its end between ``players[0]`` (White) and ``players[1]``."""
    while not game.is_over():
        side = game.turn
        player, other = players[side], players[1 - side]
        if _ask(player, "wants_resign", game):
            return _won_by(1 - side, "resignation")
        if _ask(player, "offers_draw", game) and _ask(other, "accepts_draw", game):
            return GameEnd(None, "1/2-1/2", "agreed draw")
        start = time.perf_counter()
        while True:
            try:
                choice = player.choose(game)
                break
            except Resign:
                return _won_by(1 - side, "resignation")
            except Abandon:
                return GameEnd(None, "*", "abandoned")
            except OfferDraw:
                if _ask(other, "accepts_draw", game):
                    return GameEnd(None, "1/2-1/2", "agreed draw")
                _ask(player, "draw_declined", game)
        elapsed = time.perf_counter() - start
        try:
            move = game.parse_move(choice)
        except DamiiError:
            return _won_by(1 - side, f"illegal move {choice}")
        if clock.overstepped(elapsed, move):
            return _won_by(1 - side, "time forfeit")
        game.push(move)
        if on_move is not None:
            on_move(game, move, side)
    outcome = game.outcome()
    assert outcome is not None
    return GameEnd(outcome.winner, outcome.result(), outcome.termination)


def game_options(variant: str, **options: Any) -> dict[str, Any]:
    """Rule options for match games: `options` plus the safety turn limit where needed."""
    if make_rules(variant, **options).turn_limit == 0:
        return {**options, "turn_limit": SAFETY_TURN_LIMIT}
    return dict(options)


def player_names(specs: Sequence[str]) -> list[str]:
    """Unique names for the specs (a repeated spec gets ``#2``, ``#3``)."""
    seen: Counter[str] = Counter()
    names = []
    for spec in specs:
        seen[spec] += 1
        names.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    return names


def anchor_index(specs: Sequence[str]) -> int:
    """The player rated 0: the first ``random`` agent, else the first spec."""
    for i, spec in enumerate(specs):
        if parse_spec(spec)[0] == "random":
            return i
    return 0


# --- a match -----------------------------------------------------------------------------
@dataclass(frozen=True)
class MatchConfig:
    """A round robin: every pair of specs plays ``games`` games (rounded up to even)."""

    variant: str
    specs: tuple[str, ...]
    games: int = 2
    clock: str | float | None = "standard"
    workers: int | None = None
    """Worker processes (None: min(2, CPUs)); 1 plays in this process."""
    seed: int = 0
    opening_plies: int = 2
    rule_options: Mapping[str, Any] = field(default_factory=dict)
    event: str = "damii-env eval"
    gauntlet: bool = False
    """Only the first spec meets every other one (a checkpoint against the baselines)."""

    def __post_init__(self) -> None:
        if len(self.specs) < 2:
            raise InvalidOptionError(f"a match needs at least two agents, got {list(self.specs)}")
        for spec in self.specs:
            parse_spec(spec)
        if self.games < 1 or self.opening_plies < 0:
            raise InvalidOptionError("games must be >= 1 and opening plies >= 0")
        self.make_clock()

    @property
    def names(self) -> list[str]:
        return player_names(self.specs)

    @property
    def ballots(self) -> int:
        """Openings per pairing; each is played twice, once from each seat."""
        return (self.games + 1) // 2

    def make_clock(self) -> Clock:
        return Clock.parse(self.clock, self.variant, **self.rule_options)

    def n_workers(self) -> int:
        return max(1, self.workers if self.workers else min(2, os.cpu_count() or 1))


@dataclass(frozen=True)
class GameTask:
    """One game of a match, as sent to a worker."""

    index: int
    white: int
    black: int
    opening: tuple[str, ...]
    seed: int


@dataclass
class GameResult:
    """One finished game of a match."""

    index: int
    white: str
    black: str
    end: GameEnd
    plies: int
    final_fen: str
    seconds: float
    pdn: PdnGame

    def summary(self) -> dict[str, Any]:
        return {"round": self.index + 1, "white": self.white, "black": self.black,
                "result": self.end.result, "termination": self.end.termination,
                "plies": self.plies, "seconds": round(self.seconds, 3)}


def ballots(variant: str, count: int, plies: int, seed: int, **options: Any
            ) -> list[tuple[str, ...]]:
    """`count` random openings of `plies` plies (shorter if a game ends first)."""
    rng = random.Random(seed)
    openings = []
    for _ in range(count):
        game = Game(variant, **options)
        moves = []
        for _ in range(plies):
            if game.is_over():
                break
            moves.append(str(game.push(rng.choice(game.legal_moves()))))
        openings.append(tuple(moves))
    return openings


def schedule(config: MatchConfig) -> list[GameTask]:
    """Every game of the round robin: pairings x ballots x both seats."""
    options = game_options(config.variant, **config.rule_options)
    openings = ballots(config.variant, config.ballots, config.opening_plies, config.seed, **options)
    tasks = []
    if config.gauntlet:
        pairs = [(0, j) for j in range(1, len(config.specs))]
    else:
        pairs = list(itertools.combinations(range(len(config.specs)), 2))
    for a, b in pairs:
        for opening in openings:
            for white, black in ((a, b), (b, a)):
                i = len(tasks)
                tasks.append(GameTask(i, white, black, opening, config.seed * 1_000_003 + i))
    return tasks


class MatchWorker:
    """Plays games of a match; builds each agent once from its spec."""

    def __init__(self, config: MatchConfig) -> None:
        self.config = config
        self.options = game_options(config.variant, **config.rule_options)
        self.clock = config.make_clock()
        self.names = config.names
        self._agents: dict[int, Agent] = {}

    def agent(self, i: int) -> Agent:
        if i not in self._agents:
            self._agents[i] = make_agent(self.config.specs[i], self.config.variant,
                                         seed=self.config.seed, **self.options)
        return self._agents[i]

    def play(self, task: GameTask) -> GameResult:
        game = Game(self.config.variant, **self.options)
        for text in task.opening:
            game.push(text)
        players = (self.agent(task.white), self.agent(task.black))
        for side, player in enumerate(players):
            reset = getattr(player, "reset", None)
            if callable(reset):
                reset(2 * task.seed + side)
        start = time.perf_counter()
        end = play_game(game, players, self.clock)
        seconds = time.perf_counter() - start
        white, black = self.names[task.white], self.names[task.black]
        pdn = record(game, white=white, black=black, result=end.result, event=self.config.event,
                     round=str(task.index + 1),
                     extra_tags={"Termination": end.termination, "Clock": str(self.clock)})
        return GameResult(task.index, white, black, end, len(game.move_stack), game.fen(),
                          seconds, pdn)


_WORKER: MatchWorker | None = None


def _init_worker(config: MatchConfig) -> None:
    """A worker process: one thread each (the workers are the parallelism; several
    threads per process over tiny per-move tensors spin against each other), then its
    players."""
    global _WORKER
    os.environ["OMP_NUM_THREADS"] = "1"
    _WORKER = MatchWorker(config)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    import numba

    numba.set_num_threads(1)


def _play_task(task: GameTask) -> GameResult:
    assert _WORKER is not None, "worker not initialised"
    return _WORKER.play(task)


def _play_all(config: MatchConfig, tasks: list[GameTask]) -> Iterator[GameResult]:
    workers = min(config.n_workers(), len(tasks))
    if workers <= 1:
        worker = MatchWorker(config)
        yield from map(worker.play, tasks)
        return
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers, initializer=_init_worker, initargs=(config,)) as pool:
        yield from pool.imap_unordered(_play_task, tasks)


@dataclass
class PairingStats:
    """Results of one pairing from the first player's side."""

    a: str
    b: str
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws


@dataclass
class MatchResult:
    """All games of a match, the pairings' tallies and the Elo ratings."""

    config: MatchConfig
    games: list[GameResult]
    pairings: list[PairingStats]
    ratings: list[Rating]

    @classmethod
    def from_games(cls, config: MatchConfig, games: list[GameResult],
                   elo_samples: int = 1000) -> MatchResult:
        names = config.names
        index = {n: i for i, n in enumerate(names)}
        stats = {(a, b): PairingStats(names[a], names[b])
                 for a, b in itertools.combinations(range(len(names)), 2)}
        scores = []
        for g in sorted(games, key=lambda g: g.index):
            w, b = index[g.white], index[g.black]
            pts = g.end.white_points
            scores.append((w, b, pts))
            s = stats[(min(w, b), max(w, b))]
            a_points = pts if w < b else 1.0 - pts
            if a_points == 1.0:
                s.wins += 1
            elif a_points == 0.0:
                s.losses += 1
            else:
                s.draws += 1
        ratings = rate(names, scores, anchor=anchor_index(config.specs), samples=elo_samples,
                       seed=config.seed)
        played = [s for s in stats.values() if s.games]  # a gauntlet leaves pairs unplayed
        return cls(config, sorted(games, key=lambda g: g.index), played, ratings)

    # --- tables ------------------------------------------------------------------------
    def pairing_rows(self) -> tuple[list[str], list[list[str]]]:
        head = ["pairing", "games", "wins", "draws", "losses", "score"]
        rows = [[f"{p.a} vs {p.b}", str(p.games), str(p.wins), str(p.draws), str(p.losses),
                 f"{p.points:g}/{p.games} ({100 * p.points / max(p.games, 1):.1f}%)"]
                for p in self.pairings]
        return head, rows

    def rating_rows(self) -> tuple[list[str], list[list[str]]]:
        head = ["player", "games", "score", "Elo", "95% CI"]
        order = sorted(self.ratings, key=lambda r: -r.elo)
        rows = [[r.name, str(r.games), f"{r.points:g} ({100 * r.score:.1f}%)", f"{r.elo:+.0f}",
                 f"[{r.low:+.0f}, {r.high:+.0f}]"] for r in order]
        return head, rows

    def terminations(self) -> Counter[str]:
        return Counter(g.end.termination for g in self.games)

    def _header(self) -> str:
        c = self.config
        return (f"{c.variant}: {len(self.games)} games, {c.ballots * 2} per pairing, "
                f"clock {c.make_clock()}, {c.opening_plies}-ply ballots, seed {c.seed}")

    def _footer(self) -> str:
        ends = ", ".join(f"{k} {v}" for k, v in self.terminations().most_common())
        anchor = self.config.names[anchor_index(self.config.specs)]
        return (f"Elo: Bradley-Terry maximum likelihood on all games (draws half, one virtual "
                f"draw per pairing), {anchor} = 0, 95% CI by bootstrap over games.\n"
                f"Game ends: {ends}.")

    def to_text(self) -> str:
        """The tables as aligned plain text."""
        return "\n\n".join([self._header(), _text_table(*self.pairing_rows()),
                            _text_table(*self.rating_rows()), self._footer()])

    def to_markdown(self) -> str:
        """The tables as Markdown."""
        return "\n\n".join([f"# Match: {self._header()}", "## Pairings",
                            _markdown_table(*self.pairing_rows()), "## Elo",
                            _markdown_table(*self.rating_rows()), self._footer()]) + "\n"

    def to_json(self) -> dict[str, Any]:
        c = self.config
        return {
            "variant": c.variant, "specs": list(c.specs), "players": c.names,
            "games_per_pairing": c.ballots * 2, "clock": str(c.make_clock()), "seed": c.seed,
            "opening_plies": c.opening_plies, "rule_options": dict(c.rule_options),
            "anchor": c.names[anchor_index(c.specs)],
            "pairings": [{**asdict(p), "games": p.games, "points": p.points}
                         for p in self.pairings],
            "ratings": [{**asdict(r), "score": r.score} for r in self.ratings],
            "terminations": dict(self.terminations()),
            "games": [g.summary() for g in self.games],
        }

    def save(self, out_dir: str | Path) -> dict[str, Path]:
        """Write ``results.json``, ``results.md`` and ``games.pdn`` into `out_dir`."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"json": out / "results.json", "markdown": out / "results.md",
                 "pdn": out / "games.pdn"}
        paths["json"].write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        paths["markdown"].write_text(self.to_markdown(), encoding="utf-8")
        write_file(paths["pdn"], [g.pdn for g in self.games])
        return paths


def _text_table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=False)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    return "\n".join([line(head), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


def _markdown_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |",
             "| " + " | ".join(["---"] + ["---:"] * (len(head) - 1)) + " |"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def default_out_dir() -> Path:
    return Path("runs") / "eval" / _dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def run_match(config: MatchConfig, progress: bool = True, elo_samples: int = 1000
              ) -> MatchResult:
    """Play the round robin (a tqdm bar on stderr when `progress`) and tally it."""
    tasks = schedule(config)
    games: list[GameResult] = []
    with tqdm(total=len(tasks), desc=f"eval {config.variant}", unit="game",
              disable=not progress) as bar:
        for result in _play_all(config, tasks):
            games.append(result)
            bar.update(1)
    return MatchResult.from_games(config, games, elo_samples=elo_samples)

"""Game review: every position of a game searched by an alpha-beta player, each move's
loss against the engine's choice, the marks ``?!``, ``?``, ``??``, an annotated PDN and a
summary a side.

>>> from damii_agents.review import Thresholds
>>> Thresholds().mark(30.0), Thresholds().mark(120.0), Thresholds().mark(250.0)
('', '?', '??')

Values are the search's (:class:`~damii_agents.players.alphabeta.AlphaBetaAgent`): about
100 for a man; in Sci-Damath 10 for a point of the totals' lead (the score plus the
remaining chips, damas doubled, that decide the game), so the same thresholds read as
tenths of those points. A move's loss is the value of the engine's choice at the
position before it, less the value of the position after it (searched as the next
position, from the mover's view), both clamped to :data:`DECIDED` (a decided game: a move
that keeps a won game won, or a lost game lost, is no mistake); the engine's own choice,
and a forced move, lose nothing. A move whose loss reaches a mark has both its positions
searched again :data:`VERIFY_FACTOR` times longer and is judged on those searches; a
``??`` needs a loss that clears the blunder threshold by :data:`BLUNDER_MARGIN` (what a
search of that length may be off by), a loss in between is a ``?``. The work has no
input or output of its own: a game (a :class:`~damii_env.pdn.PdnGame`) in, records out;
the command (``damii analyse``) and the web app draw and write them.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from damii_agents.process_pool import WorkerPool
from damii_agents.search.alphabeta import ROWS, WIN
from damii_env import Game
from damii_env.errors import DamiiError
from damii_env.pdn import PdnError, PdnGame

# A search value at or beyond WIN / 2 is a forced result: WIN less the plies to the end
# where the search saw it, less (KNOWN_WIN less the plies) where the endgame database knew it

CLAMP = 1000.0
"""The evaluation graph's values are clamped to +-CLAMP (ten men; 100 points of the
totals' lead in Sci-Damath)."""

DECIDED = 500.0
"""Values are clamped to +-DECIDED (five men; 50 points of the totals' lead in
Sci-Damath) before a loss is taken: beyond, the game is decided. A search of a few tenths
of a second values a side five men behind at -5 to -8 men where a search ten times longer
mostly finds a forced loss (docs/ANALYSE.md): a move there that walks into a forced loss
the search sees is no blunder of the difference, the game was lost before it."""

DEFAULT_TIME = 0.2
"""Seconds of search a position by default."""

LINE_PLIES = 8
"""Moves of the better line shown for a marked move (fewer where the game ends)."""

TOTALS_UNIT = 10.0
"""Search units a point of Sci-Damath's totals' lead (the handwritten evaluation's
weight, which the learned tables were fitted to)."""

MAN_UNIT = 100.0
"""Search units a man (the handwritten evaluation's weight)."""

MARK_NAMES = {"?!": "inaccuracy", "?": "mistake", "??": "blunder"}
_PLURALS = {"?!": "inaccuracies", "?": "mistakes", "??": "blunders"}


class ReviewError(DamiiError):
    """A game or an option the review cannot work with."""


BLUNDER_MARGIN = 10.0
"""How far a move's loss must clear the blunder threshold to be marked ``??`` (search
units: a tenth of a man; a point of the totals' lead in Sci-Damath); a loss from the
threshold to the threshold plus this is marked ``?``. A search of a few tenths of a second
values a move that loses two men at two men give or take a few tenths of a man: against
a fresh search twice as long, the review's loss was 4 units higher on average with a
spread of 13 (95 checks of 19 moves); 10 is the smallest margin (in steps of 5) with which
the review's ``??`` held two men under that search nine times in ten on the games it was
tuned on (docs/ANALYSE.md, where the figures are, and what it costs)."""


@dataclass(frozen=True)
class Thresholds:
    """Losses (search units) from which a move is marked ``?!``, ``?`` and ``??``: by
    default half a man, a man and two men (Sci-Damath: 5, 10 and 20 points of the
    totals' lead), a ``??`` only where the loss clears the blunder threshold by
    `blunder_margin` (:data:`BLUNDER_MARGIN`; a ``?`` below)."""

    inaccuracy: float = 50.0
    mistake: float = 100.0
    blunder: float = 200.0
    blunder_margin: float = BLUNDER_MARGIN

    def __post_init__(self) -> None:
        values = (self.inaccuracy, self.mistake, self.blunder)
        if not all(math.isfinite(v) and v > 0 for v in values) or not (
                self.inaccuracy <= self.mistake <= self.blunder):
            raise ReviewError(f"thresholds must be positive and ordered inaccuracy <= "
                              f"mistake <= blunder, got {values}")
        if not (math.isfinite(self.blunder_margin) and self.blunder_margin >= 0):
            raise ReviewError(f"the blunder margin must be 0 or more, got "
                              f"{self.blunder_margin}")

    @classmethod
    def parse(cls, text: str) -> Thresholds:
        """``"50,100,200"``: the three thresholds in search units (a man is 100);
        ``"50,100,200,20"``: and the blunder margin (default :data:`BLUNDER_MARGIN`)."""
        try:
            parts = [float(t) for t in text.split(",")]
        except ValueError:
            parts = []
        if len(parts) not in (3, 4):
            raise ReviewError(f"thresholds {text!r}: expected three numbers "
                              f"'INACCURACY,MISTAKE,BLUNDER' in search units, e.g. "
                              f"'50,100,200' (a man is 100), and optionally the blunder "
                              f"margin after them ('50,100,200,20')")
        return cls(*parts)

    def mark(self, loss: float) -> str:
        """The mark of a move that loses `loss` (``""`` below the inaccuracy's)."""
        if loss >= self.blunder + self.blunder_margin:
            return "??"
        if loss >= self.mistake:
            return "?"
        if loss >= self.inaccuracy:
            return "?!"
        return ""

    def within_margin(self, loss: float) -> bool:
        """Whether `loss` reaches the blunder threshold but not its margin (a ``?``)."""
        return self.blunder <= loss < self.blunder + self.blunder_margin


@dataclass(frozen=True)
class PositionEval:
    """One position searched: its value for the side to move, the engine's move there and
    its line (PDN texts), the depth reached; for a finished game the result's value."""

    ply: int
    turn: int
    """0 White, 1 Black to move."""
    value: float
    best: str | None = None
    best_points: str | None = None
    """Sci-Damath: the points the engine's move scores (None elsewhere)."""
    line: tuple[str, ...] = ()
    depth: int = 0
    legal: int = 0
    """Number of legal moves (0: the game is over)."""
    best_after: float | None = None
    """The engine's move's value found by searching the position it leads to (for the
    side to move here), where the verification searched it (:func:`verification_jobs`)."""

    @property
    def white_value(self) -> float:
        """The value for White."""
        return self.value if self.turn == 0 else -self.value


@dataclass(frozen=True)
class MoveReview:
    """One move of the game against the engine's choice at its position."""

    ply: int
    mover: int
    """0 White, 1 Black."""
    move: str
    points: str | None
    """Sci-Damath: the points the move scored."""
    best: str
    best_points: str | None
    line: tuple[str, ...]
    """The engine's line from the position before the move (its choice first)."""
    best_value: float
    """The engine's choice's value, for the mover."""
    played_value: float
    """The value after the move, for the mover."""
    after_white: float
    """The value after the move, for White (the evaluation graph's point)."""
    loss: float
    mark: str
    forced: bool

    @property
    def is_best(self) -> bool:
        return self.move == self.best


@dataclass
class SideSummary:
    """A side's moves: how many, the average loss (search units) and each mark's count."""

    moves: int = 0
    total_loss: float = 0.0
    marks: dict[str, int] = field(default_factory=lambda: {m: 0 for m in MARK_NAMES})

    @property
    def average_loss(self) -> float:
        return self.total_loss / self.moves if self.moves else 0.0


@dataclass
class GameReview:
    """The review of one game: its record, each position's evaluation (one more than the
    moves), each move's review and the settings."""

    game: PdnGame
    variant: str
    positions: list[PositionEval]
    moves: list[MoveReview]
    player: str
    seconds: float
    thresholds: Thresholds
    elapsed: float = 0.0
    verified: list[PositionEval] = field(default_factory=list)
    """The longer searches of the moves whose first loss reached a mark."""

    @property
    def scoring(self) -> bool:
        """Whether values are Sci-Damath's totals' lead (else material, in men)."""
        return self.variant == "damath"

    def summary(self) -> tuple[SideSummary, SideSummary]:
        """White's and Black's summaries."""
        sides = (SideSummary(), SideSummary())
        for m in self.moves:
            s = sides[m.mover]
            s.moves += 1
            s.total_loss += m.loss
            if m.mark:
                s.marks[m.mark] += 1
        return sides

    def graph(self) -> list[float]:
        """The evaluation for White at each position (clamped to +-CLAMP), the start's
        first."""
        return [_clamp(p.white_value) for p in self.positions]

    def value_text(self, value: float) -> str:
        """A value as the review writes it (:func:`value_text`)."""
        return value_text(value, self.scoring)

    def annotated(self) -> PdnGame:
        """The game as PDN with each move's evaluation (for White) as a comment, the
        marks after the marked moves and, for those, the engine's better move and line."""
        comments = dict(self.game.comments)
        moves = list(self.game.moves)
        for r in self.moves:
            moves[r.ply] = f"{moves[r.ply]}{r.mark}"
            note = self.move_comment(r)
            comments[r.ply] = f"{comments[r.ply]}; {note}" if r.ply in comments else note
        tags = dict(self.game.tags)
        tags["Annotator"] = f"damii analyse {self.player}, {self.seconds:g} s a position"
        return PdnGame(tags=tags, moves=moves, comments=comments, result=self.game.result)

    def move_comment(self, r: MoveReview) -> str:
        """The comment of one move: its evaluation (and in Sci-Damath its points where it
        scored, or is marked), and for a marked move what it lost and the better line."""
        text = self._eval_text(r.after_white)
        if self.scoring and (r.mark or r.points not in (None, "0")):
            text = f"{text}; {_points(r.points)}"
        if not r.mark:
            return text
        loss = f"{r.loss / TOTALS_UNIT:.1f} points" if self.scoring \
            else f"{r.loss / MAN_UNIT:.2f} men"
        if r.mark == "?" and self.thresholds.within_margin(r.loss):
            loss = f"{loss}, within the search's margin of a blunder"
        best = r.best + (f" for {_points(r.best_points)}" if self.scoring else "")
        sign = 1 if r.mover == 0 else -1
        return (f"{text}; {MARK_NAMES[r.mark]} ({loss}); better {best} "
                f"({self._eval_text(sign * r.best_value)}): {' '.join(r.line)}")

    def _eval_text(self, white_value: float) -> str:
        """White's evaluation as the comments write it (Sci-Damath: ``lead +3.5``)."""
        text = self.value_text(white_value)
        return f"lead {text}" if self.scoring and abs(white_value) < WIN / 2 else text

    def summary_text(self) -> str:
        """The summary a side, as lines for the terminal."""
        unit = "points of lead" if self.scoring else "men"
        scale = TOTALS_UNIT if self.scoring else MAN_UNIT
        lines = []
        for name, side in zip(("White", "Black"), self.summary(), strict=True):
            who = self.game.tags.get(name, name)
            counts = ", ".join(
                f"{side.marks[m]} {MARK_NAMES[m] if side.marks[m] == 1 else _PLURALS[m]} ({m})"
                for m in MARK_NAMES)
            lines.append(f"{name} ({who}): {side.moves} moves, average loss "
                         f"{side.average_loss / scale:.2f} {unit}; {counts}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The review as plain data (the web app's answer)."""
        sides = self.summary()
        return {
            "variant": self.variant, "player": self.player, "seconds": self.seconds,
            "scoring": self.scoring, "graph": self.graph(),
            "thresholds": [self.thresholds.inaccuracy, self.thresholds.mistake,
                           self.thresholds.blunder],
            "blunder_margin": self.thresholds.blunder_margin,
            "moves": [{"ply": r.ply, "mover": r.mover, "move": r.move, "points": r.points,
                       "best": r.best, "best_points": r.best_points, "line": list(r.line),
                       "loss": r.loss, "mark": r.mark, "forced": r.forced,
                       "eval": self._eval_text(r.after_white),
                       "comment": self.move_comment(r)} for r in self.moves],
            "summary": [{"moves": s.moves, "average_loss": s.average_loss,
                         "marks": dict(s.marks)} for s in sides],
        }


def value_text(value: float, scoring: bool = False) -> str:
    """A search value as a person reads it: men with a sign (``+1.25``), in Sci-Damath
    points of the totals' lead (``+12.5``); a forced win ``W12`` / loss ``L12`` (plies to
    the end), ``Wdb`` / ``Ldb`` where the endgame database knows the result (not the plies
    to the end), from the side whose value it is."""
    if abs(value) >= WIN / 2:
        plies = int(round(WIN - abs(value)))
        return f"{'W' if value > 0 else 'L'}{plies if plies <= ROWS else 'db'}"
    return f"{value / (TOTALS_UNIT if scoring else MAN_UNIT):+.{1 if scoring else 2}f}"


def _points(points: str | None) -> str:
    if points is None:
        return "no points"
    return f"{'' if points.startswith('-') else '+'}{points} points"


def _clamp(value: float, limit: float = CLAMP) -> float:
    return max(-limit, min(limit, value))


# --- replaying the record ------------------------------------------------------------------
def replay_checked(game: PdnGame) -> list[Game]:
    """The positions of a PDN game, its start first (a :class:`Game` each, with the moves
    before it); raises :class:`PdnError` naming the move and the reason where one cannot be
    played."""
    variant = game.variant
    try:
        options = game.rule_options
    except (TypeError, ValueError) as exc:
        raise PdnError(f"the Rules tag {game.tags.get('Rules')!r:.80} cannot be read: "
                       f"{exc}; expected key=value pairs, e.g. orientation=standard") from exc
    fen = game.tags.get("FEN")
    try:
        g = Game.from_fen(fen, variant, **options) if fen else Game(variant, **options)
    except (DamiiError, TypeError, ValueError) as exc:
        what = f"FEN {fen!r:.100}" if fen else "rules"
        raise PdnError(f"the game's start cannot be set up ({what}): {exc}") from exc
    if not game.moves:
        raise PdnError("the PDN game has no moves to analyse")
    black_first = g.turn == 1
    positions = [g.copy()]
    for i, text in enumerate(game.moves):
        ply = i + (1 if black_first else 0)
        label = f"{ply // 2 + 1}{'.' if ply % 2 == 0 else '...'} {text}"
        if g.is_over():
            raise PdnError(f"move {label} (ply {i + 1}) comes after the game ended "
                           f"({g.status()})")
        try:
            g.push(text)
        except DamiiError as exc:
            raise PdnError(f"move {label} (ply {i + 1}) cannot be played: {exc}") from exc
        positions.append(g.copy())
    return positions


# --- searching ------------------------------------------------------------------------------
@dataclass(frozen=True)
class SearchJob:
    """What a worker searches: the game's PDN text, the plies of the positions (its start
    is ply 0), the player and the seconds a position."""

    pdn: str
    plies: tuple[int, ...]
    variant: str
    player: str
    seconds: float
    seed: int
    judged: tuple[int, ...] = ()
    """The plies (of `plies`) whose move is judged by these searches: there the position
    the engine's move leads to is searched too, where it is not the move played
    (:attr:`PositionEval.best_after`), so that both moves are judged by the positions
    they lead to, searched as long."""


def build_searcher(spec: str, variant: str, seconds: float, seed: int = 0,
                   **rule_options: Any) -> Any:
    """The alpha-beta player of `spec` (``pretrained:NAME`` or ``alphabeta:...``) searching
    `seconds` a position; a clear error for any other kind of player."""
    from damii_agents.players.alphabeta import AlphaBetaAgent
    from damii_agents.registry import PlayerSpec

    parsed = PlayerSpec.parse(spec)
    if parsed.kind not in ("alphabeta", "pretrained") or parsed.get("net") is not None:
        raise ReviewError(f"--player {spec!r}: the review needs the alpha-beta search's "
                          f"values and lines; give alphabeta:... or pretrained:NAME")
    if not (math.isfinite(seconds) and 0 < seconds <= 600):
        raise ReviewError(f"time a position must be in (0, 600] seconds, got {seconds}")
    player = parsed.build(variant, seed=seed, **rule_options)
    assert isinstance(player, AlphaBetaAgent)
    set_seconds(player, seconds)
    return player


def set_seconds(player: Any, seconds: float) -> None:
    """Search `seconds` a position, unless the player searches to a depth or a node
    budget its spec names (``alphabeta:depth=6``); a spec's own ``time=`` gives way."""
    if player.max_nodes is None and not _named_depth(player):
        player.depth, player.time_limit = None, seconds


def _named_depth(player: Any) -> bool:
    from damii_agents.registry import PlayerSpec

    return PlayerSpec.parse(player.name).get("depth") is not None


def search_position(player: Any, game: Game, ply: int, played: str | None = None,
                    line_plies: int = LINE_PLIES) -> PositionEval:
    """One position searched by `player` (an AlphaBetaAgent): value, move and line (the
    line only where the engine's move differs from `played`, the move the game went on
    with: elsewhere the move alone); a finished game's value is its result's (+-WIN, 0)."""
    if game.is_over():
        outcome = game.outcome()
        winner = None if outcome is None else outcome.winner
        value = 0.0 if winner is None else (WIN if winner == game.turn else -WIN)
        return PositionEval(ply=ply, turn=game.turn, value=value)
    legal = game.legal_moves()
    best = player.choose(game)
    value, depth = float(player.last_value), int(player.last_depth)
    line = [best] if str(best) == played else player.principal_line(game, line_plies)
    points = None if best.score is None else str(best.score)
    return PositionEval(ply=ply, turn=game.turn, value=value, best=str(best),
                        best_points=points, line=tuple(map(str, line)), depth=depth,
                        legal=len(legal))


def warm_up(player: Any, variant: str, **rule_options: Any) -> None:
    """A first short search, so that the first position of a review gets its whole time
    (a fresh process loads the compiled search on its first call), then a clean table."""
    limit = player.time_limit
    try:
        player.time_limit = min(limit or 0.05, 0.05)
        player.choose(Game(variant, **rule_options))
    finally:
        player.time_limit = limit
        player.reset()


_WORKER = threading.local()
"""The player of this worker (process or thread) and what it was built for."""


def run_search_job(job: SearchJob) -> list[PositionEval]:
    """A worker's share: replay the game, search the positions of `job.plies` in order (one
    player a worker process or thread, kept for the next job of the same settings: its
    table warm from position to position)."""
    from damii_env.pdn import loads

    record = loads(job.pdn)[0]
    key = (job.variant, job.player, job.seed, record.tags.get("Rules", ""))
    if getattr(_WORKER, "key", None) != key:
        _WORKER.player = build_searcher(job.player, job.variant, job.seconds, job.seed,
                                        **record.rule_options)
        warm_up(_WORKER.player, job.variant, **record.rule_options)
        _WORKER.key = key
    player = _WORKER.player
    set_seconds(player, job.seconds)
    positions = replay_checked(record)
    moves = record.moves
    out = []
    for p in job.plies:
        played = str(positions[p + 1].move_stack[-1]) if p < len(moves) else None
        found = search_position(player, positions[p], p, played=played)
        if p in job.judged and played is not None and found.best not in (None, played):
            found = replace(found, best_after=value_after(player, positions[p], found.best))
        out.append(found)
    return out


def value_after(player: Any, game: Game, move: str) -> float:
    """The value of `move` at `game` for the side to move there, by searching the position
    it leads to (minus that position's value)."""
    child = game.copy()
    child.push(move)
    return -search_position(player, child, game.ply + 1, line_plies=1).value


def search_jobs(game: PdnGame, player: str, seconds: float, workers: int = 1,
                seed: int = 0, size: int | None = None) -> list[SearchJob]:
    """The jobs that search every position of `game` (checked: a bad PDN or player spec
    raises now), in runs of `size` consecutive positions (default: about two runs a
    worker, at most 8 positions)."""
    from damii_env.pdn import dumps

    n = len(replay_checked(game))
    variant = game.variant
    build_searcher(player, variant, seconds, seed, **game.rule_options)  # a bad spec: now
    if size is None:
        size = max(1, min(8, math.ceil(n / (2 * max(1, workers)))))
    text = dumps([game])
    return [SearchJob(text, tuple(range(i, min(i + size, n))), variant, player, seconds, seed)
            for i in range(0, n, size)]


Runner = Callable[[Sequence[SearchJob]], Iterable[list[PositionEval]]]
"""Runs search jobs, yielding each job's positions as it finishes (:func:`searchers`)."""


@contextlib.contextmanager
def searchers(workers: int = 1) -> Iterator[Runner]:
    """A runner of search jobs: in this process (`workers` <= 1), else in that many
    worker processes, started once for all the jobs given to it (their players kept)."""
    if workers <= 1:
        yield lambda jobs: map(run_search_job, jobs)
        return
    with WorkerPool(workers) as pool:  # a worker that dies is reported, never waited for
        yield lambda jobs: pool.imap_unordered(run_search_job, jobs)


def search_positions(game: PdnGame, player: str, seconds: float = DEFAULT_TIME,
                     workers: int = 1, seed: int = 0,
                     progress: Callable[[int], None] | None = None,
                     runner: Runner | None = None) -> list[PositionEval]:
    """Every position of `game` (its start, then after each move) searched, in order;
    `workers` processes share them in runs of consecutive positions (through `runner`
    when given); `progress(n)` is called as n more positions are done."""
    jobs = search_jobs(game, player, seconds, workers, seed)
    with contextlib.ExitStack() as stack:
        run = runner or stack.enter_context(searchers(min(workers, len(jobs))))
        return sorted(_collect(run(jobs), progress), key=lambda p: p.ply)


def _collect(parts: Iterable[list[PositionEval]],
             progress: Callable[[int], None] | None) -> list[PositionEval]:
    out: list[PositionEval] = []
    for part in parts:
        out.extend(part)
        if progress is not None:
            progress(len(part))
    return out


# --- the review ------------------------------------------------------------------------------
def move_loss(before: PositionEval, after: PositionEval, played: str,
              decided: float | None = None) -> float:
    """What the move `played` from `before` to `after` loses against the engine's choice
    (search units, for the mover): nothing for a forced move or the engine's own choice,
    else the choice's value (found by searching the position it leads to where that was
    done: :attr:`PositionEval.best_after`) less the value after the move, both clamped to
    +-`decided` (default :data:`DECIDED`), and never below 0."""
    if before.legal == 1 or before.best is None or played == before.best:
        return 0.0
    decided = DECIDED if decided is None else decided
    played_value = after.white_value if before.turn == 0 else -after.white_value
    best = before.value if before.best_after is None else before.best_after
    return max(0.0, _clamp(best, decided) - _clamp(played_value, decided))


def review_moves(game: PdnGame, positions: Sequence[PositionEval],
                 thresholds: Thresholds | None = None,
                 verified: Sequence[PositionEval] = ()) -> list[MoveReview]:
    """Each move's review from the positions' evaluations (one more than the moves, in
    order): pure arithmetic, no search. A move whose two positions are both among
    `verified` (the longer searches of :func:`verification_jobs`) is judged on those (its
    loss, mark, better move and line); the graph's values stay the first searches'."""
    thresholds = thresholds or Thresholds()
    deeper: dict[int, PositionEval] = {}
    for p in sorted(verified, key=lambda p: (p.ply, p.best_after is None, -p.depth)):
        deeper.setdefault(p.ply, p)  # one search a ply from verification_jobs
    if len(positions) != len(game.moves) + 1:
        raise ReviewError(f"{len(positions)} positions for {len(game.moves)} moves: expected "
                          f"one more position than moves")
    replayed = replay_checked(game)
    out = []
    for i in range(len(game.moves)):
        graph_after = positions[i + 1]
        before, after = positions[i], positions[i + 1]
        if i in deeper and i + 1 in deeper:
            before, after = deeper[i], deeper[i + 1]
        mover = before.turn
        played = str(replayed[i + 1].move_stack[-1])  # every landing square, as the engine's
        played_value = after.white_value if mover == 0 else -after.white_value
        forced = before.legal == 1
        loss = move_loss(before, after, played)
        points = replayed[i + 1].move_stack[-1].score
        out.append(MoveReview(
            ply=i, mover=mover, move=played, points=None if points is None else str(points),
            best=before.best or played, best_points=before.best_points, line=before.line,
            best_value=before.value if before.best_after is None else before.best_after,
            played_value=played_value,
            after_white=graph_after.white_value, loss=loss, mark=thresholds.mark(loss),
            forced=forced))
    return out


def analyse_game(game: PdnGame, player: str | None = None, seconds: float = DEFAULT_TIME,
                 workers: int = 1, thresholds: Thresholds | None = None, seed: int = 0,
                 progress: Callable[[int], None] | None = None,
                 more: Callable[[int], None] | None = None,
                 runner: Runner | None = None) -> GameReview:
    """Search every position of `game`, search the moves that reach a mark again for
    longer (:func:`verification_jobs`) and review each move (see the module's text).
    `player` defaults to the variant's strongest shipped player (:func:`default_player`);
    `progress(n)`: n more positions searched; `more(n)`: n more positions to search (the
    verification's); `runner`: the workers to search with (default: `workers` started
    for this game, :func:`searchers`)."""
    t0 = time.perf_counter()
    player = player or default_player(game.variant)
    thresholds = thresholds or Thresholds()
    with contextlib.ExitStack() as stack:
        run = runner or stack.enter_context(searchers(min(workers, len(game.moves) + 1)))
        positions = search_positions(game, player, seconds, workers, seed, progress, run)
        jobs = verification_jobs(game, positions, player, seconds, thresholds, seed)
        if more is not None and jobs:
            more(sum(len(j.plies) for j in jobs))
        verified = _collect(run(jobs), progress)
    review = make_review(game, positions, player, seconds, thresholds, verified)
    review.elapsed = time.perf_counter() - t0
    return review


VERIFY_FACTOR = 2.0
"""A move whose loss reaches a mark is searched again, both its positions, this many times
longer, and judged on those searches."""


def verification_jobs(game: PdnGame, positions: Sequence[PositionEval], player: str,
                      seconds: float, thresholds: Thresholds | None = None,
                      seed: int = 0) -> list[SearchJob]:
    """The jobs that search the two positions of each move whose first loss reaches a
    mark again, :data:`VERIFY_FACTOR` times longer, and the position the engine's move
    leads to as long: the two moves are then judged alike, by the positions they lead to.
    One job a move, or a run of consecutive marked moves (each position searched once,
    the table warm along the run)."""
    from damii_env.pdn import dumps

    thresholds = thresholds or Thresholds()
    first = review_moves(game, sorted(positions, key=lambda p: p.ply), thresholds)
    runs: list[list[int]] = []
    for m in first:
        if not m.mark:
            continue
        if runs and runs[-1][-1] == m.ply - 1:
            runs[-1].append(m.ply)
        else:
            runs.append([m.ply])
    text = dumps([game])
    return [SearchJob(text, (*run, run[-1] + 1), game.variant, player,
                      seconds * VERIFY_FACTOR, seed, judged=tuple(run)) for run in runs]


def make_review(game: PdnGame, positions: Sequence[PositionEval], player: str,
                seconds: float, thresholds: Thresholds | None = None,
                verified: Sequence[PositionEval] = ()) -> GameReview:
    """The review of `game` from its positions' evaluations (in order, one more than the
    moves) and the longer searches of the moves that reached a mark (`verified`)."""
    thresholds = thresholds or Thresholds()
    positions = sorted(positions, key=lambda p: p.ply)
    return GameReview(game=game, variant=game.variant, positions=list(positions),
                      moves=review_moves(game, positions, thresholds, verified),
                      player=player, seconds=seconds, thresholds=thresholds,
                      verified=list(verified))


def default_player(variant: str) -> str:
    """The variant's strongest shipped player (``pretrained:NAME``), else the alpha-beta."""
    from damii_agents.registry import pretrained_names

    return f"pretrained:{variant}" if variant in pretrained_names() else "alphabeta"


def with_thresholds(review: GameReview, thresholds: Thresholds) -> GameReview:
    """The same searches reviewed with other thresholds."""
    return replace(review, thresholds=thresholds,
                   moves=review_moves(review.game, review.positions, thresholds,
                                      review.verified))


def recheck(review: GameReview, plies: Sequence[int], seconds: float, seed: int = 1,
            warm: int = 0, balanced: bool = False,
            decided: float | None = None) -> list[float]:
    """The losses of the moves at `plies` by new searches of `seconds` a position (both
    positions of each move, by a new player of the review's spec): how a longer search
    sees the review's marks (docs/ANALYSE.md, the marks' agreement); the searches are
    :func:`recheck_searches`'s, the losses :func:`move_loss`'s (values clamped to
    +-`decided`)."""
    return [move_loss(before, after, str(after_game), decided)
            for (before, after), after_game in zip(
                recheck_searches(review, plies, seconds, seed, warm, balanced),
                _played(review, plies), strict=True)]


def _played(review: GameReview, plies: Sequence[int]) -> list[str]:
    games = replay_checked(review.game)
    return [str(games[ply + 1].move_stack[-1]) for ply in plies]


def recheck_searches(review: GameReview, plies: Sequence[int], seconds: float,
                     seed: int = 1, warm: int = 0, balanced: bool = False
                     ) -> list[tuple[PositionEval, PositionEval]]:
    """The two positions of each move at `plies` searched anew, `seconds` a position, by a
    new player of the review's spec (another seed than the review's). `warm` = 0: each
    position on a cleared table (the check of docs/ANALYSE.md: nothing of the review's
    searches, nor of the move's other position, carries over); `warm` = k: the k
    positions before the move searched first and the table kept through the move's two.
    `balanced`: the engine's move valued by the position it leads to, as the review's
    second look does (off for the check: the position before is valued by its own
    search, its root value)."""
    games = replay_checked(review.game)
    player = build_searcher(review.player, review.variant, seconds, seed,
                            **review.game.rule_options)
    warm_up(player, review.variant, **review.game.rule_options)
    out = []
    for ply, played in zip(plies, _played(review, plies), strict=True):
        player.reset()
        for earlier in range(max(0, ply - warm), ply):
            player.choose(games[earlier])
        before = search_position(player, games[ply], ply, played=played, line_plies=1)
        if balanced and before.best not in (None, played):
            before = replace(before, best_after=value_after(player, games[ply], before.best))
        if not warm:
            player.reset()
        after = search_position(player, games[ply + 1], ply + 1, line_plies=1)
        out.append((before, after))
    return out


def marked(reviews: Iterable[MoveReview], mark: str) -> list[MoveReview]:
    """The moves of `reviews` with exactly `mark`."""
    return [r for r in reviews if r.mark == mark]


__all__ = ["BLUNDER_MARGIN", "CLAMP", "DECIDED", "DEFAULT_TIME", "GameReview", "MoveReview",
           "PositionEval", "ReviewError", "SearchJob", "SideSummary", "Thresholds",
           "analyse_game", "build_searcher", "default_player", "make_review", "marked",
           "move_loss", "recheck", "recheck_searches", "replay_checked", "review_moves",
           "run_search_job", "search_jobs", "search_position", "search_positions", "searchers",
           "set_seconds", "value_text", "verification_jobs", "warm_up", "with_thresholds"]

"""Game review and the analysis board (``/api/analysis...``), on the server's workers.

- ``POST /api/analysis`` starts the review of a game: one of this session's games
  (``game``: its id) or a PDN text (``pdn``, ``index``); each position is searched in
  the server's search pool, a few positions a task, in the pool's fair queue (an
  analysis takes its turn between the agents' moves, never on the last free worker);
  ``GET /api/analysis/{id}`` says how far it is and, when done, the graph, the marked
  moves and each move's better line (:meth:`~damii_agents.review.GameReview.to_dict`).
- ``POST /api/analysis/position``: the analysis board, one position (a FEN, or the
  current position of one of this session's games) searched for a given time: its
  evaluation and best line. The page asks again with a longer time to deepen it.

Fair play: a game that is rated, a club's, a tournament's board or a Sci-Damath
classroom match is never analysed while it runs, nor the position on its board (a PDN
or a FEN that reaches it): the server refuses with 403 and says why
(:func:`fair_play_refusal`).
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, Field

from damii_agents.review import (
    DEFAULT_TIME,
    PositionEval,
    ReviewError,
    SearchJob,
    build_searcher,
    default_player,
    make_review,
    replay_checked,
    run_search_job,
    search_jobs,
    search_position,
    value_text,
    verification_jobs,
)
from damii_app.serve.jobs import STOPPING, ServerStopping, TaskFailed
from damii_app.serve.specs import check_variant
from damii_app.serve.state import Server
from damii_app.serve.views import MAX_PDN_CHARS
from damii_env import Game
from damii_env.errors import DamiiError, InvalidOptionError
from damii_env.pdn import PdnGame, loads

router = APIRouter()

MAX_ANALYSES = 5
"""Reviews of games running at once on the whole server."""
MAX_KEPT = 200
"""Finished reviews kept (the oldest are forgotten first)."""
MAX_ANALYSIS_PLIES = 400
"""The longest game the server reviews (plies)."""
MAX_GAME_SECONDS = 1.0
"""The most seconds a position a review may ask for."""
MAX_BOARD_SECONDS = 5.0
"""The most seconds the analysis board searches one position."""
CHUNK = 4
"""Positions a pool task of a review (about a second of search at the default time)."""

_numbers = itertools.count(1)


@dataclass
class Analysis:
    """One review on the server: its game, progress, result or error."""

    id: str
    owner: str
    game: PdnGame
    player: str
    seconds: float
    total: int
    done: int = 0
    positions: list[PositionEval] = field(default_factory=list)
    review: dict[str, Any] | None = None
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    task: asyncio.Task | None = None

    @property
    def running(self) -> bool:
        return self.review is None and self.error is None

    def state(self) -> dict[str, Any]:
        return {"id": self.id, "done": self.done, "total": self.total,
                "running": self.running, "error": self.error, "review": self.review,
                "variant": self.game.variant, "player": self.player,
                "seconds": self.seconds, "moves": list(self.game.moves),
                "white": self.game.tags.get("White", "White"),
                "black": self.game.tags.get("Black", "Black"), "result": self.game.result}


def analyses(server: Any) -> dict[str, Analysis]:
    """The server's reviews (kept on its state: the reviews are this module's alone)."""
    book = server.__dict__.get("analyses")
    if book is None:
        book = server.__dict__.setdefault("analyses", {})
    return book


# --- fair play --------------------------------------------------------------------------
def protected_kind(server: Any, game: Any) -> str | None:
    """What makes a live game one that no analysis may touch while it runs (a classroom
    match, a tournament's board, a club's game, a rated game), or None (a casual game)."""
    if game.match is not None:
        return "a Sci-Damath classroom match"
    store = getattr(server, "store", None)
    if store is not None and getattr(server, "tournaments", None) is not None:
        if store.query("SELECT 1 FROM pairings WHERE game = ?", (game.id,)):
            return "a tournament game"
    clubs = getattr(server, "clubs", None)
    if clubs is not None and game.id in clubs.game_club:
        return "a club game"
    if not game.casual:
        return "a rated game"
    return None


def fair_play_refusal(server: Any, game: Any) -> str | None:
    """Why `game` may not be analysed now (it runs and is protected), or None."""
    if game.over:
        return None
    kind = protected_kind(server, game)
    if kind is None:
        return None
    return (f"fair play: game {game.id} is {kind} and still being played; no engine "
            f"analysis while it runs (analyse it when it has ended)")


def _running_position_refusal(server: Any, fen: str, variant: str) -> str | None:
    """Why a position may not be analysed: it is on the board of a running protected
    game (a copied PDN or FEN of it), or None."""
    for game in list(server.games.values()):
        if game.over or game.variant != variant or game.game.fen() != fen:
            continue
        kind = protected_kind(server, game)
        if kind is not None:
            return (f"fair play: this position is on the board of {kind} that is still "
                    f"being played; no engine analysis of it while it runs")
    return None


def _refuse(reason: str | None) -> None:
    if reason is not None:
        raise HTTPException(403, reason)


# --- reviews -----------------------------------------------------------------------------
class AnalysisIn(BaseModel):
    game: str | None = Field(None, max_length=64)
    """One of this session's games (its id)."""
    pdn: str | None = Field(None, min_length=1, max_length=MAX_PDN_CHARS)
    index: int = Field(0, ge=0, le=1_000_000)
    """Which game of the PDN text."""
    seconds: float = Field(DEFAULT_TIME, gt=0, le=MAX_GAME_SECONDS)


def _game_text(body: AnalysisIn, request: Request, server: Any) -> str:
    """The PDN text to review: this session's game (refused while a protected one runs)
    or the text sent."""
    if (body.game is None) == (body.pdn is None):
        raise InvalidOptionError("give either game (one of your games' id) or pdn (a PDN "
                                 "text), not both")
    if body.game is not None:
        live = server.own_game(request.state.session, body.game)
        _refuse(fair_play_refusal(server, live))
        return live.pdn()
    return body.pdn


def _prepared(text: str, index: int, seconds: float
              ) -> tuple[PdnGame, str, str, list[SearchJob]]:
    """In a thread (a long PDN takes time to read): game `index` of the text, checked
    (it replays, it is not too long), its last position's FEN, the player and the review's
    pool tasks."""
    games = loads(text)
    if not 0 <= index < len(games):
        raise InvalidOptionError(f"game {index} asked for; the PDN holds {len(games)} "
                                 f"game(s), numbered from 0")
    record = games[index]
    if len(record.moves) > MAX_ANALYSIS_PLIES:
        raise InvalidOptionError(f"the game has {len(record.moves)} plies; the server "
                                 f"reviews games of at most {MAX_ANALYSIS_PLIES}")
    try:
        last = replay_checked(record)[-1].fen()
        player = default_player(record.variant)
        return record, last, player, search_jobs(record, player, seconds, size=CHUNK)
    except ReviewError as exc:
        raise InvalidOptionError(str(exc)) from exc


def _room_for(book: dict[str, Analysis], sid: str) -> None:
    if sum(1 for a in book.values() if a.running) >= MAX_ANALYSES:
        raise HTTPException(503, f"the server runs {MAX_ANALYSES} analyses already; try again "
                                 f"when one has finished", headers={"Retry-After": "10"})
    if any(a.running and a.owner == sid for a in book.values()):
        raise HTTPException(429, "one analysis at a time: yours is still running")


@router.post("/api/analysis")
async def start_analysis(body: AnalysisIn, request: Request, server: Server
                         ) -> dict[str, Any]:
    """Start reviewing a game; poll ``GET /api/analysis/{id}`` for the progress and the
    result."""
    sid = request.state.session
    text = _game_text(body, request, server)
    book = analyses(server)
    _room_for(book, sid)
    index = body.index if body.game is None else 0
    loop = asyncio.get_running_loop()
    record, last, player, jobs = await loop.run_in_executor(None, _prepared, text, index,
                                                            body.seconds)
    _refuse(_running_position_refusal(server, last, record.variant))  # a copied PDN
    _room_for(book, sid)  # again: another request may have started one meanwhile
    aid = f"a{next(_numbers)}{secrets.token_hex(4)}"
    analysis = Analysis(aid, sid, record, player, body.seconds,
                        total=sum(len(j.plies) for j in jobs))
    _forget_old(book)
    book[aid] = analysis
    analysis.task = asyncio.create_task(_run(server, analysis, jobs))
    return analysis.state()


def _forget_old(book: dict[str, Analysis]) -> None:
    done = sorted((a for a in book.values() if not a.running), key=lambda a: a.started)
    for old in done[:max(0, len(book) - MAX_KEPT + 1)]:
        book.pop(old.id, None)


def search_task(job: SearchJob) -> list[PositionEval] | DamiiError:
    """:func:`~damii_agents.review.run_search_job` as a pool task: an error comes back as
    a value, not raised."""
    try:
        return run_search_job(job)
    except DamiiError as exc:
        return exc


async def _run(server: Any, analysis: Analysis, jobs: list[SearchJob]) -> None:
    """Submit every job to the pool (its fair queue interleaves them with the agents'
    moves), gather the positions, then the review."""
    try:
        if not await _gather(server, analysis, jobs, analysis.positions):
            return
        jobs = verification_jobs(analysis.game, analysis.positions, analysis.player,
                                 analysis.seconds)
        analysis.total += sum(len(j.plies) for j in jobs)
        verified: list[PositionEval] = []
        if not await _gather(server, analysis, jobs, verified):
            return
        review = make_review(analysis.game, analysis.positions, analysis.player,
                             analysis.seconds, verified=verified)
        review.elapsed = time.monotonic() - analysis.started
        analysis.review = review.to_dict()
    except asyncio.CancelledError:
        server.pool.cancel(f"analysis:{analysis.id}")
        analysis.error = "the analysis was stopped"
        raise
    except DamiiError as exc:
        analysis.error = f"the analysis failed: {exc}"


async def _gather(server: Any, analysis: Analysis, jobs: list[SearchJob],
                  into: list[PositionEval]) -> bool:
    """Run `jobs` in the pool (its fair queue interleaves them with the agents' moves),
    their positions into `into`, counted in the analysis's progress; False (the error
    said) when one failed."""
    futures = [server.pool.submit(search_task, job, key=f"analysis:{analysis.id}",
                                  share=f"analysis:{analysis.owner}", heavy=True)
               for job in jobs]
    for waiting in asyncio.as_completed([asyncio.wrap_future(f) for f in futures]):
        out = await waiting
        if isinstance(out, (TaskFailed, DamiiError)):
            analysis.error = ("the server is stopping" if str(out) == STOPPING
                              else f"the analysis failed: {out}")
            server.pool.cancel(f"analysis:{analysis.id}")
            return False
        into.extend(out)
        analysis.done += len(out)
    return True


@router.get("/api/analysis/{aid}")
async def get_analysis(aid: str, request: Request, server: Server) -> dict[str, Any]:
    """A review of this session: its progress, and the result when done."""
    analysis = analyses(server).get(aid)
    if analysis is None or analysis.owner != request.state.session:
        raise HTTPException(404, f"no analysis {aid!r} in this session")
    return analysis.state()


# --- the analysis board --------------------------------------------------------------------
class PositionIn(BaseModel):
    variant: str = Field("damii", max_length=40)
    fen: str | None = Field(None, max_length=2000)
    """The position (default: the variant's start)."""
    game: str | None = Field(None, max_length=64)
    """Or the current position of one of this session's games (a hint in a casual game)."""
    seconds: float = Field(DEFAULT_TIME, gt=0, le=MAX_BOARD_SECONDS)


def board_task(args: tuple[str, str, str, float]) -> dict[str, Any] | DamiiError:
    """A pool task: one position (variant, FEN, player, seconds) searched; its evaluation
    and line, or the error."""
    variant, fen, player, seconds = args
    try:
        game = Game.from_fen(fen, variant)
        searcher = build_searcher(player, variant, seconds)
        found = search_position(searcher, game, 0)
    except (DamiiError, ValueError) as exc:
        return exc if isinstance(exc, DamiiError) else InvalidOptionError(str(exc))
    scoring = variant == "damath"
    return {"fen": fen, "variant": variant, "turn": found.turn, "value": found.value,
            "white_value": found.white_value, "eval": value_text(found.white_value, scoring),
            "scoring": scoring, "best": found.best, "best_points": found.best_points,
            "line": list(found.line), "depth": found.depth, "legal": found.legal,
            "seconds": seconds, "player": player}


@router.post("/api/analysis/position")
async def analyse_position(body: PositionIn, request: Request, server: Server
                           ) -> dict[str, Any]:
    """The analysis board: one position's evaluation and best line."""
    if body.game is not None:
        live = server.own_game(request.state.session, body.game)
        _refuse(fair_play_refusal(server, live))
        variant, fen = live.variant, live.game.fen()
    else:
        variant = check_variant(body.variant)
        try:  # the engine's own writing of the position (the fair-play check compares it)
            fen = Game.from_fen(body.fen, variant).fen() if body.fen else Game(variant).fen()
        except (DamiiError, ValueError) as exc:
            raise InvalidOptionError(f"the FEN cannot be set up in {variant}: {exc}") from exc
        _refuse(_running_position_refusal(server, fen, variant))
    future = server.pool.submit(board_task, (variant, fen, default_player(variant),
                                             body.seconds),
                                key=f"board:{request.state.session}",
                                share=f"analysis:{request.state.session}", heavy=True,
                                replace=True)
    out = await asyncio.wrap_future(future)
    if isinstance(out, TaskFailed) and str(out) == STOPPING:
        raise ServerStopping(STOPPING)
    if isinstance(out, TaskFailed):
        raise InvalidOptionError(f"the position could not be analysed: {out}")
    if isinstance(out, DamiiError):
        raise out
    return out

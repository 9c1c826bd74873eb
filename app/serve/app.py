"""The web app of ``damii serve``: a FastAPI application with a JSON API, websockets that
push live games and arena matches, and a static page (plain HTML, JS and SVG).

Each browser gets a session cookie; its games, replays and arena matches are reachable
from that session only. Agents' searches run in a pool of worker processes
(:mod:`damii_app.serve.jobs`), never on the event loop. Checkpoints (``ckpt:`` specs)
come only from the configured weights folder.
"""

from __future__ import annotations

import asyncio
import secrets
import sqlite3
import sys
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import HTTPConnection

from damii_agents.match.game_loop import COLOURS, Clock, game_options
from damii_agents.registry import AgentSpecError, parse_spec, pretrained_names
from damii_app.serve.jobs import TaskFailed, make_pool
from damii_app.serve.live import ArenaWatch, LiveGame, Seat
from damii_app.serve.store import Store
from damii_app.serve.views import MAX_PDN_CHARS, position, replay_task
from damii_env import Game
from damii_env.errors import DamiiError, IllegalMoveError, InvalidOptionError
from damii_env.player import PlayerSpecError, make_player, spec_kind
from damii_env.rules import PRESETS

STATIC = Path(__file__).resolve().parent / "static"
ROOT = Path(__file__).resolve().parents[2]
COOKIE = "damii_session"
HUMAN = "human"
MAX_GAMES_PER_SESSION = 20
MAX_ARENAS_PER_SESSION = 3
MAX_AGENT_MATCHES = 8
"""Games between two agents and arena matches running at once, all sessions together (a
session has its own limits too, but anyone can open many sessions)."""
BASE_SPECS = ("random", "greedy", "alphabeta:depth=2", "alphabeta:depth=4",
              "alphabeta:time=0.5")
SERVER_LIMITS: dict[str, dict[str, float]] = {
    "alphabeta": {"depth": 10, "time": 5.0, "nodes": 2_000_000, "tt": 20},
    "ckpt": {"depth": 4, "time": 5.0, "nodes": 200_000, "sims": 800},
    "pretrained": {"depth": 4, "time": 5.0, "nodes": 200_000, "sims": 800, "tt": 20},
}
"""The largest searches the server plays (a spec asking for more is refused): one job
must finish well within :data:`~damii_app.serve.jobs.JOB_DEADLINE`, and a transposition
table of 2**20 entries keeps a worker's memory small."""
MAX_MESSAGE_CHARS = 400
MAX_SESSIONS = 100_000


def pretrained_specs(variant: str) -> tuple[str, ...]:
    """The shipped players of a variant as the page offers them, named as in the help and
    the README: the strongest (the alpha-beta with the learned evaluation, 0.1 s a move),
    the network's policy alone, the network's own search."""
    if variant not in pretrained_names():
        return ()
    return (f"pretrained:{variant}", f"pretrained:{variant},net=policy",
            f"pretrained:{variant},net=search,depth=2")


def default_weights_dir() -> Path:
    """The folder of the shipped weights: ``agents/weights`` or the repository's
    ``weights`` (the first that holds ``.pt`` files)."""
    candidates = (ROOT / "agents" / "weights", ROOT / "weights",
                  ROOT / "damii_env" / "weights", ROOT / "training" / "weights")
    for candidate in candidates:
        if candidate.is_dir() and any(candidate.glob("*.pt")):
            return candidate
    return candidates[0]


class NewGame(BaseModel):
    variant: str = Field("damii", max_length=40)
    white: str = Field(HUMAN, max_length=300)
    black: str = Field("random", max_length=300)
    clock: str = Field("none", max_length=40)
    casual: bool = True
    """Casual games allow take-backs; the others are rated (in the database's ladder)."""
    name: str | None = Field(None, min_length=1, max_length=40,
                             pattern=r"^[A-Za-z0-9 _.\-]+$")
    """The person's name (its human seats' label and its name in the ladder)."""
    fen: str | None = Field(None, max_length=2000)
    seed: int | None = Field(None, ge=0, le=2**31)


NAME = Field("guest", min_length=1, max_length=40, pattern=r"^[A-Za-z0-9 _.\-]+$")
HEARTBEAT_SECONDS = 1.5
"""How often the page says it is there (in a lobby game)."""
HEARTBEAT_TIMEOUT = 5.0
"""A seat not heard for this long is away: its reconnection grace starts."""


class LobbyIn(BaseModel):
    variant: str = Field("damii", max_length=40)
    clock: str = Field("none", max_length=40)
    casual: bool = False
    name: str = NAME


class JoinIn(BaseModel):
    name: str = NAME


class MoveIn(BaseModel):
    move: str = Field(..., min_length=1, max_length=300)


class SideIn(BaseModel):
    side: Literal["white", "black"] | None = None


class DrawIn(BaseModel):
    action: Literal["offer", "accept", "decline"]
    side: Literal["white", "black"] | None = None


class ReplayIn(BaseModel):
    pdn: str = Field(..., min_length=1, max_length=MAX_PDN_CHARS)
    index: int = Field(0, ge=0, le=1_000_000)


class ArenaIn(BaseModel):
    variant: str = Field("damii", max_length=40)
    specs: list[str] = Field(..., min_length=2, max_length=6)
    games: int = Field(2, ge=1, le=100)
    clock: str = Field("none", max_length=40)
    delay: float = Field(0.3, ge=0.0, le=5.0)


class SpecChecker:
    """Checks player specs: each is parsed once; a ``ckpt:`` path must name a file in the
    weights folder and is rebuilt into the spec to run (no option can replace it); the
    server's :data:`SERVER_LIMITS` hold; the player must play the game's variant."""

    def __init__(self, weights_dir: Path) -> None:
        self.weights_dir = weights_dir.resolve()

    def checkpoints(self) -> list[str]:
        """The checkpoint files offered (names relative to the weights folder; links that
        lead out of it are not offered)."""
        if not self.weights_dir.is_dir():
            return []
        return sorted(str(p.relative_to(self.weights_dir))
                      for p in self.weights_dir.rglob("*.pt")
                      if p.is_file() and p.resolve().is_relative_to(self.weights_dir))

    def public(self, text: str) -> str:
        """`text` fit to show: no server paths (the weights folder by its name), short."""
        for folder, name in ((self.weights_dir, self.weights_dir.name), (ROOT, ".")):
            text = text.replace(str(folder), name)
        return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + "..."

    def resolve(self, spec: str) -> str:
        """The spec to run (a checkpoint path made absolute), or a clear error."""
        if not isinstance(spec, str) or not spec.strip():
            raise PlayerSpecError("empty player spec; expected human, random, greedy, "
                                  "alphabeta:depth=N or ckpt:FILE")
        spec = spec.strip()
        if spec_kind(spec) not in SERVER_LIMITS and spec_kind(spec) != "ckpt":
            return spec
        kind, options = parse_spec(spec)
        for key, cap in SERVER_LIMITS.get(kind, {}).items():
            try:
                value = float(options.get(key, "0"))
            except ValueError:
                continue  # make_player says what is wrong with it
            if value > cap:
                raise AgentSpecError(f"{spec!r:.100}: this server plays {key} up to {cap:g}")
        if kind != "ckpt":
            return spec
        path_text = options.pop("path")
        resolved = self._checkpoint(path_text)
        rest = "".join(f",{k}={v}" for k, v in options.items())
        return f'ckpt:"{resolved}"{rest}'

    def _checkpoint(self, path_text: str) -> Path:
        offered = ", ".join(self.checkpoints()) or "none"
        where = (f"checkpoints come only from the weights folder {self.weights_dir.name}/ "
                 f"(offered: {offered}); e.g. ckpt:damii.pt")
        path = Path(path_text.strip())
        candidates = [path] if path.is_absolute() else \
            [self.weights_dir / path, self.weights_dir.parent / path]
        for candidate in candidates:
            try:
                resolved = candidate.resolve()
                inside = resolved.is_relative_to(self.weights_dir)
                if inside and resolved.is_dir():
                    raise PlayerSpecError(f"checkpoint {path_text!r:.80} is a folder, not a "
                                          f"checkpoint file; {where}")
                if inside and resolved.is_file():
                    return resolved
            except (OSError, ValueError) as exc:
                if isinstance(exc, DamiiError):
                    raise
                raise PlayerSpecError(f"checkpoint name {path_text!r:.80} cannot be used; "
                                      f"{where}") from None
        raise PlayerSpecError(f"checkpoint {path_text!r:.80} refused: {where}")

    def check(self, spec: str, variant: str) -> str:
        """Resolve a spec and build its player once, so that bad options are reported."""
        resolved = self.resolve(spec)
        plays = _build(resolved, variant)
        if plays is not None and plays != variant:
            raise PlayerSpecError(f"{spec.strip()!r:.100} plays {plays}, not {variant}")
        return resolved


@lru_cache(maxsize=64)
def _build(spec: str, variant: str) -> str | None:
    """Build the player once; the variant it was made for (None: any)."""
    player = make_player(spec, variant)
    rules = getattr(getattr(player, "engine", None), "rules", None)
    return None if rules is None else rules.name


def warm_up() -> None:
    """Compile the engine for every variant (and the page's views) before the first
    request: numba compiles on first use, which took over 30 s on a cold cache."""
    for variant in PRESETS:
        game = Game(variant, **game_options(variant))
        position(game, legal=True)
        game.push(game.legal_moves()[0])


def _check_variant(variant: str) -> str:
    name = variant.strip().lower()
    if name not in PRESETS:
        raise InvalidOptionError(f"unknown variant {variant!r}; expected one of: "
                                 f"{', '.join(PRESETS)}")
    return name


def create_app(weights_dir: str | Path | None = None, workers: int = 2,
               agent_delay: float = 0.25, job_deadline: float | None = None,
               db: str | Path | None = None, grace: float = 90.0,
               heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
               max_agent_matches: int = MAX_AGENT_MATCHES) -> FastAPI:
    """The app. `workers`: search processes (0: threads of this process, for tests);
    `agent_delay`: seconds between moves when agents play each other; `job_deadline`:
    seconds after which a search's worker is replaced (default: jobs.JOB_DEADLINE); `db`:
    the SQLite database of players, finished games and the ladder (None: none kept);
    `grace`: seconds a lobby player who lost the connection has to come back (and a
    person of a game reloaded after a restart); `max_agent_matches`: agent-against-agent
    games and arena matches running at once on the whole server."""
    checker = SpecChecker(Path(weights_dir) if weights_dir else default_weights_dir())
    games: dict[str, LiveGame] = {}
    arenas: dict[str, ArenaWatch] = {}
    sessions: OrderedDict[str, None] = OrderedDict()
    kept: dict[str, tuple[dict[str, Any], list[str]]] = {}
    """What the database holds of each game in progress: its row and its moves."""
    replays = asyncio.Semaphore(1)

    def _error(status: int, message: str) -> JSONResponse:
        """The one error format: ``{"error": text}`` (no server paths, short)."""
        return JSONResponse({"error": checker.public(message)}, status_code=status)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.pool = make_pool(workers, *(() if job_deadline is None else (job_deadline,)))
        app.state.store = Store(db) if db is not None else None
        ticker = asyncio.create_task(tick())
        try:
            await asyncio.to_thread(warm_up)
            if workers > 0:  # each worker is started (and warmed up) before the first game
                await asyncio.gather(*(asyncio.wrap_future(app.state.pool.submit(abs, 0))
                                       for _ in range(workers)))
            if app.state.store is not None:
                restore(app.state.store)
            yield
        finally:
            ticker.cancel()
            for arena in arenas.values():
                arena.stop()
            for game in games.values():
                game.close()
            app.state.pool.shutdown()
            if app.state.store is not None:
                app.state.store.close()

    app = FastAPI(title="damii serve", lifespan=lifespan, docs_url="/api/docs",
                  redoc_url=None, openapi_url="/api/openapi.json")
    app.state.checker = checker
    app.state.games = games
    app.state.arenas = arenas

    class SessionCookie:
        """Gives every HTTP request its session (``request.state.session``): the cookie's
        id where this server issued it, else a fresh one set in the reply. A plain ASGI
        middleware (Starlette's ``BaseHTTPMiddleware`` cost about a quarter of the event
        loop's time under benchmarks/serve_load.py)."""

        def __init__(self, app: Callable) -> None:
            self.app = app

        async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
            if scope["type"] != "http":
                await self.app(scope, receive, send)
                return
            sid = HTTPConnection(scope).cookies.get(COOKIE)
            fresh = sid not in sessions  # only ids this server issued
            if fresh:
                sid = secrets.token_urlsafe(18)
                sessions[sid] = None
                while len(sessions) > MAX_SESSIONS:
                    sessions.popitem(last=False)
            scope.setdefault("state", {})["session"] = sid
            if not fresh:
                await self.app(scope, receive, send)
                return
            cookie = f"{COOKIE}={sid}; HttpOnly; Path=/; SameSite=strict".encode()

            async def send_with_cookie(message: dict) -> None:
                if message["type"] == "http.response.start":
                    message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
                await send(message)

            await self.app(scope, receive, send_with_cookie)

    app.add_middleware(SessionCookie)

    @app.exception_handler(DamiiError)
    async def damii_error(request: Request, exc: DamiiError) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for err in exc.errors():
            where = ".".join(str(x) for x in err.get("loc", ()) if x != "body")
            parts.append(f"{where or 'request'}: {err.get('msg', 'invalid')}")
        return _error(400, "invalid request: " + "; ".join(parts))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, f"internal error ({type(exc).__name__}); the server goes on")

    def restore(store: Store) -> None:
        """After a restart: the sessions that play games in progress, and those games
        (each person's seat gets the grace time from now to come back; an agent to move
        is asked again)."""
        for sid in store.sessions(prune=True):
            sessions[sid] = None
        for row in store.live_games():
            if row["id"] in games:
                continue
            try:
                game = LiveGame.restore(row, app.state.pool, agent_delay=agent_delay,
                                        public=checker.public, on_end=keep,
                                        on_change=persist, grace=grace,
                                        heartbeat_timeout=heartbeat_timeout)
            except (DamiiError, ValueError, KeyError, TypeError) as exc:
                print(f"damii serve: game {row['id']} in progress cannot be taken up again "
                      f"and stays in the database: {checker.public(str(exc))}",
                      file=sys.stderr)
                continue
            games[game.id] = game
            kept[game.id] = (game.kept(), list(row["moves"]))
            if game.over:  # its last move ended it before the restart could record it
                keep(game)
                continue
            game.schedule_agent()

    def persist(game: LiveGame) -> None:
        """Keep a game in progress in the database as it changes: its row when it starts
        and when a seat or an offer changes, then each move (one transaction a change)."""
        store: Store | None = app.state.store
        if store is None or game.over:
            return
        row, stack = game.kept(), game.game.move_stack
        try:
            held = kept.get(game.id)
            if held is None:
                moves = [str(m) for m in stack]
                store.open_live(game.id, row, moves, game.sessions())
                kept[game.id] = (row, moves)
                return
            old_row, old_moves = held
            same = min(len(old_moves), len(stack))  # the plies kept that are still played
            if same and str(stack[same - 1]) != old_moves[same - 1]:
                same = next((i for i in range(same) if str(stack[i]) != old_moves[i]), same)
            if same == len(old_moves) == len(stack) and row == old_row:
                return
            new = [str(m) for m in stack[same:]]
            changed = row != old_row
            store.update_live(game.id, row if changed else None, same, new,
                              game.sessions() if changed else set())
            kept[game.id] = (row, old_moves[:same] + new)
        except sqlite3.Error as exc:  # the game goes on; the next change writes it whole
            kept.pop(game.id, None)
            print(f"damii serve: game {game.id} could not be written to the database: "
                  f"{exc}", file=sys.stderr)

    def forget(game: LiveGame) -> None:
        """A game in progress that will not be finished (evicted): out of the database."""
        game.close()
        games.pop(game.id, None)
        if kept.pop(game.id, None) is not None and app.state.store is not None:
            app.state.store.drop_live(game.id)

    async def tick() -> None:
        """Heartbeats: absent lobby players lose once their grace is over."""
        while True:
            await asyncio.sleep(min(0.5, heartbeat_timeout / 3))
            for game in list(games.values()):
                game.check_connections()

    def agents_only_room() -> None:
        """Refuse a new game between agents or arena match when the server runs its
        limit of them already (all sessions together)."""
        running = sum(1 for g in games.values() if not g.over and not any(
            s.human for s in g.seats)) + sum(1 for a in arenas.values() if a.running)
        if running >= max_agent_matches:
            raise HTTPException(503, f"the server is running {running} games between agents "
                                     f"and arena matches, its limit for all users together "
                                     f"({max_agent_matches}); try again when one has "
                                     f"finished")

    def own_game(request: Request, gid: str) -> LiveGame:
        """A game this session may see: its own, or any lobby game (read-only)."""
        game = games.get(gid)
        if game is None or not (game.lobby or game.owner == request.state.session):
            raise HTTPException(404, f"no game {gid!r} in this session")
        return game

    def playing(request: Request, gid: str) -> tuple[LiveGame, str | None]:
        """A game this session plays in, and the side it speaks for in a lobby game."""
        game = own_game(request, gid)
        sides = game.sides_of(request.state.session)
        if not sides:
            raise HTTPException(403, "you watch this game; only its players move")
        game.heartbeat(request.state.session)  # a player who acts is there
        return game, COLOURS[sides[0]] if game.lobby else None

    def own_arena(request: Request, aid: str) -> ArenaWatch:
        arena = arenas.get(aid)
        if arena is None or arena.owner != request.state.session:
            raise HTTPException(404, f"no arena match {aid!r} in this session")
        return arena

    async def checked(spec: str, variant: str) -> str:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, checker.check, spec, variant)

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/api/meta")
    async def meta() -> dict[str, Any]:
        """Variants, clocks and the players on offer."""
        ckpts = checker.checkpoints()
        return {"variants": list(PRESETS), "clocks": ["none", "blitz", "standard"],
                "players": [HUMAN, *BASE_SPECS],
                "pretrained": {v: list(pretrained_specs(v)) for v in PRESETS},
                "checkpoints": {v: [f"ckpt:{c}" for c in ckpts if Path(c).stem.startswith(v)]
                                for v in PRESETS},
                "weights_dir": checker.weights_dir.name}

    @app.post("/api/games")
    async def new_game(body: NewGame, request: Request) -> dict[str, Any]:
        """Start a game; each seat is ``human`` or a player spec."""
        sid = request.state.session
        variant = _check_variant(body.variant)
        clock = Clock.parse(body.clock, variant)
        seats = []
        for text in (body.white, body.black):
            if text.strip().lower() == HUMAN:
                seats.append(Seat(body.name.strip() if body.name else "human"))
            else:
                seats.append(Seat(text.strip(), await checked(text, variant)))
        if not any(seat.human for seat in seats):
            agents_only_room()
        mine = sorted((g for g in games.values() if g.owner == sid), key=lambda g: g.created)
        while len(mine) >= MAX_GAMES_PER_SESSION:
            forget(mine.pop(0))
        gid = secrets.token_urlsafe(9)
        game = LiveGame(gid, sid, variant, seats, clock, body.casual, request.app.state.pool,
                        fen=body.fen, seed=body.seed, agent_delay=agent_delay,
                        public=checker.public, on_end=keep, on_change=persist, grace=grace,
                        heartbeat_timeout=heartbeat_timeout)
        games[gid] = game
        if not game.over:
            persist(game)
        game.schedule_agent()
        return game.state()

    def keep(game: LiveGame) -> None:
        """A finished game goes into the database (rated: not casual, no take-back) and
        leaves the games in progress there, in one transaction."""
        store: Store | None = app.state.store
        if store is None or game.end is None:
            return
        kept.pop(game.id, None)
        sides = [(s.label, "person" if s.human else "agent") for s in game.seats]
        store.record_game(game.id, game.variant, sides[0], sides[1], game.end.result,
                          game.end.termination, not game.casual and not game.took_back,
                          game.pdn())

    @app.get("/api/ladder")
    async def ladder() -> dict[str, Any]:
        """The Elo ladder of people and agents over rated games (needs ``--db``)."""
        store: Store | None = app.state.store
        return {"players": store.ladder() if store else [], "kept": store is not None}

    @app.get("/api/history")
    async def history() -> dict[str, Any]:
        """The latest finished games with their PDN (needs ``--db``)."""
        store: Store | None = app.state.store
        return {"games": store.history() if store else [], "kept": store is not None}

    @app.get("/api/games/{gid}")
    async def get_game(gid: str, request: Request) -> dict[str, Any]:
        return own_game(request, gid).state()

    @app.post("/api/games/{gid}/move")
    async def move(gid: str, body: MoveIn, request: Request) -> dict[str, Any]:
        game, _side = playing(request, gid)
        if game.lobby and game.game.turn not in game.sides_of(request.state.session):
            raise IllegalMoveError(f"it is {COLOURS[game.game.turn]}'s turn, not yours")
        game.play(body.move)
        return game.state()

    @app.post("/api/games/{gid}/resign")
    async def resign(gid: str, body: SideIn, request: Request) -> dict[str, Any]:
        game, side = playing(request, gid)
        game.resign(side or body.side)
        return game.state()

    @app.post("/api/games/{gid}/draw")
    async def draw(gid: str, body: DrawIn, request: Request) -> dict[str, Any]:
        game, side = playing(request, gid)
        await game.draw(body.action, side or body.side)
        return game.state()

    @app.post("/api/games/{gid}/takeback")
    async def takeback(gid: str, request: Request) -> dict[str, Any]:
        game, _side = playing(request, gid)
        if game.lobby:
            raise InvalidOptionError("take-backs are for games on one screen")
        game.takeback()
        return game.state()

    @app.post("/api/games/{gid}/heartbeat")
    async def heartbeat(gid: str, request: Request) -> dict[str, Any]:
        """The page is there (every 1.5 s in a lobby game; the websocket's messages count
        too)."""
        own_game(request, gid).heartbeat(request.state.session)
        return {"ok": True, "every": HEARTBEAT_SECONDS}

    @app.post("/api/lobby")
    async def open_game(body: LobbyIn, request: Request) -> dict[str, Any]:
        """Open a game between people at different browsers; another one joins it."""
        sid = request.state.session
        variant = _check_variant(body.variant)
        clock = Clock.parse(body.clock, variant)
        mine = [g for g in games.values() if g.owner == sid and g.lobby and not g.over]
        if len(mine) >= MAX_ARENAS_PER_SESSION:
            raise InvalidOptionError(f"at most {MAX_ARENAS_PER_SESSION} open lobby games a "
                                     f"session; finish one first")
        gid = secrets.token_urlsafe(9)
        game = LiveGame(gid, sid, variant, (Seat(body.name.strip(), session=sid),
                                            Seat("open")), clock, body.casual,
                        request.app.state.pool, public=checker.public, on_end=keep,
                        lobby=True, grace=grace, heartbeat_timeout=heartbeat_timeout,
                        on_change=persist)
        game.heartbeat(sid)
        games[gid] = game
        persist(game)
        return game.state()

    @app.get("/api/lobby")
    async def lobby(request: Request) -> dict[str, Any]:
        """Lobby games: open ones to join, those in play to watch, and the colours this
        session plays in each (``you``: a page that was closed comes back to its game)."""
        sid = request.state.session
        out = [{"id": g.id, "variant": g.variant, "white": g.seats[0].label,
                "black": g.seats[1].label, "open": g.open, "clock": str(g.clock),
                "rated": not g.casual, "you": g.sides_of(sid)}
               for g in games.values() if g.lobby and not g.over]
        return {"games": out, "heartbeat_seconds": HEARTBEAT_SECONDS, "grace": grace}

    @app.post("/api/lobby/{gid}/join")
    async def join(gid: str, body: JoinIn, request: Request) -> dict[str, Any]:
        game = games.get(gid)
        if game is None or not game.lobby:
            raise HTTPException(404, f"no lobby game {gid!r}")
        game.join(request.state.session, body.name.strip())
        return game.state()

    @app.get("/api/games/{gid}/pdn")
    async def game_pdn(gid: str, request: Request) -> PlainTextResponse:
        game = own_game(request, gid)
        return PlainTextResponse(game.pdn(), headers={
            "Content-Disposition": f'attachment; filename="damii-{gid}.pdn"'})

    async def push(websocket: WebSocket, get: Callable[[], Any],
                   heard: Callable[[], None] | None = None) -> None:
        """Send the state whenever it changes (woken by the game's Notifier, not polled),
        until the page goes or the server stops (a disconnect is noticed at once: a
        finished game never changes, and uvicorn waits for open handlers before it exits).
        A running clock also wakes it when the time is up."""
        gone = asyncio.Event()
        first = get()
        if first is None:
            await websocket.close(code=4404)
            return

        async def watch() -> None:
            try:
                while (await websocket.receive())["type"] != "websocket.disconnect":
                    if heard is not None:
                        heard()  # any message from the page is a heartbeat
            except (WebSocketDisconnect, RuntimeError):
                pass
            finally:
                gone.set()
                first.changed.notify()

        watcher = asyncio.create_task(watch())
        sent = -1
        try:
            while not gone.is_set():
                obj = get()
                if obj is None:
                    await websocket.close(code=4404)
                    return
                tick = obj.changed.ticks
                state = obj.state()
                if state["version"] != sent:
                    sent = state["version"]
                    await websocket.send_json(state)
                timeout = 30.0
                left = obj.remaining() if isinstance(obj, LiveGame) else None
                if left is not None:
                    timeout = max(0.02, min(timeout, left + 0.02))
                await obj.changed.wait(tick, timeout)
        except (WebSocketDisconnect, RuntimeError):
            return
        finally:
            watcher.cancel()

    @app.websocket("/api/games/{gid}/ws")
    async def game_ws(websocket: WebSocket, gid: str) -> None:
        sid = websocket.cookies.get(COOKIE)
        game = games.get(gid)
        if game is None or sid not in sessions or not (game.lobby or game.owner == sid):
            await websocket.close(code=4404)
            return
        await websocket.accept()
        game.heartbeat(sid)  # a page that connects is there (after a restart: it is back)
        await push(websocket, lambda: games.get(gid), lambda: game.heartbeat(sid))

    @app.post("/api/replay")
    async def replay_pdn(body: ReplayIn, request: Request) -> dict[str, Any]:
        """Replay game `index` of a PDN text: every position, for stepping through."""
        async with replays:  # one at a time, in the pool (the tokenizer holds the GIL)
            future = request.app.state.pool.submit(replay_task, (body.pdn, body.index),
                                                   key="replay")
            out = await asyncio.wrap_future(future)
        if isinstance(out, TaskFailed):
            raise InvalidOptionError(f"the PDN could not be replayed: {out}")
        if isinstance(out, DamiiError):
            raise out
        return out

    @app.post("/api/arena")
    async def new_arena(body: ArenaIn, request: Request) -> dict[str, Any]:
        """Start watching a round robin between agents."""
        sid = request.state.session
        variant = _check_variant(body.variant)
        specs = [await checked(s, variant) for s in body.specs]
        running = [a for a in arenas.values() if a.owner == sid and a.running]
        if len(running) >= MAX_ARENAS_PER_SESSION:
            raise InvalidOptionError(f"at most {MAX_ARENAS_PER_SESSION} arena matches at "
                                     f"once; stop one first")
        agents_only_room()
        aid = secrets.token_urlsafe(9)
        arena = ArenaWatch(aid, sid, variant, specs, [s.strip() for s in body.specs],
                           body.games, body.clock, request.app.state.pool, delay=body.delay,
                           public=checker.public)
        arenas[aid] = arena
        arena.start()
        return arena.state()

    @app.get("/api/arena/{aid}")
    async def get_arena(aid: str, request: Request) -> dict[str, Any]:
        return own_arena(request, aid).state()

    @app.post("/api/arena/{aid}/stop")
    async def stop_arena(aid: str, request: Request) -> dict[str, Any]:
        arena = own_arena(request, aid)
        arena.stop()
        return arena.state()

    @app.get("/api/arena/{aid}/pdn")
    async def arena_pdn(aid: str, request: Request) -> PlainTextResponse:
        return PlainTextResponse(own_arena(request, aid).pdn(), headers={
            "Content-Disposition": f'attachment; filename="arena-{aid}.pdn"'})

    @app.websocket("/api/arena/{aid}/ws")
    async def arena_ws(websocket: WebSocket, aid: str) -> None:
        sid = websocket.cookies.get(COOKIE)
        arena = arenas.get(aid)
        if arena is None or sid not in sessions or arena.owner != sid:
            await websocket.close(code=4404)
            return
        await websocket.accept()
        await push(websocket, lambda: arenas.get(aid))

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def run_server(host: str = "127.0.0.1", port: int = 8000, weights_dir: str | Path | None = None,
               workers: int = 2, db: str | Path | None = None, grace: float = 90.0) -> None:
    """Serve the app with uvicorn (localhost unless `host` says otherwise; `db`: the
    database, by default :func:`~damii_app.serve.store.default_db_path`)."""
    import uvicorn

    from damii_app.serve.store import default_db_path

    uvicorn.run(create_app(weights_dir, workers=workers, db=db or default_db_path(),
                           grace=grace),
                host=host, port=port,
                log_level="info", timeout_graceful_shutdown=5,
                # states are small JSON texts; compressing each one cost more than it saved
                ws_per_message_deflate=False)

"""The web app of ``damii serve``: a FastAPI application with a JSON API, websockets that
push live games and arena matches, and a static page (plain HTML, JS and SVG).

Each browser gets a session cookie (:mod:`damii_app.serve.session`); its games, replays
and arena matches are reachable from that session only. What the server holds is one
:class:`~damii_app.serve.state.ServerState`; its routes are routers by concern
(:mod:`damii_app.serve.routes`). Agents' searches run in a pool of worker processes
(:mod:`damii_app.serve.jobs`), never on the event loop. Checkpoints (``ckpt:`` specs)
come only from the configured weights folder (:mod:`damii_app.serve.specs`).
"""

from __future__ import annotations

import asyncio
import logging
import logging.handlers
import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from queue import SimpleQueue
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from damii_agents.match.game_loop import game_options
from damii_agents.registry import HUB_REFUSED
from damii_app.serve.jobs import STOPPING, ServerStopping
from damii_app.serve.routes import ROUTERS
from damii_app.serve.routes.page import STATIC
from damii_app.serve.session import SessionCookie, SessionLimits
from damii_app.serve.specs import SpecChecker, default_weights_dir
from damii_app.serve.state import (
    FINISHED_LINGER,
    HEARTBEAT_TIMEOUT,
    IDLE_SECONDS,
    MAX_AGENT_MATCHES,
    MAX_GAMES,
    ServerState,
)
from damii_app.serve.store import Store
from damii_app.serve.views import position
from damii_env import Game
from damii_env.errors import DamiiError
from damii_env.rules import PRESETS

__all__ = ["create_app", "default_weights_dir", "run_server", "warm_up"]
TRUSTED_PROXIES = "DAMII_SERVE_TRUSTED_PROXIES"
"""The environment variable naming the reverse proxies (comma-separated addresses) whose
``X-Forwarded-For`` the server believes; unset: none (the peer's address counts)."""


def create_app(weights_dir: str | Path | None = None, workers: int = 2,
               agent_delay: float = 0.25, job_deadline: float | None = None,
               db: str | Path | None = None, grace: float = 90.0,
               heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
               max_agent_matches: int = MAX_AGENT_MATCHES,
               engines: Mapping[str, str] | None = None, max_games: int = MAX_GAMES,
               session_limits: SessionLimits | None = None,
               idle_seconds: float = IDLE_SECONDS,
               finished_linger: float = FINISHED_LINGER) -> FastAPI:
    """The app. `weights_dir`: the only folder ``ckpt:`` specs load from (default: the
    shipped weights); `workers`: search processes (0: threads of this process, for tests);
    `agent_delay`: seconds between moves when agents play each other; `job_deadline`:
    seconds after which a search's worker is replaced (default: jobs.JOB_DEADLINE); `db`:
    the SQLite database of players, finished games and the ladder (None: none kept; a
    :class:`~damii_app.serve.store.Store` already opened is used as it is);
    `grace`: seconds a lobby player who lost the connection has to come back (and a
    person of a game reloaded after a restart); `max_agent_matches`: agent-against-agent
    games and arena matches running at once on the whole server; `engines`: outside Hub
    engines the operator names (name -> command), offered as ``hub:NAME``: the server's
    :class:`~damii_app.serve.specs.SpecChecker` is given them, and a ``hub:`` spec from a
    request is refused but for those names (its workers are sent the parsed spec, command
    included). The app changes nothing outside itself (no environment variable: two apps
    in one process, or a test, keep their own settings). `max_games`:
    games held, all sessions together; `session_limits`: how many sessions are kept and
    how fast new ones are made (:class:`~damii_app.serve.session.SessionLimits`);
    `idle_seconds`: a game nobody moved in or looked at for this long is abandoned;
    `finished_linger`: seconds a finished game stays in memory once the database holds
    it."""
    engines = dict(engines or {})
    checker = SpecChecker(Path(weights_dir) if weights_dir else default_weights_dir(),
                          engines)
    server = ServerState(checker, workers=workers, agent_delay=agent_delay,
                         job_deadline=job_deadline, db=db, grace=grace,
                         heartbeat_timeout=heartbeat_timeout,
                         max_agent_matches=max_agent_matches, max_games=max_games,
                         session_limits=session_limits, idle_seconds=idle_seconds,
                         finished_linger=finished_linger)
    app = FastAPI(title="damii serve", lifespan=lifespan, docs_url="/api/docs",
                  redoc_url=None, openapi_url="/api/openapi.json",
                  exception_handlers=ERROR_HANDLERS)
    app.state.server = server
    app.add_middleware(Flushed, server=server)
    app.add_middleware(SessionCookie, sessions=server.sessions, pinned=server.pinned,
                       limits=server.session_limits)
    for router in ROUTERS:
        app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


class Flushed:
    """ASGI middleware: the answer to a request that may change something (not GET, HEAD
    or OPTIONS) starts once every database write submitted before it is done
    (:meth:`~damii_app.serve.store.Store.settled`, the wait a websocket's push makes too):
    the writes run in the database's writer thread, not on the event loop, and what a
    request was answered has been written (a kill -9 after the answer loses none of it).
    A reading request never waits."""

    def __init__(self, app: Any, server: ServerState) -> None:
        self.app, self.server = app, server

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return

        async def flushed_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                await self.server.settled()
            await send(message)

        await self.app(scope, receive, flushed_send)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """The server's life: the search pool, the database and the heartbeat ticker start,
    the engine is compiled and each worker started, the games in progress are taken up
    again; at the end every game, arena match and worker stops."""
    server: ServerState = app.state.server
    server.open()
    ticker = asyncio.create_task(server.tick())
    try:
        await asyncio.to_thread(warm_up)
        await server.start_workers()  # each worker is started (and warmed up) first
        server.restore()
        yield
    finally:
        ticker.cancel()
        server.close()


def warm_up() -> None:
    """Compile the engine for every variant (and the page's views) before the first
    request: numba compiles on first use, which took over 30 s on a cold cache."""
    for variant in PRESETS:
        game = Game(variant, **game_options(variant))
        position(game, legal=True)
        game.push(game.legal_moves()[0])


# --- errors: the one format {"error": text} --------------------------------------------
def _error(request: Request, status: int, message: str) -> JSONResponse:
    """The one error format: ``{"error": text}`` (no server paths, short)."""
    public = request.app.state.server.checker.public
    return JSONResponse({"error": public(message)}, status_code=status)


async def _damii_error(request: Request, exc: DamiiError) -> JSONResponse:
    return _error(request, 400, str(exc))


async def _bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
    parts = []
    for err in exc.errors():
        where = ".".join(str(x) for x in err.get("loc", ()) if x != "body")
        parts.append(f"{where or 'request'}: {err.get('msg', 'invalid')}")
    return _error(request, 400, "invalid request: " + "; ".join(parts))


async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    reply = _error(request, exc.status_code, str(exc.detail))
    reply.headers.update(exc.headers or {})
    return reply


async def _stopping(request: Request, exc: ServerStopping) -> JSONResponse:
    return _error(request, 503, STOPPING)


async def _database_error(request: Request, exc: sqlite3.OperationalError) -> JSONResponse:
    """A write the database refused (a full disk, a read-only file): a 503 that says so,
    with the first error in the log."""
    print(f"damii serve: the database could not be written: {exc}", file=sys.stderr)
    reply = _error(request, 503, f"the database cannot be written now (disk full? {exc}); "
                                 f"try again later")
    reply.headers["Retry-After"] = "30"
    return reply


async def _server_error(request: Request, exc: Exception) -> JSONResponse:
    return _error(request, 500, f"internal error ({type(exc).__name__}); the server goes on")


ERROR_HANDLERS = {DamiiError: _damii_error, RequestValidationError: _bad_request,
                  StarletteHTTPException: _http_error, ServerStopping: _stopping,
                  sqlite3.OperationalError: _database_error,
                  Exception: _server_error}
"""Every error the app answers, by exception class."""


def run_server(host: str = "127.0.0.1", port: int = 8000, weights_dir: str | Path | None = None,
               workers: int = 2, db: str | Path | None = None, grace: float = 90.0,
               engines: Mapping[str, str] | None = None) -> None:
    """Serve the app with uvicorn (localhost unless `host` says otherwise; `db`: the
    database, by default :func:`~damii_app.serve.store.default_db_path`; `engines`: the
    outside Hub engines offered, name -> command). The server and its worker processes
    refuse ``hub:`` specs but for those names (:data:`~damii_agents.registry.HUB_REFUSED`),
    beside the :class:`~damii_app.serve.specs.SpecChecker`'s own refusal.

    The database is opened (locked, checked) first: a problem with it ends the start in
    one line (SystemExit). It says which file keeps the games, that the engine compiles
    and the workers warm up, and the address only once the server answers there."""
    import uvicorn

    from damii_app.serve.store import StoreError, default_db_path

    os.environ[HUB_REFUSED] = "1"  # no command is run from a request (workers inherit it)
    path = Path(db or default_db_path()).expanduser()
    try:
        store = Store(path)
    except StoreError as exc:
        raise SystemExit(f"damii serve: {exc}") from None
    print(f"damii serve: games and the ladder are kept in {path.resolve()}", flush=True)
    print(f"damii serve: warming up {workers} search worker{'s' if workers != 1 else ''} "
          f"(the engine says so if it must compile first)...", flush=True)
    try:
        limits = SessionLimits.from_environment()
    except ValueError as exc:
        raise SystemExit(f"damii serve: {exc}") from None
    app = create_app(weights_dir, workers=workers, db=store, grace=grace, engines=engines,
                     session_limits=limits)
    proxies = os.environ.get(TRUSTED_PROXIES, "").strip()
    config = uvicorn.Config(app, host=host, port=port, log_level="info",
                            timeout_graceful_shutdown=5,
                            # X-Forwarded-For only from the proxies the operator names
                            # (uvicorn trusts 127.0.0.1 by default: any local user could
                            # then pose as any address)
                            proxy_headers=bool(proxies), forwarded_allow_ips=proxies or None,
                            # states are small JSON texts; compressing each one cost more
                            ws_per_message_deflate=False)
    server = announcing_server(config, f"damii serve: open http://{host}:{port}/ "
                                       f"(Ctrl-C stops)", app.state.server.stopping)
    # this process is the server's: the event loop waits at most SWITCH_INTERVAL for
    # Python's lock when a thread of the server (a tournament's view, a pairing, a
    # review's PDN) holds it, instead of 5 ms at each of a request's reads and writes
    sys.setswitchinterval(SWITCH_INTERVAL)
    access_log = log_in_a_thread("uvicorn.access")  # a line per request, written off the loop
    try:
        server.run()
    finally:
        access_log.stop()
        if not store.closed:
            store.close()


SWITCH_INTERVAL = 0.001
"""Seconds a thread of ``damii serve`` holds Python's lock while another waits for it
(``sys.setswitchinterval``; Python's default is 0.005)."""


class _Forward(logging.handlers.QueueHandler):
    """A queue's handler that passes a record on as it is (uvicorn's access formatter
    reads the record's arguments, which :class:`~logging.handlers.QueueHandler` clears)."""

    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        return record


def log_in_a_thread(name: str) -> logging.handlers.QueueListener:
    """The handlers of logger `name` moved behind a queue: the event loop only puts each
    record on it, and a thread writes them (a write to a file or a pipe per request, on
    a busy machine, held the loop). Returns the running listener (stop it at the end: it
    writes what is left)."""
    logger = logging.getLogger(name)
    queue: SimpleQueue[logging.LogRecord] = SimpleQueue()
    listener = logging.handlers.QueueListener(queue, *logger.handlers,
                                              respect_handler_level=True)
    logger.handlers = [_Forward(queue)]
    listener.start()
    return listener


def announcing_server(config: Any, announce: str, on_stop: Callable[[], None]) -> Any:
    """uvicorn's server that prints `announce` once it answers (after the warm-up and
    the bind: before, it refused connections for up to a minute), and on a stop first
    calls `on_stop` (the searches end and the requests waiting for them are answered "the
    server is stopping") before uvicorn waits for the open requests."""
    import uvicorn

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets: list | None = None) -> None:
            await super().startup(sockets)
            if self.started and not self.should_exit:
                print(announce, flush=True)

        async def shutdown(self, sockets: list | None = None) -> None:
            on_stop()
            await super().shutdown(sockets)

    return AnnouncingServer(config)

"""The arena (``/api/arena...``): a round robin between agents, watched live game after
game, stopped at will, and its games as PDN."""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, Field

from damii_app.serve.arena import ArenaWatch
from damii_app.serve.push import push
from damii_app.serve.session import COOKIE
from damii_app.serve.specs import check_variant
from damii_app.serve.state import MAX_ARENAS_PER_SESSION, Server
from damii_env.errors import InvalidOptionError

router = APIRouter()


class ArenaIn(BaseModel):
    variant: str = Field("damii", max_length=40)
    specs: list[str] = Field(..., min_length=2, max_length=6)
    games: int = Field(2, ge=1, le=100)
    clock: str = Field("none", max_length=40)
    delay: float = Field(0.3, ge=0.0, le=5.0)


@router.post("/api/arena")
async def new_arena(body: ArenaIn, request: Request, server: Server) -> dict[str, Any]:
    """Start watching a round robin between agents."""
    sid = request.state.session
    variant = check_variant(body.variant)
    specs = [await server.checked(s, variant) for s in body.specs]
    running = [a for a in server.arenas.values() if a.owner == sid and a.running]
    if len(running) >= MAX_ARENAS_PER_SESSION:
        raise InvalidOptionError(f"at most {MAX_ARENAS_PER_SESSION} arena matches at "
                                 f"once; stop one first")
    server.agents_only_room()
    aid = secrets.token_urlsafe(9)
    arena = ArenaWatch(aid, sid, variant, specs, [s.strip() for s in body.specs],
                       body.games, body.clock, server.pool, delay=body.delay,
                       public=server.checker.public)
    server.arenas[aid] = arena
    arena.start()
    return arena.state()


@router.get("/api/arena/{aid}")
async def get_arena(aid: str, request: Request, server: Server) -> dict[str, Any]:
    """The arena match's state (as the websocket pushes it)."""
    return server.own_arena(request.state.session, aid).state()


@router.post("/api/arena/{aid}/stop")
async def stop_arena(aid: str, request: Request, server: Server) -> dict[str, Any]:
    """Stop the arena match after the move being searched."""
    arena = server.own_arena(request.state.session, aid)
    arena.stop()
    return arena.state()


@router.get("/api/arena/{aid}/pdn")
async def arena_pdn(aid: str, request: Request, server: Server) -> PlainTextResponse:
    """The arena's finished games as a PDN file."""
    return PlainTextResponse(server.own_arena(request.state.session, aid).pdn(), headers={
        "Content-Disposition": f'attachment; filename="arena-{aid}.pdn"'})


@router.websocket("/api/arena/{aid}/ws")
async def arena_ws(websocket: WebSocket, aid: str, server: Server) -> None:
    """The arena match's state, pushed whenever it changes."""
    sid = websocket.cookies.get(COOKIE)
    arena = server.arenas.get(aid)
    if arena is None or sid not in server.sessions or arena.owner != sid:
        await websocket.close(code=4404)
        return
    server.sessions.move_to_end(sid)  # a session in use is kept (as by SessionCookie)
    await websocket.accept()
    await push(websocket, lambda: server.arenas.get(aid), settled=server.settled)

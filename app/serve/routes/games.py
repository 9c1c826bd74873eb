"""Games in the browser (``/api/games...``): a person against an agent, two people at one
screen, or two agents; moves, resignation, draws (offered, or claimed after a repetition),
take-backs, touch move, heartbeats, the game's PDN and Sci-Damath score sheet, and the
websocket that pushes its state."""

from __future__ import annotations

import secrets
from typing import Any, Literal

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, Field

from damii_agents.match.game_loop import COLOURS
from damii_app.serve.classroom import sheet_csv
from damii_app.serve.live import LiveGame, Seat
from damii_app.serve.push import push
from damii_app.serve.session import COOKIE
from damii_app.serve.specs import HUMAN, check_name, check_variant, parse_clock
from damii_app.serve.state import HEARTBEAT_SECONDS, Server
from damii_env.errors import IllegalMoveError, InvalidOptionError

router = APIRouter()


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


class MoveIn(BaseModel):
    move: str = Field(..., min_length=1, max_length=300)


class SideIn(BaseModel):
    side: Literal["white", "black"] | None = None


class TouchIn(BaseModel):
    square: int = Field(..., ge=1, le=50)


class DrawIn(BaseModel):
    action: Literal["offer", "accept", "decline"]
    side: Literal["white", "black"] | None = None


@router.post("/api/games")
async def new_game(body: NewGame, request: Request, server: Server) -> dict[str, Any]:
    """Start a game; each seat is ``human`` or a player spec."""
    sid = request.state.session
    variant = check_variant(body.variant)
    clock = parse_clock(body.clock, variant)
    seats = []
    name = check_name(body.name, HUMAN)
    for text in (body.white, body.black):
        if text.strip().lower() == HUMAN:
            seats.append(Seat(name))
        else:
            seats.append(Seat(text.strip(), await server.checked(text, variant)))
    if not any(seat.human for seat in seats):
        server.agents_only_room()
    server.room_for_a_game(sid)
    gid = secrets.token_urlsafe(9)
    game = LiveGame(gid, sid, variant, seats, clock, body.casual, server.pool,
                    fen=body.fen, seed=body.seed, agent_delay=server.agent_delay,
                    **server.game_options())
    server.games[gid] = game
    if not game.over:
        server.persist(game)
    game.agents.schedule()
    return game.state()


@router.get("/api/games/{gid}")
async def get_game(gid: str, request: Request, server: Server) -> dict[str, Any]:
    """The game's state (as the websocket pushes it)."""
    return server.own_game(request.state.session, gid).state()


def _to_move(gid: str, request: Request, server: Server) -> Any:
    """The live game `gid` of this session, where it is this session's turn (in a lobby
    game each person plays one side)."""
    game, _side = server.playing(request.state.session, gid)
    if game.lobby and game.game.turn not in game.seating.sides_of(request.state.session):
        raise IllegalMoveError(f"it is {COLOURS[game.game.turn]}'s turn, not yours")
    return game


@router.post("/api/games/{gid}/move")
async def move(gid: str, body: MoveIn, request: Request, server: Server) -> dict[str, Any]:
    """A person's move."""
    game = _to_move(gid, request, server)
    game.play(body.move)
    return game.state()


@router.post("/api/games/{gid}/touch")
async def touch(gid: str, body: TouchIn, request: Request, server: Server) -> dict[str, Any]:
    """Touch move (a Sci-Damath match with ``sci-damath:touch``): the person to move has
    selected the chip on ``square``; from now on it is the chip that must move."""
    game = _to_move(gid, request, server)
    game.touch(body.square)
    return game.state()


@router.post("/api/games/{gid}/claim")
async def claim(gid: str, body: SideIn, request: Request, server: Server) -> dict[str, Any]:
    """A person claims the draw of a position that has occurred three times (games
    between two people; either player may, whoever is to move)."""
    game, side = server.playing(request.state.session, gid)
    game.draws.claim(side or body.side)
    return game.state()


@router.post("/api/games/{gid}/resign")
async def resign(gid: str, body: SideIn, request: Request, server: Server) -> dict[str, Any]:
    """A person resigns."""
    game, side = server.playing(request.state.session, gid)
    game.resign(side or body.side)
    return game.state()


@router.post("/api/games/{gid}/draw")
async def draw(gid: str, body: DrawIn, request: Request, server: Server) -> dict[str, Any]:
    """A person offers, accepts or declines a draw."""
    game, side = server.playing(request.state.session, gid)
    await game.draws.act(body.action, side or body.side)
    return game.state()


@router.post("/api/games/{gid}/takeback")
async def takeback(gid: str, request: Request, server: Server) -> dict[str, Any]:
    """Take back the last move of a person (casual games at one screen)."""
    game, _side = server.playing(request.state.session, gid)
    if game.lobby:
        raise InvalidOptionError("take-backs are for games on one screen")
    game.takeback()
    return game.state()


@router.post("/api/games/{gid}/heartbeat")
async def heartbeat(gid: str, request: Request, server: Server) -> dict[str, Any]:
    """The page is there (every 1.5 s in a lobby game; the websocket's messages count
    too)."""
    server.own_game(request.state.session, gid).seating.heartbeat(request.state.session)
    return {"ok": True, "every": HEARTBEAT_SECONDS}


@router.get("/api/games/{gid}/pdn")
async def game_pdn(gid: str, request: Request, server: Server) -> PlainTextResponse:
    """The game as a PDN file."""
    game = server.own_game(request.state.session, gid)
    return PlainTextResponse(game.pdn(), headers={
        "Content-Disposition": f'attachment; filename="damii-{gid}.pdn"'})


@router.get("/api/games/{gid}/sheet")
async def game_sheet(gid: str, request: Request, server: Server) -> PlainTextResponse:
    """A Sci-Damath game's score sheet as CSV (one line a move, then the totals, the
    violations of a classroom match and the result)."""
    game = server.own_game(request.state.session, gid)
    if not game.game.engine.scoring:
        raise InvalidOptionError(f"a score sheet is kept in Sci-Damath games; this game is "
                                 f"{game.variant}")
    end = game.end
    rows = game.sheet.rows(game.game, game.match.forced if game.match else ())
    text = sheet_csv(rows, tuple(str(t) for t in game.game.totals()),
                     end.result if end else "*", end.termination if end else None,
                     game.match.violations if game.match else None)
    return PlainTextResponse(text, media_type="text/csv", headers={
        "Content-Disposition": f'attachment; filename="damii-{gid}-sheet.csv"'})


@router.websocket("/api/games/{gid}/ws")
async def game_ws(websocket: WebSocket, gid: str, server: Server) -> None:
    """The game's state, pushed whenever it changes."""
    sid = websocket.cookies.get(COOKIE)
    game = server.games.get(gid)
    if game is None or sid not in server.sessions or not (game.lobby or game.owner == sid):
        await websocket.close(code=4404)
        return
    server.sessions.move_to_end(sid)  # a session in use is kept (as by SessionCookie)
    await websocket.accept()
    game.seating.heartbeat(sid)  # a page that connects is there (after a restart: it is back)
    await push(websocket, lambda: server.games.get(gid), lambda: game.seating.heartbeat(sid),
               server.settled)

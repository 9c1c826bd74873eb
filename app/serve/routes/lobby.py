"""The lobby (``/api/lobby...``): games between people at different browsers, opened by
one and joined by another; the others watch them read-only."""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, Field

from damii_app.serve.live import LiveGame, Seat
from damii_app.serve.routes.clubs import clubs_of as club_members
from damii_app.serve.specs import check_name, check_variant, parse_clock
from damii_app.serve.state import HEARTBEAT_SECONDS, MAX_ARENAS_PER_SESSION, Server
from damii_env.errors import InvalidOptionError

router = APIRouter()

NAME = Field("guest", min_length=1, max_length=40, pattern=r"^[A-Za-z0-9 _.\-]+$")


class LobbyIn(BaseModel):
    variant: str = Field("damii", max_length=40)
    clock: str = Field("none", max_length=40)
    casual: bool = False
    name: str = NAME
    club: str | None = Field(None, max_length=40)
    """A club game: only the club's members open and join it; it counts in its ladder."""


class JoinIn(BaseModel):
    name: str = NAME


@router.post("/api/lobby")
async def open_game(body: LobbyIn, request: Request, server: Server) -> dict[str, Any]:
    """Open a game between people at different browsers; another one joins it."""
    sid = request.state.session
    variant = check_variant(body.variant)
    clock = parse_clock(body.clock, variant)
    name = check_name(body.name)
    if body.club is not None:
        club_members(server).require_member(body.club, sid)
    mine = [g for g in server.games.values() if g.owner == sid and g.lobby and not g.over]
    if len(mine) >= MAX_ARENAS_PER_SESSION:
        raise InvalidOptionError(f"at most {MAX_ARENAS_PER_SESSION} open lobby games a "
                                 f"session; finish one first")
    server.room_for_an_address(sid)
    server.room_on_server()
    gid = secrets.token_urlsafe(9)
    game = LiveGame(gid, sid, variant, (Seat(name, session=sid), Seat("open")),
                    clock, body.casual, server.pool, lobby=True, **server.game_options())
    game.seating.heartbeat(sid)
    server.games[gid] = game
    server.persist(game)
    if body.club is not None:
        club_members(server).add_game(gid, body.club)
    return game.state()


@router.get("/api/lobby")
async def lobby(request: Request, server: Server, club: str | None = None) -> dict[str, Any]:
    """Lobby games: open ones to join, those in play to watch, and the colours this
    session plays in each (``you``: a page that was closed comes back to its game);
    ``?club=ID``: that club's games only (its tournament games among them)."""
    sid = request.state.session
    of_club = server.clubs.game_club if server.clubs is not None else {}
    if club is not None:
        club_members(server).get(club)
    out = [{"id": g.id, "variant": g.variant, "white": g.seats[0].label,
            "black": g.seats[1].label, "open": g.open, "clock": str(g.clock),
            "rated": not g.casual, "you": g.seating.sides_of(sid), "club": of_club.get(g.id)}
           for g in server.games.values() if g.lobby and not g.over
           and (club is None or of_club.get(g.id) == club)]
    return {"games": out, "heartbeat_seconds": HEARTBEAT_SECONDS, "grace": server.grace}


@router.post("/api/lobby/{gid}/join")
async def join(gid: str, body: JoinIn, request: Request, server: Server) -> dict[str, Any]:
    """Take the open seat of a lobby game."""
    game = server.games.get(gid)
    if game is None or not game.lobby:
        raise HTTPException(404, f"no lobby game {gid!r}")
    club = server.clubs.game_club.get(gid) if server.clubs is not None else None
    if club is not None:
        club_members(server).require_member(club, request.state.session)
    game.seating.join(request.state.session, check_name(body.name))
    return game.state()

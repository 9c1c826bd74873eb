"""Clubs (``/api/clubs...``) and their page (``/clubs``): make a club, join it with its
code, list the clubs, and a club's members, tournaments, games and ladder."""

from __future__ import annotations

import asyncio
import math
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field

from damii_app.serve.clubs import ClubBook
from damii_app.serve.routes.page import STATIC
from damii_app.serve.session import client_address
from damii_app.serve.specs import check_name
from damii_app.serve.state import Server, ServerState

router = APIRouter()

NAME = Field(..., min_length=1, max_length=40, pattern=r"^[A-Za-z0-9 _.\-]+$")
NO_DB = ("this server keeps no database, and clubs and tournaments live in it: start it "
         "with damii serve --db FILE")


def clubs_of(server: ServerState) -> ClubBook:
    """The server's clubs, else a clear error (a server without a database)."""
    if server.clubs is None:
        raise HTTPException(503, NO_DB)
    return server.clubs


class ClubIn(BaseModel):
    name: str = NAME
    """The club's name (unique on the server)."""


class JoinClubIn(BaseModel):
    code: str = Field(..., min_length=1, max_length=20)
    """The code the club's organizer hands out."""
    name: str = NAME
    """The member's name in the club (its ladder, its tournaments)."""


@router.get("/clubs", include_in_schema=False)
async def clubs_page() -> FileResponse:
    """The clubs and tournaments page."""
    return FileResponse(STATIC / "clubs.html")


@router.get("/api/clubs")
async def list_clubs(request: Request, server: Server) -> dict[str, Any]:
    """Every club on the server: its name, number of members, and whether you organize it
    or are a member (your name in it)."""
    if server.clubs is None:
        return {"clubs": [], "kept": False}
    return {"clubs": server.clubs.listing(request.state.session), "kept": True}


@router.post("/api/clubs")
async def create_club(body: ClubIn, request: Request, server: Server) -> dict[str, Any]:
    """Make a club; you are its organizer, and the answer holds the code to hand out."""
    # the checks and the write (synced to disk) in a thread, not on the event loop
    return await asyncio.to_thread(clubs_of(server).create, body.name, request.state.session)


@router.post("/api/clubs/join")
async def join_club(body: JoinClubIn, request: Request, server: Server) -> dict[str, Any]:
    """Join the club whose code this is, under a name (tries are rationed per session
    and per client address: codes cannot be guessed)."""
    clubs = clubs_of(server)
    wait = server.code_tries(request.state.session, client_address(request.scope))
    if wait:
        raise HTTPException(429, f"too many tries of club codes from this browser or "
                                 f"address; ask your organizer for the code and try again "
                                 f"in {math.ceil(wait)} s",
                            headers={"Retry-After": str(math.ceil(wait))})
    return await asyncio.to_thread(clubs.join, body.code, check_name(body.name),
                                   request.state.session)


@router.get("/api/clubs/{cid}")
async def get_club(cid: str, request: Request, server: Server) -> dict[str, Any]:
    """A club: its members, its tournaments, its latest games and its ladder (the code
    only to its organizer)."""
    clubs = clubs_of(server)
    out = clubs.view(cid, request.state.session)
    assert server.tournaments is not None
    tournaments, session = server.tournaments, request.state.session
    for t in tournaments.listing(cid, session):
        written = tournaments.sync(server, t["id"]) if t["status"] == "running" else None
        if written is not None:  # the results of games that ended, written by a thread
            await asyncio.wrap_future(written)
    out["tournaments"] = tournaments.listing(cid, session)
    out["ladder"] = clubs.ladder(cid)
    out["games"] = [{k: g[k] for k in ("id", "variant", "white", "black", "result",
                                        "termination", "rated", "finished")}
                    for g in clubs.history(cid, 50)]
    return out

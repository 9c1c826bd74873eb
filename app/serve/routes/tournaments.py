"""Tournaments (``/api/tournaments...``): round robins and Swiss events inside a club or
open, their entries (people and agents), the rounds the organizer starts, results,
standings, and the exports (the games as PDN, the standings as CSV)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import PlainTextResponse, Response
from pydantic import BaseModel, Field

from damii_app.serve.pairing import ROUND_ROBIN
from damii_app.serve.routes.clubs import NO_DB
from damii_app.serve.specs import check_name, check_variant
from damii_app.serve.state import Server, ServerState
from damii_app.serve.tournaments import (
    MAX_PLAYERS,
    MAX_SWISS_PLAYERS,
    RUNNING,
    TournamentBook,
)

router = APIRouter()


def book(server: ServerState) -> TournamentBook:
    """The server's tournaments, else a clear error (a server without a database)."""
    if server.tournaments is None:
        raise HTTPException(503, NO_DB)
    return server.tournaments


OPEN_AT_ONCE = 4
"""Boards whose games a round start opens before it gives the event loop back (a game
opened costs about a millisecond: a Swiss of 256 has 128 boards)."""


def encoded(value: Any) -> bytes:
    """`value` as the JSON of a FastAPI answer. The tournaments' reads and their JSON run
    in a thread (``asyncio.to_thread``), not on the event loop: they grow with the
    players and rounds (a Swiss of 200 has 900 boards by its last round), and every
    other user's request would wait for them."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False,
                      separators=(",", ":")).encode()


async def synced(tournaments: TournamentBook, server: ServerState, tid: str) -> None:
    """:meth:`TournamentBook.sync`, its write awaited (done by the database's writer
    thread: the event loop goes on meanwhile)."""
    written = tournaments.sync(server, tid)
    if written is not None:
        await asyncio.wrap_future(written)


async def view_of(tournaments: TournamentBook, tid: str, session: str | None) -> Response:
    """The tournament's view (:meth:`TournamentBook.view`), read and encoded in a thread."""
    body = await asyncio.to_thread(lambda: encoded(tournaments.view(tid, session)))
    return Response(body, media_type="application/json")


class TournamentIn(BaseModel):
    name: str = Field(..., min_length=1, max_length=60, pattern=r"^[A-Za-z0-9 _.,:'()\-]+$")
    system: Literal["round-robin", "swiss"] = ROUND_ROBIN
    variant: str = Field("damii", max_length=40)
    clock: str = Field("none", max_length=40)
    rounds: int | None = Field(None, ge=1, le=MAX_PLAYERS)
    """A Swiss's rounds (a round robin has one per opponent)."""
    max_players: int = Field(16, ge=2, le=MAX_SWISS_PLAYERS)
    """At most 64 in a round robin, 256 in a Swiss."""
    rated: bool = True
    """Rated games feed the ladders (the server's and the club's)."""
    club: str | None = Field(None, max_length=40)
    """The club it belongs to (its members enter; its organizer runs it); None: open."""


class EntryIn(BaseModel):
    name: str | None = Field(None, min_length=1, max_length=40,
                             pattern=r"^[A-Za-z0-9 _.\-]+$")
    """Your name (in a club's tournament your name in the club is used)."""


class AgentIn(BaseModel):
    spec: str = Field(..., min_length=1, max_length=300)
    """A player spec, as in a game (``greedy``, ``alphabeta:depth=3``, ``pretrained``...)."""
    name: str | None = Field(None, min_length=1, max_length=40,
                             pattern=r"^[A-Za-z0-9 _.:=,\-]+$")
    """Its name in the tournament (default: the spec)."""


@router.get("/api/tournaments")
async def list_tournaments(request: Request, server: Server,
                           club: str | None = None) -> Response:
    """The tournaments (of one club with ``?club=ID``), newest first."""
    tournaments = server.tournaments
    if tournaments is None:
        return Response(encoded({"tournaments": [], "kept": False}),
                        media_type="application/json")
    session = request.state.session
    for t in await asyncio.to_thread(tournaments.listing, club, session):
        if t["status"] == RUNNING:
            await synced(tournaments, server, t["id"])  # the results of games that ended
    body = await asyncio.to_thread(lambda: encoded({
        "tournaments": tournaments.listing(club, session), "kept": True}))
    return Response(body, media_type="application/json")


@router.post("/api/tournaments")
async def create_tournament(body: TournamentIn, request: Request, server: Server) -> Response:
    """Make a tournament; you organize it (in a club: only its organizer may)."""
    tournaments = book(server)
    tid = await asyncio.to_thread(  # its write, synced to disk, off the event loop
        tournaments.create, request.state.session, body.name, body.system,
        check_variant(body.variant), body.clock, body.rounds, body.max_players, body.rated,
        body.club)
    return await view_of(tournaments, tid, request.state.session)


@router.get("/api/tournaments/{tid}")
async def get_tournament(tid: str, request: Request, server: Server) -> Response:
    """A tournament: entrants, each round's boards with their games and results, and the
    standings with the tie-break."""
    tournaments = book(server)
    await synced(tournaments, server, tid)
    return await view_of(tournaments, tid, request.state.session)


@router.post("/api/tournaments/{tid}/join")
async def join_tournament(tid: str, body: EntryIn, request: Request,
                          server: Server) -> Response:
    """Enter the tournament (before its first round; in a club, members only)."""
    tournaments = book(server)
    # the checks and the entry's write (synced to disk) in a thread, not on the event loop
    await asyncio.to_thread(tournaments.join, tid, request.state.session,
                            check_name(body.name))
    return await view_of(tournaments, tid, request.state.session)


@router.post("/api/tournaments/{tid}/agents")
async def add_agent(tid: str, body: AgentIn, request: Request, server: Server) -> Response:
    """The organizer fills a place with an agent (its games are played by the server)."""
    tournaments = book(server)
    t = tournaments.require_organizer(tid, request.state.session)
    spec = await server.checked(body.spec, t["variant"])
    await asyncio.to_thread(tournaments.add_agent, tid, request.state.session, spec,
                            body.name or body.spec.strip())
    return await view_of(tournaments, tid, request.state.session)


@router.post("/api/tournaments/{tid}/rounds")
async def start_round(tid: str, request: Request, server: Server) -> Response:
    """The organizer starts the next round: its pairings, and a game on each board."""
    tournaments = book(server)
    async with server.pairing:  # one start at a time: the second sees the round started
        await synced(tournaments, server, tid)
        t = tournaments.require_organizer(tid, request.state.session)
        # the pairing (a bounded search, still up to a second for a big Swiss) and its
        # database reads run off the event loop; the games are opened on it, a few at a
        # time (a Swiss of 200 opens 100)
        pairs = await asyncio.to_thread(tournaments.next_pairings, t)
        _, rows, specs, entrants, written = tournaments.write_round(server, t, pairs)
        try:
            await asyncio.wrap_future(written)  # the pairings, written by the writer thread
            for i, row in enumerate(rows):
                if i and i % OPEN_AT_ONCE == 0:
                    await asyncio.sleep(0)
                tournaments.open_game(server, t, row, specs, entrants)
        finally:
            tournaments.opening.difference_update(row["game"] for row in rows)
        await synced(tournaments, server, tid)
    return await view_of(tournaments, tid, request.state.session)


class ResultIn(BaseModel):
    round: int = Field(..., ge=1, le=1000)
    board: int = Field(..., ge=1, le=1000)
    result: Literal["1-0", "0-1", "1/2-1/2"]


@router.post("/api/tournaments/{tid}/result")
async def adjudicate(tid: str, body: ResultIn, request: Request, server: Server) -> Response:
    """The organizer decides a board without a result (its game, if on, is stopped):
    a player who never came, a game played on a real board."""
    tournaments = book(server)
    await synced(tournaments, server, tid)
    # the checks and the write (a transaction synced to disk) in a thread; the board's
    # game is stopped on the event loop (TournamentBook.adjudicate, in two parts)
    gid = await asyncio.to_thread(tournaments.decide, tid, request.state.session,
                                  body.round, body.board, body.result)
    tournaments.decided(server, tid, gid)
    await synced(tournaments, server, tid)
    return await view_of(tournaments, tid, request.state.session)


@router.get("/api/tournaments/{tid}/pdn")
async def tournament_pdn(tid: str, server: Server) -> PlainTextResponse:
    """The tournament's finished games as one PDN file (Event: its name; Round:
    round.board); read in a thread (a game's PDN a row)."""
    tournaments = book(server)
    await synced(tournaments, server, tid)
    return PlainTextResponse(await asyncio.to_thread(tournaments.pdn, tid), headers={
        "Content-Disposition": f'attachment; filename="tournament-{tid}.pdn"'})


@router.get("/api/tournaments/{tid}/standings.csv")
async def tournament_standings(tid: str, request: Request,
                               server: Server) -> PlainTextResponse:
    """The standings as CSV: rank, name, points, the tie-break, games, wins, draws,
    losses (made in a thread)."""
    tournaments = book(server)
    await synced(tournaments, server, tid)
    text = await asyncio.to_thread(tournaments.standings_csv, tid, request.state.session)
    return PlainTextResponse(text, media_type="text/csv", headers={
        "Content-Disposition": f'attachment; filename="standings-{tid}.csv"'})

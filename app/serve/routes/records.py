"""What the database keeps (``damii serve --db``): the Elo ladder of rated games and the
latest finished games, as JSON (``/api/ladder``, ``/api/history``) and as a page
(``/ladder``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import FileResponse

from damii_app.serve.routes.clubs import clubs_of
from damii_app.serve.routes.page import STATIC
from damii_app.serve.state import Server

router = APIRouter()


@router.get("/ladder", include_in_schema=False)
async def ladder_page() -> FileResponse:
    """The ladder and the latest finished games as a page (linked from the main page)."""
    return FileResponse(STATIC / "ladder.html")


@router.get("/api/ladder")
async def ladder(server: Server, club: str | None = None) -> dict[str, Any]:
    """The Elo ladder of people and agents over rated games (needs ``--db``);
    ``?club=ID``: the club's own ladder, over its rated games."""
    store = server.store
    if club is not None:
        return {"players": clubs_of(server).ladder(club), "kept": True,
                "club": clubs_of(server).get(club)["name"]}
    return {"players": store.ladder() if store else [], "kept": store is not None}


@router.get("/api/history")
async def history(server: Server, club: str | None = None) -> dict[str, Any]:
    """The latest finished games with their PDN (needs ``--db``); ``?club=ID``: the
    club's games."""
    if club is not None:
        return {"games": clubs_of(server).history(club), "kept": True}
    store = server.store
    return {"games": store.history() if store else [], "kept": store is not None}

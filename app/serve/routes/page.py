"""The page of ``damii serve`` (plain HTML, JS and SVG from ``static/``) and what it
offers: variants, clocks, players and each variant's start position (``/api/meta``); its
icon; ``/api/ping``, which the page asks to tell a stopped server at once."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import FileResponse

from damii_app.serve.specs import BASE_SPECS, CLOCKS, HUMAN, pretrained_specs
from damii_app.serve.state import Server
from damii_app.serve.views import replay
from damii_env.rules import PRESETS

STATIC = Path(__file__).resolve().parents[1] / "static"
"""The page's files (package data of ``damii_app.serve``)."""

router = APIRouter()


@router.get("/", include_in_schema=False)
async def index() -> FileResponse:
    """The page."""
    return FileResponse(STATIC / "index.html")


@router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> FileResponse:
    """The page's icon (an SVG draughts piece) where a browser asks for it by this name."""
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")


@router.get("/api/ping")
async def ping() -> dict[str, bool]:
    """The server is up (the page asks while it has no game's websocket open)."""
    return {"ok": True}


@cache
def start_boards() -> dict[str, dict[str, Any]]:
    """Each variant's board layout and start position, drawn before any game (the frame
    0 of an empty PDN game of the variant: the replay's own reading of a variant)."""
    boards = {}
    for variant in PRESETS:
        frames = replay(f'[Variant "{variant}"]\n*')
        boards[variant] = {"layout": frames["layout"], "position": frames["frames"][0]}
    return boards


@router.get("/api/meta")
async def meta(server: Server) -> dict[str, Any]:
    """Variants, clocks, the players on offer and each variant's start position."""
    ckpts = server.checker.checkpoints()
    return {"variants": list(PRESETS), "clocks": list(CLOCKS),
            "players": [HUMAN, *BASE_SPECS, *(f"hub:{name}" for name in server.checker.engines)],
            "pretrained": {v: list(pretrained_specs(v)) for v in PRESETS},
            "checkpoints": {v: [f"ckpt:{c}" for c in ckpts if Path(c).stem.startswith(v)]
                            for v in PRESETS},
            "weights_dir": server.checker.weights_dir.name,
            "start": start_boards()}

"""The page of ``damii serve`` (plain HTML, JS and SVG from ``static/``) and what it
offers: variants, clocks and players (``/api/meta``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import FileResponse

from damii_app.serve.specs import BASE_SPECS, HUMAN, pretrained_specs
from damii_app.serve.state import Server
from damii_env.rules import PRESETS

STATIC = Path(__file__).resolve().parents[1] / "static"
"""The page's files (package data of ``damii_app.serve``)."""

router = APIRouter()


@router.get("/", include_in_schema=False)
async def index() -> FileResponse:
    """The page."""
    return FileResponse(STATIC / "index.html")


@router.get("/api/meta")
async def meta(server: Server) -> dict[str, Any]:
    """Variants, clocks and the players on offer."""
    ckpts = server.checker.checkpoints()
    return {"variants": list(PRESETS), "clocks": ["none", "blitz", "standard"],
            "players": [HUMAN, *BASE_SPECS, *(f"hub:{name}" for name in server.checker.engines)],
            "pretrained": {v: list(pretrained_specs(v)) for v in PRESETS},
            "checkpoints": {v: [f"ckpt:{c}" for c in ckpts if Path(c).stem.startswith(v)]
                            for v in PRESETS},
            "weights_dir": server.checker.weights_dir.name}

"""Replays (``/api/replay``): a game of a PDN text, position by position."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from damii_app.serve.jobs import STOPPING, ServerStopping, TaskFailed
from damii_app.serve.state import Server
from damii_app.serve.views import MAX_PDN_CHARS, replay_task
from damii_env.errors import DamiiError, InvalidOptionError

router = APIRouter()


class ReplayIn(BaseModel):
    pdn: str = Field(..., min_length=1, max_length=MAX_PDN_CHARS)
    index: int = Field(0, ge=0, le=1_000_000)


@router.post("/api/replay")
async def replay_pdn(body: ReplayIn, server: Server) -> dict[str, Any]:
    """Replay game `index` of a PDN text: every position, for stepping through."""
    async with server.replays:  # one at a time, in the pool (the tokenizer holds the GIL)
        future = server.pool.submit(replay_task, (body.pdn, body.index), key="replay",
                                    share="replay")
        out = await asyncio.wrap_future(future)
    if isinstance(out, TaskFailed) and str(out) == STOPPING:
        raise ServerStopping(STOPPING)
    if isinstance(out, TaskFailed):
        raise InvalidOptionError(f"the PDN could not be replayed: {out}")
    if isinstance(out, DamiiError):
        raise out
    return out

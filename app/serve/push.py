"""Websockets of ``damii serve``: a game's or an arena match's state pushed to the page
whenever it changes (:func:`push`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect

from damii_app.serve.live import LiveGame


async def push(websocket: WebSocket, get: Callable[[], Any],
               heard: Callable[[], None] | None = None,
               settled: Callable[[], Awaitable[None]] | None = None) -> None:
    """Send the state whenever it changes (woken by the game's Notifier, not polled),
    until the page goes or the server stops (a disconnect is noticed at once: a
    finished game never changes, and uvicorn waits for open handlers before it exits).
    A running clock also wakes it when the time is up. `get`: the game or arena (None:
    gone); `heard`: called for each message from the page; `settled`: waited for before
    each state is sent (the database's writes submitted so far done: a watcher is shown
    no move that a kill -9 could lose, as an answer is not)."""
    gone = asyncio.Event()
    first = get()
    if first is None:
        await websocket.close(code=4404)
        return

    async def watch() -> None:
        try:
            while (await websocket.receive())["type"] != "websocket.disconnect":
                if heard is not None:
                    heard()  # any message from the page is a heartbeat
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            gone.set()
            first.changed.notify()

    watcher = asyncio.create_task(watch())
    sent = -1
    try:
        while not gone.is_set():
            obj = get()
            if obj is None:
                await websocket.close(code=4404)
                return
            tick = obj.changed.ticks
            state = obj.state()
            if state["version"] != sent:
                sent = state["version"]
                if settled is not None:
                    await settled()
                await websocket.send_json(state)
            timeout = 30.0
            left = obj.clocks.remaining() if isinstance(obj, LiveGame) else None
            if left is not None:
                timeout = max(0.02, min(timeout, left + 0.02))
            await obj.changed.wait(tick, timeout)
    except (WebSocketDisconnect, RuntimeError):
        return
    finally:
        watcher.cancel()

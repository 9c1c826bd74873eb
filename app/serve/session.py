"""Browser sessions of ``damii serve``: every HTTP request gets one (``request.state.session``)
from a cookie this server issued (:class:`SessionCookie`)."""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Callable

from starlette.requests import HTTPConnection

COOKIE = "damii_session"
MAX_SESSIONS = 100_000
"""Session ids kept (the oldest are forgotten first)."""


class SessionCookie:
    """Gives every HTTP request its session (``request.state.session``): the cookie's
    id where this server issued it (it is in `sessions`), else a fresh one set in the
    reply. A plain ASGI middleware (Starlette's ``BaseHTTPMiddleware`` cost about a quarter
    of the event loop's time under benchmarks/serve_load.py)."""

    def __init__(self, app: Callable, sessions: OrderedDict[str, None]) -> None:
        self.app = app
        self.sessions = sessions

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sessions = self.sessions
        sid = HTTPConnection(scope).cookies.get(COOKIE)
        fresh = sid not in sessions  # only ids this server issued
        if fresh:
            sid = secrets.token_urlsafe(18)
            sessions[sid] = None
            while len(sessions) > MAX_SESSIONS:
                sessions.popitem(last=False)
        scope.setdefault("state", {})["session"] = sid
        if not fresh:
            await self.app(scope, receive, send)
            return
        cookie = f"{COOKIE}={sid}; HttpOnly; Path=/; SameSite=strict".encode()

        async def send_with_cookie(message: dict) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
            await send(message)

        await self.app(scope, receive, send_with_cookie)

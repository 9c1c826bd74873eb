"""Browser sessions of ``damii serve``: every HTTP request that needs one gets one
(``request.state.session``) from a cookie this server issued (:class:`SessionCookie`).

A flood cannot log players out: an id is refreshed on each use, the session of a player
in a game in progress is never forgotten, requests that need no session (the API's
``meta``, ``ladder``, ``history`` and ``replay``, static files, unknown routes) make
none, and new sessions are rationed per client address (429) and for the whole server
(503), with a ``Retry-After`` (:class:`SessionLimits`)."""

from __future__ import annotations

import json
import math
import os
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import HTTPConnection

COOKIE = "damii_session"
MAX_SESSIONS = 100_000
"""Session ids kept (the oldest not in a game in progress are forgotten first)."""
NEEDS_SESSION = ("/api/games", "/api/lobby", "/api/arena", "/api/clubs",
                 "/api/tournaments", "/clubs", "/api/analysis")
"""The routes (with the page itself, ``/``) that make a session for a browser without
one; the others read a session only where there is one."""


PER_ADDRESS = "DAMII_SERVE_PER_ADDRESS"
"""The environment variable that says how many people may share one client address (a
school behind one NAT): the per-address limits are sized for that many (default 40)."""


@dataclass(frozen=True)
class SessionLimits:
    """How many sessions the server keeps and how fast it makes new ones: each client
    address may make `address_burst` at once, then one every ``1 / address_rate``
    seconds (more: 429); the whole server `total_burst`, then `total_rate` a second (more:
    503). One address holds at most `address_games` games in progress (429), and may try
    `address_codes` wrong club codes at once, then `code_rate` a second (429; a session
    `session_codes` at once)."""

    max_sessions: int = MAX_SESSIONS
    address_burst: float = 120.0
    address_rate: float = 2.0
    total_burst: float = 1000.0
    total_rate: float = 20.0
    address_games: int = 200
    address_codes: float = 40.0
    code_rate: float = 0.2
    session_codes: float = 5.0

    @classmethod
    def for_people(cls, people: int) -> SessionLimits:
        """Limits for up to `people` people behind one address (the defaults are for
        40, a class): sessions, games and wrong codes of one address scale with it."""
        people = max(1, people)
        return cls(address_burst=3.0 * people, address_rate=max(0.5, people / 20),
                   address_games=5 * people, address_codes=float(people),
                   code_rate=max(0.05, people / 200))

    @classmethod
    def from_environment(cls, environ: dict[str, str] | None = None) -> SessionLimits:
        """The limits for :data:`PER_ADDRESS` people an address (default: 40), else a
        clear error."""
        text = (os.environ if environ is None else environ).get(PER_ADDRESS, "").strip()
        if not text:
            return cls()
        try:
            people = int(text)
        except ValueError:
            people = 0
        if not 1 <= people <= 100_000:
            raise ValueError(f"{PER_ADDRESS} must be a whole number of people from 1 to "
                             f"100000, got {text!r}")
        return cls.for_people(people)


class RateLimit:
    """A token bucket per key (a session, a client address), forgotten once full again:
    `burst` at once, then `rate` a second."""

    def __init__(self, burst: float, rate: float) -> None:
        self.burst, self.rate = burst, rate
        self._buckets: dict[str, _Bucket] = {}

    def take(self, key: str) -> float:
        """0.0 when `key` may go on, else the seconds until it may."""
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= 10_000:
                now = time.monotonic()
                for k, b in list(self._buckets.items()):
                    if b.tokens + (now - b.at) * self.rate >= self.burst:
                        del self._buckets[k]
            bucket = self._buckets[key] = _Bucket(self.burst)
        return bucket.take(self.burst, self.rate)


class _Bucket:
    """A token bucket: `burst` tokens, refilled at `rate` a second."""

    __slots__ = ("tokens", "at")

    def __init__(self, burst: float) -> None:
        self.tokens, self.at = burst, time.monotonic()

    def take(self, burst: float, rate: float) -> float:
        """0.0 when a token was taken, else the seconds until one is there."""
        now = time.monotonic()
        self.tokens = min(burst, self.tokens + (now - self.at) * rate)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / rate if rate > 0 else 3600.0


class SessionCookie:
    """Gives HTTP requests their session (``request.state.session``, None where a route
    needs none and the browser has none): the cookie's id where this server issued it
    (it is in `sessions`, and moves to the newest end), else a fresh one set in the
    reply, within the :class:`SessionLimits`. `pinned` gives the ids that are never
    forgotten (they play a game in progress). A plain ASGI middleware (Starlette's
    ``BaseHTTPMiddleware`` cost about a quarter of the event loop's time under
    benchmarks/serve_load.py)."""

    def __init__(self, app: Callable, sessions: OrderedDict[str, str | None],
                 pinned: Callable[[], set[str]] = set,
                 limits: SessionLimits = SessionLimits()) -> None:
        self.app = app
        self.sessions = sessions
        self.pinned = pinned
        self.limits = limits
        self._total = _Bucket(limits.total_burst)
        self._addresses: dict[str, _Bucket] = {}

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sessions = self.sessions
        sid = HTTPConnection(scope).cookies.get(COOKIE)
        state = scope.setdefault("state", {})
        if sid in sessions:  # only ids this server issued
            sessions.move_to_end(sid)
            state["session"] = sid
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if path != "/" and not path.startswith(NEEDS_SESSION):
            state["session"] = None
            await self.app(scope, receive, send)
            return
        refused = self._new_session_refused(scope)
        if refused is not None:
            await _refuse(send, *refused)
            return
        sid = secrets.token_urlsafe(18)
        sessions[sid] = client_address(scope)  # its searches share its address's budget
        state["session"] = sid
        cookie = f"{COOKIE}={sid}; HttpOnly; Path=/; SameSite=strict".encode()

        async def send_with_cookie(message: dict) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
            await send(message)

        await self.app(scope, receive, send_with_cookie)

    def _new_session_refused(self, scope: dict) -> tuple[int, str, float] | None:
        """Why a new session cannot be made now (status, message, seconds to wait), or
        None (and room is made: the oldest ids not in a game in progress go)."""
        limits = self.limits
        address = client_address(scope)
        bucket = self._addresses.get(address)
        if bucket is None:
            if len(self._addresses) >= 10_000:
                self._prune()
            bucket = self._addresses[address] = _Bucket(limits.address_burst)
        wait = bucket.take(limits.address_burst, limits.address_rate)
        if wait:
            return (429, f"too many new sessions from your address (at most "
                         f"{limits.address_burst:g} at once, then {limits.address_rate:g} a "
                         f"second); keep the cookie this server gave, or try again in "
                         f"{math.ceil(wait)} s", wait)
        wait = self._total.take(limits.total_burst, limits.total_rate)
        if wait:
            return (503, f"the server is making too many new sessions (at most "
                         f"{limits.total_rate:g} a second for all users); try again in "
                         f"{math.ceil(wait)} s", wait)
        if len(self.sessions) >= limits.max_sessions and not self._make_room():
            return (503, f"the server holds {len(self.sessions):,} sessions that play games "
                         f"in progress, its limit; try again when games have finished", 60.0)
        return None

    def _make_room(self) -> bool:
        """Forget the oldest sessions that play no game in progress until there is room
        for one more (those that play one move to the newest end); False when every
        session kept plays one."""
        pinned = self.pinned()
        sessions, skipped = self.sessions, 0
        while len(sessions) >= self.limits.max_sessions and skipped < len(sessions):
            sid = next(iter(sessions))
            if sid in pinned:
                sessions.move_to_end(sid)
                skipped += 1
            else:
                del sessions[sid]
        return len(sessions) < self.limits.max_sessions

    def _prune(self) -> None:
        """Forget the client addresses whose bucket is full again."""
        now, limits = time.monotonic(), self.limits
        for address, bucket in list(self._addresses.items()):
            if bucket.tokens + (now - bucket.at) * limits.address_rate >= limits.address_burst:
                del self._addresses[address]


def client_address(scope: dict) -> str:
    """The client address of a request (the peer's: no forwarding header is trusted unless
    the operator says so, see ``run_server``'s ``DAMII_SERVE_TRUSTED_PROXIES``)."""
    return str((scope.get("client") or ("unknown",))[0])


async def _refuse(send: Callable, status: int, message: str, wait: float) -> None:
    """Answer in the one error format, with a ``Retry-After``."""
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"retry-after", str(max(1, math.ceil(wait))).encode())]})
    await send({"type": "http.response.body", "body": body})

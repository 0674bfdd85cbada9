"""Edge guards shared by both edges: who the client is, where a request comes from, how much it may ask.

- :func:`client_ip` and :func:`is_tls` read the connection itself, or the reverse proxy's
  ``X-Forwarded-For`` / ``X-Forwarded-Proto`` only when ``settings.trusted_proxy`` is on
  (otherwise anybody could claim any address and dodge the per-IP limits).
- :func:`origin_allowed` decides whether a page of that origin may open our websockets
  (cross-site websocket hijacking) and post our forms (CSRF): one of
  ``settings.allowed_origins``, or, when none are configured, the request's own host.
- :class:`Guard` holds the per-IP limits of one process (``app.state.guard``): credit buckets
  for guest and game creation (429 with ``Retry-After``) and a cap on concurrent websockets.
- :class:`BodyLimit` answers 413 to any HTTP body above ``settings.max_body_bytes`` before a
  route has buffered it.

The limits live in the process, not in Redis: with N processes behind a balancer a client
gets at most N times each limit, which is still a bound (docs/RELIABILITY.md).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol
from urllib.parse import urlsplit

from starlette.requests import HTTPConnection
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from engine import SPECTATOR

from .config import Rate, Settings
from .ratelimit import Bucket, Counter, KeyedLimiter


def client_ip(conn: HTTPConnection, settings: Settings) -> str:
    """The client's address: the TCP peer, or the proxy's last ``X-Forwarded-For`` entry when
    ``settings.trusted_proxy`` is on (the last one is the address the proxy itself saw; the
    earlier ones are whatever the client wrote)."""
    if settings.trusted_proxy:
        forwarded = conn.headers.get("x-forwarded-for", "")
        last = forwarded.rsplit(",", 1)[-1].strip()
        if last:
            return last[:64]
    client = conn.client
    return client.host if client is not None else "unknown"


def is_tls(conn: HTTPConnection, settings: Settings) -> bool:
    """Served over TLS: the connection's own scheme, or ``X-Forwarded-Proto`` from a trusted proxy."""
    if conn.url.scheme in ("https", "wss"):
        return True
    if settings.trusted_proxy:
        proto = conn.headers.get("x-forwarded-proto", "").rsplit(",", 1)[-1].strip().lower()
        return proto == "https"
    return False


def _origin_of(url: str) -> tuple[str, str]:
    parts = urlsplit(url.strip())
    return parts.scheme.lower(), parts.netloc.lower()


def origin_allowed(origin: str, conn: HTTPConnection, settings: Settings) -> bool:
    """May a page of ``origin`` (an ``Origin`` or ``Referer`` value) act on this server?"""
    scheme, netloc = _origin_of(origin)
    if not netloc:
        return False
    if settings.allowed_origins:
        return f"{scheme}://{netloc}" in settings.allowed_origins
    return netloc == conn.headers.get("host", "").lower()


def websocket_origin_ok(conn: HTTPConnection, settings: Settings) -> bool:
    """A websocket upgrade without ``Origin`` comes from a program (browsers always send one on
    websockets), which is fine: it authenticates with its token, not with ambient cookies."""
    origin = conn.headers.get("origin")
    return origin is None or origin_allowed(origin, conn, settings)


def form_origin_ok(conn: HTTPConnection, settings: Settings) -> bool:
    """A state-changing form must come from one of our pages: ``Origin``, else ``Referer``.

    Browsers send ``Origin`` on every cross-site POST; a request with neither header is an old
    client or a program, and carries no SameSite=Lax cookie cross-site anyway. ``Origin: null``
    (sandboxed frames, some redirects) is refused.
    """
    origin = conn.headers.get("origin")
    if origin is None or origin == "null":
        referer = conn.headers.get("referer")
        if referer is None:
            return origin is None
        origin = referer
    return origin_allowed(origin, conn, settings)


class Limited(Exception):
    """A per-IP limit refused the request; ``retry_after_s`` says when to come back."""

    def __init__(self, what: str, retry_after_s: int) -> None:
        super().__init__(f"too many {what} from your address; try again in {retry_after_s} s")
        self.what = what
        self.retry_after_s = retry_after_s


def _limiter(rate: Rate) -> KeyedLimiter | None:
    return KeyedLimiter(rate[0], rate[1]) if rate is not None else None


class Guard:
    """The per-IP limits of one process. ``now`` is injectable for tests of the arithmetic."""

    def __init__(self, settings: Settings, now: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.now = now
        self.guests = _limiter(settings.ip_guest_rate)
        self.games = _limiter(settings.ip_game_rate)
        self.sockets = Counter(settings.ip_max_sockets) if settings.ip_max_sockets > 0 else None

    def _spend(self, limiter: KeyedLimiter | None, what: str, conn: HTTPConnection) -> None:
        if limiter is None:
            return
        ip = client_ip(conn, self.settings)
        now = self.now()
        if not limiter.allow(ip, now):
            raise Limited(what, max(1, math.ceil(limiter.retry_after(ip, now))))

    def new_guest(self, conn: HTTPConnection) -> None:
        """Spend one guest creation of the client's IP; raises :class:`Limited`."""
        self._spend(self.guests, "new guests", conn)

    def new_game(self, conn: HTTPConnection) -> None:
        """Spend one game creation of the client's IP; raises :class:`Limited`."""
        self._spend(self.games, "new games", conn)

    def open_socket(self, conn: HTTPConnection) -> str | None:
        """Count a websocket of the client's IP: its key (pass it to :meth:`close_socket`), or
        ``None`` when the IP already holds ``ip_max_sockets``."""
        ip = client_ip(conn, self.settings)
        if self.sockets is not None and not self.sockets.acquire(ip):
            return None
        return ip

    def close_socket(self, key: str) -> None:
        if self.sockets is not None:
            self.sockets.release(key)


class MessageLimit:
    """One websocket's flood control: a credit bucket for while it is a player's and a smaller
    one for while it is a spectator's (the hub may reseat a connection, so the class is read
    per message)."""

    __slots__ = ("player", "spectator")

    def __init__(self, settings: Settings) -> None:
        self.player = Bucket(*settings.player_rate) if settings.player_rate else None
        self.spectator = Bucket(*settings.spectator_rate) if settings.spectator_rate else None

    def allow(self, viewer: int, now: float) -> bool:
        bucket = self.spectator if viewer == SPECTATOR else self.player
        return bucket is None or bucket.allow(now)


POLICY_CLOSE = 1008


class Closable(Protocol):
    viewer: int
    closed: bool

    def close(self, code: int, reason: str = "") -> None: ...


async def client_frames(websocket: WebSocket, settings: Settings, conn: Closable) -> AsyncIterator[bytes | str]:
    """Every frame the client sends, until it leaves or breaks a policy.

    The one place both websocket edges apply the frame size limit and the per-connection
    flood control: an oversized frame or a frame over budget closes ``conn`` with 1008 and
    ends the iteration, so the edge only ever sees frames it may parse.
    """
    limit = MessageLimit(settings)
    while not conn.closed:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        frame = message.get("bytes")
        if frame is None:
            frame = message.get("text") or ""
        if len(frame) > settings.max_frame_bytes:
            conn.close(POLICY_CLOSE, "frame too large")
            return
        if not limit.allow(conn.viewer, time.monotonic()):
            conn.close(POLICY_CLOSE, "rate limit exceeded")
            return
        yield frame


async def deny(websocket: WebSocket, response: Response) -> None:
    """Refuse a websocket upgrade with an HTTP answer (before ``accept``); servers without the
    ASGI denial-response extension answer a plain 403."""
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        await websocket.send_denial_response(response)
    else:
        await websocket.close(1008)


async def admit(websocket: WebSocket, settings: Settings) -> str | None:
    """The checks before accepting any websocket: a foreign ``Origin`` gets 403, an IP over its
    socket cap 429. Returns the socket's key for :meth:`Guard.close_socket`, or ``None`` if the
    upgrade was refused (nothing more to do)."""
    if not websocket_origin_ok(websocket, settings):
        await deny(websocket, PlainTextResponse("websockets of this site open only from its own pages",
                                                status_code=403))
        return None
    key = guard_of(websocket).open_socket(websocket)
    if key is None:
        await deny(websocket, too_many(Limited("open websockets", 10), json_body=False))
    return key


def admitted(handler: Callable[[WebSocket], Awaitable[None]]) -> Callable[[WebSocket], Awaitable[None]]:
    """A websocket endpoint running ``handler`` only after :func:`admit`, and giving the IP's
    socket slot back however the handler ends (both edges are built this way)."""

    async def endpoint(websocket: WebSocket) -> None:
        key = await admit(websocket, websocket.app.state.settings)  # foreign Origin → 403, too many → 429
        if key is None:
            return
        try:
            # The handler runs as a task of its own: each time it waits (for the client's
            # next frame, for Redis) only its own coroutines are suspended and resumed, not
            # the fifteen-odd of the ASGI middleware and routing around this endpoint (a
            # measurable share of the process under load: docs/PERFORMANCE.md). Cancelling
            # the endpoint cancels the task, and the slot is given back once it has ended.
            await asyncio.create_task(handler(websocket), name=f"ws-{endpoint.__name__}")
        finally:
            guard_of(websocket).close_socket(key)

    endpoint.__name__ = endpoint.__qualname__ = handler.__name__.lstrip("_")
    endpoint.__doc__ = handler.__doc__
    return endpoint


def guard_of(conn: HTTPConnection) -> Guard:
    state = conn.app.state
    guard = getattr(state, "guard", None)
    if guard is None:
        guard = state.guard = Guard(state.settings)
    return guard


def too_many(exc: Limited, *, json_body: bool) -> Response:
    """The 429 answer: JSON for the API, plain text for the browser edge (pages render their own)."""
    headers = {"retry-after": str(exc.retry_after_s)}
    if json_body:
        body = {"error": {"code": "rate_limited", "message": str(exc)}}
        return Response(json.dumps(body), status_code=429, media_type="application/json", headers=headers)
    return PlainTextResponse(str(exc), status_code=429, headers=headers)


class BodyLimit:
    """Refuse HTTP bodies above ``limit`` bytes with 413, without buffering them.

    A declared ``Content-Length`` above the limit is refused before the route runs; a chunked
    body is counted as it arrives and the route's read fails at the limit (the 413 is sent if
    the route has not started its response, which ours never have while reading the body).
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                if not value.isdigit() or int(value) > self.limit:
                    await self._refuse(scope, receive, send)
                    return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if not started:
                await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"the request body is limited to {self.limit} bytes"
        if scope.get("path", "").startswith("/api/"):
            body = json.dumps({"error": {"code": "too_large", "message": message}}).encode()
            media = b"application/json"
        else:
            body, media = message.encode(), b"text/plain; charset=utf-8"
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", media), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass

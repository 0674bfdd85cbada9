"""Before a websocket is accepted: the checks every one passes, and the endpoint wrapper.

A foreign ``Origin`` gets HTTP 403 and an address over its socket cap 429, answered before
the upgrade; :func:`admitted` builds both websocket endpoints this way.

uvicorn's ``websockets-sansio`` protocol does not mark the handshake done after a denial
response, so every refusal was logged as ``ERROR: ASGI callable returned without completing
handshake.`` (Kludex/uvicorn#3138, open). A refusal is not a server error: :func:`deny` notes
the denial in a context variable, and :class:`DenialLogFilter` (on ``uvicorn.error``) drops
that one line for a connection we denied, and nothing else.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar

from starlette.responses import PlainTextResponse, Response
from starlette.websockets import WebSocket

from .limits import Limited, guard_of, too_many
from .origin import websocket_origin_ok

_DENIED: ContextVar[bool] = ContextVar("mineduel_websocket_denied", default=False)
INCOMPLETE_HANDSHAKE = "ASGI callable returned without completing handshake."


class DenialLogFilter(logging.Filter):
    """Drops uvicorn's "without completing handshake" error for a connection :func:`deny`
    refused (uvicorn logs it in the task that ran the app, after the app returned)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (_DENIED.get() and record.getMessage() == INCOMPLETE_HANDSHAKE)


def quiet_denials() -> None:
    """Install :class:`DenialLogFilter` on uvicorn's error logger (once)."""
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, DenialLogFilter) for f in logger.filters):
        logger.addFilter(DenialLogFilter())


async def deny(websocket: WebSocket, response: Response) -> None:
    """Refuse a websocket upgrade with an HTTP answer (before ``accept``); servers without the
    ASGI denial-response extension answer a plain 403."""
    _DENIED.set(True)
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        await websocket.send_denial_response(response)
    else:
        await websocket.close(1008)


async def admit(websocket: WebSocket) -> str | None:
    """The checks before accepting any websocket: a foreign ``Origin`` gets 403, an IP over its
    socket cap 429. Returns the socket's key for :meth:`Guard.close_socket`, or ``None`` if the
    upgrade was refused (nothing more to do)."""
    if not websocket_origin_ok(websocket, websocket.app.state.settings):
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
        key = await admit(websocket)  # foreign Origin → 403, too many → 429
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

"""A speed bypass, behind one switch: data frames written straight to the server's ASGI ``send``.

Why: a frame sent through ``WebSocket.send_bytes`` passes every middleware's send wrapper on
its way out (Starlette's exception handling, twice, and the close observer), one coroutine
each, and a move sends five; at 500 moves/s that stack was a measurable share of the process
(docs/PERFORMANCE.md). Only data frames skip it: the accept, every close (which
:class:`~server.edge.ops.CloseObserver` counts) and denial responses take the whole way.

With ``MINEDUEL_RAW_SEND=off`` (``settings.raw_send`` False) :class:`ExposeRawSend` is not
installed and :func:`frame_sender` returns Starlette's own ``send_bytes``/``send_text``: the
plain path, which CI runs the server tests on too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

RAW_SEND = "mineduel.raw_send"

Frame = bytes | str


class ExposeRawSend:
    """ASGI middleware, the outermost: keeps the server's own ``send`` in a websocket's scope."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            scope[RAW_SEND] = send
        await self.app(scope, receive, send)


def frame_sender(websocket: WebSocket, text: bool = False) -> Callable[[Frame], Awaitable[None]]:
    """The function an :class:`~server.edge.outbox.Outbox` writes ``websocket``'s data frames
    with (text frames for the browser edge): the server's raw ``send`` when
    :class:`ExposeRawSend` put it in the scope, else Starlette's."""
    raw: Send | None = websocket.scope.get(RAW_SEND)
    if raw is None:
        return websocket.send_text if text else websocket.send_bytes  # type: ignore[return-value]
    key = "text" if text else "bytes"

    def send(frame: Frame) -> Awaitable[None]:
        return raw({"type": "websocket.send", key: frame})

    return send

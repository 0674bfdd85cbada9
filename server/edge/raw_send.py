"""A speed bypass, behind one switch: data frames written straight to the server's ASGI ``send``,
or, where uvicorn's websockets protocol serves the socket, straight to its transport.

Why: a frame sent through ``WebSocket.send_bytes`` passes every middleware's send wrapper on
its way out (Starlette's exception handling, twice, and the close observer), one coroutine
each, and a move sends five; at 500 moves/s that stack was a measurable share of the process
(docs/PERFORMANCE.md). Only data frames skip it: the accept, every close (which
:class:`~server.edge.ops.CloseObserver` counts) and denial responses take the whole way.
Under the ASGI ``send`` a data frame still costs a coroutine, a message dict, and the
websockets library's frame object, its checks and its output buffer, about 2 µs a push where
the frame's bytes need a two-byte header: :func:`frame_writer` writes those bytes itself while
the connection is open, uncompressed and writable, and says so; otherwise (and for every other
server) the caller takes the ASGI ``send``, which does what uvicorn does in each other case.

With ``MINEDUEL_RAW_SEND=off`` (``settings.raw_send`` False) :class:`ExposeRawSend` is not
installed, :func:`frame_sender` returns Starlette's own ``send_bytes``/``send_text`` and
:func:`frame_writer` ``None``: the plain path, which CI runs the server tests on too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket
from websockets.protocol import State

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


def frame_header(opcode: int, length: int) -> bytes:
    """A final, unmasked websocket frame's header (RFC 6455, 5.2): what a server puts before a
    payload of ``length`` bytes with ``opcode`` (0x1 text, 0x2 binary)."""
    if length < 126:
        return bytes((0x80 | opcode, length))
    if length < 1 << 16:
        return bytes((0x80 | opcode, 126)) + length.to_bytes(2, "big")
    return bytes((0x80 | opcode, 127)) + length.to_bytes(8, "big")


def _sansio_protocol() -> type | None:
    try:
        from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    except ImportError:  # another uvicorn: no direct writes
        return None
    return WebSocketsSansIOProtocol


def frame_writer(websocket: WebSocket, text: bool = False) -> Callable[[Frame], bool] | None:
    """A function that writes a data frame of ``websocket`` straight to its transport and returns
    True, or returns False, having written nothing, whenever uvicorn's ``send`` would do more than
    that (the connection closing or closed, its transport's buffer full, the handshake not
    done); ``None`` when the socket is not served by uvicorn's websockets (sans-I/O) protocol
    directly, or it compresses frames (per-message deflate).

    For an accepted socket only (the negotiated extensions are read once, here). The frames
    it writes are the bytes websockets would write (``tests/server/edge/test_raw_send.py``)."""
    raw = websocket.scope.get(RAW_SEND)
    proto = getattr(raw, "__self__", None)
    kind = _sansio_protocol()
    if proto is None or kind is None or type(proto) is not kind or proto.conn.extensions:
        return None
    opcode, open_ = (0x1 if text else 0x2), State.OPEN

    def write_now(frame: Frame) -> bool:
        if (proto.close_sent or proto.disconnected or not proto.handshake_complete
                or not proto.writable.is_set() or proto.conn.state is not open_):
            return False
        data = frame.encode() if isinstance(frame, str) else frame
        proto.transport.write(frame_header(opcode, len(data)) + data)
        return True

    return write_now


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

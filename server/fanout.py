"""The seam between the hub and the edges: codecs render frames, connections queue them.

The hub (:mod:`server.hub`) knows neither msgpack nor HTML. For every locally watched room it
keeps the last :class:`~server.room.Room`; when a new version arrives it asks each codec in use
for ONE frame per viewer class (seat 0, seat 1, spectators) and puts those same bytes/str on
the bounded queue of every matching local connection. A codec is registered by name in
``app.state.codecs``; the programmatic websocket uses ``"msgpack"`` (:mod:`server.codec_msgpack`),
the browser websocket ``"html"``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Protocol

from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from engine import Event

from .metrics import Metrics
from .ops import is_outage, redis_down
from .room import Room

SERVER_ERROR = 1011
RAW_SEND = "mineduel.raw_send"

Frame = bytes | str
log = logging.getLogger("mineduel.fanout")


class ExposeRawSend:
    """ASGI middleware, the outermost: keeps the server's own ``send`` in a websocket's scope
    so :func:`frame_sender` can write data frames past the middleware stack.

    Why: a frame sent through ``WebSocket.send_bytes`` passes every middleware's send wrapper
    on its way out (Starlette's exception handling, twice, and the close observer), one
    coroutine each, and a move sends five; at 500 moves/s that stack was a measurable share of
    the process (docs/PERFORMANCE.md). Only data frames skip it: the accept, every close
    (which :class:`~server.ops.CloseObserver` counts) and denial responses take the whole way.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            scope[RAW_SEND] = send
        await self.app(scope, receive, send)


def frame_sender(websocket: WebSocket, text: bool = False) -> Callable[[Frame], Awaitable[None]]:
    """The function an :class:`Outbox` writes ``websocket``'s data frames with (text frames for
    the browser edge): straight to the server's ``send``, which :class:`ExposeRawSend` (installed
    by ``create_app``) put in the scope."""
    raw: Send = websocket.scope[RAW_SEND]
    key = "text" if text else "bytes"

    def send(frame: Frame) -> Awaitable[None]:
        return raw({"type": "websocket.send", key: frame})

    return send


class Codec(Protocol):
    """Renders what one viewer class may see. Must never put a secret in a frame for a viewer
    who may not see it: use ``room.view(viewer)`` and ``engine.visible_to(event, viewer)``."""

    name: str

    def snapshot(self, room: Room, viewer: int) -> Frame:
        """The full picture for ``viewer`` (first frame of every (re)connect, and after gaps)."""
        ...

    def update(self, old: Room, new: Room, viewer: int, events: Sequence[Event]) -> Frame:
        """What changed from ``old`` to ``new`` (``new.version == old.version + 1``).

        ``events`` are the engine events of the change (all audiences; filter with
        ``visible_to``); empty for changes outside the engine (join, rematch offer).
        """
        ...

    def presence(self, room: Room, spectators: int) -> Frame | None:
        """The spectator count changed; ``None`` = nothing to send."""
        ...

    def error(self, code: str, message: str, v: int | None = None) -> Frame:
        """An error frame: machine-readable ``code``, human ``message``, and ``v``, the room
        version the connection's view is at (``None`` before its first snapshot)."""
        ...


class Connection(Protocol):
    """What the hub needs from a local client connection."""

    viewer: int
    """0, 1 or 2 (spectator). The hub may change it when the player takes a seat."""
    codec: str
    """Key in ``app.state.codecs``."""
    player_id: str | None
    version: int | None
    """Last room version sent to this connection (``None`` before its first snapshot)."""

    def send(self, frame: Frame) -> bool:
        """Queue ``frame`` without waiting; False if the queue is full (the hub then closes it)."""
        ...

    def close(self, code: int, reason: str = "") -> None:
        """Ask the connection to close (non-blocking)."""
        ...


class Outbox:
    """A ready-made :class:`Connection`: frames go out in order, at most ``maxsize`` waiting.

    A frame is written *inline* when nothing is waiting: the edge's send coroutine (uvicorn's
    ASGI ``send``) completes without suspending while the socket is writable, so it is run
    to its end right there, the way Python 3.12's eager tasks start a coroutine. Only when
    a send suspends (the kernel buffer is full: a slow reader) does a task take it over and
    drain the frames that queue meanwhile. Why: a writer task per connection cost a task
    switch and a loop iteration per push, and kept a future and coroutines alive per idle
    socket, which the cyclic GC then had to traverse on every young collection (tens of ms
    with thousands of sockets). Send coroutines must not depend on ``current_task()`` (no
    ``asyncio.timeout`` inside): inline they run in the caller's task.

    The edge creates it with the async functions that really send and close, runs
    :meth:`run` as a task (it ends when the connection is closed or a send failed),
    registers the box with the hub, and awaits/cancels that task when done::

        box = Outbox(viewer, "msgpack", player_id, frame_sender(websocket), close_fn, maxsize=64)
        writer = asyncio.create_task(box.run())
    """

    __slots__ = ("viewer", "codec", "player_id", "version", "_waiting", "_maxsize", "_send", "_close",
                 "_busy", "_done", "closed", "close_code")

    def __init__(
        self,
        viewer: int,
        codec: str,
        player_id: str | None,
        send: Callable[[Frame], Awaitable[None]],
        close: Callable[[int, str], Awaitable[None]],
        maxsize: int = 64,
    ) -> None:
        self.viewer = viewer
        self.codec = codec
        self.player_id = player_id
        self.version: int | None = None
        self._waiting: deque[Frame | tuple[int, str]] = deque()
        self._maxsize = maxsize
        self._send = send
        self._close = close
        self._busy: asyncio.Task[None] | None = None  # finishing a suspended send, then the waiting ones
        self._done = asyncio.Event()  # closed, or a send failed
        self.closed = False
        self.close_code: int | None = None

    def send(self, frame: Frame) -> bool:
        if self.closed:
            return False
        if self._busy is not None:
            if len(self._waiting) >= self._maxsize:
                return False
            self._waiting.append(frame)
            return True
        self._start(frame)
        return True

    def close(self, code: int, reason: str = "") -> None:
        if self.closed:
            return
        self.closed = True
        self.close_code = code
        # Jump the queue: a closing connection need not get the frames still waiting.
        self._waiting.clear()
        if self._busy is not None:
            self._waiting.append((code, reason))
        else:
            self._start((code, reason))

    async def run(self) -> None:
        """Wait until the connection is closed (or a send failed); cancelling it also stops a
        send stuck on a peer that stopped reading."""
        try:
            await self._done.wait()
        finally:
            if self._busy is not None:
                self._busy.cancel()

    async def fail(self, exc: Exception, room_id: str, metrics: Metrics, send_now: Callable[[Frame], Awaitable[None]],
                   unavailable: Frame) -> None:
        """The edge's handler stopped on ``exc`` (call it from the ``except`` block): an outage
        (could not attach while Redis is away) gets the ``unavailable`` frame, sent directly with
        ``send_now`` since closing drops what still waits, and close 1011 (the client reconnects
        later); anything else is logged as a bug and closed 1011."""
        if self.closed:
            return
        if not is_outage(exc):
            log.exception("websocket handler failed (room %s, codec %s)", room_id, self.codec)
            self.close(SERVER_ERROR, "server error")
            return
        redis_down(metrics, "attach", exc, room=room_id, player=self.player_id)
        try:
            await send_now(unavailable)
        except Exception:
            pass
        self.close(SERVER_ERROR, "service interrupted")

    async def finish(self, writer: asyncio.Task[None]) -> None:
        """The edge is done (after ``hub.detach``): close normally unless already closing, and
        give the close 5 s to go out (``writer`` is the :meth:`run` task)."""
        if not self.closed:
            self.close(1000, "")
        try:
            await asyncio.wait_for(writer, 5)
        except (asyncio.TimeoutError, Exception):
            writer.cancel()

    def _coroutine(self, item: Frame | tuple[int, str]) -> Coroutine[Any, Any, None]:
        return self._close(*item) if isinstance(item, tuple) else self._send(item)

    def _start(self, item: Frame | tuple[int, str]) -> None:
        """Run ``item``'s send (or close) inline; hand it to a task if it suspends."""
        coro = self._coroutine(item)
        try:
            suspended_on = coro.send(None)
        except StopIteration:
            if isinstance(item, tuple):
                self._done.set()
            return
        except Exception:
            self._failed(item)
            return
        self._busy = asyncio.ensure_future(self._finish(coro, suspended_on, item))

    async def _finish(self, coro: Coroutine[Any, Any, None], suspended_on: Any, item: Frame | tuple[int, str]) -> None:
        """Complete a send that suspended (as a task would), then send what queued meanwhile."""
        try:
            while True:
                try:
                    if suspended_on is None:  # a bare yield (asyncio.sleep(0))
                        await asyncio.sleep(0)
                        suspended_on = coro.send(None)
                    else:
                        # what a task does with a yielded future: take it over, then wait on it
                        suspended_on._asyncio_future_blocking = False
                        try:
                            await suspended_on
                        except BaseException as exc:  # incl. cancellation: the send gets it
                            suspended_on = coro.throw(exc)
                        else:
                            suspended_on = coro.send(None)
                except StopIteration:
                    break
            while self._waiting:
                item = self._waiting.popleft()
                await self._coroutine(item)
        except asyncio.CancelledError:
            self._done.set()
            raise
        except Exception:
            self._failed(item)
            return
        finally:
            self._busy = None
        if isinstance(item, tuple):
            self._done.set()

    def _failed(self, item: Frame | tuple[int, str]) -> None:
        """A send failed (the peer is gone) or the close did: nothing more goes out."""
        self.closed = True
        self._waiting.clear()
        self._done.set()

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
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from engine import Event

from .room import Room

Frame = bytes | str
log = logging.getLogger("mineduel.fanout")


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

    def error(self, code: str, message: str) -> Frame:
        """An error frame: machine-readable ``code``, human ``message``."""
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
    """A ready-made :class:`Connection`: a bounded queue drained by one writer task.

    The edge creates it with the async functions that really send and close, starts
    :meth:`run` as a task, registers it with the hub, and awaits/cancels it when done::

        box = Outbox(viewer, "msgpack", player_id, websocket.send_bytes, close_fn, maxsize=64)
        writer = asyncio.create_task(box.run())
    """

    __slots__ = ("viewer", "codec", "player_id", "version", "_queue", "_send", "_close", "closed", "close_code")

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
        self._queue: asyncio.Queue[Frame | tuple[int, str]] = asyncio.Queue(maxsize)
        self._send = send
        self._close = close
        self.closed = False
        self.close_code: int | None = None

    def send(self, frame: Frame) -> bool:
        if self.closed:
            return False
        try:
            self._queue.put_nowait(frame)
        except asyncio.QueueFull:
            return False
        return True

    def close(self, code: int, reason: str = "") -> None:
        if self.closed:
            return
        self.closed = True
        self.close_code = code
        # Jump the queue: a closing connection need not get the frames still waiting.
        while not self._queue.empty():
            self._queue.get_nowait()
        self._queue.put_nowait((code, reason))

    async def run(self) -> None:
        """Send queued frames in order until :meth:`close` or a send error."""
        while True:
            item = await self._queue.get()
            if isinstance(item, tuple):
                try:
                    await self._close(*item)
                except Exception:  # the peer may already be gone
                    pass
                return
            try:
                await self._send(item)
            except Exception:
                self.closed = True
                return

"""Where a socket is: its game, or the rematch it followed (``?follow=rematch``).

A program's socket (:mod:`server.edge.ws_api`) that asks for it is moved by the server to its
game's rematch when the game links one, instead of being closed and opened again by the
client: the handshake, the HTTP and ASGI layers and the close of five sockets a game were a
tenth of the app's CPU under load (docs/PERFORMANCE.md, fourteenth session). The socket gets
the update that shows the link, then the new game's snapshot (``you``: its seat there), and its
frames act on the new game from then on. A socket opened on a game already linked moves at once.
"""

from __future__ import annotations

import asyncio
import logging

from ..logs import event
from ..store.fanout import Connection
from ..store.hub import Hub
from .outbox import SERVER_ERROR

log = logging.getLogger("mineduel.ws")


class Whereabouts:
    """The room a connection is in; with ``follow``, it follows its game's rematches.

    The hub's fan-out calls :meth:`follow` whenever it sends the connection a version that links
    a rematch (``Connection.on_rematch``). While the connection is still attaching, or moving,
    the rematch waits and is followed as soon as that is over (a snapshot of a game linked
    already: the socket opened late, or the rematch was linked again meanwhile)."""

    def __init__(self, hub: Hub, conn: Connection, room_id: str, follow: bool) -> None:
        self.hub = hub
        self.conn = conn
        self.room_id = room_id
        self._busy = True  # attaching, then moving: a rematch heard meanwhile waits in _next
        self._next: str | None = None
        self._moving: asyncio.Task[None] | None = None
        self._left: str | None = None  # the room a move under way is leaving
        if follow:
            conn.on_rematch = self.follow

    def attached(self) -> None:
        """The connection is in its first room (it has the snapshot)."""
        self._busy = False
        self._go()

    def follow(self, rematch_id: str) -> None:
        """Move to ``rematch_id`` (in the background: the fan-out calls this)."""
        if rematch_id != self.room_id:
            self._next = rematch_id
            self._go()

    def _go(self) -> None:
        if self._busy or self._next is None or self._next == self.room_id:
            return
        self._busy = True
        self._moving = asyncio.create_task(self._move(self._next), name=f"follow-{self._next}")
        self._next = None

    async def _move(self, rematch_id: str) -> None:
        # the client's frames act on the rematch from now on: its snapshot may reach the client
        # before the move is over (the presence write after it takes up to 50 ms)
        self._left, self.room_id = self.room_id, rematch_id
        try:
            await self.hub.move(self._left, rematch_id, self.conn)
        except Exception as exc:  # the store is out of reach: the client reconnects (1011)
            event(log, "follow_failed", level=logging.WARNING, room=self._left, rematch=rematch_id,
                  error=type(exc).__name__)
            self.conn.close(SERVER_ERROR, "could not follow the rematch")
            return  # busy for good: the socket is closing
        self._left = None
        self._busy = False
        self._go()

    async def leave(self) -> None:
        """Out of the room it is in (the socket is closing): a move under way is stopped first."""
        self._busy = True
        if self._moving is not None and not self._moving.done():
            self._moving.cancel()
            await asyncio.gather(self._moving, return_exceptions=True)
        self.conn.on_rematch = None
        await self.hub.detach(self.room_id, self.conn)
        if self._left is not None:  # a move stopped half-way (or before it began)
            await self.hub.detach(self._left, self.conn)

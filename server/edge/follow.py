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

from ..core.room import Room
from ..logs import event
from ..store.fanout import Connection
from ..store.hub import Hub
from .outbox import SERVER_ERROR

log = logging.getLogger("mineduel.ws")


class Whereabouts:
    """The room a connection is in; with ``follow``, it follows its game's rematches."""

    def __init__(self, hub: Hub, conn: Connection, room_id: str, follow: bool) -> None:
        self.hub = hub
        self.conn = conn
        self.room_id = room_id
        self._moving: asyncio.Task[None] | None = None
        self._left: str | None = None  # the room a move under way is leaving
        if follow:
            conn.on_rematch = self.follow

    def attached(self, room: Room) -> None:
        """The connection has its snapshot of ``room``: a rematch linked already is followed now."""
        if room.rematch is not None and self.conn.on_rematch is not None:
            self.follow(room.rematch)

    def follow(self, rematch_id: str) -> None:
        """Move to ``rematch_id`` (in the background: the pub/sub reader calls this)."""
        if rematch_id != self.room_id and (self._moving is None or self._moving.done()):
            self._moving = asyncio.create_task(self._move(rematch_id), name=f"follow-{rematch_id}")

    async def _move(self, rematch_id: str) -> None:
        # the client's frames act on the rematch from now on: its snapshot may reach the client
        # before the move is over (the presence write after it takes up to 50 ms)
        self._left, self.room_id = self.room_id, rematch_id
        try:
            room = await self.hub.move(self._left, rematch_id, self.conn)
        except Exception as exc:  # the store is out of reach: the client reconnects (1011)
            event(log, "follow_failed", level=logging.WARNING, room=self._left, rematch=rematch_id,
                  error=type(exc).__name__)
            self.conn.close(SERVER_ERROR, "could not follow the rematch")
            return
        self._left = None
        self.attached(room)

    async def leave(self) -> None:
        """Out of the room it is in (the socket is closing): a move under way is stopped first."""
        if self._moving is not None and not self._moving.done():
            self._moving.cancel()
            await asyncio.gather(self._moving, return_exceptions=True)
        self.conn.on_rematch = None
        await self.hub.detach(self.room_id, self.conn)
        if self._left is not None:  # a move stopped half-way
            await self.hub.detach(self._left, self.conn)

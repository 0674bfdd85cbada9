"""What the pub/sub messages of watched rooms become: versions and presence for the local
connections.

A commit message (published by the commit script of whichever process took the change)
becomes the room's next version — this process's own commits are claimed from the
:class:`~.cache.RoomCache`, others decoded with the previous version — and
:class:`~.fanout.Fanout` renders it once per (codec, viewer class) for the room's local
connections; a player who took a seat (or left one) changes viewer class on the way. A
presence message updates who is connected (:class:`~.presence.Presence`). The rooms watched
here (:class:`Entry`, by id) are the :class:`~.hub.Hub`'s, which shares the dict.
"""

from __future__ import annotations

import asyncio
import logging
import time

from ..core.room import Room
from ..metrics import Metrics
from .cache import RoomCache
from .fanout import Connection, Fanout
from .keys import room_of_channel
from .messages import Attendance, is_presence, presence_of, read_commit
from .presence import Presence
from .service import RoomService

log = logging.getLogger("mineduel.hub")

SERVER_ERROR = 1011


class Entry:
    """A room with local connections."""

    __slots__ = ("conns", "ready", "pending")

    def __init__(self) -> None:
        self.conns: set[Connection] = set()
        self.ready = asyncio.Event()
        """Set while the room's subscription is confirmed (every later version reaches us)."""
        self.pending = 0
        """SUBSCRIBE commands sent but not yet confirmed."""


class RoomFeed:
    def __init__(self, entries: dict[str, Entry], rooms: RoomService, cache: RoomCache, fanout: Fanout,
                 presence: Presence, metrics: Metrics) -> None:
        self.entries = entries
        self.rooms = rooms
        self.cache = cache
        self.fanout = fanout
        self.presence = presence
        self.metrics = metrics
        self.stats = {"messages": 0, "decoded": 0}

    def dispatch(self, kind: str, chan: str, payload: object) -> None:
        room_id = room_of_channel(chan)
        entry = self.entries.get(room_id)
        if entry is None:
            return
        if kind == "subscribe":
            entry.pending = max(0, entry.pending - 1)
            if entry.pending == 0:
                entry.ready.set()
                self.cache.set_live(room_id, True)
            return
        if kind != "message" or not isinstance(payload, bytes):
            return
        self.stats["messages"] += 1
        try:
            if is_presence(payload):
                self.on_presence(room_id, entry, presence_of(payload))
            else:
                self.on_commit(room_id, entry, payload)
        except Exception:
            log.exception("cannot fan out a message for room %s", room_id)
            for conn in list(entry.conns):
                conn.close(SERVER_ERROR, "server error")

    def on_presence(self, room_id: str, entry: Entry, attendance: Attendance) -> None:
        self.presence.heard(room_id, attendance)
        room = self.cache.held(room_id)
        if room is not None:
            self.fanout.presence(entry.conns, room, attendance)

    def on_commit(self, room_id: str, entry: Entry, payload: bytes) -> None:
        message = read_commit(payload)
        old = self.cache.held(room_id)
        if old is not None and old.version >= message.version:
            # This version (or a later one) is here already: an attach or a refresh loaded it
            # before its message arrived. Connections still behind it get a snapshot of the
            # latest (skipping them would leave them stuck until the next change).
            self.cache.claim(message.nonce)
            self._reseat(room_id, entry, old)
            self.fanout.publish(entry.conns, None, old, ())
            return
        local = self.cache.claim(message.nonce)
        if local is not None:
            new, events, started = local.room, local.events, local.started
        else:
            # another process's commit: decoded, reusing what the previous version already has
            new, events, started = self.rooms.decode(message.room_data(), old), message.decoded_events(), None
            self.stats["decoded"] += 1
        self.cache.offer(new)
        if old is not None and old.players != new.players:
            self._reseat(room_id, entry, new)
        self.fanout.publish(entry.conns, old, new, events)
        if started is not None and entry.conns:
            self.metrics.push_latency.observe(time.perf_counter() - started)

    def _reseat(self, room_id: str, entry: Entry, room: Room) -> None:
        """A player who was watching took a seat (or the reverse): switch its viewer class."""
        for conn in entry.conns:
            if conn.player_id is None:
                continue
            viewer = room.viewer_of(conn.player_id)
            if viewer != conn.viewer:
                if conn.version is not None:
                    self.presence.recount(room_id, conn.viewer, viewer)
                conn.viewer = viewer
                conn.version = -1  # forces a snapshot for the new class

"""Every new version of a watched room, and who is connected to it, for the local connections.

A new version comes two ways. A commit message, published by the commit script of whichever
process took the change when somebody besides it listens, becomes the room's next version:
this process's own commits are claimed from the :class:`~.cache.RoomCache`, others decoded
with the previous version. A commit of this process that nobody else heard (no message went
out: ``scripts.rooms.COMMIT``) is handed over by the room service itself
(:meth:`RoomFeed.committed_here`). Either way :class:`~.fanout.Fanout` renders it once per
(codec, viewer class) for the room's local connections; a player who took a seat (or left
one) changes viewer class on the way. A presence message updates who is connected
(:class:`~.presence.Presence`). The rooms watched here (:class:`Entry`, by id) are kept in
:attr:`RoomFeed.entries`, which the :class:`~.hub.Hub` fills and empties.

A player who takes the last seat and never connects (a page closed before its socket opened,
a client of the HTTP API alone) writes no presence, so nothing would tell the opponent: the
version that seats both players is followed, :data:`AWAY_GRACE_S` later, by a presence
frame when a seat is still away then (the opponent's page shows the absence and the claim's
countdown, which runs from the join).
"""

from __future__ import annotations

import asyncio
import logging
import time

from engine import Event

from ..core.computer import people_away
from ..core.decide import AWAY_GRACE_MS
from ..core.room import Room, Status
from ..metrics import Metrics
from .cache import RoomCache
from .fanout import Connection, Fanout
from .keys import room_of_channel
from .messages import Attendance, is_presence, presence_of, read_commit
from .presence import Presence
from .stored_form import unpack_room

log = logging.getLogger("mineduel.hub")

SERVER_ERROR = 1011

AWAY_GRACE_S = AWAY_GRACE_MS / 1000


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
    def __init__(self, cache: RoomCache, fanout: Fanout, presence: Presence, metrics: Metrics,
                 away_grace_s: float = AWAY_GRACE_S) -> None:
        self.entries: dict[str, Entry] = {}
        self.away_grace_s = away_grace_s
        self.cache = cache
        self.fanout = fanout
        self.presence = presence
        self.metrics = metrics
        self.stats = {"messages": 0, "decoded": 0}
        self.leaving: dict[str, int] = {}
        """Rooms whose ``UNSUBSCRIBE`` is sent and not yet confirmed (how many). Why: a room
        watched again meanwhile must not count the confirmation of a ``SUBSCRIBE`` sent before
        the unsubscribe as its own; the room would be live (and the commit script told this
        process listens) a moment before Valkey has it subscribed again."""

    def unsubscribing(self, room_id: str) -> None:
        """The hub is about to send ``UNSUBSCRIBE`` for ``room_id``."""
        self.leaving[room_id] = self.leaving.get(room_id, 0) + 1

    def unsubscribed(self, room_id: str) -> None:
        """An ``UNSUBSCRIBE`` for ``room_id`` is confirmed (or was never sent)."""
        left = self.leaving.get(room_id, 0)
        if left > 1:
            self.leaving[room_id] = left - 1
        else:
            self.leaving.pop(room_id, None)

    def link_lost(self) -> None:
        """Every subscription went with the link: no room is live until it is subscribed again,
        and no confirmation of the old ones will come."""
        self.cache.set_all_stale()
        self.leaving.clear()
        for entry in self.entries.values():
            entry.ready.clear()
            entry.pending = 0

    def dispatch(self, kind: str, chan: str, payload: object) -> None:
        room_id = room_of_channel(chan)
        if kind == "unsubscribe":
            self.unsubscribed(room_id)
            return
        entry = self.entries.get(room_id)
        if entry is None:
            return
        if kind == "subscribe":
            if room_id not in self.leaving:  # else a subscription from before the unsubscribe
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
            self._failed(room_id, entry)

    def _failed(self, room_id: str, entry: Entry) -> None:
        log.exception("cannot fan out a version of room %s", room_id)
        for conn in list(entry.conns):
            conn.close(SERVER_ERROR, "server error")

    def on_presence(self, room_id: str, entry: Entry, attendance: Attendance) -> None:
        attendance = self.presence.heard(room_id, attendance)
        room = self.cache.held(room_id)
        if room is not None:
            self.fanout.presence(entry.conns, room, attendance)

    def on_commit(self, room_id: str, entry: Entry, payload: bytes) -> None:
        message = read_commit(payload)
        local = self.cache.claim(message.nonce)
        old = self.cache.held(room_id)
        if self._caught_up(room_id, entry, old, message.version):
            return
        if local is not None:
            self._deliver(room_id, entry, old, local.room, local.events, local.started)
        else:
            # another process's commit: decoded, reusing what the previous version already has
            self.stats["decoded"] += 1
            self._deliver(room_id, entry, old, unpack_room(message.room_data(), old), message.decoded_events(), None)

    def committed_here(self, room: Room, events: tuple[Event, ...], started: float | None) -> None:
        """A commit of this process that no message announced (nobody else listens to the
        room): delivered here as its message would have been."""
        entry = self.entries.get(room.id)
        if entry is None:
            return
        try:
            old = self.cache.held(room.id)
            if not self._caught_up(room.id, entry, old, room.version):
                self._deliver(room.id, entry, old, room, events, started)
        except Exception:  # the commit stands: its connections are closed, as for a message
            self._failed(room.id, entry)

    def _caught_up(self, room_id: str, entry: Entry, held: Room | None, version: int) -> bool:
        """True if ``version`` (or a later one) is ``held`` already: an attach or a refresh loaded
        it before its message arrived. Connections still behind it get a snapshot of the latest
        (skipping them would leave them stuck until the next change)."""
        if held is None or held.version < version:
            return False
        self._reseat(room_id, entry, held)
        self.fanout.publish(entry.conns, None, held, ())
        return True

    def _deliver(self, room_id: str, entry: Entry, old: Room | None, new: Room, events: tuple[Event, ...],
                 started: float | None) -> None:
        self.cache.offer(new)
        if old is not None and old.players != new.players:
            self._reseat(room_id, entry, new)
            if old.seated_ms is None and new.seated_ms is not None:
                asyncio.get_running_loop().call_later(self.away_grace_s, self._absent_after_seating, room_id)
        self.fanout.publish(entry.conns, old, new, events)
        if started is not None and entry.conns:
            self.metrics.push_latency.observe(time.perf_counter() - started)

    def _absent_after_seating(self, room_id: str) -> None:
        """:data:`AWAY_GRACE_S` after both seats were taken: the presence frame, if a seat's
        player has not connected by then (one that has was announced by its arrival)."""
        entry, room = self.entries.get(room_id), self.cache.held(room_id)
        if entry is None or room is None or room.status is not Status.PLAYING:
            return
        attendance = self.presence.attendance(room_id)
        if any(since is not None for since in people_away(room, attendance.away_since)):
            self.fanout.presence(entry.conns, room, attendance)

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

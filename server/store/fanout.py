"""Frames to local connections: rendered once per (codec, viewer class), sent to each.

The seam between the hub and the edges. A :class:`Codec` (msgpack for programs, HTML for
browsers) renders what one viewer class may see; a :class:`Connection` queues frames without
waiting. :class:`Fanout` delivers a new room version to a room's local connections:

- a connection whose last version is ``v - 1`` gets ``codec.update(old, new, viewer, events)``;
- one further behind (a gap) gets ``codec.snapshot(new, viewer)``;
- one already at ``v`` or beyond gets nothing (it got a fresher snapshot meanwhile).

Each distinct frame is rendered once and the same bytes go to every matching connection, so
the cost grows with viewer classes, not with spectators. A connection whose bounded queue is
full is closed with 1013 (it resyncs on reconnect).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from engine import Event

from ..core.room import Room
from ..logs import event
from ..metrics import Metrics
from .messages import Attendance

log = logging.getLogger("mineduel.fanout")

SLOW = 1013

Frame = bytes | str


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

    def presence(self, room: Room, attendance: Attendance) -> Frame | None:
        """Who is connected changed (the spectator count, a player left or came back);
        ``None`` = nothing to send."""
        ...

    def error(self, code: str, message: str, v: int | None = None) -> Frame:
        """An error frame: machine-readable ``code``, human ``message``, and ``v``, the room
        version the connection's view is at (``None`` before its first snapshot)."""
        ...


class Connection(Protocol):
    """What the hub needs from a local client connection (:class:`server.edge.outbox.Outbox`)."""

    viewer: int
    """A seat or ``SPECTATOR``. The hub changes it when the player takes a seat."""
    codec: str
    """Key in the app's codecs."""
    player_id: str | None
    version: int | None
    """Last room version sent to this connection (``None`` before its first snapshot)."""
    closed: bool
    on_rematch: Callable[[str], None] | None
    """Called with the rematch's id whenever this connection is sent a version of its room that
    links one (a socket that follows its game there, ``?follow=rematch``); ``None``: it stays."""

    def send(self, frame: Frame) -> bool:
        """Queue ``frame`` without waiting; False if the queue is full (the hub then closes it)."""
        ...

    def close(self, code: int, reason: str = "") -> None:
        """Ask the connection to close (non-blocking)."""
        ...


class Fanout:
    def __init__(self, codecs: dict[str, Codec], metrics: Metrics) -> None:
        self.codecs = codecs
        self.metrics = metrics
        self.stats = {"frames": 0, "renders": 0, "slow_closed": 0}

    def publish(self, conns: Iterable[Connection], old: Room | None, new: Room, events: Sequence[Event]) -> int:
        """Deliver version ``new`` to ``conns`` (``old``: the version before it, if known);
        returns the number of frames queued."""
        v = new.version
        frames: dict[tuple[str, int, bool], Frame] = {}
        delivered = 0
        for conn in list(conns):
            have = conn.version
            if have is None or have >= v:
                continue
            is_update = old is not None and have == v - 1 and old.version == v - 1
            key = (conn.codec, conn.viewer, is_update)
            frame = frames.get(key)
            if frame is None:
                codec = self.codecs[conn.codec]
                frame = codec.update(old, new, conn.viewer, events) if old is not None and is_update \
                    else codec.snapshot(new, conn.viewer)
                frames[key] = frame
                self.stats["renders"] += 1
            delivered += self._deliver(conn, frame, new)
        self._count(delivered)
        return delivered

    def snapshot(self, conn: Connection, room: Room) -> None:
        """Queue a full snapshot of ``room`` for ``conn`` unless it already has a newer one."""
        if conn.version is not None and conn.version > room.version:
            return
        self._count(self._deliver(conn, self.codecs[conn.codec].snapshot(room, conn.viewer), room))

    def presence(self, conns: Iterable[Connection], room: Room, attendance: Attendance) -> None:
        """Who is connected, to every connection that has had its snapshot."""
        frames: dict[str, Frame | None] = {}
        for conn in list(conns):
            if conn.version is None:
                continue
            if conn.codec not in frames:
                frames[conn.codec] = self.codecs[conn.codec].presence(room, attendance)
            frame = frames[conn.codec]
            if frame is not None and not conn.send(frame):
                self.drop_slow(conn, room.id)

    def notify(self, conns: Iterable[Connection], code: str, message: str) -> None:
        """An unasked error frame (``unavailable`` when Redis is away) to every connection that
        has had its snapshot: one frame per codec and version shown. A full queue is left to
        the resync's snapshot."""
        frames: dict[tuple[str, int], Frame] = {}
        for conn in list(conns):
            if conn.version is None:
                continue
            key = (conn.codec, conn.version)
            if key not in frames:
                frames[key] = self.codecs[conn.codec].error(code, message, conn.version)
            conn.send(frames[key])

    def drop_slow(self, conn: Connection, room_id: str) -> None:
        """``conn`` refused a frame: close it with 1013 — unless it is already closing (the peer
        left, or a send failed): that is not a slow consumer, and its handler detaches it."""
        if conn.closed:
            return
        self.stats["slow_closed"] += 1
        self.metrics.slow_consumers.inc()
        event(log, "slow_consumer_dropped", level=logging.WARNING, room=room_id, player=conn.player_id,
              viewer=conn.viewer, codec=conn.codec)
        conn.close(SLOW, "too slow: reconnect to resync")

    def _deliver(self, conn: Connection, frame: Frame, room: Room) -> bool:
        """``frame`` (of ``room``) to ``conn``; a connection that follows its game to the
        rematch is told, after the frame that shows the link, where it went (whichever way the
        linked version reached it: an update, a snapshot after a gap, a refresh, a resync)."""
        if not conn.send(frame):
            self.drop_slow(conn, room.id)
            return False
        conn.version = room.version
        if room.rematch is not None and conn.on_rematch is not None:
            conn.on_rematch(room.rematch)
        return True

    def _count(self, n: int) -> None:
        self.stats["frames"] += n  # the metric reads it (server.metrics: mineduel_frames_queued)

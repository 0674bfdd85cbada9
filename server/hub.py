"""One pub/sub connection per process, fanning each room's new versions out to local sockets.

For every room with local connections the hub holds a reference-counted subscription to the
room's channel and the last :class:`Room` it saw. A commit message (published by the Lua
commit of whichever process took the move) is decoded once, then rendered once per
(codec, viewer class) present locally and the same frame is queued on every matching
connection:

- a connection whose last version is ``v - 1`` gets ``codec.update(old, new, viewer, events)``;
- one further behind (a gap) gets ``codec.snapshot(new, viewer)``;
- one already at ``v`` or beyond gets nothing (it got a fresher snapshot meanwhile).

A connection whose bounded queue is full is closed with 1013 (it resyncs on reconnect). When
the pub/sub connection drops, messages are lost: the hub reconnects with backoff (no process
restart, however long Redis is away); if the first attempt fails it tells every local
connection the service is interrupted (``codec.error("unavailable", ...)``), and once back it
resubscribes and sends every local connection a fresh snapshot.

Operations: connects, disconnects and dropped slow consumers are logged one line each
(:mod:`server.logs`) and counted in :class:`~server.metrics.Metrics`, as are the pub/sub
losses; the move-to-push latency of moves taken by this process is observed when their update
has been queued on the local connections.

Lifecycle of a connection (done by the edges)::

    room = await hub.attach(room_id, conn)   # subscribes, then sends conn its snapshot
    ...
    await hub.detach(room_id, conn)          # always, in a finally
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from engine import SPECTATOR, Event

from .fanout import Codec, Connection, Frame
from .logs import event
from .metrics import Metrics
from .ops import UNAVAILABLE, UNAVAILABLE_MESSAGE, is_outage, redis_down
from .pubsub import PubSubConnection
from .room import Room, events_from_data
from .rooms import Rooms
from .store import Store, channel, room_of_channel, unpack

log = logging.getLogger("mineduel.hub")

SLOW = 1013
RESTART = 1012
SERVER_ERROR = 1011


class _Entry:
    __slots__ = ("conns", "room", "ready", "pending", "spectators", "watchers")

    def __init__(self) -> None:
        self.conns: set[Connection] = set()
        self.room: Room | None = None
        self.ready = asyncio.Event()
        self.pending = 0  # SUBSCRIBE commands sent but not yet confirmed
        self.spectators = 0  # local spectator connections
        self.watchers = 0  # spectators over all processes (last presence message)


class Hub:
    def __init__(
        self,
        store: Store,
        rooms: Rooms,
        codecs: dict[str, Codec],
        *,
        process_id: str | None = None,
        presence_ttl_s: int = 30,
        metrics: Metrics | None = None,
    ) -> None:
        self.store = store
        self.rooms = rooms
        self.codecs = codecs
        self.process_id = process_id or uuid.uuid4().hex
        self.presence_ttl_s = presence_ttl_s
        self.metrics = metrics or Metrics()
        self.entries: dict[str, _Entry] = {}
        self._recent: OrderedDict[bytes, tuple[Room, list[Event], float | None]] = OrderedDict()
        self._ps = PubSubConnection(store.url)
        self._task: asyncio.Task[None] | None = None
        self._refresh_task: asyncio.Task[None] | None = None
        self._resync_task: asyncio.Task[None] | None = None
        self._refreshes: set[asyncio.Task[None]] = set()
        self._connected = asyncio.Event()
        self._stopping = False
        self.reconnects = 0
        self.stats = {"messages": 0, "decoded": 0, "frames": 0, "renders": 0, "slow_closed": 0}

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await self._ps.connect()
        self._connected.set()
        self._task = asyncio.create_task(self._run(), name="hub-reader")
        self._refresh_task = asyncio.create_task(self._refresh_presence(), name="hub-presence")

    async def stop(self) -> None:
        """Close every local connection with 1012 (restart) and the pub/sub connection."""
        self._stopping = True
        for entry in self.entries.values():
            for conn in list(entry.conns):
                conn.close(RESTART, "server restart")
        for task in (self._task, self._refresh_task, self._resync_task, *self._refreshes):
            if task is not None:
                task.cancel()
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass
        self._ps.close()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    # ------------------------------------------------------------------ connections

    async def attach(self, room_id: str, conn: Connection, timeout_s: float = 10.0) -> Room:
        """Register ``conn``, make sure the room's channel is subscribed, send the snapshot.

        Raises ``UnknownRoom`` (nothing registered) or ``TimeoutError`` if pub/sub is down.
        """
        entry = self.entries.get(room_id)
        if entry is None:
            entry = self.entries[room_id] = _Entry()
            self._subscribe(room_id, entry)
        entry.conns.add(conn)
        try:
            await asyncio.wait_for(entry.ready.wait(), timeout_s)
            room = await self.rooms.load(room_id)
            if conn.viewer == SPECTATOR:
                entry.spectators += 1
                entry.watchers = await self.store.set_watchers(
                    room_id, self.process_id, entry.spectators, self.presence_ttl_s, publish=True
                )
            elif entry.room is None:
                entry.watchers = await self.store.set_watchers(room_id, self.process_id, entry.spectators,
                                                               self.presence_ttl_s, publish=False)
        except BaseException:
            await self.detach(room_id, conn)
            raise
        if entry.room is None or entry.room.version < room.version:
            entry.room = room
        self.send_snapshot(conn, entry.room)
        codec = self.codecs[conn.codec]
        frame = codec.presence(entry.room, entry.watchers)
        if frame is not None:
            conn.send(frame)
        event(log, "connect", room=room_id, player=conn.player_id, viewer=conn.viewer, codec=conn.codec,
              v=entry.room.version)
        return entry.room

    async def detach(self, room_id: str, conn: Connection) -> None:
        entry = self.entries.get(room_id)
        if entry is None or conn not in entry.conns:
            return
        entry.conns.discard(conn)
        if conn.version is not None:
            event(log, "disconnect", room=room_id, player=conn.player_id, viewer=conn.viewer, codec=conn.codec,
                  close=getattr(conn, "close_code", None))
        if conn.viewer == SPECTATOR and conn.version is not None:
            entry.spectators = max(0, entry.spectators - 1)
            try:
                await self.store.set_watchers(room_id, self.process_id, entry.spectators,
                                              self.presence_ttl_s, publish=True)
            except Exception as exc:  # Redis down: the field expires by itself
                redis_down(self.metrics, "presence", exc, room=room_id)
        if not entry.conns and self.entries.get(room_id) is entry:
            del self.entries[room_id]
            try:
                self._ps.unsubscribe(channel(room_id))
            except ConnectionError:
                pass

    def send_snapshot(self, conn: Connection, room: Room) -> None:
        """Queue a full snapshot of ``room`` for ``conn`` unless it already has a newer one."""
        if conn.version is not None and conn.version > room.version:
            return
        if self._deliver(conn, self.codecs[conn.codec].snapshot(room, conn.viewer), room.version, room.id):
            self._count_frames(1)

    def refresh_later(self, room_id: str, conn: Connection) -> None:
        """After an ``unavailable`` error: send ``conn`` a fresh snapshot once Redis answers
        again (at once if it already does), so the client learns what became of its action.
        Bounded (about a minute of retries); a closed connection stops it."""
        task = asyncio.create_task(self._refresh(room_id, conn), name=f"hub-refresh-{room_id}")
        self._refreshes.add(task)
        task.add_done_callback(self._refreshes.discard)

    async def _refresh(self, room_id: str, conn: Connection, attempts: int = 60) -> None:
        room = await self._load_when_up(room_id, self._connected, 5, attempts, "refresh",
                                        stop=lambda: getattr(conn, "closed", False) or self._stopping)
        entry = self.entries.get(room_id)
        if room is None or entry is None or conn not in entry.conns:
            return
        if entry.room is None or entry.room.version < room.version:
            entry.room = room
        conn.version = None  # a full snapshot, whatever it had
        self.send_snapshot(conn, entry.room)

    async def _load_when_up(self, room_id: str, ready: asyncio.Event, ready_timeout_s: float, attempts: int,
                            what: str, stop: Callable[[], bool] = lambda: False) -> Room | None:
        """Load ``room_id`` once ``ready`` is set, retrying with backoff (50 ms doubling to 1 s)
        while Redis is unreachable or still loading its AOF; ``None`` after ``attempts``, when
        ``stop()`` says so, or on an error that is not an outage (logged: a bug)."""
        delay = 0.05
        for _ in range(attempts):
            if stop():
                return None
            try:
                await asyncio.wait_for(ready.wait(), ready_timeout_s)
                return await self.rooms.load(room_id)
            except Exception as exc:
                if not is_outage(exc) and not isinstance(exc, asyncio.TimeoutError):
                    log.exception("%s of %s failed", what, room_id)
                    return None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
        return None

    def cached_room(self, room_id: str) -> Room | None:
        """The last Room seen for a locally watched room while pub/sub is up, else ``None``."""
        entry = self.entries.get(room_id)
        if entry is None or not entry.ready.is_set():
            return None
        return entry.room

    def note_commit(self, nonce: bytes, room: Room | None, events: list[Any], started: float | None = None) -> None:
        """The room service is about to commit ``room`` (``None``: that commit lost). When its
        message comes back, the hub uses this Room instead of decoding the message again, and
        observes the move-to-push latency from ``started`` (``time.perf_counter()`` when the
        move was received)."""
        if room is None:
            self._recent.pop(nonce, None)
        elif room.id in self.entries:
            self._recent[nonce] = (room, events, started)
            while len(self._recent) > 1024:
                self._recent.popitem(last=False)

    # ------------------------------------------------------------------ internals

    def _subscribe(self, room_id: str, entry: _Entry) -> None:
        entry.pending += 1
        try:
            self._ps.subscribe(channel(room_id))
        except ConnectionError:
            entry.pending -= 1  # resubscribed after the reconnect

    def _deliver(self, conn: Connection, frame: Frame, version: int, room_id: str) -> bool:
        """Queue ``frame`` on ``conn``; ``False`` if it was refused (the connection is dropped)."""
        if conn.send(frame):
            conn.version = version
            return True
        self._drop_slow(conn, room_id)
        return False

    def _count_frames(self, n: int) -> None:
        self.stats["frames"] += n
        self.metrics.frames.inc(n)  # once per fan-out, not per frame: the counter takes a lock

    def _drop_slow(self, conn: Connection, room_id: str) -> None:
        """``conn`` refused a frame: close it with 1013 — unless it is already closing (the peer
        left, or a send failed): that is not a slow consumer, and its handler detaches it."""
        if getattr(conn, "closed", False):
            return
        self.stats["slow_closed"] += 1
        self.metrics.slow_consumers.inc()
        event(log, "slow_consumer_dropped", level=logging.WARNING, room=room_id, player=conn.player_id,
              viewer=conn.viewer, codec=conn.codec)
        conn.close(SLOW, "too slow: reconnect to resync")

    def _interrupted(self) -> None:
        """Redis is unreachable: tell every local connection (one frame per codec and version)."""
        frames: dict[tuple[str, int], Frame] = {}  # one frame per codec and version shown
        for entry in list(self.entries.values()):
            for conn in list(entry.conns):
                if conn.version is None:
                    continue
                key = (conn.codec, conn.version)
                if key not in frames:
                    frames[key] = self.codecs[conn.codec].error(UNAVAILABLE, UNAVAILABLE_MESSAGE, conn.version)
                conn.send(frames[key])  # a full queue is dropped by the resync's snapshot anyway

    async def _run(self) -> None:
        backoff = 0.05
        while not self._stopping:
            try:
                while True:
                    kind, chan, payload = await self._ps.read()
                    self._dispatch(kind, chan, payload)
                    backoff = 0.05
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._stopping:
                    return
                redis_down(self.metrics, "pubsub", exc)
            lost_at = time.monotonic()
            self._connected.clear()
            self._ps.close()
            if self._resync_task is not None:
                self._resync_task.cancel()
            for entry in self.entries.values():
                entry.ready.clear()
                entry.pending = 0
            attempts = 0
            while not self._stopping:  # until Redis is back or the process stops: backoff ≤ 2 s
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                try:
                    await self._ps.connect()
                    break
                except (OSError, asyncio.TimeoutError) as exc:
                    attempts += 1
                    if attempts == 1:
                        event(log, "redis_unavailable", level=logging.WARNING, error=type(exc).__name__,
                              rooms=len(self.entries))
                        self._interrupted()
            if self._stopping:
                return
            self.reconnects += 1
            self.metrics.pubsub_reconnects.inc()
            self._connected.set()
            event(log, "redis_restored", level=logging.WARNING, down_ms=int(1000 * (time.monotonic() - lost_at)),
                  rooms=len(self.entries))
            for room_id, entry in self.entries.items():
                self._subscribe(room_id, entry)
            self._resync_task = asyncio.create_task(self._resync_all(), name="hub-resync")

    async def _resync_all(self, attempts: int = 50) -> None:
        """After a reconnect: wait for the subscriptions, then a fresh snapshot for everyone.

        Redis may still be loading its AOF after a restart: each room's load is retried with
        backoff (bounded; a later loss of the link cancels this and starts a new resync)."""
        for room_id, entry in list(self.entries.items()):
            room = await self._load_when_up(room_id, entry.ready, 10, attempts, "resync")
            if self.entries.get(room_id) is not entry:
                continue  # everybody left meanwhile
            if room is None:
                event(log, "resync_failed", level=logging.WARNING, room=room_id)
                for conn in list(entry.conns):
                    conn.close(SERVER_ERROR, "resync failed")
                continue
            entry.room = room
            for conn in list(entry.conns):
                if conn.version is not None:
                    conn.version = None
                    self.send_snapshot(conn, room)

    def _dispatch(self, kind: str, chan: str, payload: object) -> None:
        room_id = room_of_channel(chan)
        entry = self.entries.get(room_id)
        if entry is None:
            return
        if kind == "subscribe":
            entry.pending = max(0, entry.pending - 1)
            if entry.pending == 0:
                entry.ready.set()
            return
        if kind != "message" or not isinstance(payload, bytes):
            return
        self.stats["messages"] += 1
        try:
            if payload[:1] == b"P":
                self._on_presence(entry, int(payload[1:]))
            else:
                self._on_commit(room_id, entry, payload)
        except Exception:
            log.exception("cannot fan out a message for room %s", room_id)
            for conn in list(entry.conns):
                conn.close(SERVER_ERROR, "server error")

    def _on_presence(self, entry: _Entry, watchers: int) -> None:
        entry.watchers = watchers
        if entry.room is None:
            return
        frames: dict[str, Frame | None] = {}
        for conn in list(entry.conns):
            if conn.version is None:
                continue
            if conn.codec not in frames:
                frames[conn.codec] = self.codecs[conn.codec].presence(entry.room, watchers)
            frame = frames[conn.codec]
            if frame is not None and not conn.send(frame):
                self._drop_slow(conn, entry.room.id)

    def _on_commit(self, room_id: str, entry: _Entry, payload: bytes) -> None:
        _tag, version, data, events_data, nonce = unpack(payload)
        old = entry.room
        if old is not None and old.version >= version:
            # This version (or a later one) is here already: an attach or a refresh loaded it
            # before its message arrived. Connections still behind it get a snapshot of the
            # latest (skipping them would leave them stuck until the next change).
            self._recent.pop(nonce, None)
            self._reseat(entry, old)
            if any(c.version is not None and c.version < old.version for c in entry.conns):
                self._fan_out(entry, None, old, ())
            return
        local = self._recent.pop(nonce, None)
        started = None
        if local is not None:
            new, events, started = local
        else:
            # another process's commit: decoded, reusing what the previous version already has
            new, events = Room.from_data(unpack(data), old), events_from_data(events_data)
            self.stats["decoded"] += 1
        entry.room = new
        if old is not None and old.players != new.players:
            self._reseat(entry, new)
        self._fan_out(entry, old, new, events)
        if started is not None and entry.conns:
            self.metrics.push_latency.observe(time.perf_counter() - started)

    def _reseat(self, entry: _Entry, room: Room) -> None:
        """A player who was watching took a seat (or the reverse): switch its viewer class."""
        for conn in entry.conns:
            if conn.player_id is None:
                continue
            seat = room.seat_of(conn.player_id)
            viewer = SPECTATOR if seat is None else seat
            if viewer != conn.viewer:
                if conn.viewer == SPECTATOR:
                    entry.spectators = max(0, entry.spectators - 1)
                conn.viewer = viewer
                conn.version = -1  # forces a snapshot for the new class

    def _fan_out(self, entry: _Entry, old: Room | None, new: Room, events: Sequence[Event]) -> None:
        v = new.version
        frames: dict[tuple[str, int, bool], Frame] = {}
        delivered = 0
        for conn in list(entry.conns):
            have = conn.version
            if have is None or have >= v:
                continue
            is_update = have == v - 1 and old is not None and old.version == v - 1
            key = (conn.codec, conn.viewer, is_update)
            frame = frames.get(key)
            if frame is None:
                codec = self.codecs[conn.codec]
                frame = codec.update(old, new, conn.viewer, events) if is_update and old else codec.snapshot(new, conn.viewer)
                frames[key] = frame
                self.stats["renders"] += 1
            delivered += self._deliver(conn, frame, v, new.id)
        if delivered:
            self._count_frames(delivered)

    async def _refresh_presence(self) -> None:
        """Keep this process's spectator fields alive (they expire if the process dies)."""
        period = max(1.0, self.presence_ttl_s / 3)
        while True:
            await asyncio.sleep(period)
            for room_id, entry in list(self.entries.items()):
                if entry.spectators > 0:
                    try:
                        await self.store.set_watchers(room_id, self.process_id, entry.spectators,
                                                      self.presence_ttl_s, publish=False)
                    except Exception as exc:  # Redis away: one line per pass, not one per room
                        redis_down(self.metrics, "presence", exc, room=room_id)
                        break

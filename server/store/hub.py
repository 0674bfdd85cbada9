"""One pub/sub link per process: each room's new versions reach its local connections.

For every room with local connections the hub holds a reference-counted subscription to the
room's channel; the room's latest version lives in the :class:`~.cache.RoomCache` (shared with
the room service). A commit message (published by the commit script of whichever process took
the change) becomes the next version — this process's own commits are claimed from the cache,
others decoded with the previous version — and :class:`~.fanout.Fanout` renders it once per
(codec, viewer class) for the local connections. Presence messages update the spectator
count (:class:`~.presence.Presence`).

When the link drops, messages are lost: the hub reconnects with backoff (however long Redis is
away); if the first attempt fails it tells every local connection the service is interrupted,
and once back it resubscribes, gives the running clocks of its rooms the outage's time back
(:meth:`Hub._resume`, :mod:`server.core.outages`) and sends every local connection a fresh
snapshot.

Lifecycle of a connection (done by the edges)::

    room = await hub.attach(room_id, conn)   # subscribes, then sends conn its snapshot
    ...
    await hub.detach(room_id, conn)          # always, in a finally
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from engine import SPECTATOR

from ..core.decide import Tick
from ..core.outages import resumed
from ..core.room import Room
from ..logs import event
from ..metrics import Metrics
from ..outage import UNAVAILABLE, UNAVAILABLE_MESSAGE, is_outage, redis_down
from .cache import RoomCache
from .fanout import Connection, Fanout
from .keys import channel, room_of_channel
from .messages import Attendance, is_presence, presence_of, read_commit
from .presence import Presence
from .pubsub import PubSub
from .service import RoomRefused, RoomService

log = logging.getLogger("mineduel.hub")

RESTART = 1012
SERVER_ERROR = 1011


class _Entry:
    """A room with local connections."""

    __slots__ = ("conns", "ready", "pending")

    def __init__(self) -> None:
        self.conns: set[Connection] = set()
        self.ready = asyncio.Event()
        """Set while the room's subscription is confirmed (every later version reaches us)."""
        self.pending = 0
        """SUBSCRIBE commands sent but not yet confirmed."""


@dataclass(frozen=True, slots=True)
class Census:
    """What the hub holds right now (for ``/metrics`` and ``/healthz``)."""

    connections: dict[tuple[str, str], int]
    """(``player``/``spectator``, codec) → open connections."""
    rooms: int
    cached_rooms: int
    pending_commits: int
    linked: bool


class Hub:
    def __init__(self, rooms: RoomService, cache: RoomCache, fanout: Fanout, presence: Presence, pubsub: PubSub,
                 metrics: Metrics) -> None:
        self.rooms = rooms
        self.cache = cache
        self.fanout = fanout
        self.presence = presence
        self.metrics = metrics
        self._ps = pubsub
        self._entries: dict[str, _Entry] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._reader: asyncio.Task[None] | None = None
        self._resync: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._stopping = False
        self.reconnects = 0
        self.stats = {"messages": 0, "decoded": 0}

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await self._ps.connect()
        self._connected.set()
        self._reader = asyncio.create_task(self._run(), name="hub-reader")
        self._spawn(self.presence.run(), "hub-presence")

    async def stop(self) -> None:
        """Close every local connection with 1012 (restart) and the pub/sub link."""
        self._stopping = True
        for entry in self._entries.values():
            for conn in list(entry.conns):
                conn.close(RESTART, "server restart")
        for task in (self._reader, self._resync, *self._tasks):
            if task is not None:
                task.cancel()
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass
        await self._ps.close()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    # ------------------------------------------------------------------ what others may ask

    def room(self, room_id: str) -> Room | None:
        """The latest version of a room with local connections, if known."""
        return self.cache.held(room_id)

    def watchers(self, room_id: str) -> int:
        """Spectators of ``room_id`` over all processes (as last heard; 0 if not watched here)."""
        return self.presence.total(room_id)

    def attendance(self, room_id: str) -> Attendance:
        """Who is connected to ``room_id`` over all processes (as last heard)."""
        return self.presence.attendance(room_id)

    def players_connected(self) -> set[str]:
        """The players (by id) with a connection to a room of this process."""
        return {conn.player_id for entry in list(self._entries.values()) for conn in list(entry.conns)
                if conn.player_id is not None}

    def census(self) -> Census:
        counts: dict[tuple[str, str], int] = {}
        for entry in list(self._entries.values()):
            for conn in list(entry.conns):
                key = ("spectator" if conn.viewer == SPECTATOR else "player", conn.codec)
                counts[key] = counts.get(key, 0) + 1
        return Census(counts, len(self._entries), self.cache.rooms_held(), self.cache.pending(), self.connected)

    # ------------------------------------------------------------------ connections

    async def attach(self, room_id: str, conn: Connection, timeout_s: float = 10.0) -> Room:
        """Register ``conn``, make sure the room's channel is subscribed, send the snapshot.

        Raises what loading the room raises (an unknown room; nothing stays registered) or
        ``TimeoutError`` if pub/sub is down.
        """
        entry = self._entries.get(room_id)
        if entry is None:
            entry = self._entries[room_id] = _Entry()
            self.cache.watch(room_id)
            await self._subscribe(room_id, entry)
        entry.conns.add(conn)
        try:
            await asyncio.wait_for(entry.ready.wait(), timeout_s)
            room = await self.rooms.load(room_id)
            await self.presence.arrive(room_id, conn.viewer)
        except BaseException:
            await self.detach(room_id, conn)
            raise
        room = self.cache.offer(room)
        self.fanout.snapshot(conn, room)
        frame = self.fanout.codecs[conn.codec].presence(room, self.presence.attendance(room_id))
        if frame is not None:
            conn.send(frame)
        event(log, "connect", room=room_id, player=conn.player_id, viewer=conn.viewer, codec=conn.codec,
              v=room.version)
        return room

    async def detach(self, room_id: str, conn: Connection) -> None:
        entry = self._entries.get(room_id)
        if entry is None or conn not in entry.conns:
            return
        entry.conns.discard(conn)
        if conn.version is not None:
            event(log, "disconnect", room=room_id, player=conn.player_id, viewer=conn.viewer, codec=conn.codec,
                  close=getattr(conn, "close_code", None))
            await self.presence.leave(room_id, conn.viewer)
        if not entry.conns and self._entries.get(room_id) is entry:
            del self._entries[room_id]
            self.cache.unwatch(room_id)
            self.presence.forget(room_id)
            try:
                await self._ps.unsubscribe(channel(room_id))
            except ConnectionError:
                pass

    def send_snapshot(self, conn: Connection, room: Room) -> None:
        """Queue a full snapshot of ``room`` for ``conn`` unless it already has a newer one."""
        self.fanout.snapshot(conn, room)

    def refresh_later(self, room_id: str, conn: Connection) -> None:
        """After an ``unavailable`` error: send ``conn`` a fresh snapshot once Redis answers
        again (at once if it already does), so the client learns what became of its action.
        Bounded (about a minute of retries); a closed connection stops it."""
        self._spawn(self._refresh(room_id, conn), f"hub-refresh-{room_id}")

    # ------------------------------------------------------------------ internals

    def _spawn(self, coro, name: str) -> None:  # noqa: ANN001 - a coroutine
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _refresh(self, room_id: str, conn: Connection, attempts: int = 60) -> None:
        room = await self._load_when_up(room_id, self._connected, 5, attempts, "refresh",
                                        stop=lambda: conn.closed or self._stopping)
        entry = self._entries.get(room_id)
        if room is None or entry is None or conn not in entry.conns:
            return
        room = self.cache.offer(room)
        conn.version = None  # a full snapshot, whatever it had
        self.fanout.snapshot(conn, room)

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

    async def _subscribe(self, room_id: str, entry: _Entry) -> None:
        entry.pending += 1
        try:
            await self._ps.subscribe(channel(room_id))
        except ConnectionError:
            entry.pending -= 1  # resubscribed after the reconnect

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
            backoff = await self._reconnect(backoff)

    async def _reconnect(self, backoff: float) -> float:
        """The link dropped: mark every room stale, reconnect with backoff (≤ 2 s, until Redis
        is back or the process stops), resubscribe and resync everybody."""
        lost_at = time.monotonic()
        self.rooms.outages.lost()
        self._connected.clear()
        await self._ps.close()
        if self._resync is not None:
            self._resync.cancel()
        self.cache.set_all_stale()
        for entry in self._entries.values():
            entry.ready.clear()
            entry.pending = 0
        attempts = 0
        while not self._stopping:
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 2.0)
            try:
                await self._ps.connect()
                break
            except Exception as exc:  # keep trying whatever it is: without the link nothing reaches anyone
                if not is_outage(exc) and not isinstance(exc, asyncio.TimeoutError):
                    log.exception("cannot reconnect the pub/sub link")
                attempts += 1
                if attempts == 1:
                    event(log, "redis_unavailable", level=logging.WARNING, error=type(exc).__name__,
                          rooms=len(self._entries))
                    for entry in self._entries.values():
                        self.fanout.notify(entry.conns, UNAVAILABLE, UNAVAILABLE_MESSAGE)
        if self._stopping:
            return backoff
        self.rooms.outages.back()
        self.reconnects += 1
        self.metrics.pubsub_reconnects.inc()
        self._connected.set()
        event(log, "redis_restored", level=logging.WARNING, down_ms=int(1000 * (time.monotonic() - lost_at)),
              rooms=len(self._entries))
        for room_id, entry in list(self._entries.items()):
            await self._subscribe(room_id, entry)
        self._resync = asyncio.create_task(self._resync_all(), name="hub-resync")
        return backoff

    async def _resync_all(self, attempts: int = 50) -> None:
        """After a reconnect: wait for the subscriptions, then a fresh snapshot for everyone.

        Redis may still be loading its AOF after a restart: each room's load is retried with
        backoff (bounded; a later loss of the link cancels this and starts a new resync)."""
        for room_id, entry in list(self._entries.items()):
            room = await self._load_when_up(room_id, entry.ready, 10, attempts, "resync")
            if self._entries.get(room_id) is not entry:
                continue  # everybody left meanwhile
            if room is None:
                event(log, "resync_failed", level=logging.WARNING, room=room_id)
                for conn in list(entry.conns):
                    conn.close(SERVER_ERROR, "resync failed")
                continue
            room = self.cache.offer(await self._resume(room))
            for conn in list(entry.conns):
                if conn.version is not None:
                    conn.version = None
                    self.fanout.snapshot(conn, room)

    async def _resume(self, room: Room) -> Room:
        """After an outage, a watched room whose running clock is owed the outage's time gets it
        back at once (a ``Tick``: its commit carries the refund, :mod:`server.core.outages`), so
        its players see the clock as it stood, not the time lost; the room after it."""
        now = self.rooms.now_ms()
        if not resumed(room, self.rooms.outages.outages(now), now)[1]:
            return room
        try:
            return await self.rooms.act(room.id, None, Tick())
        except Exception as exc:  # refused or away again: the next commit on the room gives it back
            if not isinstance(exc, RoomRefused) and not is_outage(exc):
                log.exception("resuming the clock of %s failed", room.id)
            return room

    def _dispatch(self, kind: str, chan: str, payload: object) -> None:
        room_id = room_of_channel(chan)
        entry = self._entries.get(room_id)
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
                self._on_presence(room_id, entry, presence_of(payload))
            else:
                self._on_commit(room_id, entry, payload)
        except Exception:
            log.exception("cannot fan out a message for room %s", room_id)
            for conn in list(entry.conns):
                conn.close(SERVER_ERROR, "server error")

    def _on_presence(self, room_id: str, entry: _Entry, attendance: Attendance) -> None:
        self.presence.heard(room_id, attendance)
        room = self.cache.held(room_id)
        if room is not None:
            self.fanout.presence(entry.conns, room, attendance)

    def _on_commit(self, room_id: str, entry: _Entry, payload: bytes) -> None:
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

    def _reseat(self, room_id: str, entry: _Entry, room: Room) -> None:
        """A player who was watching took a seat (or the reverse): switch its viewer class."""
        for conn in entry.conns:
            if conn.player_id is None:
                continue
            viewer = room.viewer_of(conn.player_id)
            if viewer != conn.viewer:
                if conn.version is not None:
                    self._spawn(self._recount(room_id, conn.viewer, viewer), f"hub-presence-{room_id}")
                conn.viewer = viewer
                conn.version = -1  # forces a snapshot for the new class

    async def _recount(self, room_id: str, old_viewer: int, new_viewer: int) -> None:
        """A connection changed viewer class (a watcher took a seat): count it in its new one."""
        await self.presence.leave(room_id, old_viewer)
        try:
            await self.presence.arrive(room_id, new_viewer)
        except Exception as exc:
            redis_down(self.metrics, "presence", exc, room=room_id)

"""One pub/sub link per process: each room's new versions reach its local connections.

For every room with local connections the hub holds a reference-counted subscription to the
room's channel; the room's latest version lives in the :class:`~.cache.RoomCache` (shared with
the room service). What a message read on the link becomes (the next version, rendered once
per (codec, viewer class) for the local connections, or who is connected) is
:class:`~.room_feed.RoomFeed`'s, which the room service also hands the commits of this
process that no message announced (nobody else listens to the room). The feed is built
before both and handed to each; the rooms watched here are its :attr:`~.room_feed.RoomFeed.entries`.

When the link drops, messages are lost: :class:`~.pubsub_link.PubSubLink` reconnects with backoff (however
long Redis is away); if the first attempt fails the hub tells every local connection the
service is interrupted, and once back it resubscribes, gives the running clocks of its rooms
the outage's time back (:func:`~.recovery.resume_clock`, :mod:`server.core.outages`) and sends
every local connection a fresh snapshot.

Lifecycle of a connection (done by the edges)::

    room = await hub.attach(room_id, conn)   # subscribes, then sends conn its snapshot
    ...
    room = await hub.move(room_id, other_id, conn)   # to the rematch (conn.on_rematch)
    ...
    await hub.detach(room_id, conn)          # always, in a finally
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from engine import SPECTATOR

from ..core.room import Room
from ..logs import event
from ..metrics import Metrics
from ..outage import UNAVAILABLE, UNAVAILABLE_MESSAGE
from ..tasks import stop_tasks
from .cache import RoomCache
from .fanout import Connection
from .keys import channel
from .messages import Attendance
from .pubsub import PubSub
from .pubsub_link import PubSubLink
from .recovery import load_when_up, resume_clock
from .room_feed import SERVER_ERROR, Entry, RoomFeed
from .service import RoomService
from .single_flight import SingleFlight

log = logging.getLogger("mineduel.hub")

RESTART = 1012


@dataclass(frozen=True, slots=True)
class Census:
    """What the hub holds right now (for ``/metrics`` and ``/healthz``)."""

    connections: dict[tuple[str, str], int]
    """(``player``/``spectator``, codec) → open connections."""
    rooms: int
    cached_rooms: int
    pending_commits: int
    linked: bool
    frames: int
    """Frames queued on local connections since the process started."""


class Hub:
    def __init__(self, rooms: RoomService, cache: RoomCache, feed: RoomFeed, pubsub: PubSub,
                 metrics: Metrics) -> None:
        self.rooms = rooms
        self.cache = cache
        self.feed = feed
        self.fanout = feed.fanout
        self.presence = feed.presence
        self.metrics = metrics
        self._ps = pubsub
        self._entries = feed.entries
        self._tasks: set[asyncio.Task[None]] = set()
        self._fresh: SingleFlight[Room] = SingleFlight()
        """Loads begun once a room's subscription was confirmed, shared by the connections
        attaching at that moment. Not the room service's (``rooms.latest``): a load begun
        before the subscription may miss a version whose message never comes."""
        self._reader: asyncio.Task[None] | None = None
        self._resync: asyncio.Task[None] | None = None
        self.link = PubSubLink(pubsub, metrics, rooms.outages, feed.dispatch, self._link_lost, self._unavailable,
                               self._link_back, cache.link)
        rooms.outages.when_over(self._outage_over)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await self.link.connect()
        self._reader = asyncio.create_task(self.link.run(), name="hub-reader")
        self._spawn(self.presence.run(), "hub-presence")

    async def stop(self) -> None:
        """Close every local connection with 1012 (restart) and the pub/sub link."""
        self.link.stopping = True
        for entry in self._entries.values():
            for conn in list(entry.conns):
                conn.close(RESTART, "server restart")
        await stop_tasks((self._reader, self._resync, *self._tasks))
        await self.presence.stop()
        await self._ps.close()

    @property
    def connected(self) -> bool:
        return self.link.connected.is_set()

    @property
    def reachable(self) -> bool:
        """The store answers as far as this process knows: the pub/sub link is up and the last
        store call did not fail for want of it. Why both: a store that hangs keeps the link's
        connection open while every call times out (its process stopped, a full disk)."""
        return self.connected and not self.rooms.outages.down

    @property
    def reconnects(self) -> int:
        return self.link.reconnects

    @property
    def stats(self) -> dict[str, int]:
        """Messages read and other processes' versions decoded."""
        return self.feed.stats

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
        return Census(counts, len(self._entries), self.cache.rooms_held(), self.cache.pending(), self.connected,
                      self.fanout.stats["frames"])

    # ------------------------------------------------------------------ connections

    async def attach(self, room_id: str, conn: Connection, timeout_s: float = 10.0, *, reseat: bool = False) -> Room:
        """Register ``conn``, make sure the room's channel is subscribed, send the snapshot.
        ``reseat``: the connection's viewer class is taken from the room (one moved here).

        Raises what loading the room raises (an unknown room; nothing stays registered) or
        ``TimeoutError`` if pub/sub is down.
        """
        entry = self._entries.get(room_id)
        if entry is None:
            entry = self._entries[room_id] = Entry()
            self.cache.watch(room_id)
            await self._subscribe(room_id, entry)
        entry.conns.add(conn)
        try:
            if not entry.ready.is_set():  # (wait_for makes a task even for a set event)
                await asyncio.wait_for(entry.ready.wait(), timeout_s)
            room = self.cache.latest(room_id) or await self._fresh.run(room_id, lambda: self.rooms.load(room_id))
            room = self.cache.offer(room)
            if reseat:
                conn.viewer = room.viewer_of(conn.player_id)
            self.fanout.snapshot(conn, room)
            # counted and published: the presence frame reaches conn (it has its snapshot) with the others'
            await self.presence.arrive(room_id, conn.viewer)
            if conn.viewer != SPECTATOR:
                # a player is back: the lobby's read may have unlisted the room while its people
                # were away. After the presence write, so a read that unlists it sees them back
                # (server.web.lobby) or is undone here
                await self.rooms.aftermath.list(room, again=True)
        except BaseException:
            await self.detach(room_id, conn)
            raise
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
            self.presence.leave(room_id, conn.viewer)
        if not entry.conns and self._entries.get(room_id) is entry:
            del self._entries[room_id]
            self.cache.unwatch(room_id)
            self.presence.forget(room_id)
            self.feed.unsubscribing(room_id)
            try:
                await self._ps.unsubscribe(channel(room_id))
            except ConnectionError:  # not sent: the link is down, and with it every subscription
                self.feed.unsubscribed(room_id)

    async def move(self, from_id: str, to_id: str, conn: Connection) -> Room:
        """Move ``conn`` to another room (a socket following its game to the rematch): out of
        ``from_id``, then into ``to_id`` with its viewer class there (a player's seat has
        changed) and a snapshot of it, as :meth:`attach` gives. Raises what ``attach`` raises
        (``conn`` then watches neither room)."""
        await self.detach(from_id, conn)
        conn.version = None
        # a spectator until attach reseats it: its old seat number would be the opponent's seat
        # there, and a snapshot sent meanwhile (a stale move's answer) would show their secrets
        conn.viewer = SPECTATOR
        return await self.attach(to_id, conn, reseat=True)

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
        room = await load_when_up(self.rooms, room_id, self.link.connected, 5, attempts, "refresh",
                                  stop=lambda: conn.closed or self.link.stopping)
        entry = self._entries.get(room_id)
        if room is None or entry is None or conn not in entry.conns:
            return
        room = self.cache.offer(room)
        conn.version = None  # a full snapshot, whatever it had
        self.fanout.snapshot(conn, room)

    async def _subscribe(self, room_id: str, entry: Entry) -> None:
        entry.pending += 1
        try:
            await self._ps.subscribe(channel(room_id))
        except ConnectionError:
            entry.pending -= 1  # resubscribed after the reconnect

    def _link_lost(self) -> None:
        """The link dropped: every room is stale until resynced."""
        if self._resync is not None:
            self._resync.cancel()
        self.feed.link_lost()

    def _unavailable(self, exc: Exception) -> None:
        """The first reconnect attempt failed: tell every local connection."""
        event(log, "redis_unavailable", level=logging.WARNING, error=type(exc).__name__, rooms=len(self._entries))
        for entry in self._entries.values():
            self.fanout.notify(entry.conns, UNAVAILABLE, UNAVAILABLE_MESSAGE)

    async def _link_back(self) -> None:
        """The link is back: resubscribe, then resync everybody (in the background)."""
        for room_id, entry in list(self._entries.items()):
            await self._subscribe(room_id, entry)
        self._resync = asyncio.create_task(self._resync_all(), name="hub-resync")

    def _outage_over(self) -> None:
        """The store answers again after calls failed for want of it while the pub/sub link stayed
        up (a store that hung: its connections stay open): resync everybody as after a reconnect.
        Why: a command sent into the hang may have run when the store woke (a move, committed and
        published to nobody: its mover was told "unavailable", the others never saw it), and the
        running clocks are owed the hang's time (``resume_clock``: an update at once, not with the
        next move). A dropped link resyncs on its own return (:meth:`_link_back`)."""
        if self.connected and (self._resync is None or self._resync.done()):
            self._resync = asyncio.create_task(self._resync_all(), name="hub-resync")

    async def _resync_all(self, attempts: int = 50) -> None:
        """After a reconnect: wait for the subscriptions, then a fresh snapshot for everyone.

        Redis may still be loading its AOF after a restart: each room's load is retried with
        backoff (bounded; a later loss of the link cancels this and starts a new resync)."""
        for room_id, entry in list(self._entries.items()):
            room = await load_when_up(self.rooms, room_id, entry.ready, 10, attempts, "resync")
            if self._entries.get(room_id) is not entry:
                continue  # everybody left meanwhile
            if room is None:
                event(log, "resync_failed", level=logging.WARNING, room=room_id)
                for conn in list(entry.conns):
                    conn.close(SERVER_ERROR, "resync failed")
                continue
            room = self.cache.offer(await resume_clock(self.rooms, room))
            for conn in list(entry.conns):
                if conn.version is not None:
                    conn.version = None
                    self.fanout.snapshot(conn, room)

"""Who is connected to a room, over all processes: spectators, and each seat's player.

Each process keeps its own counts per room (spectators, seat 0's connections, seat 1's) in
fields of the room's presence hash that expire if the process dies (refreshed every third of
their TTL while it has connections there). The script sums the fields and keeps, per seat,
since when the seat has had no connection anywhere (the opponent of a player who left may
claim the game after a grace period: ``server.core.commands.Claim``). A change publishes the
:class:`~server.store.messages.Attendance` on the room's channel, and every process's hub
pushes it to its local connections (the spectator count, "your opponent left"). The changes
of one room within :data:`GATHER_S` are written (and published) once.

A player whose process died is seen as gone once its field expired and a refresh of another
process with sockets in the room noticed it (up to one TTL and one refresh period late), which
publishes it.
"""

from __future__ import annotations

import asyncio
import time
import uuid

from engine import SPECTATOR

from ..metrics import Metrics
from ..outage import redis_down
from .messages import Attendance
from .store import Store

REFRESH_BATCH = 100
"""Rooms per pipelined refresh: one round trip each, short enough that Valkey runs other
clients' commands (the moves' commits) between batches."""

REFRESH_SLICES = 20
"""A refresh pass is spread over its period in this many ticks, each writing its share of the
rooms. Why: one pass over 2,550 rooms at once held the app at 98% of a core for 0.65 s (about
65 ms of CPU on top of the moves') while it served 2,550 moves/s at 88%: a backlog every 10 s for
the moves behind it. Spread, the same writes come as a few ms every half second
(docs/PERFORMANCE.md, twelfth session)."""

GATHER_S = 0.05
"""A change of a room's local connections waits this long for others before it is written,
and one write (one publish, so one presence frame to each of the room's sockets) serves them
all. Why: a game's 2 + K sockets open within a few ms of each other (a rematch; a page with its
spectators) and close the same way; written one by one, that is 2 + K script calls and
publishes, each a presence frame to every socket of the room: about 2 ms of the app's CPU
each time a game with three spectators was replaced, half of the sockets' cost
(docs/PERFORMANCE.md, thirteenth session). 50 ms is far below what a person notices in "your
opponent left" or a spectator count."""


class Presence:
    def __init__(self, store: Store, metrics: Metrics, *, process_id: str | None = None, ttl_s: int = 30,
                 gather_s: float = GATHER_S) -> None:
        self.store = store
        self.metrics = metrics
        self.process_id = process_id or uuid.uuid4().hex
        self.ttl_s = ttl_s
        self.gather_s = gather_s
        """0: each change is written at once (tests that count writes)."""
        self._local: dict[str, list[int]] = {}  # room id -> local [spectators, seat 0, seat 1]
        self._heard: dict[str, Attendance] = {}  # room id -> over all processes (last heard)
        self._due: dict[str, asyncio.Future[Attendance]] = {}  # room id -> its next write, not begun
        self._writers: set[asyncio.Task[None]] = set()
        self._stopped = False

    def attendance(self, room_id: str) -> Attendance:
        """Who is connected to ``room_id`` over all processes, as last heard."""
        return self._heard.get(room_id, Attendance())

    def total(self, room_id: str) -> int:
        """The last known number of spectators of ``room_id`` over all processes."""
        return self.attendance(room_id).spectators

    def heard(self, room_id: str, attendance: Attendance) -> Attendance:
        """A presence message arrived: what it says, as far as this process's own connections
        allow. Why: a message is written with the counts of its moment, and a socket that
        arrives while it is on its way is counted in the next one (up to :data:`GATHER_S`
        later); the message would tell that socket its own seat is away (and show a spectator
        count without it). A seat with a local connection is not away, and there are at least
        the local spectators. Returns the attendance to show."""
        counts = self._local.get(room_id)
        if counts is not None and (counts[0] > attendance.spectators
                                   or any(counts[1 + seat] and since is not None
                                          for seat, since in enumerate(attendance.away_since))):
            attendance = Attendance(max(counts[0], attendance.spectators),
                                    tuple(None if counts[1 + seat] else since
                                          for seat, since in enumerate(attendance.away_since)))
        self._heard[room_id] = attendance
        return attendance

    async def read(self, room_id: str) -> Attendance:
        """Learn who is connected (when this process starts watching a room), publishing nothing."""
        return await self._write(room_id, publish=False)

    async def away_since(self, room_id: str, seat: int) -> int | None:
        """Since when ``seat`` has had no connection to ``room_id`` (read now), or ``None``."""
        return (await self.read(room_id)).away_since[seat]

    async def arrive(self, room_id: str, viewer: int) -> Attendance:
        """A local connection of ``viewer`` (a seat or the spectators) opened: count it, tell
        everybody. Returns once written (with the room's other changes of the moment).
        Shielded: a connection that goes while waiting does not cancel the others' write."""
        self._counts(room_id)[_slot(viewer)] += 1
        return await asyncio.shield(self._next_write(room_id))

    def leave(self, room_id: str, viewer: int) -> None:
        """A local connection of ``viewer`` closed: counted now, written with the room's other
        changes of the moment without waiting for it (a closing handler has nothing to wait
        for). A failure is logged; while Redis is away the field expires by itself."""
        self._uncount(room_id, viewer)
        self._log_failure(room_id, self._next_write(room_id))

    def recount(self, room_id: str, old_viewer: int, new_viewer: int) -> None:
        """A local connection changed viewer class (a watcher took a seat): written as :meth:`leave`."""
        self._uncount(room_id, old_viewer)
        self._counts(room_id)[_slot(new_viewer)] += 1
        self._log_failure(room_id, self._next_write(room_id))

    def forget(self, room_id: str) -> None:
        """No local connection is left in ``room_id``."""
        self._local.pop(room_id, None)
        self._heard.pop(room_id, None)

    async def stop(self) -> None:
        """Write what is waiting now (the process is going: its connections closed); later
        changes are written at once."""
        self._stopped = True
        for task in list(self._writers):
            task.cancel()  # cancels the wait, not the write (see _write_due)
        await asyncio.gather(*self._writers, return_exceptions=True)

    async def run(self) -> None:
        """Keep this process's fields alive (they expire if the process dies); until cancelled.

        Every period (a third of their TTL) each room with local connections when the period
        began is written once, in :data:`REFRESH_SLICES` ticks spread evenly over the period,
        each tick its share of the rooms in pipelined batches of :data:`REFRESH_BATCH` (a
        batch's counts are read as it is sent). Every pass writes each of its rooms once, so a
        room's writes are at most two periods apart, within the TTL; a room that came since its
        pass began was written when it came and is in the next pass. While Redis is away a pass
        stops at its first failure (one line per pass) and the next begins when the period is
        over."""
        period = max(1.0, self.ttl_s / 3)
        tick = period / REFRESH_SLICES
        while True:
            rooms = list(self._local)
            n = len(rooms)
            for k in range(REFRESH_SLICES):
                await asyncio.sleep(tick)
                if not await self._refresh(rooms[k * n // REFRESH_SLICES:(k + 1) * n // REFRESH_SLICES]):
                    await asyncio.sleep(tick * (REFRESH_SLICES - 1 - k))
                    break

    async def _refresh(self, rooms: list[str]) -> bool:
        """Write the fields of those of ``rooms`` that still have local connections, and publish
        the attendance of those whose attendance changed without anybody arriving or leaving
        here: another process's fields expired (it died with sockets), so its players are away
        now and every process's sockets must hear it (nothing else would tell them). False if
        Redis failed (logged)."""
        for start in range(0, len(rooms), REFRESH_BATCH):
            batch = [(room_id, (c[0], c[1], c[2])) for room_id in rooms[start:start + REFRESH_BATCH]
                     if (c := self._local.get(room_id)) is not None and any(c)]
            if not batch:
                continue
            try:
                heard = await self.store.refresh_presence(batch, self.process_id, self.ttl_s,
                                                          time.time_ns() // 1_000_000)
            except Exception as exc:  # Redis away: one line per pass, not one per room
                redis_down(self.metrics, "presence", exc, room=batch[0][0])
                return False
            changed = [(room_id, attendance) for (room_id, _counts), attendance in zip(batch, heard)
                       if attendance != self._heard.get(room_id)]
            for (room_id, _counts), attendance in zip(batch, heard):
                self._heard[room_id] = attendance
            try:
                for room_id, attendance in changed:  # a field that expired: a process died with sockets
                    await self.store.publish_presence(room_id, attendance)
            except Exception as exc:
                redis_down(self.metrics, "presence", exc, room=changed[0][0])
                return False
        return True

    def _next_write(self, room_id: str) -> asyncio.Future[Attendance]:
        """The room's next write (with a publish): the one waiting to begin if there is one,
        else a new one that begins in :attr:`gather_s` (at once once stopping)."""
        due = self._due.get(room_id)
        if due is None:
            due = self._due[room_id] = asyncio.get_running_loop().create_future()
            due.add_done_callback(_retrieved)
            task = asyncio.create_task(self._write_due(room_id, due), name=f"presence-{room_id}")
            self._writers.add(task)
            task.add_done_callback(self._writers.discard)
        return due

    async def _write_due(self, room_id: str, due: asyncio.Future[Attendance]) -> None:
        if self.gather_s > 0 and not self._stopped:
            try:
                await asyncio.sleep(self.gather_s)
            except asyncio.CancelledError:
                pass  # stopping: write now
        if self._due.get(room_id) is due:
            del self._due[room_id]  # a change from now on needs a write of its own
        try:
            due.set_result(await self._write(room_id, publish=True))
        except Exception as exc:
            due.set_exception(exc)
        except asyncio.CancelledError:
            due.set_exception(ConnectionError("presence write cancelled"))
            raise

    def _log_failure(self, room_id: str, write: asyncio.Future[Attendance]) -> None:
        def logged(done: asyncio.Future[Attendance]) -> None:
            if not done.cancelled() and (exc := done.exception()) is not None:
                redis_down(self.metrics, "presence", exc, room=room_id)

        write.add_done_callback(logged)

    def _uncount(self, room_id: str, viewer: int) -> None:
        counts = self._counts(room_id)
        counts[_slot(viewer)] = max(0, counts[_slot(viewer)] - 1)

    def _counts(self, room_id: str) -> list[int]:
        counts = self._local.get(room_id)
        if counts is None:
            counts = self._local[room_id] = [0, 0, 0]
        return counts

    async def _write(self, room_id: str, publish: bool) -> Attendance:
        counts = self._local.get(room_id, [0, 0, 0])
        attendance = await self.store.set_presence(room_id, self.process_id, (counts[0], counts[1], counts[2]),
                                                   self.ttl_s, time.time_ns() // 1_000_000, publish)
        if room_id in self._local:  # not after forget(): kept only while the room has local connections
            self._heard[room_id] = attendance
        return attendance


def _retrieved(future: asyncio.Future[Attendance]) -> None:
    """A write's failure reaches its waiters; with none left it is not an unhandled error."""
    if not future.cancelled():
        future.exception()


def _slot(viewer: int) -> int:
    """The index of ``viewer`` in the local counts: spectators first, then each seat."""
    return 0 if viewer == SPECTATOR else 1 + viewer


def attendance_of(fields: dict[bytes, bytes]) -> tuple[Attendance, tuple[bool, bool]]:
    """Who is connected to a room, read from its presence hash without writing (the lobby
    reads many rooms at once): the :class:`Attendance` the ``PRESENCE`` script would answer,
    and whether each seat has ever had a connection (a seat that never had one has no
    ``away:`` field yet, and counts as not away)."""
    spectators, seats = 0, [0, 0]
    away: list[int | None] = [None, None]
    for raw, value in fields.items():
        field = raw.decode()
        if field.startswith("away:"):
            seat = int(field[5:])
            if seat in (0, 1):
                away[seat] = int(value)
        elif field[-2:] in (":0", ":1"):
            seats[int(field[-1])] += int(value)
        else:
            spectators += int(value)
    connected = tuple(n > 0 for n in seats)
    since = tuple(None if connected[seat] else away[seat] for seat in (0, 1))
    ever = (connected[0] or away[0] is not None, connected[1] or away[1] is not None)
    return Attendance(spectators, since), ever


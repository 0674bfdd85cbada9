"""Spectator counts over all processes.

Each process keeps its own count of local spectators per room in a field of the room's
``watchers`` hash that expires if the process dies (refreshed every third of its TTL while it
has spectators there); the total is the sum over the fields. A change publishes ``P<total>``
on the room's channel, and every process's hub pushes it to its local connections.
"""

from __future__ import annotations

import asyncio
import uuid

from ..metrics import Metrics
from ..outage import redis_down
from .store import Store


class Presence:
    def __init__(self, store: Store, metrics: Metrics, *, process_id: str | None = None, ttl_s: int = 30) -> None:
        self.store = store
        self.metrics = metrics
        self.process_id = process_id or uuid.uuid4().hex
        self.ttl_s = ttl_s
        self._local: dict[str, int] = {}  # room id -> local spectators
        self._total: dict[str, int] = {}  # room id -> spectators over all processes (last heard)

    def total(self, room_id: str) -> int:
        """The last known number of spectators of ``room_id`` over all processes."""
        return self._total.get(room_id, 0)

    def heard(self, room_id: str, total: int) -> None:
        """A presence message arrived."""
        self._total[room_id] = total

    async def read(self, room_id: str) -> int:
        """Learn the total (when this process starts watching a room), publishing nothing."""
        return await self._write(room_id, publish=False)

    async def arrive(self, room_id: str) -> int:
        """A local spectator connected: count it and tell everybody."""
        self._local[room_id] = self._local.get(room_id, 0) + 1
        return await self._write(room_id, publish=True)

    async def leave(self, room_id: str) -> None:
        """A local spectator left (or took a seat). While Redis is away the field expires by itself."""
        self._local[room_id] = max(0, self._local.get(room_id, 0) - 1)
        try:
            await self._write(room_id, publish=True)
        except Exception as exc:
            redis_down(self.metrics, "presence", exc, room=room_id)

    def forget(self, room_id: str) -> None:
        """No local connection is left in ``room_id``."""
        self._local.pop(room_id, None)
        self._total.pop(room_id, None)

    async def run(self) -> None:
        """Keep this process's fields alive (they expire if the process dies); until cancelled."""
        period = max(1.0, self.ttl_s / 3)
        while True:
            await asyncio.sleep(period)
            for room_id, count in list(self._local.items()):
                if count > 0:
                    try:
                        await self._write(room_id, publish=False)
                    except Exception as exc:  # Redis away: one line per pass, not one per room
                        redis_down(self.metrics, "presence", exc, room=room_id)
                        break

    async def _write(self, room_id: str, publish: bool) -> int:
        total = await self.store.set_watchers(room_id, self.process_id, self._local.get(room_id, 0), self.ttl_s,
                                              publish=publish)
        self._total[room_id] = total
        return total

"""Getting a room back across a store outage: its load retried until Redis answers, and the
clock time the outage took given back at once.

Stateless helpers of the :class:`~server.store.hub.Hub` (its resync after the pub/sub link
came back, and a connection's refresh after an ``unavailable`` error).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ..core.commands import Tick
from ..core.outages import resumed
from ..core.room import Room
from ..outage import is_outage
from .service import RoomRefused, RoomService

log = logging.getLogger("mineduel.hub")


async def load_when_up(rooms: RoomService, room_id: str, ready: asyncio.Event, ready_timeout_s: float,
                       attempts: int, what: str, stop: Callable[[], bool] = lambda: False) -> Room | None:
    """Load ``room_id`` once ``ready`` is set, retrying with backoff (50 ms doubling to 1 s)
    while Redis is unreachable or still loading its AOF; ``None`` after ``attempts``, when
    ``stop()`` says so, or on an error that is not an outage (logged: a bug)."""
    delay = 0.05
    for _ in range(attempts):
        if stop():
            return None
        try:
            await asyncio.wait_for(ready.wait(), ready_timeout_s)
            return await rooms.load(room_id)
        except Exception as exc:
            if not is_outage(exc) and not isinstance(exc, asyncio.TimeoutError):
                log.exception("%s of %s failed", what, room_id)
                return None
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
    return None


async def resume_clock(rooms: RoomService, room: Room) -> Room:
    """After an outage, a room whose running clock is owed the outage's time gets it back at
    once (a ``Tick``: its commit carries the refund, :mod:`server.core.outages`), so its
    players see the clock as it stood, not the time lost; the room after it."""
    now = rooms.now_ms()
    if not resumed(room, rooms.outages.outages(now), now)[1]:
        return room
    try:
        return await rooms.act(room.id, None, Tick())
    except Exception as exc:  # refused or away again: the next commit on the room gives it back
        if not isinstance(exc, RoomRefused) and not is_outage(exc):
            log.exception("resuming the clock of %s failed", room.id)
        return room

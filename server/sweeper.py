"""The clock sweeper: every process periodically applies ``Timeout`` to rooms whose deadline passed.

Rooms with a running clock sit in the ``clocks`` ZSET scored by their deadline (the commit
script keeps it current). Any number of processes may sweep at once: ``rooms.timeout`` goes
through the same compare-and-set as a move, so a timeout is committed exactly once.
"""

from __future__ import annotations

import asyncio
import logging

from .logs import event
from .rooms import Rooms

log = logging.getLogger("mineduel.sweeper")


async def sweep_once(rooms: Rooms, limit: int = 100) -> int:
    """Time out every due room (at most ``limit``); returns how many timeouts this call committed."""
    done = 0
    for room_id in await rooms.store.due_clocks(rooms.now_ms(), limit):
        try:
            if await rooms.timeout(room_id) is not None:
                done += 1
        except Exception:
            log.exception("timeout of room %s failed", room_id)
    return done


async def run(rooms: Rooms, interval_s: float) -> None:
    """Sweep every ``interval_s`` until cancelled. While Redis is away each tick fails: the
    first failure is logged (and every one counted), then one line when sweeping works again."""
    failing = 0
    while True:
        try:
            await sweep_once(rooms)
            if failing:
                event(log, "sweep_resumed", failed_ticks=failing)
                failing = 0
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # Redis briefly away: try again next tick
            rooms.metrics.redis_errors.labels("sweep").inc()
            if not failing:
                event(log, "redis_error", level=logging.WARNING, op="sweep", error=type(exc).__name__)
            failing += 1
        await asyncio.sleep(interval_s)

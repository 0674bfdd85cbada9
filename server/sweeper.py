"""The clock sweeper: every process periodically applies ``Timeout`` to rooms whose deadline passed.

Rooms with a running clock sit in the ``clocks`` ZSET scored by their deadline (the commit
script keeps it current). Any number of processes may sweep at once: ``rooms.timeout`` goes
through the same compare-and-set as a move, so a timeout is committed exactly once.
"""

from __future__ import annotations

import asyncio
import logging

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
    while True:
        try:
            await sweep_once(rooms)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # Redis briefly away: try again next tick
            log.warning("clock sweep failed: %s", exc)
        await asyncio.sleep(interval_s)

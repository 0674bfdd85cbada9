"""The sweeper: every process periodically does what has fallen due in played rooms.

Rooms where something will fall due by itself (a flag, a first move, a computer's answer:
:mod:`server.core.due`) sit in their due index scored by when (the commit script keeps it
current; one ZSET per shard slot: :func:`server.store.keys.clock_key`). Any number of processes may sweep at once: what happens is decided by the room core
(:class:`~server.core.commands.Tick`) and committed through the same compare-and-set as a move,
so it happens once. Nobody needs to be connected: a correspondence game times out, and a
computer answers, with every player away.

A finished room is in the set too, due a few seconds after the commit that finished it
(``server.store.aftermath.SETTLE_GRACE_MS``): its committing process settles what the end leaves behind
(ratings, leaderboards, the players' lists) at once and drops the entry, so a sweeper meets it
only when that process died or failed in between. It settles it then (idempotent: a rating is
applied once per game whoever applies it) and drops the entry, or moves it on when settling
failed again.
"""

from __future__ import annotations

import asyncio
import logging

from ..core.commands import Refused, Tick
from ..core.due import next_due
from ..core.room import Status
from ..logs import event
from .aftermath import SETTLE_GRACE_MS
from .service import RoomRefused, RoomService

log = logging.getLogger("mineduel.sweeper")


async def sweep_once(rooms: RoomService, limit: int = 100) -> int:
    """Act on every due room (at most ``limit``); returns how many ended."""
    ended = 0
    store = rooms.store
    # the store away: clocks get this time back (from when this read was made); answering: it ends
    due = await rooms.outages.reaching(store.due_clocks(rooms.now_ms(), limit))
    for room_id, due_ms in due:
        try:
            room = await rooms.act(room_id, None, Tick())
        except RoomRefused as exc:
            if exc.code is Refused.UNKNOWN_ROOM:  # expired or never there: nothing to time
                await store.drop_clock(room_id, due_ms)
            else:
                log.warning("due work in room %s refused: %s", room_id, exc.code.value)
            continue
        except Exception:
            log.exception("due work in room %s failed", room_id)
            continue
        if room.status is Status.OVER:
            if room.ended_ms is not None and room.ended_ms > due_ms:
                ended += 1  # it ended after the time read (now, by this Tick): its commit settled it
            elif not await rooms.aftermath.settle(room, due_ms):  # an end left unsettled (idempotent)
                await store.postpone_clock(room_id, rooms.now_ms() + SETTLE_GRACE_MS)
            continue
        if next_due(room) is None:
            # nothing falls due in the room as this process knows it: a stale entry, unless a
            # commit has set a new due time since (the drop checks the time it read)
            await store.drop_clock(room_id, due_ms)
    return ended


async def run(rooms: RoomService, interval_s: float) -> None:
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

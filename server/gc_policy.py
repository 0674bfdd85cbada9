"""Cyclic garbage collection on heap growth and a timer, instead of on allocation counts.

Why: CPython starts a young collection when tracked allocations minus deallocations pass a
threshold, and every deallocation (of an object of any age) lowers that count. A server in
steady state frees about as much as it allocates (each move replaces the previous Room, Duel
and views of its room), so the count stays low while the young generation fills with every
object allocated since the last collection that is still alive: when a collection finally
comes it traverses tens of thousands of objects (20-45 ms young passes every few seconds and
200-400 ms older ones with 500 live rooms).

Nor do passes on a timer pay: whatever interval they run at, a pass traverses the objects
allocated since the one before that are still alive, and nearly all of a move's objects are
alive until their room's next move, about a second later. Young passes every 25 ms cost 6-9%
of the process at 2,400 moves/s, and a middle-generation pass every 60 s traversed a minute's
surviving game state at once (0.5-2 s there) while finding next to nothing: a game's versions
make no reference cycles (``tests/engine/test_game.py``; a component of the auto-reveal and its
restriction held each other until the nineteenth session), so reference counting frees them.
What cycles remain come with connections (uvicorn's HTTP protocol object of every websocket
upgrade holds its parser, which holds its bound methods) and errors (tracebacks), and are few.

The policy, while the app serves (automatic collection off, start-up objects frozen out): a
**full** pass when the process's heap (``sys.getallocatedblocks()``, about a millisecond to
read) is found, every ``check_every_s`` (60 s), to have grown by ``growth`` (a quarter,
CPython's own rule for its oldest generation) since the last full pass, and at the latest every
``full_every_s``. So the cyclic garbage held is about a quarter of the heap and ``full_every_s``
worth at most, and the only pauses are full passes, which traverse every object (about 0.3 s
with 2,500 sockets, 1-2 s with 10,000 under load here): at most one a minute while the heap
grows (checked every second, a server filling with sockets ran eight in its first minute), and
rare once the set of sockets is stable, as before, when the middle passes came on top of them.

Every pass is timed into ``mineduel_gc_pause_seconds{generation="full"}``. On stop the
interpreter's automatic collection is restored.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import time

from .metrics import Metrics
from .tasks import stop_tasks


class GcPolicy:
    def __init__(self, check_every_s: float, full_every_s: float, metrics: Metrics | None = None, *,
                 growth: float = 0.25) -> None:
        if min(check_every_s, full_every_s) <= 0:
            raise ValueError("collection intervals must be positive")
        self.check_every_s = check_every_s
        self.full_every_s = full_every_s
        self.growth = growth
        self.metrics = metrics or Metrics()
        self._pause = self.metrics.gc_pause.labels("full")
        self.passes = 0
        self._kept = 0  # the heap's blocks after the last full pass
        self._task: asyncio.Task[None] | None = None
        self._was_enabled = gc.isenabled()

    def start(self) -> None:
        """Freeze what exists, switch automatic collection off and start the timer."""
        self._was_enabled = gc.isenabled()
        gc.collect()
        gc.freeze()
        gc.disable()
        self._kept = sys.getallocatedblocks()
        self._task = asyncio.create_task(self._run(), name="gc-policy")

    async def stop(self) -> None:
        await stop_tasks((self._task,))
        self._task = None
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()

    def collect(self) -> float:
        """One full pass (the objects frozen at start left out); returns its duration in seconds."""
        started = time.perf_counter()
        gc.collect()
        took = time.perf_counter() - started
        self.passes += 1
        self._pause.observe(took)
        self._kept = sys.getallocatedblocks()
        return took

    def full_due(self) -> bool:
        """Whether the heap grew by ``growth`` since the last full pass."""
        return sys.getallocatedblocks() > (1 + self.growth) * self._kept

    async def _run(self) -> None:
        last_full = time.monotonic()
        while True:
            await asyncio.sleep(self.check_every_s)
            if time.monotonic() - last_full >= self.full_every_s or self.full_due():
                self.collect()
                last_full = time.monotonic()

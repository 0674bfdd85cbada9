"""Cyclic garbage collection on a timer instead of on allocation counts.

Why: CPython starts a young collection when tracked allocations minus deallocations pass a
threshold, and every deallocation (of an object of any age) lowers that count. A server in
steady state frees about as much as it allocates (each move replaces the previous Room, Duel
and views of its room), so the count stays low while the young generation fills with every
object allocated since the last collection that is still alive: when a collection finally
comes it traverses tens of thousands of objects. Measured with 500 live rooms: young
collections of 20-40 ms every few seconds and older-generation ones of 200-400 ms, each one
delaying every move in flight (docs/PERFORMANCE.md, "Garbage collection").

The policy, while the app serves:

- the start-up objects are frozen out of every collection (``gc.freeze()``);
- automatic collection is off;
- every ``young_every_s`` the young generation is collected: it only holds what was
  allocated since the previous pass and is still alive, so a pass takes about a millisecond;
  survivors go to the middle generation, where almost all of them are freed by reference
  counting when their room moves on;
- a full collection frees the reference cycles that became garbage after they left the young
  generation (a closed connection's objects, say). It traverses every object of the process
  (0.8 s with 10,000 open sockets here), so it runs on CPython's own rule for its oldest
  generation, applied to real sizes: when the middle generation has grown by
  ``growth`` (25 %) of what the last full pass kept, checked every second, and at the latest
  every ``full_every_s``. Objects that stay alive are thus traversed a bounded number of
  times, and garbage cycles can never hold more than that growth.

Every pass is timed into ``mineduel_gc_pause_seconds`` (label ``generation``: young/full).
On stop the interpreter's automatic collection is restored.
"""

from __future__ import annotations

import asyncio
import gc
import time

from .metrics import Metrics


class GcPolicy:
    def __init__(self, young_every_s: float, full_every_s: float, metrics: Metrics | None = None, *,
                 growth: float = 0.25, min_growth: int = 200_000, check_every_s: float = 1.0) -> None:
        if young_every_s <= 0 or full_every_s <= 0:
            raise ValueError("collection intervals must be positive")
        self.young_every_s = young_every_s
        self.full_every_s = full_every_s
        self.growth = growth
        self.min_growth = min_growth
        self.check_every_s = check_every_s
        self._kept = 0  # objects the last full pass kept (outside the frozen start-up ones)
        self.metrics = metrics or Metrics()
        self.passes = {"young": 0, "full": 0}
        self._task: asyncio.Task[None] | None = None
        self._was_enabled = gc.isenabled()

    def start(self) -> None:
        """Freeze what exists, switch automatic collection off and start the timer."""
        self._was_enabled = gc.isenabled()
        gc.collect()
        gc.freeze()
        gc.disable()
        self._task = asyncio.create_task(self._run(), name="gc-policy")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()

    def collect(self, generation: str) -> float:
        """One pass (``"young"`` or ``"full"``); returns its duration in seconds."""
        started = time.perf_counter()
        gc.collect(0 if generation == "young" else 2)
        took = time.perf_counter() - started
        self.passes[generation] += 1
        self.metrics.gc_pause.labels(generation).observe(took)
        return took

    def full_due(self) -> bool:
        """Has the middle generation grown enough since the last full pass? (Counting it costs
        about a millisecond per 100,000 objects.)"""
        grown = len(gc.get_objects(generation=1))
        return grown > max(self.min_growth, self.growth * self._kept)

    async def _run(self) -> None:
        now = time.monotonic()
        last_full, next_check = now, now + self.check_every_s
        while True:
            await asyncio.sleep(self.young_every_s)
            now = time.monotonic()
            if now >= next_check:
                next_check = now + self.check_every_s
                if now - last_full >= self.full_every_s or self.full_due():
                    self.collect("full")
                    self._kept = len(gc.get_objects(generation=2))
                    last_full = time.monotonic()
                    continue
            self.collect("young")

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
  survivors go to the older generation, where almost all of them are freed by reference
  counting when their room moves on;
- every ``full_every_s`` one full collection frees the reference cycles that became garbage
  after they left the young generation (a closed connection's objects, say): memory held by
  such cycles is bounded by what the process creates in that interval.

Every pass is timed into ``mineduel_gc_pause_seconds`` (label ``generation``: young/full).
On stop the interpreter's automatic collection is restored.
"""

from __future__ import annotations

import asyncio
import gc
import time

from .metrics import Metrics


class GcPolicy:
    def __init__(self, young_every_s: float, full_every_s: float, metrics: Metrics | None = None) -> None:
        if young_every_s <= 0 or full_every_s <= 0:
            raise ValueError("collection intervals must be positive")
        self.young_every_s = young_every_s
        self.full_every_s = full_every_s
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

    async def _run(self) -> None:
        next_full = time.monotonic() + self.full_every_s
        while True:
            await asyncio.sleep(self.young_every_s)
            if time.monotonic() >= next_full:
                self.collect("full")
                next_full = time.monotonic() + self.full_every_s
            else:
                self.collect("young")

"""Cyclic garbage collection on a timer instead of on allocation counts.

Why: CPython starts a young collection when tracked allocations minus deallocations pass a
threshold, and every deallocation (of an object of any age) lowers that count. A server in
steady state frees about as much as it allocates (each move replaces the previous Room, Duel
and views of its room), so the count stays low while the young generation fills with every
object allocated since the last collection that is still alive: when a collection finally
comes it traverses tens of thousands of objects. Measured with 500 live rooms: young
collections of 20-45 ms every few seconds and older-generation ones of 200-400 ms, each one
delaying every move in flight (docs/PERFORMANCE.md).

The policy, while the app serves (automatic collection off, start-up objects frozen out):

- **young**, every ``young_every_s``: only what was allocated since the previous pass and
  is still alive, so a pass takes about half a millisecond under load. Survivors go to the
  middle generation, where almost all of them are freed by reference counting when their
  room moves on.
- **middle**, every ``middle_every_s``: frees the reference cycles that became garbage after
  the young generation (a closed connection's objects, say), so they hold at most that
  interval's worth of memory; survivors go to the oldest generation. It traverses what is
  alive there: about a second's worth of short-lived game state under load (tens of ms with
  500 busy rooms), little otherwise.
- **full**, instead of a middle pass when the process's tracked objects have grown by
  ``growth`` (a quarter, CPython's own rule for its oldest generation) since the last full
  pass, and at the latest every ``full_every_s``. It traverses every object (0.2-0.5 s with
  2,500 sockets, 0.5-0.8 s with 10,000 here), which is why it waits for growth.

Every pass is timed into ``mineduel_gc_pause_seconds{generation}``. On stop the
interpreter's automatic collection is restored.
"""

from __future__ import annotations

import asyncio
import gc
import time

from .metrics import Metrics
from .tasks import stop_tasks

GENERATIONS = {"young": 0, "middle": 1, "full": 2}


class GcPolicy:
    def __init__(self, young_every_s: float, full_every_s: float, metrics: Metrics | None = None, *,
                 middle_every_s: float = 60.0, growth: float = 0.25) -> None:
        if min(young_every_s, middle_every_s, full_every_s) <= 0:
            raise ValueError("collection intervals must be positive")
        self.young_every_s = young_every_s
        self.middle_every_s = middle_every_s
        self.full_every_s = full_every_s
        self.growth = growth
        self.metrics = metrics or Metrics()
        self._pause = {name: self.metrics.gc_pause.labels(name) for name in GENERATIONS}  # 40 passes a second
        self.passes = {name: 0 for name in GENERATIONS}
        self._kept = 0  # tracked objects after the last full pass (the frozen ones not counted)
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
        await stop_tasks((self._task,))
        self._task = None
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()

    def collect(self, generation: str) -> float:
        """One pass (``"young"``, ``"middle"`` or ``"full"``); returns its duration in seconds."""
        started = time.perf_counter()
        gc.collect(GENERATIONS[generation])
        took = time.perf_counter() - started
        self.passes[generation] += 1
        self._pause[generation].observe(took)
        if generation == "full":
            self._kept = self.tracked()
        return took

    @staticmethod
    def tracked() -> int:
        """Objects the collector tracks outside the frozen ones (about 1 ms per 100,000)."""
        return len(gc.get_objects(generation=1)) + len(gc.get_objects(generation=2))

    def full_due(self) -> bool:
        return self.tracked() > (1 + self.growth) * self._kept

    async def _run(self) -> None:
        last_full = last_middle = time.monotonic()
        while True:
            await asyncio.sleep(self.young_every_s)
            now = time.monotonic()
            if now - last_middle < self.middle_every_s:
                self.collect("young")
                continue
            if now - last_full >= self.full_every_s or self.full_due():
                self.collect("full")
                last_full = time.monotonic()
            else:
                self.collect("middle")
            last_middle = time.monotonic()

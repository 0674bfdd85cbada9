"""server/gc_policy.py: collection on a timer, full passes on growth, the interpreter restored."""

from __future__ import annotations

import asyncio
import gc

from server.gc_policy import GcPolicy
from server.metrics import Metrics


class Cycle:
    """A reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


async def wait_for(predicate, polls: int = 400) -> None:
    for _ in range(polls):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never met")


async def test_young_passes_run_on_the_timer_and_the_interpreter_is_restored() -> None:
    assert gc.isenabled()
    metrics = Metrics()
    policy = GcPolicy(0.005, 3600, metrics, middle_every_s=3600)
    policy.start()
    try:
        assert not gc.isenabled()  # no allocation-triggered passes while serving
        await wait_for(lambda: policy.passes["young"] >= 3)
        assert policy.passes["full"] == 0
        # every pass is observed (as /metrics shows it)
        observed = metrics.registry.get_sample_value("mineduel_gc_pause_seconds_count", {"generation": "young"})
        assert observed == policy.passes["young"]
    finally:
        await policy.stop()
    assert gc.isenabled()


async def test_young_garbage_cycles_are_freed_by_the_young_passes() -> None:
    policy = GcPolicy(0.005, 3600, middle_every_s=3600)
    policy.start()
    try:
        gc.collect(0)
        before = policy.passes["young"]
        for _ in range(1000):
            Cycle()
        assert sum(isinstance(o, Cycle) for o in gc.get_objects(generation=0)) == 1000
        await wait_for(lambda: policy.passes["young"] > before)
        assert not any(isinstance(o, Cycle) for o in gc.get_objects())
    finally:
        await policy.stop()


async def test_cycles_past_the_young_generation_are_freed_by_the_middle_and_full_passes() -> None:
    policy = GcPolicy(0.005, 3600, middle_every_s=0.05)
    policy.start()
    try:
        base = [[i] for i in range(100_000)]  # live objects that the full passes will keep
        await wait_for(lambda: policy.passes["full"] == 1)  # nothing kept yet: the first is full
        for round_ in range(2):
            held = [Cycle() for _ in range(5_000)]
            gc.collect(0)  # the cycles survive a young pass while held...
            del held  # ...and become garbage past the young generation: young passes cannot free them
            assert sum(isinstance(o, Cycle) for o in gc.get_objects(generation=1)) == 5_000
            await wait_for(lambda: not any(isinstance(o, Cycle) for o in gc.get_objects()))
        assert policy.passes["middle"] >= 1  # the process did not grow by a quarter: no full pass
        grown = [[i] for i in range(2 * policy.tracked())]  # now it has
        full = policy.passes["full"]
        await wait_for(lambda: policy.passes["full"] > full)
        del grown, base  # (both held alive until here: what the passes had to keep)
    finally:
        await policy.stop()

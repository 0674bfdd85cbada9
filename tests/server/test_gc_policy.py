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
    policy = GcPolicy(0.005, 3600, metrics, min_growth=10**9)
    policy.start()
    try:
        assert not gc.isenabled()  # no allocation-triggered passes while serving
        await wait_for(lambda: policy.passes["young"] >= 3)
        assert policy.passes["full"] == 0
        assert metrics.gc_pause.labels("young")._sum.get() > 0
    finally:
        await policy.stop()
    assert gc.isenabled()


async def test_young_garbage_cycles_are_freed_by_the_young_passes() -> None:
    policy = GcPolicy(0.005, 3600, min_growth=10**9)
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


async def test_a_full_pass_comes_when_the_middle_generation_has_grown() -> None:
    policy = GcPolicy(0.005, 3600, min_growth=5_000, check_every_s=0.02)
    policy.start()
    try:
        await asyncio.sleep(0.1)
        assert policy.passes["full"] == 0  # nothing grew
        kept = [[i] for i in range(20_000)]  # survives the young passes: the middle generation grows
        held = [Cycle() for _ in range(5_000)]
        gc.collect(0)  # the cycles survive a young pass while held...
        del held  # ...and become garbage past the young generation: young passes cannot free them
        assert sum(isinstance(o, Cycle) for o in gc.get_objects(generation=1)) == 5_000
        await wait_for(lambda: policy.passes["full"] >= 1)
        assert not any(isinstance(o, Cycle) for o in gc.get_objects())
        assert len(kept) == 20_000
    finally:
        await policy.stop()

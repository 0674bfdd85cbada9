"""server/gc_policy.py: automatic collection off while serving, full passes on heap growth and
at the latest on a timer (none otherwise), every pass observed, the interpreter restored."""

from __future__ import annotations

import asyncio
import gc
import sys

from server.gc_policy import GcPolicy
from server.metrics import Metrics


class Cycle:
    """A reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def cycles_alive() -> int:
    return sum(isinstance(o, Cycle) for o in gc.get_objects())


async def wait_for(predicate, polls: int = 400) -> None:
    for _ in range(polls):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never met")


async def test_without_growth_no_pass_runs_and_garbage_cycles_wait() -> None:
    assert gc.isenabled()
    policy = GcPolicy(0.005, 3600)
    policy.start()
    try:
        assert not gc.isenabled()  # no allocation-triggered passes while serving
        for _ in range(1000):
            Cycle()
        await asyncio.sleep(0.1)  # twenty checks
        assert policy.passes == 0 and not policy.full_due()
        assert cycles_alive() == 1000  # held until a full pass: the policy's trade (a quarter of the heap at most)
    finally:
        await policy.stop()
    assert gc.isenabled()
    gc.collect()
    assert cycles_alive() == 0


async def test_a_full_pass_frees_cycles_once_the_heap_grew_by_a_quarter() -> None:
    metrics = Metrics()
    policy = GcPolicy(0.005, 3600, metrics)
    policy.start()
    try:
        garbage = 0
        blocks = sys.getallocatedblocks()
        while sys.getallocatedblocks() < 1.3 * blocks:  # cycles, made garbage as they are made
            for _ in range(10_000):
                Cycle()
            garbage += 10_000
        assert cycles_alive() == garbage
        await wait_for(lambda: policy.passes == 1)
        assert cycles_alive() == 0
        assert not policy.full_due()  # the heap it kept is the new reference
        observed = metrics.registry.get_sample_value("mineduel_gc_pause_seconds_count", {"generation": "full"})
        assert observed == 1  # as /metrics shows it
    finally:
        await policy.stop()


async def test_a_full_pass_runs_at_the_latest_every_full_every_s() -> None:
    policy = GcPolicy(0.005, 0.05)
    policy.start()
    try:
        for _ in range(1000):
            Cycle()
        await wait_for(lambda: policy.passes >= 1)
        assert cycles_alive() == 0
        await wait_for(lambda: policy.passes >= 3)  # and again: a timer, not a one-off
    finally:
        await policy.stop()


async def test_objects_alive_at_start_are_left_out_of_the_passes() -> None:
    held = [Cycle() for _ in range(100)]
    policy = GcPolicy(0.005, 0.05)
    policy.start()
    try:
        assert cycles_alive() == 0  # frozen: no pass traverses them
        await wait_for(lambda: policy.passes >= 1)
    finally:
        await policy.stop()
    assert cycles_alive() == 100  # unfrozen on stop
    del held

"""server/loop_lag.py: the event loop's stalls, as /metrics shows them."""

from __future__ import annotations

import asyncio
import time

import pytest

from server.loop_lag import LoopLag
from server.metrics import Metrics


def lag_count(metrics: Metrics, le: str = "+Inf") -> float:
    """Samples of ``mineduel_loop_lag_seconds`` at most ``le`` seconds late."""
    return metrics.registry.get_sample_value("mineduel_loop_lag_seconds_bucket", {"le": le}) or 0.0


async def wait_for_samples(metrics: Metrics, n: int, polls: int = 400) -> None:
    for _ in range(polls):  # bounded: 4 s at most
        if lag_count(metrics) >= n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"fewer than {n} samples")


async def test_a_stall_of_the_loop_is_measured() -> None:
    metrics = Metrics()
    probe = LoopLag(metrics.loop_lag.observe, every_s=0.01)
    probe.start()
    try:
        await wait_for_samples(metrics, 3)
        before = lag_count(metrics) - lag_count(metrics, "0.05")  # samples later than 50 ms
        time.sleep(0.12)  # the loop held: the probe's timer cannot run
        await wait_for_samples(metrics, lag_count(metrics) + 2)
        after = lag_count(metrics) - lag_count(metrics, "0.05")
        assert after >= before + 1  # the wake-up after the stall, 110-120 ms late
    finally:
        await probe.stop()


async def test_a_stopped_probe_records_nothing_more() -> None:
    metrics = Metrics()
    probe = LoopLag(metrics.loop_lag.observe, every_s=0.01)
    probe.start()
    await wait_for_samples(metrics, 2)
    await probe.stop()
    stopped = lag_count(metrics)
    await asyncio.sleep(0.05)
    assert lag_count(metrics) == stopped


def test_the_period_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LoopLag(Metrics().loop_lag.observe, every_s=0)

"""server/tasks.py: a started task is stopped for sure, even when a cancel is lost."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from server.tasks import stop_tasks


async def test_a_task_that_swallows_cancels_is_cancelled_again_until_it_stops() -> None:
    cancels = []

    async def stubborn() -> None:
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                cancels.append(1)
                if len(cancels) == 3:
                    raise

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    assert await stop_tasks((task,), round_s=0.01) == []
    assert task.cancelled()
    assert len(cancels) == 3


async def test_stopping_is_bounded_and_says_which_task_runs_on() -> None:
    stop = asyncio.Event()
    cancels = []

    async def deaf() -> None:
        while not stop.is_set():
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                cancels.append(1)

    task = asyncio.create_task(deaf())
    other = asyncio.create_task(asyncio.sleep(10))
    await asyncio.sleep(0)
    assert await stop_tasks((task, None, other), rounds=4, round_s=0.01) == [task]
    assert other.cancelled()
    assert len(cancels) == 4
    stop.set()
    task.cancel()
    await asyncio.wait((task,))
    assert task.done() and not task.cancelled()


async def test_finished_and_failed_tasks_are_stopped_without_raising() -> None:
    async def fails() -> None:
        raise RuntimeError("logged where it happened")

    failed = asyncio.create_task(fails())
    done = asyncio.create_task(asyncio.sleep(0))
    await asyncio.wait((failed, done))
    assert await stop_tasks((failed, done)) == []
    assert isinstance(failed.exception(), RuntimeError)


async def test_a_loop_of_redis_calls_stops_wherever_the_cancel_lands(redis_url: str) -> None:
    """What the helper is for: redis-py can swallow a cancel that arrives during a command (the
    presence refresh, a loop of script calls that goes on after one error, kept a hub's stop
    waiting forever). Cancelled at many points of such a loop, every one stops, and promptly."""
    redis = aioredis.from_url(redis_url)
    script = redis.register_script("return redis.call('SET', KEYS[1], ARGV[1])")
    calls = [0]

    async def refresh() -> None:  # the shape of Presence.run
        while True:
            await asyncio.sleep(0.001)
            for i in range(40):
                try:
                    await script(keys=[f"test-tasks:{i}"], args=[i])
                    calls[0] += 1
                except Exception:
                    break

    try:
        for trial in range(30):
            task = asyncio.create_task(refresh())
            await asyncio.sleep(0.0005 * trial)
            assert await stop_tasks((task,), rounds=50, round_s=0.1) == [], f"trial {trial} runs on"
        assert calls[0] > 0
    finally:
        await redis.delete(*(f"test-tasks:{i}" for i in range(40)))
        await redis.aclose()

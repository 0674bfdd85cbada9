"""Stopping background tasks for sure: cancel, wait, and cancel again while one runs on.

Why not one ``task.cancel(); await task``: on Python 3.11 a cancel can be lost inside
redis-py's asyncio calls (``asyncio.wait_for`` around its reads and writes drops a cancel
that arrives as the inner call completes, CPython gh-86296; redis-py's own reports:
redis/redis-py#2028, #2551).
A loop that awaits Redis then goes on as if nothing happened, and whoever awaits it after one
cancel waits forever. Seen here: the presence refresh (one redis-py script call per room)
kept a hub's ``stop`` waiting, so a process that shut down with rooms open hung; and the
matchmaker's ticks went on after ``cancel()`` in its tests. So every place that stops a task
it started stops it with :func:`stop_tasks`, and long-lived loops also check a flag of their
own where they have one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

ROUNDS = 50
ROUND_S = 0.1


async def stop_tasks(tasks: Iterable[asyncio.Task[Any] | None], *, rounds: int = ROUNDS,
                     round_s: float = ROUND_S) -> list[asyncio.Task[Any]]:
    """Cancel ``tasks`` (``None`` entries are skipped) and wait until every one has finished,
    cancelling again each ``round_s`` while any runs on; at most ``rounds`` rounds (5 s).

    Returns the tasks still running after the last round (none, unless one ignores every
    cancel). A finished task's exception is retrieved and dropped: it was logged where it
    happened, and stopping is not the place to raise it."""
    pending = [task for task in tasks if task is not None]
    for _ in range(rounds):
        running = [task for task in pending if not task.done()]
        if not running:
            break
        for task in running:
            task.cancel()
        await asyncio.wait(running, timeout=round_s)
    for task in pending:
        if task.done() and not task.cancelled():
            task.exception()
    return [task for task in pending if not task.done()]

"""How late the event loop runs a timer: the process's own stalls, as a histogram.

Every ``every_s`` the probe sleeps and hands ``observe`` how much later than asked it woke
(the app: ``mineduel_loop_lag_seconds``; the load bench's client processes measure their own
loops with it too). Whatever holds the loop shows there: a long callback, a GC
pass, a backlog of moves, the process waiting for a CPU. Why: under load a move's latency
grows with every stall in front of it, and the app's CPU share alone does not tell a steady
88% from 80% with a second at 100% (``bench/load.py`` prints the window's lag from this
histogram; docs/PERFORMANCE.md, twelfth session). Its 50 wake-ups a second, about 3 µs each, cost
about 0.02% of a core.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from .tasks import stop_tasks

EVERY_S = 0.02


class LoopLag:
    def __init__(self, observe: Callable[[float], object], every_s: float = EVERY_S) -> None:
        if every_s <= 0:
            raise ValueError("the probe's period must be positive")
        self.every_s = every_s
        self._observe = observe
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="loop-lag")

    async def stop(self) -> None:
        await stop_tasks((self._task,))
        self._task = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self.every_s
            await asyncio.sleep(self.every_s)
            self._observe(max(0.0, loop.time() - due))

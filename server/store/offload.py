"""Work that must not hold the event loop: run in a worker process.

A classic no-guess game draws its layout at the first click, a search that can take a good
part of a second on an Expert board; run in the event loop it would stall every socket of
the process for that long. The room service asks the game (``Game.costly``) and runs such a
decision here: one worker process, started on first use and kept, so the loop only awaits a
future. Arguments and results are pickled (rooms and games are plain values).

Why a process and not a thread: the search is pure Python, so a thread would hold the GIL
and the loop would only get it back every switch interval (5 ms) while competing for it.

A worker ends by itself once the process that started it is gone (:func:`exit_with_parent`):
a server killed outright (a crash, ``kill -9``) runs no shutdown code, and its workers would
otherwise live on.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

PARENT_CHECK_S = 0.5


def exit_with_parent(parent_pid: int, nice: int = 0) -> None:
    """A worker's initializer: a daemon thread that ends the worker once its parent (the server
    process, ``parent_pid``) is gone, i.e. once the worker has been handed to another parent;
    and the worker's priority lowered by ``nice`` (see :class:`Offload`)."""
    if nice:
        os.nice(nice)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


class Offload:
    def __init__(self, workers: int = 1, nice: int = 0) -> None:
        self.workers = workers
        self.nice = nice
        """Added to the workers' niceness: background work (a finished game's analysis, which
        nobody waits for) yields the CPU to the event loop's moves on a busy machine."""
        self._pool: ProcessPoolExecutor | None = None

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in the worker process (``fn`` and its arguments must pickle)."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=exit_with_parent, initargs=(os.getpid(), self.nice))
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

"""Work that must not hold the event loop: run in a worker process.

A classic no-guess game draws its layout at the first click, a search of a few ms on an
Expert board and up to about 0.2 s on the largest board the rules allow (seconds on the dense
large boards they refuse: ``engine.classic.most_mines``); run in the event loop it would stall
every socket of the process for that long. The room service asks the game (``Game.costly``)
and runs such a decision here: one worker process per lane, started on first use and kept, so
the loop only awaits a future. Arguments and results are pickled (rooms and games are plain values).

Why a process and not a thread: the search is pure Python, so a thread would hold the GIL
and the loop would only get it back every switch interval (5 ms) while competing for it.

A worker ends by itself once the process that started it is gone (:func:`exit_with_parent`):
a server killed outright (a crash, ``kill -9``) runs no shutdown code, and its workers would
otherwise live on.

Lanes: each kind of work has an ``Offload`` of its own (the room service's boards and the
strong computer's answers, the analyses), so one kind never waits behind another. A lane may
refuse a job rather than queue it (:class:`NotQueued`): one in flight per ``owner`` at most,
``most_per_group`` per ``group`` (a client's address: many guests of one address cannot fill
the queue ahead of everybody else), and at most ``most_waiting`` jobs waiting for its worker.
A job counts until its worker is done with it, also when the caller stopped waiting (a closed
socket): what it costs is spent anyway.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from collections import Counter
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


class NotQueued(Exception):
    """A job :meth:`Offload.run` refused before queueing it (nothing was run)."""


class OwnerBusy(NotQueued):
    """Its owner has a job of this lane in flight already."""


class QueueFull(NotQueued):
    """``most_waiting`` jobs are waiting for the lane's workers already."""


class GroupBusy(NotQueued):
    """Its group (a client's address) has ``most_per_group`` jobs of this lane in flight already."""


class Offload:
    def __init__(self, workers: int = 1, nice: int = 0, most_waiting: int | None = None,
                 most_per_group: int | None = None) -> None:
        self.workers = workers
        self.nice = nice
        """Added to the workers' niceness: background work (a finished game's analysis, which
        nobody waits for) yields the CPU to the event loop's moves on a busy machine."""
        self.most_waiting = most_waiting
        """Jobs that may wait for a busy worker (``None``: any number); one more is refused
        (:class:`QueueFull`) rather than kept waiting behind all of them."""
        self.most_per_group = most_per_group
        """Jobs of one group in flight (``None``: any number); one more is refused (:class:`GroupBusy`)."""
        self._pool: ProcessPoolExecutor | None = None
        self._in_flight = 0
        self._owners: set[str] = set()
        self._groups: Counter[str] = Counter()

    @property
    def waiting(self) -> int:
        """Jobs queued and not yet taken by a worker (as far as this process can tell: those
        in flight beyond one per worker)."""
        return max(0, self._in_flight - self.workers)

    async def run(self, fn: Callable[..., T], *args: Any, owner: str | None = None, group: str | None = None) -> T:
        """``fn(*args)`` in the worker process (``fn`` and its arguments must pickle).

        Raises :class:`OwnerBusy` if ``owner`` (any string: a player's id) has a job here that
        its worker is not done with, :class:`GroupBusy` if ``group`` (a client's address) has
        ``most_per_group``, :class:`QueueFull` if ``most_waiting`` jobs wait already; each
        before anything is queued. Cancelling the call stops the waiting, not the job."""
        if owner is not None and owner in self._owners:
            raise OwnerBusy(owner)
        if group is not None and self.most_per_group is not None and self._groups[group] >= self.most_per_group:
            raise GroupBusy(group)
        if self.most_waiting is not None and self.waiting >= self.most_waiting:
            raise QueueFull(self.waiting)
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=exit_with_parent, initargs=(os.getpid(), self.nice))
        job = asyncio.wrap_future(self._pool.submit(fn, *args))
        self._in_flight += 1
        if owner is not None:
            self._owners.add(owner)
        if group is not None:
            self._groups[group] += 1
        job.add_done_callback(lambda done: self._ended(done, owner, group))
        return await asyncio.shield(job)  # a caller that stops waiting leaves the job counted until it ends

    def _ended(self, job: asyncio.Future[Any], owner: str | None, group: str | None) -> None:
        self._in_flight -= 1
        if owner is not None:
            self._owners.discard(owner)
        if group is not None:
            self._groups[group] -= 1
            if not self._groups[group]:
                del self._groups[group]
        if not job.cancelled():
            job.exception()  # retrieved: a job nobody awaits any more logs no "never retrieved"

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

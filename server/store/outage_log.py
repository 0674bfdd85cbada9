"""When this process could not reach its store: the outages the room core gives clock time back for.

An outage, as one process sees it, starts at its first failed store call (a command refused
by a connection error, or the hub's pub/sub link dropping) and ends at its first successful
one after that (a command answered, the pub/sub link back). Every process sweeps due clocks
every ``MINEDUEL_SWEEP_INTERVAL_S`` (0.1 s), so a live process notices an outage and its end
within that, whether or not anybody plays there. The intervals are handed to
:func:`server.core.decide.decide` (:meth:`OutageLog.outages`), which gives the running clocks'
time inside them back (:mod:`server.core.outages`).

Known limit: a process started after an outage ended knows nothing of it; a room whose first
commit after the outage is made there keeps the lost time (another process that saw the
outage would have given it back: every live process sweeps, so in practice the first commit
after an outage on a running clock is a sweep or the hub's resume, made everywhere).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ..core.outages import Outage
from ..outage import is_outage

T = TypeVar("T")

KEEP = 32
"""Outages remembered (the oldest are forgotten: a clock started after them cannot owe anything)."""


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class OutageLog:
    """This process's store outages: :meth:`lost` on a failure, :meth:`back` on a success."""

    __slots__ = ("_now_ms", "_since", "_past")

    def __init__(self, now_ms: Callable[[], int] = wall_ms, keep: int = KEEP) -> None:
        self._now_ms = now_ms
        self._since: int | None = None
        """When the outage going on now started (``None``: none is)."""
        self._past: deque[Outage] = deque(maxlen=keep)

    @property
    def down(self) -> bool:
        """An outage is going on (the last store call failed)."""
        return self._since is not None

    def lost(self) -> None:
        """A store call failed for want of the store: an outage starts now, unless one is on."""
        if self._since is None:
            self._since = self._now_ms()

    def back(self) -> None:
        """A store call succeeded: the outage going on, if any, ends now."""
        if self._since is not None:
            self._past.append(Outage(self._since, max(self._since, self._now_ms())))
            self._since = None

    async def reaching(self, call: Awaitable[T]) -> T:
        """Await a store call, noting whether the store answered (:meth:`back`) or was away
        (:meth:`lost`; any other failure says nothing of the store)."""
        try:
            result = await call
        except Exception as exc:
            if is_outage(exc):
                self.lost()
            raise
        self.back()
        return result

    def outages(self, now_ms: int) -> tuple[Outage, ...]:
        """Every remembered outage, the one going on ending at ``now_ms`` (a commit that
        succeeds now ends it)."""
        if self._since is None:
            return tuple(self._past)
        return (*self._past, Outage(self._since, max(self._since, now_ms)))

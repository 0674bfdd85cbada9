"""When this process could not reach its store: the outages the room core gives clock time back for.

An outage, as one process sees it, starts when its first failed store call was made (a
command refused by a connection error or timed out, or the hub's pub/sub link dropping), or
when the last call the store answered was made, if that came later, and ends at its first
successful one after that (a command answered, the pub/sub link back). Why from the call's
start and not its failure: a store that hangs answers nothing, and a call fails only when its
timeout (5 s) runs out; counted from then, the first seconds of the hang were not given back,
and a waiting player whose clock had started meanwhile lost them (an outside probe: 8 s
clocks, an 11 s hang, a flag). Every process sweeps due clocks
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

    __slots__ = ("_now_ms", "_since", "_answered", "_past", "_over")

    def __init__(self, now_ms: Callable[[], int] = wall_ms, keep: int = KEEP) -> None:
        self._now_ms = now_ms
        self._since: int | None = None
        """When the outage going on now started (``None``: none is)."""
        self._answered = 0
        """When the last call the store answered was made (ms): no outage starts before it."""
        self._past: deque[Outage] = deque(maxlen=keep)
        self._over: list[Callable[[], None]] = []

    def when_over(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` each time an outage ends (the hub resyncs its rooms then: a store
        that hung answered nothing meanwhile, and a move sent into the hang may have been
        committed when it woke, unknown to this process)."""
        self._over.append(callback)

    @property
    def down(self) -> bool:
        """An outage is going on (the last store call failed)."""
        return self._since is not None

    def lost(self, made_ms: int | None = None) -> None:
        """A store call made at ``made_ms`` (``None``: now) failed for want of the store: an
        outage starts then, or when the store last answered if that was later, unless one is on."""
        if self._since is None:
            now = self._now_ms()
            self._since = min(now, max(self._answered, now if made_ms is None else made_ms))

    def back(self, made_ms: int | None = None) -> None:
        """A store call (made at ``made_ms``; ``None``: now) succeeded: the outage going on, if
        any, ends now, and none starts before the call was made. (The making, not the answer:
        :meth:`reaching` has read that time already, and a move's path reads no clock again.)"""
        if made_ms is None or self._since is not None:
            now = self._now_ms()
            if self._since is not None:
                self._past.append(Outage(self._since, max(self._since, now)))
                self._since = None
                for callback in self._over:
                    callback()
            made_ms = now if made_ms is None else made_ms
        if made_ms > self._answered:
            self._answered = made_ms

    async def reaching(self, call: Awaitable[T]) -> T:
        """Await a store call, noting whether the store answered (:meth:`back`) or was away
        (:meth:`lost`, from when the call was made; any other failure says nothing of the store)."""
        made = self._now_ms()
        try:
            result = await call
        except Exception as exc:
            if is_outage(exc):
                self.lost(made)
            raise
        self.back(made)
        return result

    def outages(self, now_ms: int) -> tuple[Outage, ...]:
        """Every remembered outage, the one going on ending at ``now_ms`` (a commit that
        succeeds now ends it)."""
        if self._since is None:
            return tuple(self._past)
        return (*self._past, Outage(self._since, max(self._since, now_ms)))

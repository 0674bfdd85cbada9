"""One load at a time per key: whoever asks while one is under way shares its result.

Why: a game's sockets open together (a rematch opens 2 + K within a few ms), and each one
loaded and decoded the room from Redis for itself before the first had put it in the cache
(docs/PERFORMANCE.md, thirteenth session). A dozen lines, so no dependency for it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class SingleFlight(Generic[T]):
    def __init__(self) -> None:
        self._flights: dict[Hashable, asyncio.Future[T]] = {}

    async def run(self, key: Hashable, start: Callable[[], Awaitable[T]]) -> T:
        """The result of the call under way for ``key``, else of ``start()`` (shared with
        whoever asks before it lands). Shielded: a caller that goes does not cancel the
        others' call."""
        flight = self._flights.get(key)
        if flight is None:
            flight = self._flights[key] = asyncio.ensure_future(start())
            flight.add_done_callback(functools.partial(self._landed, key))
        return await asyncio.shield(flight)

    def in_flight(self) -> int:
        return len(self._flights)

    def _landed(self, key: Hashable, flight: asyncio.Future[T]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]
        if not flight.cancelled():
            flight.exception()  # its callers have it; with none left it is not an unhandled error

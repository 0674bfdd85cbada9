"""Credit buckets for flood control, in the manner of lichess's ``RateLimit``.

A bucket holds up to ``credits`` credits and refills continuously at ``credits / per_seconds``
per second; every message costs one. Time is passed in (``time.monotonic()`` in production), so
the limiter is deterministic under test. :class:`KeyedLimiter` keeps one bucket per key (an IP
address, a player id) with a bound on how many keys it remembers, so a flood of distinct keys
cannot grow memory without bound.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass


@dataclass(slots=True)
class Bucket:
    credits: float
    per_seconds: float
    _level: float = -1.0
    _at: float = 0.0

    def allow(self, now: float, cost: float = 1.0) -> bool:
        """Spend ``cost`` credits if there are enough; False (and nothing spent) if not."""
        if self._level < 0:
            self._level, self._at = self.credits, now
        elapsed = max(0.0, now - self._at)
        self._level = min(self.credits, self._level + elapsed * self.credits / self.per_seconds)
        self._at = now
        if self._level >= cost:
            self._level -= cost
            return True
        return False

    def retry_after(self, now: float, cost: float = 1.0) -> float:
        """Seconds from ``now`` until ``cost`` credits are there (0 if they already are)."""
        if self._level < 0:
            return 0.0
        level = min(self.credits, self._level + max(0.0, now - self._at) * self.credits / self.per_seconds)
        return max(0.0, (cost - level) * self.per_seconds / self.credits)


class KeyedLimiter:
    """One :class:`Bucket` per key, remembering at most ``max_keys`` (least recently used go first)."""

    def __init__(self, credits: float, per_seconds: float, max_keys: int = 100_000) -> None:
        self.credits = credits
        self.per_seconds = per_seconds
        self.max_keys = max_keys
        self._buckets: OrderedDict[str, Bucket] = OrderedDict()

    def allow(self, key: str, now: float, cost: float = 1.0) -> bool:
        bucket = self._buckets.pop(key, None) or Bucket(self.credits, self.per_seconds)
        self._buckets[key] = bucket
        if len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        return bucket.allow(now, cost)

    def retry_after(self, key: str, now: float, cost: float = 1.0) -> float:
        """Seconds until ``key`` may spend ``cost`` again (for a ``Retry-After`` header)."""
        bucket = self._buckets.get(key)
        return bucket.retry_after(now, cost) if bucket is not None else 0.0

    def __len__(self) -> int:
        return len(self._buckets)


class Counter:
    """Concurrent holdings per key with a cap (e.g. open websockets per IP)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held: dict[str, int] = {}

    def acquire(self, key: str) -> bool:
        held = self._held.get(key, 0)
        if held >= self.limit:
            return False
        self._held[key] = held + 1
        return True

    def release(self, key: str) -> None:
        held = self._held.get(key, 0) - 1
        if held > 0:
            self._held[key] = held
        else:
            self._held.pop(key, None)

    def held(self, key: str) -> int:
        return self._held.get(key, 0)

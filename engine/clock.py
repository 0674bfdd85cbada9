"""A chess-style game clock (initial time + increment per move) as a pure value.

Time never comes from here: every method that needs "now" takes it as ``now_ms``, an integer
of milliseconds on whatever shared time base the caller uses (the server passes wall-clock
milliseconds so that every process reads the same clock). A :class:`Clock` is frozen; each
operation returns a new one.

Life of a clock: :meth:`Clock.new` (stopped, both seats at ``initial_ms``) → :meth:`start`
when the game begins (the seat to move's time runs) → :meth:`press` after each move of the
running seat (its elapsed time is deducted, the increment added, the other seat's time runs)
→ :meth:`stop` when the game ends. The caller checks :meth:`expired` *before* pressing: a move
that arrives after the flag fell is a timeout, not a move.

>>> c = Clock.new(60_000, 2_000).start(0, now_ms=1_000)
>>> c.remaining(0, now_ms=11_000)
50000
>>> c = c.press(0, now_ms=11_000)
>>> c.remaining_ms, c.running
((52000, 60000), 1)

A correspondence clock (:meth:`Clock.correspondence`) gives each move the same allowance
(days): a press refills the mover's time instead of adding an increment.

>>> c = Clock.correspondence(3).start(0, now_ms=0).press(0, now_ms=86_400_000)
>>> c.remaining_ms == (3 * 86_400_000, 3 * 86_400_000)
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

SEATS = (0, 1)
DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class Clock:
    initial_ms: int
    increment_ms: int
    remaining_ms: tuple[int, int]
    """Each seat's time left at ``since_ms`` (for the running seat) or now (for a waiting one)."""
    running: int | None = None
    """The seat whose time is running, ``None`` while the clock is stopped."""
    since_ms: int | None = None
    """When the running seat's time started to run (``None`` while stopped)."""
    per_move: bool = False
    """Correspondence: every move gets ``initial_ms`` afresh (a press refills, no increment)."""

    def __post_init__(self) -> None:
        if self.initial_ms <= 0 or self.increment_ms < 0:
            raise ValueError("a clock needs initial > 0 and increment >= 0")
        if self.running not in (None, *SEATS):
            raise ValueError(f"running must be None, 0 or 1, not {self.running!r}")
        if (self.running is None) != (self.since_ms is None):
            raise ValueError("running and since_ms are set together")

    # ------------------------------------------------------------------ construction

    @classmethod
    def new(cls, initial_ms: int, increment_ms: int = 0) -> "Clock":
        """A stopped clock with ``initial_ms`` for each seat."""
        return cls(int(initial_ms), int(increment_ms), (int(initial_ms), int(initial_ms)))

    @classmethod
    def correspondence(cls, days: int) -> "Clock":
        """A stopped clock giving each move ``days`` days."""
        allowance = int(days) * DAY_MS
        return cls(allowance, 0, (allowance, allowance), per_move=True)

    @property
    def days(self) -> int | None:
        """A correspondence clock's days per move; ``None`` for a game clock."""
        return self.initial_ms // DAY_MS if self.per_move else None

    def fresh(self) -> "Clock":
        """A stopped clock with the same settings and full time (for a rematch)."""
        return replace(self, remaining_ms=(self.initial_ms, self.initial_ms), running=None, since_ms=None)

    # ------------------------------------------------------------------ queries

    def remaining(self, seat: int, now_ms: int) -> int:
        """``seat``'s time left at ``now_ms``, never below zero."""
        left = self.remaining_ms[seat]
        if self.running == seat and self.since_ms is not None:
            left -= max(0, now_ms - self.since_ms)
        return max(0, left)

    def deadline_ms(self) -> int | None:
        """When the running seat's flag falls, or ``None`` while stopped."""
        if self.running is None or self.since_ms is None:
            return None
        return self.since_ms + self.remaining_ms[self.running]

    def expired(self, now_ms: int) -> bool:
        """True iff a seat's time is running and has run out at ``now_ms``."""
        deadline = self.deadline_ms()
        return deadline is not None and now_ms >= deadline

    # ------------------------------------------------------------------ transitions

    def start(self, seat: int, now_ms: int) -> "Clock":
        """Start ``seat``'s time at ``now_ms`` (the clock must be stopped)."""
        if self.running is not None:
            raise ValueError("the clock is already running")
        if seat not in SEATS:
            raise ValueError(f"seat must be 0 or 1, not {seat!r}")
        return replace(self, running=seat, since_ms=now_ms)

    def press(self, seat: int, now_ms: int) -> "Clock":
        """``seat`` finished a move at ``now_ms``: deduct, add the increment, run the other seat.

        Raises ``ValueError`` if ``seat``'s time is not the one running. Check :meth:`expired`
        first: pressing an expired clock is the caller's bug and raises too.
        """
        if self.running != seat:
            raise ValueError(f"seat {seat} pressed while {self.running!r} runs")
        if self.expired(now_ms):
            raise ValueError("the running seat's time has run out")
        left = list(self.remaining_ms)
        left[seat] = self.initial_ms if self.per_move else self.remaining(seat, now_ms) + self.increment_ms
        return replace(self, remaining_ms=(left[0], left[1]), running=1 - seat, since_ms=now_ms)

    def stop(self, now_ms: int) -> "Clock":
        """Stop the clock at ``now_ms`` (the running seat's elapsed time is deducted)."""
        if self.running is None:
            return self
        left = list(self.remaining_ms)
        left[self.running] = self.remaining(self.running, now_ms)
        return replace(self, remaining_ms=(left[0], left[1]), running=None, since_ms=None)

    def pause(self, start_ms: int, end_ms: int) -> "Clock":
        """The running seat's time did not run from ``start_ms`` to ``end_ms`` (the service
        could take no move meanwhile): the part of that span after :attr:`since_ms` is given
        back by running the seat's time again from ``end_ms`` with what it had left at the
        span's start. Time before :attr:`since_ms` is never given back, so pausing a span
        again (or one that overlaps it) gives back nothing twice; a flag that fell before the
        span stays fallen; the waiting seat's time never changes.

        >>> c = Clock.new(60_000).start(0, now_ms=0).pause(10_000, 40_000)
        >>> c.remaining(0, now_ms=50_000), c.since_ms
        (40000, 40000)
        >>> c.pause(10_000, 40_000) == c
        True
        """
        if self.running is None or self.since_ms is None:
            return self
        start = max(start_ms, self.since_ms)
        if end_ms <= start:
            return self
        left = self.remaining(self.running, start)
        if left <= 0:
            return self  # the flag had fallen before the span began
        remaining = list(self.remaining_ms)
        remaining[self.running] = left
        return replace(self, remaining_ms=(remaining[0], remaining[1]), since_ms=end_ms)

    # ------------------------------------------------------------------ plain data

    def to_data(self) -> dict[str, Any]:
        return {
            "initial_ms": self.initial_ms,
            "increment_ms": self.increment_ms,
            "remaining_ms": list(self.remaining_ms),
            "running": self.running,
            "since_ms": self.since_ms,
            "per_move": self.per_move,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "Clock":
        """Inverse of :meth:`to_data`; raises ``ValueError`` on malformed data."""
        try:
            a, b = data["remaining_ms"]
            return cls(
                int(data["initial_ms"]), int(data["increment_ms"]), (int(a), int(b)),
                data["running"], data["since_ms"], bool(data.get("per_move", False)),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed clock: {exc!r}") from exc

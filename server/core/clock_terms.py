"""A clock as a request states it, checked in one place for every way a game is asked for
(``POST /api/v1/games`` and quick pairing's pools): ``null`` (untimed), ``{"initial":
seconds, "increment": seconds}`` (increment defaults to 0) or ``{"days": n}`` (correspondence:
days per move). Anything else, or beyond the limits, is a :class:`BadClock`."""

from __future__ import annotations

import math
from typing import Any

from engine.clock import Clock

MAX_INITIAL_S = 3 * 3600
MAX_INCREMENT_S = 600
MAX_DAYS = 14
SHAPE = '"clock" must be null, {"initial": seconds, "increment": seconds} or {"days": days per move}'


class BadClock(ValueError):
    """The request's clock is malformed or beyond the limits (``bad_field`` at the edges)."""


def clock_of(value: Any) -> Clock | None:
    """The clock a request's JSON value states; raises :class:`BadClock`."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadClock(SHAPE)
    if "days" in value:
        days = value["days"]
        if set(value) != {"days"} or type(days) is not int or not 1 <= days <= MAX_DAYS:
            raise BadClock(f"clock days must be a whole number of days per move in 1..{MAX_DAYS}")
        return Clock.correspondence(days)
    if "initial" not in value or not set(value) <= {"initial", "increment"}:
        raise BadClock(SHAPE)
    initial, increment = value["initial"], value.get("increment", 0)
    for name, x, top in (("initial", initial, MAX_INITIAL_S), ("increment", increment, MAX_INCREMENT_S)):
        if not _seconds(x, top):
            raise BadClock(f"clock {name} must be a number of seconds in 0..{top}")
    initial_ms, increment_ms = int(initial * 1000), int(increment * 1000)  # a clock counts whole ms
    if initial_ms <= 0:
        raise BadClock("clock initial must be at least 0.001 s (1 ms)")
    return Clock.new(initial_ms, increment_ms)


def _seconds(value: Any, top: int) -> bool:
    """A number of seconds (an int or a finite float, not a bool) in ``0..top``."""
    return (type(value) is int or (type(value) is float and math.isfinite(value))) and 0 <= value <= top

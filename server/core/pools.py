"""Quick pairing, pure: the pool table, what a seek asks for, and how far apart two ratings may be.

A **pool** is a time control crossed with a ruleset and rated/casual. The time controls are
fixed (the issue's list): live ``1+1``, ``3+2``, ``5+3``, ``10+5`` (minutes + seconds per move)
and correspondence ``1``, ``3``, ``7`` days per move. A seeker asks for one pool with the body
of ``POST /api/v1/pairing`` (:func:`pool_of`); anything else is refused before anything is
stored: malformed input is :class:`BadField` (``400 bad_field``), well-formed input that names
no pool (a 2+1 clock, no clock, an unknown ruleset) is :class:`UnknownPool` (``400 unknown_pool``).

The **rating window** (:class:`Window`) is how far apart two ratings may be for a rated pair,
as a function of how long a seeker has waited: ±100 at once, 25 wider per second, unlimited
after 20 s (by then a close opponent was not to be had; a game is better than none). Two
seekers pair only if their gap fits *both* windows (:func:`compatible`), so it is symmetric and,
as both wait, it never stops holding once it holds. Casual pools ignore ratings. The store's
scripts compute the same arithmetic in Lua from these parameters (``tests`` compare them).

:func:`pool_clock` is the one place that turns a pool into a game clock (correspondence pools
get the days-per-move clock, so their games rate as "correspondence").

>>> pool_of("coan", {"initial": 180, "increment": 2}, True).id
'live-3+2/coan/rated'
>>> Window().width(0), Window().width(4_000), Window().width(20_000)
(100.0, 200.0, inf)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from engine.clock import Clock
from engine.rules import RULESETS

from .clock_terms import BadClock, clock_of
from .ratings import category_of

# ---------------------------------------------------------------------- the table


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A pool's clock: ``initial_s`` + ``increment_s`` per move (live), or ``days`` per move."""

    name: str
    initial_s: int = 0
    increment_s: int = 0
    days: int | None = None

    @property
    def live(self) -> bool:
        return self.days is None

    @property
    def category(self) -> str:
        """The rating category of its games (:func:`server.core.ratings.category_of`)."""
        found = category_of(self.initial_s, self.increment_s, days=self.days)
        assert found is not None  # every pool's clock is timed
        return found

    @property
    def label(self) -> str:
        """How a page names it: ``3+2`` (minutes + seconds per move), ``3 days`` (per move)."""
        if self.days is not None:
            return f"{self.days} day{'s' if self.days != 1 else ''}"
        return f"{self.initial_s // 60}+{self.increment_s}"

    def to_data(self) -> dict[str, int]:
        """The ``clock`` field that names it in a request."""
        if self.days is not None:
            return {"days": self.days}
        return {"initial": self.initial_s, "increment": self.increment_s}


def _live(minutes: int, increment_s: int) -> TimeControl:
    return TimeControl(f"live-{minutes}+{increment_s}", minutes * 60, increment_s)


def _corr(days: int) -> TimeControl:
    return TimeControl(f"corr-{days}d", days=days)


TIME_CONTROLS: tuple[TimeControl, ...] = (
    _live(1, 1), _live(3, 2), _live(5, 3), _live(10, 5), _corr(1), _corr(3), _corr(7),
)


@dataclass(frozen=True, slots=True)
class Pool:
    """Where seekers wait for each other: one time control, one ruleset, rated or casual."""

    ruleset: str
    control: TimeControl
    rated: bool

    @property
    def id(self) -> str:
        """``<control>/<ruleset>/<rated|casual>``, e.g. ``live-3+2/brettspielnetz/rated``."""
        return f"{self.control.name}/{self.ruleset}/{'rated' if self.rated else 'casual'}"

    @property
    def category(self) -> str | None:
        """The rating category its games count in; ``None`` for a casual pool."""
        return self.control.category if self.rated else None


POOLS: dict[str, Pool] = {
    pool.id: pool
    for control in TIME_CONTROLS for ruleset in RULESETS for rated in (True, False)
    for pool in (Pool(ruleset, control, rated),)
}
"""Every pool by id, in the table's order (time control, ruleset, rated before casual)."""


def pool_clock(pool: Pool) -> Clock:
    """The clock a game of ``pool`` starts with (stopped: it starts with the first move):
    ``initial + increment`` for a live pool, ``days`` per move for a correspondence pool."""
    control = pool.control
    if control.days is not None:
        return Clock.correspondence(control.days)
    return Clock.new(control.initial_s * 1000, control.increment_s * 1000)


# ---------------------------------------------------------------------- reading a request


class PoolError(ValueError):
    """A seek that names no pool; ``code`` is the API's error code."""

    code = "bad_field"


class BadField(PoolError):
    """The request is malformed (a field of the wrong type or shape)."""

    code = "bad_field"


class UnknownPool(PoolError):
    """The request is well-formed but no pool has this ruleset and clock."""

    code = "unknown_pool"




def pool_of(ruleset: Any, clock: Any, rated: Any) -> Pool:
    """The pool a request names; raises :class:`BadField` or :class:`UnknownPool`.

    ``clock`` is the request's JSON value: ``{"initial", "increment"}`` in seconds (increment
    defaults to 0), ``{"days"}``, or ``None`` (well-formed, but no pool is untimed).
    """
    if not isinstance(ruleset, str):
        raise BadField('"ruleset" must be a string')
    if type(rated) is not bool:
        raise BadField('"rated" must be true or false')
    control = _control_of(clock)
    if ruleset not in RULESETS:
        raise UnknownPool(f"unknown ruleset {ruleset!r}; pools exist for {sorted(RULESETS)}")
    return POOLS[Pool(ruleset, control, rated).id]


def _control_of(value: Any) -> TimeControl:
    try:
        clock = clock_of(value)  # the one check of a requested clock (server/core/clock_terms.py)
    except BadClock as exc:
        raise BadField(str(exc)) from None
    if clock is None:
        raise UnknownPool(f"no pool is untimed; pools: {_listing()}")
    if clock.per_move:
        wanted = [c for c in TIME_CONTROLS if c.days == clock.days]
    else:
        wanted = [c for c in TIME_CONTROLS if c.live and
                  (c.initial_s * 1000, c.increment_s * 1000) == (clock.initial_ms, clock.increment_ms)]
    if not wanted:
        raise UnknownPool(f"no pool has this clock; pools: {_listing()}")
    return wanted[0]


def _listing() -> str:
    return ", ".join(c.name for c in TIME_CONTROLS)


# ---------------------------------------------------------------------- rating windows


@dataclass(frozen=True, slots=True)
class Window:
    """How far from its own rating a seeker accepts an opponent, by how long it has waited:
    ``base`` at once, ``per_s`` wider every second, unlimited from ``open_after_ms`` on.

    The Lua scripts compute :meth:`width` with the very same operations (``base + per_s *
    (waited / 1000)`` in doubles), so Python and Redis agree to the last bit, boundaries too.
    """

    base: float = 100.0
    per_s: float = 25.0
    open_after_ms: int = 20_000

    def __post_init__(self) -> None:
        if self.base < 0 or self.per_s < 0 or self.open_after_ms < 0:
            raise ValueError(f"a window needs base, per_s, open_after_ms >= 0, not {self!r}")

    def width(self, waited_ms: int) -> float:
        """The largest rating gap accepted after ``waited_ms`` of waiting (``inf``: any)."""
        waited = max(0, waited_ms)
        if waited >= self.open_after_ms:
            return math.inf
        return self.base + self.per_s * (waited / 1000)

    @classmethod
    def of(cls, base: float, per_s: float, open_after_s: float) -> Window:
        """From the setting's numbers (``MINEDUEL_PAIRING_WINDOW=100,25,20``)."""
        return cls(base, per_s, round(open_after_s * 1000))


def compatible(window: Window, gap: float, waited_a_ms: int, waited_b_ms: int) -> bool:
    """Whether two seekers whose ratings are ``gap`` apart may pair: it fits both windows."""
    return abs(gap) <= min(window.width(waited_a_ms), window.width(waited_b_ms))

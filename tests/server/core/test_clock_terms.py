"""A requested clock is checked in one place for a created game and a pairing pool."""

from __future__ import annotations

import pytest

from server.core.clock_terms import MAX_DAYS, MAX_INITIAL_S, BadClock, clock_of
from server.core.pools import BadField, UnknownPool, pool_of


def test_the_shapes_a_clock_may_take() -> None:
    assert clock_of(None) is None
    assert (clock_of({"initial": 180, "increment": 2}).initial_ms, clock_of({"initial": 180}).increment_ms) == (180_000, 0)
    assert clock_of({"initial": 0.5}).initial_ms == 500
    assert clock_of({"initial": 0.001, "increment": 0.0004}).initial_ms == 1  # whole ms: the increment is 0
    assert clock_of({"days": 3}).per_move and clock_of({"days": 3}).days == 3


@pytest.mark.parametrize("bad", [
    "3+2", [180, 2], {}, {"increment": 2}, {"initial": 0}, {"initial": -1}, {"initial": MAX_INITIAL_S + 1},
    {"initial": 180, "increment": 601}, {"initial": True}, {"initial": float("nan")}, {"initial": float("inf")},
    {"initial": "180"}, {"initial": 180, "extra": 1}, {"days": 0}, {"days": MAX_DAYS + 1}, {"days": 1.5},
    {"days": 3, "initial": 5}, {"initial": 0.0005}, {"initial": 1e-7}, {"initial": 5e-324},
])
def test_a_bad_clock_is_refused_alike_by_both_edges(bad) -> None:
    with pytest.raises(BadClock):
        clock_of(bad)
    with pytest.raises(BadField):
        pool_of("brettspielnetz", bad, False)


def test_a_good_clock_without_a_pool_names_no_pool() -> None:
    with pytest.raises(UnknownPool):
        pool_of("brettspielnetz", {"initial": 181, "increment": 2}, False)
    assert pool_of("coan", {"days": 7}, True).rated

"""The pool table, reading a seek's request, and the rating window policy (pure)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.rules import RULESETS
from server.core.pools import (
    POOLS,
    TIME_CONTROLS,
    BadField,
    Pool,
    UnknownPool,
    Window,
    compatible,
    pool_clock,
    pool_of,
)
from server.core.ratings import BLITZ, BULLET, CORRESPONDENCE, RAPID, clock_category


def test_the_table_is_every_control_by_ruleset_by_rated() -> None:
    assert [c.name for c in TIME_CONTROLS] == ["live-1+1", "live-3+2", "live-5+3", "live-10+5",
                                               "corr-1d", "corr-3d", "corr-7d"]
    assert len(POOLS) == len(TIME_CONTROLS) * len(RULESETS) * 2
    assert POOLS["live-3+2/brettspielnetz/rated"] == Pool("brettspielnetz", TIME_CONTROLS[1], True)
    assert [c.label for c in TIME_CONTROLS] == ["1+1", "3+2", "5+3", "10+5", "1 day", "3 days", "7 days"]
    assert all(pool.id == pool_id for pool_id, pool in POOLS.items())


def test_categories_and_clocks() -> None:
    assert [c.category for c in TIME_CONTROLS] == [BULLET, BLITZ, BLITZ, RAPID] + [CORRESPONDENCE] * 3
    assert POOLS["live-1+1/coan/casual"].category is None
    assert POOLS["corr-3d/coan/rated"].category == CORRESPONDENCE
    clock = pool_clock(POOLS["live-10+5/coan/rated"])
    assert (clock.initial_ms, clock.increment_ms, clock.running) == (600_000, 5_000, None)
    corr = pool_clock(POOLS["corr-7d/coan/rated"])
    assert (corr.per_move, corr.days, corr.running) == (True, 7, None)
    assert clock_category(corr) == CORRESPONDENCE and clock_category(clock) == RAPID


@pytest.mark.parametrize("control", TIME_CONTROLS, ids=lambda c: c.name)
def test_every_pool_is_found_from_its_own_clock(control) -> None:
    for ruleset in RULESETS:
        for rated in (True, False):
            assert pool_of(ruleset, control.to_data(), rated) == Pool(ruleset, control, rated)


def test_clock_forms_that_name_a_pool() -> None:
    assert pool_of("coan", {"initial": 60.0, "increment": 1.0}, False).control.name == "live-1+1"
    assert pool_of("coan", {"initial": 600, "increment": 5}, False).control.name == "live-10+5"


@pytest.mark.parametrize("ruleset, clock, rated", [
    (1, {"days": 1}, True),                               # ruleset not a string
    ("coan", {"days": 1}, 1),                              # rated not a boolean
    ("coan", {"days": 1}, None),
    ("coan", "3+2", True),                                 # clock not an object
    ("coan", [180, 2], True),
    ("coan", {}, True),
    ("coan", {"increment": 2}, True),                      # no initial
    ("coan", {"initial": 180, "increment": 2, "days": 1}, True),  # both shapes at once
    ("coan", {"initial": 180, "extra": 1}, True),
    ("coan", {"initial": "180", "increment": 2}, True),    # types
    ("coan", {"initial": 180, "increment": True}, True),
    ("coan", {"initial": 180, "increment": -2}, True),
    ("coan", {"initial": 0, "increment": 2}, True),
    ("coan", {"initial": math.nan, "increment": 2}, True),
    ("coan", {"initial": math.inf, "increment": 2}, True),
    ("coan", {"days": 1.0}, True),
    ("coan", {"days": 0}, True),
    ("coan", {"days": True}, True),
    ("coan", {"days": 15}, True),                          # beyond a game's limits
    ("coan", {"initial": 10_801, "increment": 2}, True),
    ("coan", {"initial": 180, "increment": 601}, True),
])
def test_malformed_requests_are_bad_field(ruleset, clock, rated) -> None:
    with pytest.raises(BadField) as info:
        pool_of(ruleset, clock, rated)
    assert info.value.code == "bad_field"


@pytest.mark.parametrize("ruleset, clock", [
    ("chess", {"days": 1}),
    ("coan", None),                                        # no pool is untimed
    ("coan", {"initial": 120, "increment": 1}),
    ("coan", {"initial": 180}),                            # 3+0 is not 3+2
    ("coan", {"initial": 180, "increment": 2.5}),
    ("coan", {"days": 2}),
])
def test_well_formed_requests_without_a_pool_are_unknown_pool(ruleset, clock) -> None:
    with pytest.raises(UnknownPool) as info:
        pool_of(ruleset, clock, True)
    assert info.value.code == "unknown_pool"
    assert "live-3+2" in str(info.value) or "ruleset" in str(info.value)


# ---------------------------------------------------------------------- the window


def test_the_default_window() -> None:
    w = Window()
    assert [w.width(ms) for ms in (-5, 0, 1_000, 10_000, 19_999)] == [100, 100, 125, 350, 100 + 25 * 19.999]
    assert w.width(20_000) == w.width(10**9) == math.inf
    assert Window.of(50, 200, 2.5) == Window(50, 200, 2_500)


waits = st.integers(-1_000, 40_000)
windows = st.builds(Window, st.floats(0, 500), st.floats(0, 500), st.integers(0, 60_000))
gaps = st.floats(-3000, 3000)


@given(windows, waits, waits)
def test_the_window_never_narrows_with_waiting(window: Window, a: int, b: int) -> None:
    first, later = sorted((a, b))
    assert window.width(first) <= window.width(later)


@given(windows, gaps, waits, waits)
def test_compatibility_is_symmetric(window: Window, gap: float, a: int, b: int) -> None:
    assert compatible(window, gap, a, b) == compatible(window, -gap, b, a)


@given(windows, gaps, waits, waits, st.integers(0, 30_000))
def test_once_compatible_always_compatible(window: Window, gap: float, a: int, b: int, more: int) -> None:
    if compatible(window, gap, a, b):
        assert compatible(window, gap, a + more, b + more)


@given(windows, gaps, waits, waits)
def test_both_windows_must_hold(window: Window, gap: float, a: int, b: int) -> None:
    assert compatible(window, gap, a, b) == (abs(gap) <= window.width(a) and abs(gap) <= window.width(b))

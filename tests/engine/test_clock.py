"""engine.clock: a pure chess clock; time is always an argument."""

import doctest

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import clock as clock_module
from engine.clock import Clock


def test_doctests():
    assert doctest.testmod(clock_module).failed == 0


def test_new_clock_is_stopped_and_full():
    c = Clock.new(300_000, 5_000)
    assert c.running is None and c.deadline_ms() is None
    assert c.remaining(0, 10**12) == c.remaining(1, 10**12) == 300_000
    assert not c.expired(10**12)


def test_press_deducts_adds_increment_and_switches():
    c = Clock.new(10_000, 1_000).start(1, 0)
    assert c.deadline_ms() == 10_000
    c = c.press(1, 4_000)
    assert c.remaining_ms == (10_000, 7_000) and c.running == 0 and c.since_ms == 4_000
    assert c.remaining(0, 6_500) == 7_500 and c.remaining(1, 6_500) == 7_000
    assert c.deadline_ms() == 14_000


def test_expiry_is_exactly_at_the_deadline():
    c = Clock.new(1_000).start(0, 500)
    assert not c.expired(1_499)
    assert c.expired(1_500)
    assert c.remaining(0, 5_000) == 0


def test_press_refuses_wrong_seat_and_expired_flag():
    c = Clock.new(1_000).start(0, 0)
    with pytest.raises(ValueError):
        c.press(1, 10)
    with pytest.raises(ValueError):
        c.press(0, 1_000)
    with pytest.raises(ValueError):
        c.start(1, 0)


def test_stop_freezes_time():
    c = Clock.new(5_000).start(0, 0).stop(2_000)
    assert c.running is None and c.remaining_ms == (3_000, 5_000)
    assert c.remaining(0, 10**9) == 3_000
    assert c.stop(10**9) == c


def test_invalid_construction():
    with pytest.raises(ValueError):
        Clock.new(0)
    with pytest.raises(ValueError):
        Clock(1, 0, (1, 1), running=0, since_ms=None)
    with pytest.raises(ValueError):
        Clock.from_data({"initial_ms": 1})


@given(
    initial=st.integers(1, 10**7),
    increment=st.integers(0, 10**5),
    steps=st.lists(st.integers(0, 10**6), max_size=20),
)
def test_round_trip_and_time_accounting(initial, increment, steps):
    c = Clock.new(initial, increment).start(0, 0)
    now = 0
    for dt in steps:
        assert Clock.from_data(c.to_data()) == c
        now += dt
        if c.expired(now):
            break
        seat = c.running
        before = c.remaining(seat, now)
        c = c.press(seat, now)
        assert c.remaining_ms[seat] == before + increment
    assert Clock.from_data(c.to_data()) == c

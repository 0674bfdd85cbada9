"""Clock time given back after a store outage (``server/core/outages.py``, through ``decide``):
plain values in and out, no store."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Explore
from engine.clock import Clock
from server.core.commands import Commit, Play, Refusal, Refused, Tick, Unchanged
from server.core.decide import decide
from server.core.outages import Outage, resumed
from server.core.room import Room, Status

from .test_decide import ANNA, BEN, T0, committed, playing, safe_cell

MIN = 60_000


def running(initial_ms: int = 10 * MIN) -> Room:
    """Anna and Ben have made their first moves (at T0 and T0 + 1 s): Anna's clock runs since T0 + 1 s."""
    room = playing(Clock.new(initial_ms))
    room = committed(decide(room, ANNA, Play(Explore(safe_cell(room))), room.version, T0))
    room = committed(decide(room, BEN, Play(Explore(safe_cell(room))), room.version, T0 + 1_000))
    assert room.clock.running == 0 and room.clock.since_ms == T0 + 1_000
    return room


SINCE = T0 + 1_000
outages = st.lists(
    st.tuples(st.integers(-2 * MIN, 30 * MIN), st.integers(0, 20 * MIN)).map(
        lambda t: Outage(SINCE + t[0], SINCE + t[0] + t[1])),
    max_size=4,
)


def covered(spans: list[Outage], lo: int, hi: int) -> int:
    """How much of [lo, hi] the union of ``spans`` covers (a dumb twin: millisecond by second)."""
    edges = sorted({lo, hi, *(max(lo, min(hi, x)) for o in spans for x in (o.start_ms, o.end_ms))})
    return sum(b - a for a, b in zip(edges, edges[1:])
               if any(o.start_ms <= a and b <= o.end_ms for o in spans))


@settings(max_examples=300, deadline=None)
@given(outages, st.integers(0, 40 * MIN))
def test_the_refund_is_the_running_time_inside_the_outages_once_and_only_the_movers(spans, after) -> None:
    room, now = running(), SINCE + after
    back, given_ms = resumed(room, spans, now)
    before = room.clock
    assert given_ms >= 0
    assert given_ms <= covered(spans, SINCE, now)  # never more than the outage, nor time before the clock ran
    if before.remaining(0, now) > 0:
        assert given_ms == covered(spans, SINCE, now)  # all of it, when the flag stood throughout
    assert back.clock.remaining(1, now) == before.remaining(1, now)  # the waiting seat: untouched
    assert back.clock.remaining(0, now) >= before.remaining(0, now)
    assert resumed(back, spans, now) == (back, 0)  # applied once: nothing more the second time
    assert (given_ms == 0) == (back is room)


@settings(max_examples=100, deadline=None)
@given(outages, outages, st.integers(0, 40 * MIN))
def test_two_processes_give_back_each_instant_once(a, b, after) -> None:
    """What two processes saw, applied one after the other (the second deciding on the first's
    commit), gives back the union of what they saw, never an instant twice."""
    room, now = running(), SINCE + 41 * MIN + after  # the flag stands at the first outage: all owed
    first, given_a = resumed(room, a, now)
    second, given_b = resumed(first, b, now)
    assert given_a + given_b <= covered(a + b, SINCE, now)
    assert resumed(room, a + b, now)[1] >= given_a


def test_no_clock_running_no_refund() -> None:
    span = [Outage(T0, T0 + 5 * MIN)]
    untimed = playing()
    assert resumed(untimed, span, T0 + 6 * MIN) == (untimed, 0)
    before_first_move = playing(Clock.new(10 * MIN))
    assert resumed(before_first_move, span, T0 + 6 * MIN) == (before_first_move, 0)


def test_a_flag_that_fell_inside_the_outage_stands_again_and_the_tick_commits_the_refund() -> None:
    """10:00 → 9:24 during a 36 s outage is what the issue saw; here a 1-minute clock whose flag
    would have fallen inside a 2-minute outage: the sweeper's Tick gives the time back instead
    of declaring a timeout, alone in its commit."""
    room = running(MIN)
    start, end = SINCE + 20_000, SINCE + 140_000
    assert isinstance(decide(room, None, Tick(), None, end + 1), Commit)  # today: a timeout
    tick = decide(room, None, Tick(), None, end + 1, (Outage(start, end),))
    assert isinstance(tick, Commit) and tick.kind == "resume" and tick.given_ms == end - start
    after = tick.room
    assert after.status is Status.PLAYING and after.version == room.version + 1
    assert after.clock.remaining(0, end + 1) == MIN - 20_000 - 1  # as it stood when the outage began
    assert after.clock.remaining(1, end + 1) == room.clock.remaining(1, end + 1)
    assert tick.detail == (0, end - start)
    # the refund is in the room: deciding again (any process, the same outage) gives nothing more
    assert isinstance(decide(after, None, Tick(), None, end + 2, (Outage(start, end),)), Unchanged)


def test_a_flag_that_fell_before_the_outage_still_ends_the_game() -> None:
    room = running(MIN)
    late = Outage(SINCE + MIN + 5_000, SINCE + 3 * MIN)
    tick = decide(room, None, Tick(), None, SINCE + 3 * MIN + 1, (late,))
    assert isinstance(tick, Commit) and tick.given_ms == 0
    assert tick.room.status is Status.OVER and tick.room.game.outcome.termination == "timeout"


def test_the_movers_first_move_after_the_outage_carries_the_refund() -> None:
    room = running()
    start, end = SINCE + 60_000, SINCE + 96_000  # 36 s: 10:00 → 9:24 on the clock face
    move = decide(room, ANNA, Play(Explore(safe_cell(room))), room.version, end + 4_000, (Outage(start, end),))
    assert isinstance(move, Commit) and move.kind == "move" and move.given_ms == 36_000
    assert move.room.clock.remaining_ms[0] == 10 * MIN - 60_000 - 4_000  # the outage not counted
    assert move.room.clock.running == 1


def test_a_refused_command_makes_no_refund_and_shows_the_room_as_it_stands() -> None:
    room = running()
    span = (Outage(SINCE + 1_000, SINCE + 50_000),)
    wrong_turn = decide(room, BEN, Play(Explore(safe_cell(room))), room.version, SINCE + 60_000, span)
    assert isinstance(wrong_turn, Refusal) and wrong_turn.code is Refused.NOT_YOUR_TURN
    assert wrong_turn.room is room
    stale = decide(room, ANNA, Play(Explore(safe_cell(room))), room.version - 1, SINCE + 60_000, span)
    assert isinstance(stale, Refusal) and stale.code is Refused.STALE and stale.room is room

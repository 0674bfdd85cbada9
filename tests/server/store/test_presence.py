"""Reading a room's presence without writing (the lobby's read of many rooms) answers what the
``PRESENCE`` script answers, whatever the processes did before (property test on the real Valkey)."""

from __future__ import annotations

import asyncio
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from server.store.presence import attendance_of
from server.store.store import Store

ROOMS = itertools.count()
writes = st.lists(st.tuples(st.sampled_from(["p1", "p2", "p3"]), st.integers(0, 2), st.integers(0, 2),
                            st.integers(0, 2), st.integers(0, 10_000)), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None)
@given(writes)
def test_the_read_agrees_with_the_script(redis_url: str, history) -> None:
    async def run() -> None:
        store = Store(redis_url)
        room_id = f"presence-{next(ROOMS)}"
        try:
            now = 1_000_000
            for process, spectators, seat0, seat1, step in history:
                now += step
                answered = await store.set_presence(room_id, process, (spectators, seat0, seat1), 30, now, False)
                [fields] = await store.attendance_fields([room_id])
                read, ever = attendance_of(fields)
                assert read == answered
                assert ever == (True, True)  # once written, a seat is connected or away since a time
        finally:
            await store.close()

    asyncio.run(run())


def test_a_room_nobody_opened_is_not_away() -> None:
    attendance, ever = attendance_of({})
    assert attendance.spectators == 0 and attendance.away_since == (None, None) and ever == (False, False)
    attendance, ever = attendance_of({b"p1": b"2", b"p1:0": b"1", b"away:1": b"5"})
    assert attendance.spectators == 2 and attendance.away_since == (None, 5) and ever == (True, True)

"""Reading a room's presence without writing (the lobby's read of many rooms) answers what the
``PRESENCE`` script answers, whatever the processes did before (property test on the real Valkey)."""

from __future__ import annotations

import asyncio
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import SPECTATOR
from server.metrics import Metrics
from server.store.presence import REFRESH_BATCH, REFRESH_SLICES, Presence, attendance_of
from server.store.store import Store
from server.tasks import stop_tasks

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


def test_the_refresh_keeps_every_local_room_alive_in_batches(redis_url: str) -> None:
    """Fields expire with their TTL unless refreshed; the refresh writes the rooms with local
    connections (more than one pipelined batch here) and only those, and what it hears is
    each room's attendance."""

    async def run() -> None:
        store = Store(redis_url)
        presence = Presence(store, Metrics(), process_id="refresher", ttl_s=3)
        rooms = [f"refresh-{next(ROOMS)}" for _ in range(REFRESH_BATCH + 30)]
        try:
            for room_id in rooms:
                await presence.arrive(room_id, SPECTATOR)
                await presence.arrive(room_id, 0)
            gone = rooms[-1]
            await presence.leave(gone, SPECTATOR)
            await presence.leave(gone, 0)
            watched = (rooms[0], rooms[REFRESH_BATCH + 1])  # one in each batch
            for room_id in watched:  # another process's spectators, not published: heard through the refresh
                await store.set_presence(room_id, "other", (2, 0, 0), 30, 0, False)
            refresher = asyncio.create_task(presence.run())
            await asyncio.sleep(3.6)  # past the fields' TTL: only a refresh keeps them
            assert await stop_tasks((refresher,)) == []
            fields = await store.attendance_fields(rooms)
            for room_id, found in zip(rooms[:-1], fields[:-1]):
                assert found.get(b"refresher") == b"1" and found.get(b"refresher:0") == b"1", room_id
                heard = presence.attendance(room_id)
                assert heard.spectators == (3 if room_id in watched else 1) and heard.away_since[0] is None
            assert b"refresher" not in fields[-1] and b"refresher:0" not in fields[-1]
        finally:
            await store.close()

    asyncio.run(run())


def test_a_refresh_pass_is_spread_over_its_period(redis_url: str) -> None:
    """A pass writes its rooms in REFRESH_SLICES ticks, each an equal share, every room once
    (one pass over thousands of rooms at once left the moves a backlog: see REFRESH_SLICES)."""

    class Recording(Store):
        def __init__(self, url: str) -> None:
            super().__init__(url)
            self.calls: list[list[str]] = []

        async def refresh_presence(self, rooms, process_id, ttl_s, now_ms):
            self.calls.append([room_id for room_id, _counts in rooms])
            return await super().refresh_presence(rooms, process_id, ttl_s, now_ms)

    async def run() -> None:
        store = Recording(redis_url)
        presence = Presence(store, Metrics(), process_id="spreader", ttl_s=3)
        rooms = [f"spread-{next(ROOMS)}" for _ in range(2 * REFRESH_SLICES)]
        try:
            for room_id in rooms:
                await presence.arrive(room_id, SPECTATOR)
            refresher = asyncio.create_task(presence.run())
            for _ in range(200):  # bounded: 10 s at most, the pass takes 1 s
                if len(store.calls) >= REFRESH_SLICES:
                    break
                await asyncio.sleep(0.05)
            assert await stop_tasks((refresher,)) == []
            first_pass = store.calls[:REFRESH_SLICES]
            assert [len(call) for call in first_pass] == [2] * REFRESH_SLICES
            assert sorted(room_id for call in first_pass for room_id in call) == sorted(rooms)
        finally:
            await store.close()

    asyncio.run(run())


def test_a_pass_stops_at_the_first_failure_until_its_period_is_over(redis_url: str) -> None:
    """While Redis is away each pass tries once (one logged error), not once per tick."""

    class Failing(Store):
        def __init__(self, url: str) -> None:
            super().__init__(url)
            self.tries = 0

        async def refresh_presence(self, rooms, process_id, ttl_s, now_ms):
            self.tries += 1
            raise ConnectionError("Redis is away")

    async def run() -> None:
        store = Failing(redis_url)
        presence = Presence(store, Metrics(), process_id="failing", ttl_s=3)  # a pass a second
        try:
            for _ in range(2 * REFRESH_SLICES):
                await presence.arrive(f"failing-{next(ROOMS)}", SPECTATOR)
            refresher = asyncio.create_task(presence.run())
            await asyncio.sleep(2.5)  # passes begin at 0, 1 and 2 s: at most three tries
            assert not refresher.done()  # a failure never ends the refresher
            assert await stop_tasks((refresher,)) == []
            assert 1 <= store.tries <= 3
        finally:
            await store.close()

    asyncio.run(run())

"""Reading a room's presence without writing (the lobby's read of many rooms) answers what the
``PRESENCE`` script answers, whatever the processes did before (property test on the real
Valkey); the changes of a moment are written once; the refresh keeps fields alive."""

from __future__ import annotations

import asyncio
import itertools

import redis.asyncio as aioredis
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import SPECTATOR
from server.metrics import Metrics
from server.store.keys import channel
from server.store.messages import Attendance, is_presence, presence_of
from server.store.presence import (
    GATHER_S,
    REFRESH_BATCH,
    REFRESH_SLICES,
    Presence,
    attendance_of,
)
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


class Counting(Store):
    """The real store, counting the published writes (each is a presence frame to every socket)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.writes: list[tuple[str, tuple[int, int, int]]] = []

    async def set_presence(self, room_id, process_id, counts, ttl_s, now_ms, publish):
        if publish:
            self.writes.append((room_id, counts))
        return await super().set_presence(room_id, process_id, counts, ttl_s, now_ms, publish)


async def written(store: Counting, n: int) -> None:
    for _ in range(100):  # bounded: 5 s
        if len(store.writes) >= n:
            return
        await asyncio.sleep(0.05)


def test_a_games_sockets_opening_together_are_written_once(redis_url: str) -> None:
    """A rematch's five sockets (two players, three spectators) arrive within a few ms: one
    write and publish for all, every arrival answered with the attendance that counts it; their
    closing is one more. A change after a write began gets a write of its own."""

    async def run() -> None:
        store = Counting(redis_url)
        presence = Presence(store, Metrics(), process_id="gatherer")
        room_id = f"gather-{next(ROOMS)}"
        try:
            heard = await asyncio.gather(*(presence.arrive(room_id, viewer) for viewer in (0, 1, SPECTATOR,
                                                                                          SPECTATOR, SPECTATOR)))
            assert store.writes == [(room_id, (3, 1, 1))]
            assert all(h.spectators == 3 and h.away_since == (None, None) for h in heard)
            for viewer in (SPECTATOR, SPECTATOR, 1):
                presence.leave(room_id, viewer)  # counted now, written without waiting
            await written(store, 2)
            assert store.writes[1:] == [(room_id, (1, 1, 0))]
            assert presence.attendance(room_id).spectators == 1
            assert presence.attendance(room_id).away_since[1] is not None
            presence.leave(room_id, SPECTATOR)
            await asyncio.sleep(GATHER_S * 1.5)  # its write has begun (or is done)
            presence.leave(room_id, 0)
            presence.forget(room_id)  # the last one went (as the hub does)
            await written(store, 4)
            assert store.writes[2:] == [(room_id, (0, 1, 0)), (room_id, (0, 0, 0))]
            assert presence.attendance(room_id) == Attendance()  # nothing kept for a room not watched
        finally:
            await store.close()

    asyncio.run(run())


def test_a_message_written_before_a_local_arrival_does_not_show_it_away(redis_url: str) -> None:
    """A presence message written before this process counted a socket (its write is on its
    way) would tell that socket its own seat is away: a seat with a local connection is shown
    present, and the local spectators are counted; a seat without one keeps what was heard."""

    async def run() -> None:
        store = Counting(redis_url)
        presence = Presence(store, Metrics(), process_id="latecomer")
        room_id = f"late-{next(ROOMS)}"
        try:
            arrivals = [asyncio.create_task(presence.arrive(room_id, viewer)) for viewer in (1, SPECTATOR)]
            await asyncio.sleep(0)  # counted, not yet written
            assert presence.heard(room_id, Attendance(0, (None, 1234))) == Attendance(1, (None, None))
            assert presence.heard(room_id, Attendance(3, (555, 1234))) == Attendance(3, (555, None))
            assert presence.attendance(room_id) == Attendance(3, (555, None))
            assert presence.heard("another-room", Attendance(0, (7, 8))) == Attendance(0, (7, 8))
            assert [a.away_since[1] for a in await asyncio.gather(*arrivals)] == [None, None]
            presence.leave(room_id, 1)
            await written(store, 2)
            assert presence.heard(room_id, Attendance(1, (555, 999))) == Attendance(1, (555, 999))  # gone: away
        finally:
            await store.close()

    asyncio.run(run())


def test_a_connection_that_goes_while_waiting_does_not_cancel_the_others_write(redis_url: str) -> None:
    async def run() -> None:
        store = Counting(redis_url)
        presence = Presence(store, Metrics(), process_id="canceller")
        room_id = f"cancel-{next(ROOMS)}"
        try:
            gone = asyncio.create_task(presence.arrive(room_id, 0))
            stays = asyncio.create_task(presence.arrive(room_id, 1))
            await asyncio.sleep(0)
            gone.cancel()
            assert (await stays).away_since == (None, None)
            assert gone.cancelled() and store.writes == [(room_id, (0, 1, 1))]
        finally:
            await store.close()

    asyncio.run(run())


def test_stopping_writes_what_waits_at_once(redis_url: str) -> None:
    """A process that stops (its connections closed) writes their leaving before it goes, and
    later changes without waiting."""

    async def run() -> None:
        store = Counting(redis_url)
        presence = Presence(store, Metrics(), process_id="stopper", gather_s=60)
        room_id = f"stop-{next(ROOMS)}"
        try:
            waiting = asyncio.create_task(presence.arrive(room_id, SPECTATOR))
            await asyncio.sleep(0.05)
            assert store.writes == []
            await asyncio.wait_for(presence.stop(), 5)
            assert (await waiting).spectators == 1 and store.writes == [(room_id, (1, 0, 0))]
            presence.leave(room_id, SPECTATOR)
            await written(store, 2)
            assert store.writes[1:] == [(room_id, (0, 0, 0))]
        finally:
            await store.close()

    asyncio.run(run())


def test_the_refresh_keeps_every_local_room_alive_in_batches(redis_url: str) -> None:
    """Fields expire with their TTL unless refreshed; the refresh writes the rooms with local
    connections (more than one pipelined batch here) and only those, and what it hears is
    each room's attendance."""

    async def run() -> None:
        store = Store(redis_url)
        presence = Presence(store, Metrics(), process_id="refresher", ttl_s=3, gather_s=0)
        rooms = [f"refresh-{next(ROOMS)}" for _ in range(REFRESH_BATCH + 30)]
        try:
            for room_id in rooms:
                await presence.arrive(room_id, SPECTATOR)
                await presence.arrive(room_id, 0)
            gone = rooms[-1]
            presence.leave(gone, SPECTATOR)
            presence.leave(gone, 0)
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
        presence = Presence(store, Metrics(), process_id="spreader", ttl_s=3, gather_s=0)
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
        presence = Presence(store, Metrics(), process_id="failing", ttl_s=3, gather_s=0)  # a pass a second
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


def test_a_process_that_died_with_sockets_is_announced_by_the_others_refresh(redis_url: str) -> None:
    """Ben's socket was on a process that died: its field expires, and the next refresh of the
    process holding Anna's socket finds seat 1 away and publishes it, so every process's
    sockets hear "your opponent left" (no arrival or departure would have told them)."""

    async def run() -> list[bytes]:
        store = Store(redis_url)
        here = Presence(store, Metrics(), process_id="survivor", ttl_s=3)
        dead = Presence(store, Metrics(), process_id="dead", ttl_s=1, gather_s=0)
        room_id = f"died-{next(ROOMS)}"
        client = aioredis.Redis.from_url(redis_url)
        pubsub = client.pubsub()
        heard: list[bytes] = []
        try:
            await here.arrive(room_id, 0)
            await dead.arrive(room_id, 1)  # then its process dies: no leave(), no refresh
            assert (await here.read(room_id)).away_since == (None, None)  # both here
            await pubsub.subscribe(channel(room_id))  # what is published from now on
            refresher = asyncio.create_task(here.run())
            for _ in range(80):  # bounded: 8 s (the dead field lives 1 s; a refresh pass is 1 s)
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.1)
                if message is not None:
                    heard.append(message["data"])
                    if presence_of(message["data"]).away_since[1] is not None:
                        break
            refresher.cancel()
            await asyncio.gather(refresher, return_exceptions=True)
            assert here.attendance(room_id).away_since[1] is not None
        finally:
            await pubsub.aclose()
            await client.aclose()
            await store.close()
        return heard

    heard = asyncio.run(run())
    gone = [presence_of(m) for m in heard if is_presence(m) and presence_of(m).away_since[1] is not None]
    assert gone and gone[-1].away_since[0] is None  # Anna is still here, Ben is away

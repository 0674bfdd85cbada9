"""Clock time given back after a store outage, on a real Valkey of the test's own, stopped and
started again on the same port (the shared one serves every other test meanwhile): two room
services stand for two server processes, both see the outage, the sweeper's tick gives the
time back once, and neither gives it back twice.

The services read a test clock, so a 40 s outage takes no 40 s; the store is really away.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from engine import Explore
from engine.clock import Clock
from server.core.commands import Play
from server.core.room import Player, Status
from server.edge import new_game
from server.embedded_redis import EmbeddedRedis
from server.metrics import Metrics
from server.outage import is_outage
from server.store import sweeper
from server.store.cache import RoomCache
from server.store.service import RoomService
from server.store.store import Store

ANNA, BEN = Player("oA", "Anna"), Player("oB", "Ben")
S = 1_000


@pytest.fixture
async def store(own_redis: EmbeddedRedis) -> AsyncIterator[Store]:
    opened = Store(own_redis.url)
    try:
        yield opened
    finally:
        await opened.close()


async def refused_for_outage(call) -> None:  # noqa: ANN001
    try:
        await call
    except Exception as exc:
        assert is_outage(exc), exc
        return
    raise AssertionError("the store answered during the outage")


async def test_the_time_a_clock_ran_during_an_outage_is_given_back_once(own_redis: EmbeddedRedis,
                                                                         store: Store) -> None:
    now = [0]
    a, b = (RoomService(store, RoomCache(), Metrics(), now_ms=lambda: now[0]) for _ in range(2))
    room = await a.create(new_game.duel("brettspielnetz", 11), (ANNA, BEN), clock=Clock.new(30 * S))
    now[0] = room.created_ms + 1 * S
    cells = [c for c in room.game.geo.cells if room.game.is_hidden(c) and c not in room.game.setup.mines]
    await a.act(room.id, ANNA, Play(Explore(cells[0])))
    moved = await a.act(room.id, BEN, Play(Explore(cells[-1])))  # Anna's 30 s run from here
    since = now[0] = now[0] + 2 * S
    moved = await a.act(room.id, ANNA, Play(Explore(cells[1])), moved.version)
    moved = await b.act(room.id, BEN, Play(Explore(cells[-2])), moved.version)
    assert moved.clock.running == 0 and moved.clock.remaining(0, now[0]) == 30 * S - 2 * S
    since = now[0]

    # the store goes away 7 s later; both processes notice (a move through one, a sweep in both)
    now[0] = since + 7 * S
    own_redis.stop()
    await refused_for_outage(a.act(room.id, ANNA, Play(Explore(cells[2])), moved.version))
    await refused_for_outage(sweeper.sweep_once(b))
    assert a.outages.down and b.outages.down
    # 40 s later (Anna's flag would have fallen 21 s into it) it is back
    now[0] = since + 47 * S
    await refused_for_outage(sweeper.sweep_once(a))  # still away at that instant
    own_redis.start()
    now[0] += 1  # the next sweeps, a millisecond later, find the store answering
    await sweeper.sweep_once(b)  # due (the old deadline has passed): its tick gives the time back
    await sweeper.sweep_once(a)  # not due any more: nothing to do
    assert not a.outages.down and not b.outages.down

    after = await a.load(room.id)
    assert after.status is Status.PLAYING  # no timeout for time inside the outage
    assert after.version == moved.version + 1  # one commit gave it back: the sweep of one process
    log = await store.move_log(room.id)
    assert [entry[1] for entry in log].count("resume") == 1
    left = after.clock.remaining(0, now[0])
    assert left == 28 * S - 7 * S  # what Anna had when the store went away, to the millisecond here
    assert after.clock.remaining(1, now[0]) == moved.clock.remaining(1, now[0])  # Ben's: untouched

    # Anna moves 3 s later through the other process: no second refund, her 3 s count
    now[0] += 3 * S
    played = await a.act(room.id, ANNA, Play(Explore(cells[2])), after.version)
    assert played.clock.remaining_ms[0] == left - 3 * S
    assert [entry[1] for entry in await store.move_log(room.id)].count("resume") == 1

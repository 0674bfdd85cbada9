"""server.store.analyses and the store's KEEP_ANALYSIS on the real Valkey: the first writer
wins, the key expires with the room's state, nothing is kept for a room that is gone, and one
process computes a game's analysis once however many ask at the same time."""

from __future__ import annotations

import asyncio
import random

import pytest

from engine import Duel, Explore, Resign
from server.core.commands import Play
from server.core.room import Player
from server.metrics import Metrics
from server.store.analyses import Analyses, NotAnalysed, StoredAnalysis, compute
from server.store.cache import RoomCache
from server.store.keys import analysis_key, state_key
from server.store.service import Retention, RoomService
from server.store.store import Store
from tests.names import unique


async def test_keep_analysis_first_writer_wins_and_expires_with_the_room(redis_url: str) -> None:
    store = Store(redis_url)
    try:
        room_id = unique("an")
        assert await store.keep_analysis(room_id, b"first") is None  # no room: nothing kept
        assert await store.analysis(room_id) is None
        await store.redis.hset(state_key(room_id), mapping={"v": 1, "data": b"x"})
        await store.redis.expire(state_key(room_id), 500)
        assert await store.keep_analysis(room_id, b"first") == b"first"
        assert await store.keep_analysis(room_id, b"second") == b"first"
        assert await store.analysis(room_id) == b"first"
        assert 0 < await store.redis.ttl(analysis_key(room_id)) <= 500
        kept = unique("an")  # a room kept forever: so is its analysis
        await store.redis.hset(state_key(kept), mapping={"v": 1, "data": b"x"})
        assert await store.keep_analysis(kept, b"a") == b"a"
        assert await store.redis.ttl(analysis_key(kept)) == -1
    finally:
        await store.close()


async def test_one_computation_per_game_however_many_ask(redis_url: str) -> None:
    store = Store(redis_url)
    metrics = Metrics()
    analyses = Analyses(store, metrics)
    rooms = RoomService(store, RoomCache(), metrics, retention=Retention(3600, 3600), analyses=analyses)
    try:
        duel = Duel.new(random.Random(11), first=0)
        anna, ben = Player(unique("a"), "Anna"), Player(unique("b"), "Ben")
        room = await rooms.create(duel.copy(), (anna, ben))
        try:
            await analyses.of(room)
            raise AssertionError("a game in progress has no analysis")
        except NotAnalysed as exc:
            assert exc.code == "not_over"
        await rooms.act(room.id, anna, Play(Explore((4, 4))))
        over = await rooms.act(room.id, ben, Play(Resign()))
        found = await asyncio.gather(*(rooms.analysis(room.id) for _ in range(5)), analyses.of(over))
        assert analyses.computed == 1
        assert all(f == found[0] for f in found)
        expected = StoredAnalysis.unpack(compute(over.game.setup, list(over.game.log)))
        assert found[0] == expected and found[0].to_data()["moves"][0]["cell"] == [4, 4]
        assert (await rooms.analysis(room.id)) == expected and analyses.computed == 1
    finally:
        await analyses.close()
        await store.close()


@pytest.mark.parametrize("at_end", [False, True])
async def test_the_analysis_is_made_at_the_end_only_when_asked_to(redis_url: str, at_end: bool) -> None:
    """By default nothing is computed until someone asks (most finished games are never
    opened); with ``at_end`` the end's commit starts it and it is stored without a request."""
    store = Store(redis_url)
    metrics = Metrics()
    analyses = Analyses(store, metrics, at_end=at_end)
    rooms = RoomService(store, RoomCache(), metrics, retention=Retention(3600, 3600), analyses=analyses)
    try:
        anna, ben = Player(unique("a"), "Anna"), Player(unique("b"), "Ben")
        room = await rooms.create(Duel.new(random.Random(12), first=0), (anna, ben))
        await rooms.act(room.id, anna, Play(Explore((4, 4))))
        await rooms.act(room.id, ben, Play(Resign()))
        for _ in range(100):  # bounded: 10 s
            if await store.analysis(room.id) is not None:
                break
            await asyncio.sleep(0.1 if at_end else 0.01)
        assert (await store.analysis(room.id) is not None) is at_end
        assert analyses.computed == (1 if at_end else 0)
    finally:
        await analyses.close()
        await store.close()

"""Where a new version comes from: a pub/sub message when somebody besides the committer listens,
else the committing process hands it to its own feed; and when a room counts as subscribed.

On the real Valkey: the commit script's ``PUBSUB NUMSUB`` decides, so the tests count what is
published with ``PUBSUB NUMSUB`` and real subscribers, never by looking inside the script."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator

import redis.asyncio as aioredis

from engine import Resign
from server.app import Parts
from server.core.commands import Play
from server.core.room import Player, Room
from server.edge import new_game
from server.store.keys import channel, link_channel
from server.store.pubsub import PubSubError, open_pubsub
from server.store.room_feed import Entry
from server.store.store import Store

from ..helpers import pick_move, referee
from .conftest import GatedPubSub, other_process
from .test_hub import recorder, wait_for

ANNA, BEN = Player("gA", "Anna"), Player("gB", "Ben")


async def subscribers(redis_url: str, room_id: str) -> int:
    client = aioredis.Redis.from_url(redis_url)
    try:
        return dict(await client.pubsub_numsub(channel(room_id)))[channel(room_id).encode()]
    finally:
        await client.aclose()


@contextlib.asynccontextmanager
async def watched(parts: Parts, seed: int) -> AsyncIterator[tuple[Room, list]]:
    """A new duel watched here by one recording socket (its snapshot and its presence frame
    in): the room, and the frames the socket got."""
    room = await parts.rooms.create(new_game.duel("brettspielnetz", seed), (ANNA, BEN))
    frames: list = []
    box = recorder(frames)
    writer = asyncio.create_task(box.run())
    try:
        await parts.hub.attach(room.id, box)
        await wait_for(lambda: any(f["t"] == "presence" for f in frames))  # its own message came
        yield room, frames
    finally:
        writer.cancel()
        await parts.hub.detach(room.id, box)


async def explored(parts: Parts, room: Room, seed: int, frames: list) -> Room:
    """Anna's move committed here, once its update reached the socket."""
    moved = await parts.rooms.act(room.id, ANNA, Play(pick_move(referee(seed), random.Random(seed))), room.version)
    await wait_for(lambda: any(f["t"] == "update" and f["v"] == moved.version for f in frames))
    return moved


def versions(frames: list) -> list[int]:
    return [f["v"] for f in frames if f["t"] in ("update", "snapshot")]


async def test_a_commit_nobody_else_listens_to_is_not_published_and_reaches_the_local_socket(
        parts: Parts, redis_url: str) -> None:
    async with watched(parts, 5) as (room, frames):
        assert await subscribers(redis_url, room.id) == 1  # this process's link alone
        heard = parts.hub.stats["messages"]
        moved = await explored(parts, room, 5, frames)
        assert parts.hub.stats["messages"] == heard  # no message came back: none was published
        assert parts.cache.pending() == 0  # nothing waits for one
        assert versions(frames) == [room.version, moved.version]


async def test_with_another_listener_the_commit_is_published_and_the_local_socket_gets_it_once(
        parts: Parts, redis_url: str) -> None:
    elsewhere = open_pubsub(redis_url)  # another process watching the same room
    await elsewhere.connect()
    try:
        async with watched(parts, 6) as (room, frames):
            await elsewhere.subscribe(channel(room.id))
            assert await elsewhere.read() == ("subscribe", channel(room.id), 1)
            heard = parts.hub.stats["messages"]
            moved = await explored(parts, room, 6, frames)
            kind, chan, payload = await asyncio.wait_for(elsewhere.read(), 5)
            while kind == "message" and payload[:1] == b"P":  # presence, not the commit
                kind, chan, payload = await asyncio.wait_for(elsewhere.read(), 5)
            assert (kind, chan) == ("message", channel(room.id)) and isinstance(payload, bytes)
            await wait_for(lambda: parts.hub.stats["messages"] == heard + 1)  # the echo, claimed
            assert versions(frames) == [room.version, moved.version]
    finally:
        await elsewhere.close()


async def test_another_process_commit_still_reaches_a_room_watched_here(parts: Parts) -> None:
    """A process that does not watch the room publishes to whoever does."""
    async with watched(parts, 7) as (room, frames):
        resigned = await other_process(parts.store).act(room.id, BEN, Play(Resign()), room.version)
        await wait_for(lambda: resigned.version in versions(frames))
        assert parts.hub.stats["decoded"] >= 1


async def test_the_script_counts_the_committer_out_only_while_its_link_channel_is_subscribed(
        redis_url: str) -> None:
    """The link and the room's channel on one connection: a link Valkey dropped takes both,
    and a commit that still names it is published to the other listener."""
    store = Store(redis_url)
    room_id = "feedScript01"
    mine, other = open_pubsub(redis_url), open_pubsub(redis_url)
    await mine.connect()
    await other.connect()
    own = link_channel("test-feed-script")
    try:
        await mine.subscribe(own, channel(room_id))
        for chan in (own, channel(room_id)):
            assert (await mine.read())[:2] == ("subscribe", chan)
        alone = await store.commit(room_id, None, 1, b"state", b"entry", b"m1", None, None, own)
        assert alone == (True, 1, False)  # only the committer listens
        await other.subscribe(channel(room_id))
        assert (await other.read())[0] == "subscribe"
        shared = await store.commit(room_id, 1, 2, b"state", b"entry", b"m2", None, None, own)
        assert shared == (True, 2, True)
        assert await asyncio.wait_for(other.read(), 5) == ("message", channel(room_id), b"m2")
        await mine.close()  # the committer's link drops; it has not noticed and names it still
        for _ in range(100):
            if not dict(await store.redis.pubsub_numsub(own))[own.encode()]:
                break
            await asyncio.sleep(0.02)
        dropped = await store.commit(room_id, 2, 3, b"state", b"entry", b"m3", None, None, own)
        assert dropped == (True, 3, True)
        assert await asyncio.wait_for(other.read(), 5) == ("message", channel(room_id), b"m3")
        refused = await store.commit(room_id, 2, 3, b"state", b"entry", b"m4", None, None, own)
        assert refused == (False, 3, False)
    finally:
        await mine.close()
        await other.close()
        await store.redis.delete(*(f"game:{{{room_id}}}:{k}" for k in ("state", "log")))
        await store.close()


async def test_a_room_watched_again_is_live_only_after_its_new_subscription(parts: Parts) -> None:
    """Subscribe, unsubscribe, subscribe again before any confirmation: the first confirmation
    belongs to the subscription the unsubscribe ends, so the room is not live until the third."""
    feed, cache, room_id = parts.hub.feed, parts.cache, "feedLive0001"
    chan = channel(room_id)
    entry = feed.entries[room_id] = Entry()
    cache.watch(room_id)
    try:
        entry.pending = 1
        feed.unsubscribing(room_id)
        feed.entries[room_id] = entry = Entry()  # watched again: its own SUBSCRIBE
        entry.pending = 1
        feed.dispatch("subscribe", chan, 1)  # the first one's
        assert cache.own_channel(room_id) == "" and not entry.ready.is_set()
        feed.dispatch("unsubscribe", chan, 0)
        assert cache.own_channel(room_id) == ""
        feed.dispatch("subscribe", chan, 1)  # its own
        assert cache.own_channel(room_id) == cache.link and entry.ready.is_set()
    finally:
        del feed.entries[room_id]
        cache.unwatch(room_id)


async def test_a_room_left_while_the_link_is_down_is_watched_again_normally(
        gated: tuple[Parts, GatedPubSub]) -> None:
    """The last socket leaves while the link cannot send: the UNSUBSCRIBE never goes out, so no
    confirmation will come; the room watched again must not wait for one (it did: every attach
    after a Redis restart timed out)."""
    parts, gate = gated
    room = await parts.rooms.create(new_game.duel("brettspielnetz", 8), (ANNA, BEN))
    first, again = recorder([]), recorder([])
    await parts.hub.attach(room.id, first)

    async def cannot_send(*_channels: str) -> None:
        raise PubSubError("pub/sub connection is closed")

    gate.unsubscribe = cannot_send  # type: ignore[method-assign]
    await parts.hub.detach(room.id, first)
    assert room.id not in parts.hub.feed.leaving
    attached = await parts.hub.attach(room.id, again, timeout_s=5)
    try:
        assert attached.version == room.version and parts.cache.own_channel(room.id) == parts.cache.link
    finally:
        await parts.hub.detach(room.id, again)

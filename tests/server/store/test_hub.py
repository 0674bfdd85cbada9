"""The hub in-process on the real Valkey: conflicts and slow consumers counted, a version
that reached a socket before its own pub/sub message, a game's sockets attaching together."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator

from engine import SPECTATOR, Resign
from server.app import Parts
from server.core.commands import Play
from server.core.room import Player, Room
from server.edge import new_game
from server.edge.outbox import Outbox
from server.store.keys import unpack
from tests.conftest import app_settings

from ..helpers import pick_move, referee
from .conftest import GatedPubSub, other_process, sample

POLLS = 200  # bounded waits on a condition, 50 ms apart
ANNA, BEN = Player("gA", "Anna"), Player("gB", "Ben")


def outbox(send, maxsize: int = 64) -> Outbox:  # noqa: ANN001 - an async send function
    async def close(_code: int, _reason: str) -> None:
        pass

    return Outbox(SPECTATOR, "msgpack", None, send, close, maxsize=maxsize, inline=app_settings().inline_send)


def recorder(into: list) -> Outbox:
    async def send(frame: bytes) -> None:
        into.append(unpack(frame))

    return outbox(send)


async def wait_for(condition) -> None:  # noqa: ANN001 - a predicate
    for _ in range(POLLS):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition never met")


async def test_a_change_decided_on_a_cache_that_is_behind_loses_the_race_and_is_decided_again(
        gated: tuple[Parts, GatedPubSub]) -> None:
    parts, gate = gated
    metrics = parts.rooms.metrics
    room = await parts.rooms.create(new_game.duel("brettspielnetz", 3), (ANNA, BEN))
    box = recorder([])
    writer = asyncio.create_task(box.run())
    try:
        await parts.hub.attach(room.id, box)  # watched here: the cache holds version 1
        gate.open = asyncio.Event()  # hold the messages: the cache stays at version 1
        await other_process(parts.store).act(room.id, ANNA, Play(pick_move(referee(3), random.Random(3))),
                                             room.version)
        assert parts.cache.latest(room.id).version == room.version
        resigned = await parts.rooms.act(room.id, BEN, Play(Resign()), None)  # decided on v1, lost, again on v2
        assert resigned.version == room.version + 2 and resigned.game.outcome.winner == 0
        assert sample(metrics, "mineduel_commit_conflicts_total") == 1
        assert parts.rooms.stats["conflicts"] == 1
        gate.open.set()
        await wait_for(lambda: box.version == resigned.version)
    finally:
        writer.cancel()
        await parts.hub.detach(room.id, box)


async def test_a_connection_that_stops_reading_is_dropped_as_a_slow_consumer(parts: Parts, caplog) -> None:
    metrics = parts.rooms.metrics
    other = other_process(parts.store)
    stuck = asyncio.Event()

    async def never_sent(_frame) -> None:  # a peer that stopped reading: the send never completes
        await stuck.wait()

    box = outbox(never_sent, maxsize=2)
    writer = asyncio.create_task(box.run())
    try:
        room = await parts.rooms.create(new_game.duel("brettspielnetz", 3), (ANNA, BEN))
        duel, rng = referee(3), random.Random(3)
        caplog.set_level(logging.INFO, logger="mineduel")
        await parts.hub.attach(room.id, box)  # snapshot + presence: the queue is full
        for _ in range(4):
            seat = duel.to_move
            move = pick_move(duel, rng)
            await other.act(room.id, (ANNA, BEN)[seat], Play(move), None)
            duel.apply(seat, move)
            if box.closed:
                break
        await wait_for(lambda: sample(metrics, "mineduel_slow_consumers_dropped_total") == 1)
        assert box.close_code == 1013
        lines = [r.getMessage() for r in caplog.records if "event=slow_consumer_dropped" in r.getMessage()]
        assert len(lines) == 1 and f"room={room.id}" in lines[0]
    finally:
        stuck.set()
        writer.cancel()
        await parts.hub.detach(room.id, box)


async def test_a_version_loaded_before_its_message_arrives_still_reaches_every_socket(
        gated: tuple[Parts, GatedPubSub]) -> None:
    """A refresh (after an outage) or a room's first attach may load a room version from Redis
    before that version's pub/sub message reaches the hub. When the message comes, the sockets
    still behind must get it (as a snapshot) instead of being skipped — which left them stuck
    until the next move. Made deterministic by holding the hub's messages at a gate."""
    parts, gate = gated
    got: dict[str, list] = {"a": [], "b": []}
    a, b = recorder(got["a"]), recorder(got["b"])
    writers = [asyncio.create_task(a.run()), asyncio.create_task(b.run())]
    try:
        room = await parts.rooms.create(new_game.duel("brettspielnetz", 3), (ANNA, BEN))
        await parts.hub.attach(room.id, a)
        loads = parts.rooms.stats["loads"]
        await parts.hub.attach(room.id, b)  # a later attach takes the cached room
        assert a.version == b.version == room.version and parts.rooms.stats["loads"] == loads
        gate.open = asyncio.Event()  # hold the messages: the next commit's waits at the gate
        await other_process(parts.store).act(room.id, ANNA, Play(pick_move(referee(3), random.Random(3))),
                                             room.version)
        parts.hub.refresh_later(room.id, b)  # loads v+1 from Redis before its message is read
        await wait_for(lambda: b.version == room.version + 1)
        assert a.version == room.version
        gate.open.set()  # the message arrives now
        await wait_for(lambda: a.version == room.version + 1)
        assert any(f["t"] == "snapshot" and f["v"] == room.version + 1 for f in got["a"])
    finally:
        for w in writers:
            w.cancel()
        await parts.hub.detach(room.id, a)
        await parts.hub.detach(room.id, b)


async def test_a_games_sockets_attaching_together_load_the_room_once(parts: Parts) -> None:
    """A rematch opens its five sockets within a few ms: one load (begun once the room's
    subscription was confirmed) serves them all, and each gets the snapshot of its class."""
    got: list[list] = [[] for _ in range(5)]
    boxes = [recorder(into) for into in got]
    writers = [asyncio.create_task(box.run()) for box in boxes]
    try:
        room = await parts.rooms.create(new_game.duel("brettspielnetz", 4), (ANNA, BEN))
        loads = parts.rooms.stats["loads"]
        rooms = await asyncio.gather(*(parts.hub.attach(room.id, box) for box in boxes))
        assert parts.rooms.stats["loads"] == loads + 1
        assert {r.version for r in rooms} == {room.version}
        await wait_for(lambda: all(any(f["t"] == "presence" for f in into) for into in got))
        assert all(into[0]["t"] == "snapshot" and into[0]["v"] == room.version for into in got)
        assert all(f["spectators"] == 5 for into in got for f in into if f["t"] == "presence")
    finally:
        for w in writers:
            w.cancel()
        for box in boxes:
            await parts.hub.detach(room.id, box)


@contextlib.asynccontextmanager
async def a_finished_game_watched_here(parts: Parts) -> AsyncIterator[tuple[Room, Outbox]]:
    """A duel Anna resigned, with one socket of this process on it (its cache holds the end)."""
    box = recorder([])
    writer = asyncio.create_task(box.run())
    room = await parts.rooms.create(new_game.duel("brettspielnetz", 4), (ANNA, BEN))
    try:
        await parts.hub.attach(room.id, box)
        over = await parts.rooms.act(room.id, ANNA, Play(Resign()))
        await wait_for(lambda: parts.cache.latest(room.id).version == over.version)
        yield over, box
    finally:
        writer.cancel()
        await parts.hub.detach(room.id, box)


async def test_a_watched_games_rematch_is_offered_and_accepted_without_loading_it(parts: Parts) -> None:
    """The rematch calls decide on the cached room (a finished game's load and decode was the
    dearest part of a rematch under load); each commit's compare-and-set still guards them."""
    async with a_finished_game_watched_here(parts) as (over, _box):
        loads = parts.rooms.stats["loads"]
        offered = await parts.rooms.rematch(over.id, BEN, new_game.rematch_of)
        assert offered.rematch_offer == 1
        await wait_for(lambda: parts.cache.latest(over.id).version == offered.version)
        fresh = await parts.rooms.rematch(over.id, ANNA, new_game.rematch_of)
        assert fresh.id != over.id and fresh.players == (BEN, ANNA)
        assert parts.rooms.stats["loads"] == loads
        linked = await parts.rooms.load(over.id)
        assert linked.rematch == fresh.id and linked.version == offered.version + 1


async def test_a_rematch_decided_on_a_cache_that_is_behind_accepts_the_offer_it_had_not_seen(
        gated: tuple[Parts, GatedPubSub]) -> None:
    """Ben's offer comes from another process while this one's messages are held: Anna's call
    finds no offer in the cache and offers herself, loses the compare-and-set, and, decided
    again on the stored room, accepts Ben's: one new game, linked once."""
    parts, gate = gated
    async with a_finished_game_watched_here(parts) as (over, box):
        gate.open = asyncio.Event()  # hold the messages: the cache stays at the end
        offered = await other_process(parts.store).rematch(over.id, BEN, new_game.rematch_of)
        assert offered.rematch_offer == 1 and parts.cache.latest(over.id).version == over.version
        fresh = await parts.rooms.rematch(over.id, ANNA, new_game.rematch_of)
        linked = await parts.rooms.load(over.id)
        assert fresh.id != over.id and linked.rematch == fresh.id and linked.version == offered.version + 1
        assert parts.rooms.stats["conflicts"] >= 1
        gate.open.set()
        await wait_for(lambda: box.version == linked.version)

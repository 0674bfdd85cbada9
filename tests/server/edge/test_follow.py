"""A socket following its game to the rematch (``server.edge.follow``), in-process on the real
Valkey: the move itself, a move that cannot be made, and a socket closing while one is under way."""

from __future__ import annotations

import asyncio

from engine import SPECTATOR, Resign
from server.app import Parts
from server.core.commands import Play
from server.core.room import Player
from server.edge import new_game
from server.edge.follow import Whereabouts
from tests.server.store.conftest import GatedPubSub, other_process
from tests.server.store.test_hub import recorder, wait_for

ANNA, BEN = Player("gA", "Anna"), Player("gB", "Ben")


async def finished_and_linked(parts: Parts) -> tuple[str, str]:
    room = await parts.rooms.create(new_game.duel("brettspielnetz", 5), (ANNA, BEN))
    await parts.rooms.act(room.id, ANNA, Play(Resign()))
    await parts.rooms.rematch(room.id, BEN, new_game.rematch_of)
    fresh = await parts.rooms.rematch(room.id, ANNA, new_game.rematch_of)
    return room.id, fresh.id


async def test_a_players_connection_moves_to_its_seat_in_the_rematch(parts: Parts) -> None:
    old_id, new_id = await finished_and_linked(parts)
    got: list = []
    box = recorder(got)
    box.player_id = BEN.id
    box.viewer = 1
    writer = asyncio.create_task(box.run())
    where = Whereabouts(parts.hub, box, old_id, follow=True)
    try:
        await parts.hub.attach(old_id, box)
        where.attached()  # linked already: it moves at once
        await wait_for(lambda: where.room_id == new_id and any(f["t"] == "snapshot" and f["room"]["id"] == new_id
                                                               for f in got))
        await wait_for(lambda: parts.hub.census().rooms == 1)  # the rematch's, not the old game's
        assert parts.hub.room(new_id) is not None and parts.hub.room(old_id) is None
        assert box.viewer == 0  # Ben moves first in the rematch
        moved = next(f for f in got if f["t"] == "snapshot" and f["room"]["id"] == new_id)
        assert moved["you"] == 0 and moved["v"] == box.version
    finally:
        await where.leave()
        writer.cancel()
    assert parts.hub.census().rooms == 0


async def test_a_move_that_cannot_be_made_closes_the_connection_and_leaves_no_room_watched(
        parts: Parts) -> None:
    room = await parts.rooms.create(new_game.duel("brettspielnetz", 5), (ANNA, BEN))
    box = recorder([])
    writer = asyncio.create_task(box.run())
    where = Whereabouts(parts.hub, box, room.id, follow=True)
    try:
        await parts.hub.attach(room.id, box)
        where.attached()
        where.follow("no-such-game")  # (a link always points at a room; an outage fails the same way)
        await wait_for(lambda: box.close_code == 1011)
    finally:
        await where.leave()  # what the socket's handler does as it closes
        writer.cancel()
    assert parts.hub.census().rooms == 0


async def test_a_link_that_arrives_as_a_snapshot_is_followed_too(gated: tuple[Parts, GatedPubSub]) -> None:
    """The link committed while this process's messages were held: a refresh (after an
    outage, say) brings the linked version as a snapshot, and the connection follows from it;
    the held messages, when they come, move nothing twice."""
    parts, gate = gated
    room = await parts.rooms.create(new_game.duel("brettspielnetz", 5), (ANNA, BEN))
    await parts.rooms.act(room.id, ANNA, Play(Resign()))
    got: list = []
    box = recorder(got)
    writer = asyncio.create_task(box.run())
    where = Whereabouts(parts.hub, box, room.id, follow=True)
    try:
        await parts.hub.attach(room.id, box)
        where.attached()
        gate.open = asyncio.Event()  # hold the messages
        other = other_process(parts.store)
        await other.rematch(room.id, BEN, new_game.rematch_of)
        fresh = await other.rematch(room.id, ANNA, new_game.rematch_of)
        parts.hub.refresh_later(room.id, box)
        # the move starts from the refresh's snapshot (it ends once the rematch's subscription is
        # confirmed, which waits behind the held messages on the one link)
        await wait_for(lambda: where.room_id == fresh.id)
        assert any(f["t"] == "snapshot" and f["room"]["rematch"] == fresh.id for f in got)
        gate.open.set()
        await wait_for(lambda: box.version == fresh.version and parts.hub.census().rooms == 1)
        assert sum(1 for f in got if f["t"] == "snapshot" and f["room"]["id"] == fresh.id) == 1
    finally:
        await where.leave()
        writer.cancel()


async def test_a_connection_on_its_way_to_the_rematch_sees_no_seat_of_it_before_it_arrives(
        gated: tuple[Parts, GatedPubSub]) -> None:
    """While the move is under way (the rematch's subscription not yet confirmed), a snapshot
    of the rematch that reaches the connection (the answer to a move sent with the old game's
    version) is a spectator's: never rendered for the seat it held in the old game, which in
    the rematch is the opponent's (their wrong marks). Its own seat's snapshot follows."""
    parts, gate = gated
    room = await parts.rooms.create(new_game.duel("brettspielnetz", 5), (ANNA, BEN))
    await parts.rooms.act(room.id, ANNA, Play(Resign()))
    got: list = []
    box = recorder(got)
    box.player_id, box.viewer = ANNA.id, 0
    writer = asyncio.create_task(box.run())
    where = Whereabouts(parts.hub, box, room.id, follow=True)
    try:
        await parts.hub.attach(room.id, box)
        where.attached()
        gate.open = asyncio.Event()  # hold the messages: the move waits for its subscription
        other = other_process(parts.store)
        await other.rematch(room.id, BEN, new_game.rematch_of)
        fresh = await other.rematch(room.id, ANNA, new_game.rematch_of)
        parts.hub.refresh_later(room.id, box)  # the link reaches the connection
        await wait_for(lambda: where.room_id == fresh.id)
        parts.hub.send_snapshot(box, fresh)  # what a stale move's answer sends meanwhile
        await wait_for(lambda: any(f["t"] == "snapshot" and f["room"]["id"] == fresh.id for f in got))
        early = next(f for f in got if f["t"] == "snapshot" and f["room"]["id"] == fresh.id)
        assert early["you"] == SPECTATOR
        gate.open.set()
        await wait_for(lambda: any(f["t"] == "snapshot" and f["room"]["id"] == fresh.id and f["you"] == 1
                                   for f in got))
        assert box.viewer == 1  # Anna is seat 1 in the rematch
    finally:
        await where.leave()
        writer.cancel()

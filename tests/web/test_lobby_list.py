"""The lobby's list over a Valkey of the test's own (so the list holds only this test's rooms):
abandoned rooms never hide the games people are at, nor their challenges; the count is not
capped by one chunk of the read; a player back at an unlisted game puts it back; a private
room is never listed. Time passes as the wall clock plus an hour (``LATER``), never a fake
clock: the presence hashes are written by the real one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from engine import SPECTATOR, Resign
from engine.clock import Clock
from server.app import Parts
from server.core.commands import Play
from server.core.computer import computer
from server.core.room import Player, Room, Status
from server.edge import new_game
from server.edge.outbox import Outbox
from server.embedded_redis import EmbeddedRedis
from server.store.store import LOBBY_MAX_AGE_MS
from server.web import lobby
from server.web.lobby import Lobby, _unlist, read_lobby
from tests.conftest import app_settings
from tests.server.store.conftest import running_parts

CHUNK = 3
"""The read's chunk in these tests: fewer than the abandoned rooms made after the one that counts."""
ABANDONED = 5
HOUR_MS = 3_600_000
POLLS = 200  # bounded waits, 50 ms apart


def later() -> int:
    """An hour from now: every grace of the lobby (5 s, 30 s, 60 s) is over."""
    return time.time_ns() // 1_000_000 + HOUR_MS


@pytest.fixture
async def parts(own_redis: EmbeddedRedis) -> AsyncIterator[Parts]:
    async with running_parts(own_redis.url) as built:
        yield built


_made = 0


def person(name: str) -> Player:
    global _made
    _made += 1
    return Player(f"g{name}{_made}", name)


async def listed_game(parts: Parts, players: tuple[Player | None, ...], listed: bool = True,
                      clock: Clock | None = None) -> Room:
    """A duel (untimed unless ``clock``: no first-move abort to race with) put on the lobby's list
    as every route does."""
    room = await parts.rooms.create(new_game.duel("brettspielnetz", 6), players, clock, listed=listed)
    await parts.rooms.aftermath.list(room)
    return room


async def _send(_frame: bytes) -> None:
    pass


async def _close(_code: int, _reason: str) -> None:
    pass


async def connect(parts: Parts, room: Room, player: Player | None) -> Outbox:
    """A socket to ``room`` (as the browser's or the API's socket attaches it): ``player``'s
    on their seat, or a spectator's."""
    viewer = SPECTATOR if player is None else room.viewer_of(player.id)
    box = Outbox(viewer, "msgpack", player and player.id, _send, _close, inline=app_settings().inline_send)
    await parts.hub.attach(room.id, box)
    return box


async def listed(parts: Parts) -> list[str]:
    return await parts.store.listed_rooms(10_000)


async def read(parts: Parts) -> Lobby:
    return await read_lobby(parts, 0, later(), chunk=CHUNK)


async def away(parts: Parts, room: Room, seats: tuple[int, ...]) -> None:
    """Until the presence hash says each of ``seats`` has had no connection (bounded)."""
    for _ in range(POLLS):
        [fields] = await parts.store.attendance_fields([room.id])
        if all(f"away:{seat}".encode() in fields for seat in seats):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the seats never went away: {fields}")


async def test_games_people_are_at_stay_listed_and_counted_whatever_was_abandoned_after_them(parts: Parts) -> None:
    """The probe's first case, smaller: games played by players who stay connected, then more
    untimed games against the computer than a chunk of the read, never opened. The games
    being played stay shown and all of them are counted; the abandoned ones leave the list."""
    games = []
    for _ in range(CHUNK + 1):  # more games in play than one chunk holds: the count is not capped by it
        p, q = person("P"), person("Q")
        room = await listed_game(parts, (p, q))
        await connect(parts, room, p)
        await connect(parts, room, q)
        games.append(room)
    abandoned = [await listed_game(parts, (person("Walker"), computer(1))) for _ in range(ABANDONED)]
    assert all(room.status is Status.PLAYING for room in games + abandoned)

    lobby = await read(parts)
    assert [row.id for row in lobby.live] == [room.id for room in reversed(games)]  # newest first
    assert lobby.playing == len(games) > CHUNK
    assert set(await listed(parts)) == {room.id for room in games}  # the abandoned ones are off the list
    again = await read(parts)
    assert [row.id for row in again.live] == [row.id for row in lobby.live] and again.playing == len(games)


async def test_a_challenge_whose_creator_is_there_stays_listed_whatever_was_abandoned_after_it(parts: Parts) -> None:
    """The probe's second case, smaller: C's challenge, C on its page; then more challenges than
    a chunk of the read whose creators never open theirs. C's is shown on every read."""
    c = person("C")
    mine = await listed_game(parts, (c, None))
    await connect(parts, mine, c)
    abandoned = [await listed_game(parts, (person("Gone"), None)) for _ in range(ABANDONED)]
    assert all(room.status is Status.WAITING for room in abandoned)

    for _ in range(2):
        lobby = await read(parts)
        assert [row.id for row in lobby.challenges] == [mine.id] and lobby.playing == 0
        assert await listed(parts) == [mine.id]


async def test_a_game_its_players_left_leaves_the_list_and_comes_back_with_a_player(parts: Parts) -> None:
    p, q = person("P"), person("Q")
    room = await listed_game(parts, (p, q))
    boxes = [await connect(parts, room, p), await connect(parts, room, q)]
    for box in boxes:
        await parts.hub.detach(room.id, box)
    await away(parts, room, (0, 1))

    lobby = await read(parts)  # both gone for an hour
    assert lobby.live == () and lobby.playing == 0 and room.id not in await listed(parts)
    assert (await parts.rooms.load(room.id)).status is Status.PLAYING  # unlisted, not ended

    await connect(parts, room, q)  # Q opens the game again
    assert room.id in await listed(parts)
    lobby = await read(parts)
    assert [row.id for row in lobby.live] == [room.id] and lobby.playing == 1


async def test_a_game_older_than_the_list_s_week_stays_listed_once_its_player_is_back(parts: Parts) -> None:
    """A correspondence game lasts longer than the 7 days a listing keeps: trimmed off the list by
    a later listing, it is put back when a player connects, as listed then, and a later listing
    leaves it there (it was put back by its creation time and trimmed again at once)."""
    p, q = person("P"), person("Q")
    wall = parts.rooms.now_ms
    parts.rooms.now_ms = lambda: wall() - LOBBY_MAX_AGE_MS - HOUR_MS  # made eight days ago
    try:
        old = await listed_game(parts, (p, q))
    finally:
        parts.rooms.now_ms = wall
    await listed_game(parts, (person("R"), person("S")))  # any listing trims what is older than 7 days
    assert old.id not in await listed(parts)
    await connect(parts, old, p)
    assert old.id in await listed(parts)
    await listed_game(parts, (person("T"), person("U")))
    assert old.id in await listed(parts)
    assert old.id in [row.id for row in (await read(parts)).live]


async def test_a_challenge_its_creator_left_comes_back_when_they_do(parts: Parts) -> None:
    c = person("C")
    room = await listed_game(parts, (None, c))
    await parts.hub.detach(room.id, await connect(parts, room, c))
    await away(parts, room, (1,))
    assert (await read(parts)).challenges == () and await listed(parts) == []

    await connect(parts, room, c)
    assert [row.id for row in (await read(parts)).challenges] == [room.id]


async def test_a_correspondence_challenge_stays_listed_when_its_creator_leaves(parts: Parts) -> None:
    c = person("C")
    posted = await listed_game(parts, (None, c), clock=Clock.correspondence(3))
    await parts.hub.detach(posted.id, await connect(parts, posted, c))
    await away(parts, posted, (1,))
    assert [row.id for row in (await read(parts)).challenges] == [posted.id]  # an hour later, still there
    assert posted.id in await listed(parts)


async def test_the_newest_challenges_are_shown_up_to_the_rows_bound(parts: Parts) -> None:
    posted = []
    for _ in range(3):
        posted.append(await listed_game(parts, (None, person("C")), clock=Clock.correspondence(1)))
        await asyncio.sleep(0.005)  # (listed by creation time, to the ms)
    shown = [row.id for row in (await read_lobby(parts, 0, later(), chunk=CHUNK, challenge_rows=2)).challenges]
    assert len(shown) == 2 and posted[0].id not in shown
    assert len((await read(parts)).challenges) == 3 <= lobby.CHALLENGE_ROWS  # the page's bound


async def test_a_room_unlisted_as_its_player_comes_back_is_put_back_by_the_read(parts: Parts) -> None:
    """The read found everybody away, and the player's socket came before its removal (its
    own put-back changed nothing then): the read looks again after the removal and puts it back.
    A room still left is not."""
    p, q = person("P"), person("Q")
    back = await listed_game(parts, (p, q))
    left = await listed_game(parts, (person("R"), person("S")))
    await connect(parts, back, p)  # came back just before the removal
    await _unlist(parts, [], [back, left], later())
    assert await listed(parts) == [back.id]


async def test_a_private_room_is_never_listed_even_with_its_players_there(parts: Parts) -> None:
    p, q = person("P"), person("Q")
    hidden = await listed_game(parts, (p, None), listed=False)
    await connect(parts, hidden, p)
    await parts.rooms.aftermath.list(hidden, again=True)
    assert hidden.id not in await listed(parts)
    playing = await listed_game(parts, (p, q), listed=False)
    await connect(parts, playing, p)
    await connect(parts, playing, q)
    assert playing.id not in await listed(parts)
    lobby = await read(parts)
    assert lobby.live == () and lobby.challenges == () and lobby.playing == 0


async def test_a_spectator_or_a_finished_game_puts_nothing_back(parts: Parts) -> None:
    p, q = person("P"), person("Q")
    room = await listed_game(parts, (p, q))
    await parts.store.unlist([room.id])
    await connect(parts, room, None)
    assert room.id not in await listed(parts)  # a spectator is nobody at the board
    over = await parts.rooms.act(room.id, p, Play(Resign()))
    assert over.status is Status.OVER
    await connect(parts, over, q)
    assert room.id not in await listed(parts)

"""A player's games on the real Valkey: the lists after joins, moves and ends, written by the
room service after its commits; whose turn each shows; the finished list newest first and
bounded; writes arriving out of order; computer players; failures that never fail a move."""

from __future__ import annotations

import itertools
import random
import secrets
import time
from typing import Any

from engine import Abort, Duel, Explore, Mark, Resign
from engine.clock import Clock
from server.app import Parts
from server.core.commands import Join, Play
from server.core.computer import computer
from server.core.room import Player, Room, Status
from server.edge import new_game
from server.metrics import Metrics
from server.store.cache import RoomCache
from server.store.keys import (
    games_on_key,
    games_over_key,
    games_summary_key,
    log_key,
    state_key,
)
from server.store.player_games import PlayerGames
from server.store.service import RoomService
from tests.server.store.conftest import sample


def people(*names: str) -> list[Player]:
    return [Player("g" + secrets.token_hex(5), name) for name in names]


class Ticking:
    """A wall clock that moves on one second per reading (ends never tie)."""

    def __init__(self) -> None:
        self.count = itertools.count(time.time_ns() // 1_000_000, 1000)

    def __call__(self) -> int:
        return next(self.count)


def service(parts: Parts, **games: Any) -> RoomService:
    clock = Ticking()
    return RoomService(parts.store, RoomCache(), Metrics(), now_ms=clock,
                       games=PlayerGames(parts.store, Metrics(), **games) if games else None)


def safe_cell(room: Room, rng: random.Random) -> Explore | Mark:
    game: Duel = room.game  # type: ignore[assignment]
    hidden = [c for c in game.geo.cells if game.is_hidden(c)]
    cell = rng.choice(hidden)
    return Mark(cell) if cell in game.setup.mines else Explore(cell)


async def test_the_lists_follow_joins_moves_and_the_end(parts: Parts) -> None:
    rooms = service(parts)
    games = rooms.games
    anna, ben = people("Anna", "Ben")
    room = await rooms.create(new_game.duel("brettspielnetz", 11), (anna, None), Clock.correspondence(2), rated=True)
    [waiting] = await games.ongoing(anna.id)
    assert waiting["id"] == room.id and waiting["status"] == "waiting" and waiting["your_turn"] is False
    assert await games.ongoing(ben.id) == []
    room = await rooms.act(room.id, ben, Join())
    rng = random.Random(5)
    for _ in range(30):  # whose turn each list shows flips with the room's
        for player in (anna, ben):
            [entry] = await games.ongoing(player.id)
            assert entry["status"] == "playing" and entry["v"] >= room.version - 1
            assert entry["your_turn"] == (room.game.to_move == room.seat_of(player))
            assert entry["opponent"]["id"] == (ben if player is anna else anna).id
        if room.status is Status.OVER:
            break
        room = await rooms.act(room.id, room.players[room.game.to_move], Play(safe_cell(room, rng)))
    if room.status is not Status.OVER:
        room = await rooms.act(room.id, ben, Play(Resign()))
    for player in (anna, ben):
        assert await games.ongoing(player.id) == []
        [entry] = await games.finished(player.id)
        assert entry["id"] == room.id and entry["status"] == "over" and "your_turn" not in entry
        assert entry["ended_ms"] == room.ended_ms and entry["scores"] == list(room.game.scores)
    results = {(await games.finished(p.id))[0]["result"] for p in (anna, ben)}
    assert results in ({"won", "lost"}, {"drawn"})


async def test_a_challenge_called_off_leaves_no_finished_game(parts: Parts) -> None:
    """Nobody took it: no game was played, so none is listed (the player's public page would
    show "vs (open seat), aborted" and give it a finished game's place)."""
    rooms = service(parts)
    [anna] = people("Anna")
    room = await rooms.create(new_game.duel("brettspielnetz", 11), (anna, None), Clock.new(300_000, 3_000))
    assert [g["id"] for g in await rooms.games.ongoing(anna.id)] == [room.id]
    over = await rooms.act(room.id, anna, Play(Abort()))
    assert over.status is Status.OVER
    assert await rooms.games.ongoing(anna.id) == [] and await rooms.games.finished(anna.id) == []


async def test_finished_games_come_newest_first_and_the_oldest_go(parts: Parts) -> None:
    rooms = service(parts, keep=3)
    anna, ben, cleo = people("Anna", "Ben", "Cleo")
    ended = []
    for i in range(5):
        opponent = ben if i % 2 else cleo
        room = await rooms.create(new_game.duel("coan", i), (anna, opponent))
        ended.append(await rooms.act(room.id, opponent, Play(Resign())))
    finished = await rooms.games.finished(anna.id, 10)
    assert [e["id"] for e in finished] == [r.id for r in reversed(ended)][:3]
    assert [e["ended_ms"] for e in finished] == sorted((e["ended_ms"] for e in finished), reverse=True)
    assert all(e["result"] == "won" for e in finished)
    assert [e["id"] for e in await rooms.games.finished(anna.id, 2)] == [r.id for r in reversed(ended)][:2]
    redis = parts.store.redis
    assert await redis.zcard(games_over_key(anna.id)) == 3 and await redis.hlen(games_summary_key(anna.id)) == 3
    ongoing, over = await rooms.games.overview(anna.id, 10)
    assert ongoing == [] and over == finished


async def test_finished_games_of_one_millisecond_are_paged_each_once(parts: Parts) -> None:
    """Games that end in the same millisecond (a player resigning several at once): a page's
    cursor carries the last game's id too, so the next page starts right after it (a time alone
    skipped the rest of that millisecond's games: an outside probe reached 16 of 21)."""
    frozen = RoomService(parts.store, RoomCache(), Metrics(), now_ms=lambda: 1_700_000_000_000)
    anna = people("Anna")[0]
    ended = []
    for i in range(7):
        opponent = people("Ben")[0]
        room = await frozen.create(new_game.duel("coan", i), (anna, opponent))
        ended.append((await frozen.act(room.id, opponent, Play(Resign()))).id)
    for count in (1, 2, 3, 5, 7, 8):
        seen, cursor = [], None
        for _ in range(10):  # (bounded)
            page, cursor = await frozen.games.finished_page(anna.id, count, cursor)
            seen += [e["id"] for e in page]
            if cursor is None:
                break
        assert sorted(seen) == sorted(ended) and len(seen) == len(set(seen)), count
    everything, _ = await frozen.games.finished_page(anna.id, 100)
    assert [e["id"] for e in everything] == seen  # one order, page after page
    before_then, _ = await frozen.games.finished_page(anna.id, 100, "1700000000000")  # a time alone: what ended before
    assert before_then == []


async def test_writes_arriving_late_never_undo_newer_ones(parts: Parts) -> None:
    """Two processes may write one room's versions in any order: an older version never
    replaces a newer entry, and nothing moves a finished game back to the ongoing list."""
    rooms = service(parts)
    anna, ben = people("Anna", "Ben")
    waiting = await rooms.create(new_game.duel("brettspielnetz", 3), (anna, None))
    playing = await rooms.act(waiting.id, ben, Join())
    assert await rooms.games.record(waiting)  # late: version 1 after version 2
    [entry] = await rooms.games.ongoing(anna.id)
    assert entry["v"] == playing.version and entry["status"] == "playing"
    over = await rooms.act(waiting.id, anna, Play(Resign()))
    assert await rooms.games.record(playing)  # late again, after the end
    assert await rooms.games.ongoing(anna.id) == []
    assert [e["v"] for e in await rooms.games.finished(anna.id)] == [over.version]
    assert await rooms.games.record(over)  # the end written twice (a settle retried): once listed
    assert [e["id"] for e in await rooms.games.finished(anna.id)] == [over.id]


async def test_computer_players_have_no_lists(parts: Parts) -> None:
    rooms = service(parts)
    [anna] = people("Anna")
    bot = computer(1)
    room = await rooms.create(new_game.duel("brettspielnetz", 2), (anna, bot), Clock.new(300_000))
    await rooms.act(room.id, anna, Play(Resign()))
    assert [e["id"] for e in await rooms.games.finished(anna.id)] == [room.id]
    assert [e["opponent"] for e in await rooms.games.finished(anna.id)] == [bot.to_data()]
    redis = parts.store.redis
    for key in (games_on_key(bot.id), games_over_key(bot.id), games_summary_key(bot.id)):
        assert not await redis.exists(key)
    solo = await rooms.create(new_game.classic(9, 9, 10, False, 1), (anna,))
    await rooms.act(solo.id, anna, Play(Resign()))
    assert [e["id"] for e in await rooms.games.finished(anna.id)] == [room.id]  # the classic game is not listed


async def test_an_ongoing_game_whose_room_expired_is_dropped_when_read(parts: Parts) -> None:
    anna, = people("Anna")
    rooms = service(parts)
    room = await rooms.create(new_game.duel("brettspielnetz", 8), (anna, None))
    assert [e["id"] for e in await rooms.games.ongoing(anna.id)] == [room.id]
    await parts.store.redis.delete(state_key(room.id), log_key(room.id))  # its retention ran out
    assert await rooms.games.ongoing(anna.id) == []
    assert not await parts.store.redis.hexists(games_on_key(anna.id), room.id)


async def test_keys_expire_with_the_rooms_retention(parts: Parts) -> None:
    anna, = people("Anna")
    rooms = service(parts, finished_ttl_s=100)
    await rooms.create(new_game.duel("brettspielnetz", 8), (anna, None))
    assert 0 < await parts.store.redis.pttl(games_on_key(anna.id)) <= 100_000


class BrokenLink:
    async def evalsha(self, script: str, keys: list[str], args: list[Any]) -> Any:
        raise ConnectionError("the index is away")


class BrokenStore:
    def __init__(self, store: Any) -> None:
        self.link, self.redis = BrokenLink(), store.redis


async def test_a_failed_write_never_fails_the_move(parts: Parts) -> None:
    metrics = Metrics()
    rooms = RoomService(parts.store, RoomCache(), metrics, games=PlayerGames(BrokenStore(parts.store), metrics))
    anna, ben = people("Anna", "Ben")
    room = await rooms.create(new_game.duel("brettspielnetz", 9), (anna, None))
    joined = await rooms.act(room.id, ben, Join())
    assert joined.status is Status.PLAYING
    assert sample(metrics, "mineduel_settle_failures_total", what="games") == 2
    assert await PlayerGames(parts.store, metrics).ongoing(anna.id) == []

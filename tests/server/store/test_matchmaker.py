"""The pairing service (:class:`server.store.matchmaker.Pairing`) as two processes have it: two
instances, each with its own Redis client and pub/sub link, on the real Valkey, over a hash tag
of the test's own. Rooms are stood in for by their state key (what ``room_exists`` reads), so
the recovery paths can make an opener fail."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest
import redis.asyncio as aioredis

from server.core.pools import POOLS, Pool, Window
from server.core.room import Player
from server.edge.api_pairing import paired_answer
from server.metrics import Metrics
from server.store.keys import (
    paired_key,
    pool_key,
    seekers_key,
    seeks_key,
    seeks_live_key,
    state_key,
)
from server.store.matchmaker import Pairing
from server.store.pairing import Pair, PairingStore, Reply, Ticket
from server.store.pubsub import open_pubsub
from server.store.seek_ends import AlreadySeeking, Paired, Unpaired
from tests.server.store.conftest import PubSubOver

CASUAL = POOLS["live-5+3/coan/casual"]
RATED = POOLS["live-5+3/coan/rated"]
GRACE_MS = 300
TIMED_OUT, CANCELLED = Unpaired.TIMED_OUT, Unpaired.CANCELLED


@dataclass
class Games:
    """``make_game`` standing in for the room service: a room is its state key."""

    redis: aioredis.Redis
    failures: int = 0
    opened: list[tuple[str, str, tuple[Player, Player]]] = field(default_factory=list)

    async def __call__(self, pool: Pool, players: tuple[Player, Player], room_id: str) -> bool:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("the opener lost Redis")
        created = await self.redis.hsetnx(state_key(room_id), "v", 1)
        if created:
            self.opened.append((room_id, pool.id, players))
        return bool(created)


class Deaf(PubSubOver):
    """A pub/sub link that subscribes but never hears a message (as if every one were lost)."""

    async def read(self) -> tuple[str, str, object]:
        while True:
            item = await self.inner.read()
            if item[0] != "message":
                return item


@dataclass
class Process:
    pairing: Pairing
    games: Games
    redis: aioredis.Redis


Start = Callable[..., Awaitable[Process]]


@pytest.fixture
async def processes(redis_url: str) -> AsyncIterator[Start]:
    tag = "pairing-test-" + secrets.token_hex(4)
    started: list[Process] = []
    ratings: dict[str, float] = {}

    async def rating_of(player_id: str, category: str) -> float:
        return ratings.get(player_id, 1500.0)

    async def start(deaf: bool = False, failures: int = 0, store: type[PairingStore] = PairingStore,
                    seen: set[str] | None = None) -> Process:
        redis = aioredis.Redis.from_url(redis_url)
        games = Games(redis, failures)
        link = open_pubsub(redis_url)

        async def seen_game(room_id: str, seat: int) -> bool:  # the rooms in ``seen``, by either seat
            return seen is not None and room_id in seen

        pairing = Pairing(store(redis, tag=tag, window=Window(100, 25, 20_000)), Deaf(link) if deaf else link,
                          games, rating_of, Metrics(), tick_s=0.1, grace_ms=GRACE_MS, seen=seen_game)
        await pairing.start()
        process = Process(pairing, games, redis)
        started.append(process)
        return process

    start.ratings = ratings  # type: ignore[attr-defined]
    yield start
    for process in started:
        await process.pairing.close()
    redis = started[0].redis if started else aioredis.Redis.from_url(redis_url)
    rooms = [room for p in started for room, _pool, _players in p.games.opened]
    await redis.delete(*[pool_key(p, tag) for p in POOLS], seeks_key(tag), seeks_live_key(tag), seekers_key(tag),
                       paired_key(tag), *[state_key(room) for room in rooms])
    for process in started:
        await process.redis.aclose()


class _Held(PairingStore):
    """A store whose first call of one kind is held at a gate after Redis ran it, as if its
    reply were still on the way: the test cancels the seek there, then opens the gate."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.held = asyncio.Event()
        self.gate = asyncio.Event()

    async def _hold(self) -> None:
        if not self.held.is_set():
            self.held.set()
            await self.gate.wait()


class HeldAfterTake(_Held):
    """Holds the first ``end`` that takes a pair (the old waiter's "told before answering")."""

    async def end(self, ticket: Ticket, take: bool, tell: bool = False) -> Reply:
        reply = await super().end(ticket, take, tell)
        if take and reply.pair is not None:
            await self._hold()
        return reply


class HeldAfterAnnounce(_Held):
    """Holds the first ``announce`` (the pair's room is open and the pair published)."""

    async def announce(self, pair: Pair, told: Ticket | None = None) -> None:
        await super().announce(pair, told)
        await self._hold()


async def until(done: Callable[[], bool]) -> None:
    for _ in range(500):  # at most 5 s
        if done():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never came to pass")


def guest(name: str) -> Player:
    return Player("g" + secrets.token_hex(4), name)


async def until_waiting(process: Process, pool: Pool, count: int = 1) -> None:
    for _ in range(200):  # at most 2 s
        if (await process.pairing.pools_census())[pool.id] == count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{pool.id} never held {count} seeks")


async def paired_across(x: Process, y: Process) -> tuple[Player, Player, Paired, Paired]:
    """Anna waits on ``x``, Ben pairs her from ``y``: both players and their answers (neither told)."""
    anna, ben = guest("Anna"), guest("Ben")
    waiting = asyncio.create_task(x.pairing.seek(anna, CASUAL, 5))
    await until_waiting(x, CASUAL)
    bens = await y.pairing.seek(ben, CASUAL, 5)
    annas = await asyncio.wait_for(waiting, 2)
    assert isinstance(annas, Paired) and isinstance(bens, Paired)
    return anna, ben, annas, bens


async def test_two_processes_pair_and_both_are_told_at_once(processes: Start) -> None:
    x, y = await processes(), await processes()
    anna, ben, first, second = await paired_across(x, y)
    assert first.room_id == second.room_id and {first.seat, second.seat} == {0, 1}
    assert (first.opponent, second.opponent) == (ben, anna) and first.pool == CASUAL
    assert x.games.opened == [] and len(y.games.opened) == 1  # the process that formed the pair opened it
    room, pool_id, players = y.games.opened[0]
    assert players[first.seat] == anna and players[second.seat] == ben and pool_id == CASUAL.id
    assert await y.pairing.pools_census() == dict.fromkeys(POOLS, 0)
    assert await x.pairing.store.seek_of(anna.id) is None  # both told: a next seek starts afresh


async def test_a_rated_pool_pairs_by_the_ratings_looked_up(processes: Start) -> None:
    x, y = await processes(), await processes()
    anna, ben, carl = guest("Anna"), guest("Ben"), guest("Carl")
    processes.ratings.update({anna.id: 1500.0, ben.id: 1900.0, carl.id: 1560.0})  # type: ignore[attr-defined]
    tasks = [asyncio.create_task(x.pairing.seek(anna, RATED, 5))]
    await until_waiting(x, RATED)
    tasks.append(asyncio.create_task(y.pairing.seek(ben, RATED, 0.5)))
    await until_waiting(x, RATED, 2)
    carls = await x.pairing.seek(carl, RATED, 5)
    assert isinstance(carls, Paired) and carls.opponent == anna
    assert isinstance(await tasks[0], Paired) and await tasks[1] is TIMED_OUT  # 400 away: nobody for Ben


async def test_a_timed_out_seek_answers_none_and_leaves_nothing(processes: Start) -> None:
    x = await processes()
    anna = guest("Anna")
    assert await x.pairing.seek(anna, CASUAL, 0.2) is TIMED_OUT
    assert (await x.pairing.pools_census())[CASUAL.id] == 0 and await x.pairing.store.seek_of(anna.id) is None
    assert x.pairing.stats["pairing_timeouts"] == 1


async def test_one_seek_per_player_across_processes(processes: Start) -> None:
    x, y = await processes(), await processes()
    anna = guest("Anna")
    waiting = asyncio.create_task(x.pairing.seek(anna, CASUAL, 5))
    await until_waiting(x, CASUAL)
    for pool in (CASUAL, RATED):
        with pytest.raises(AlreadySeeking):
            await y.pairing.seek(anna, pool, 5)
    assert (await y.pairing.pools_census())[CASUAL.id] == 1  # the refusal changed nothing
    assert isinstance(await y.pairing.seek(guest("Ben"), CASUAL, 5), Paired)
    assert isinstance(await waiting, Paired)


async def test_cancelling_the_call_removes_the_seek(processes: Start) -> None:
    x, y = await processes(), await processes()
    waiting = asyncio.create_task(x.pairing.seek(guest("Anna"), CASUAL, 5))
    await until_waiting(x, CASUAL)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await until_waiting(x, CASUAL, 0)
    assert await y.pairing.seek(guest("Ben"), CASUAL, 0.3) is TIMED_OUT  # not paired with the one who left


async def test_cancel_by_player_ends_the_seek_on_another_process(processes: Start) -> None:
    x, y = await processes(), await processes()
    anna = guest("Anna")
    waiting = asyncio.create_task(x.pairing.seek(anna, CASUAL, None))  # no time limit: the lobby socket's way
    await until_waiting(x, CASUAL)
    assert await y.pairing.cancel(anna.id) is True
    assert await asyncio.wait_for(waiting, 0.5) is CANCELLED  # told through the channel, not at the next tick
    assert await y.pairing.cancel(anna.id) is False


async def test_a_lost_announcement_is_made_up_by_the_tick(processes: Start) -> None:
    x, y = await processes(deaf=True), await processes()
    waiting = asyncio.create_task(x.pairing.seek(guest("Anna"), CASUAL, 5))
    await until_waiting(x, CASUAL)
    assert isinstance(await y.pairing.seek(guest("Ben"), CASUAL, 5), Paired)
    first = await asyncio.wait_for(waiting, 1)  # a tick (0.1 s) later; the room was open already
    assert isinstance(first, Paired) and x.pairing.stats["pairing_recovered"] == 0


async def test_a_pair_whose_opener_failed_is_opened_by_its_waiter(processes: Start) -> None:
    """The process that formed the pair loses Redis before the room is open: the waiter on the
    other process opens it after the grace, and the failed seeker's next seek is handed it."""
    x, y = await processes(), await processes(failures=1)
    anna, ben = guest("Anna"), guest("Ben")
    waiting = asyncio.create_task(x.pairing.seek(anna, CASUAL, 5))
    await until_waiting(x, CASUAL)
    with pytest.raises(ConnectionError):
        await y.pairing.seek(ben, CASUAL, 5)
    first = await asyncio.wait_for(waiting, 2)
    assert isinstance(first, Paired) and x.pairing.stats["pairing_recovered"] == 1
    assert [room for room, _pool, _players in x.games.opened] == [first.room_id]
    handed = await y.pairing.seek(ben, RATED, 5)  # another pool even: the pair is handed over first
    assert handed == Paired(first.room_id, 1 - first.seat, anna, CASUAL)
    assert await y.pairing.seek(ben, RATED, 5) == handed  # until he is told of it
    assert await y.pairing.told(handed) is True
    assert await y.pairing.seek(ben, CASUAL, 0.2) is TIMED_OUT  # and then never again


async def test_closing_the_service_ends_its_seeks(processes: Start) -> None:
    x = await processes()
    waiting = asyncio.create_task(x.pairing.seek(guest("Anna"), CASUAL, None))
    await until_waiting(x, CASUAL)
    await x.pairing.close()
    assert await asyncio.wait_for(waiting, 1) is CANCELLED
    assert (await x.pairing.store.census())[CASUAL.id] == 0


# ---------------------------------------------------------------------- a pair formed as its seeker left


async def test_a_seek_cancelled_as_its_pair_is_taken_leaves_the_pair_for_the_next_seek(processes: Start) -> None:
    """The outside probe's race: Anna's request closes the instant Ben pairs her. Her seek is
    cancelled after her waiter learnt the pair (where it used to take it before answering), so
    nobody answers her: her next seek, of another pool, is that game ("earlier"), once."""
    x, y = await processes(store=HeldAfterTake), await processes()
    store = x.pairing.store
    assert isinstance(store, HeldAfterTake)
    anna, ben = guest("Anna"), guest("Ben")
    waiting = asyncio.create_task(x.pairing.seek(anna, CASUAL, 5))
    await until_waiting(x, CASUAL)
    bens = await y.pairing.seek(ben, CASUAL, 5)
    assert isinstance(bens, Paired)
    await until(lambda: store.held.is_set() or waiting.done())
    waiting.cancel()  # her request closed: whatever the seek had, it answers nobody
    await asyncio.gather(waiting, return_exceptions=True)
    store.gate.set()
    handed = await x.pairing.seek(anna, RATED, 1)
    assert handed == Paired(bens.room_id, 1 - bens.seat, ben, CASUAL)
    assert paired_answer(handed, RATED) == {"game": bens.room_id, "seat": 1 - bens.seat, "earlier": True}
    assert await x.pairing.told(handed) is True
    assert await x.pairing.seek(anna, RATED, 0.2) is TIMED_OUT  # told: never handed twice


async def test_a_seek_cancelled_after_its_own_call_formed_and_announced_the_pair(processes: Start) -> None:
    """Ben's own seek forms the pair, opens the room and announces it (where it used to take
    his side), then his request closes: Anna is told at once, Ben's next seek is the game."""
    x, y = await processes(), await processes(store=HeldAfterAnnounce)
    store = y.pairing.store
    assert isinstance(store, HeldAfterAnnounce)
    anna, ben = guest("Anna"), guest("Ben")
    waiting = asyncio.create_task(x.pairing.seek(anna, CASUAL, 5))
    await until_waiting(x, CASUAL)
    seeking = asyncio.create_task(y.pairing.seek(ben, CASUAL, 5))
    await until(store.held.is_set)
    seeking.cancel()
    await asyncio.gather(seeking, return_exceptions=True)
    store.gate.set()
    annas = await asyncio.wait_for(waiting, 2)
    assert isinstance(annas, Paired) and await x.pairing.told(annas) is True
    handed = await y.pairing.seek(ben, RATED, 1)
    assert handed == Paired(annas.room_id, 1 - annas.seat, anna, CASUAL)
    assert len(y.games.opened) == 1 and x.games.opened == []  # one room, opened once
    assert await y.pairing.told(handed) is True
    assert await y.pairing.seek(ben, RATED, 0.2) is TIMED_OUT


async def test_a_pair_answered_to_a_client_that_left_waits_for_the_next_seek(processes: Start) -> None:
    """``seek`` answered, but the answer reached nobody (the edge never calls ``told``): the same
    pool's next seek is that game (no "earlier"), until one answer is told; each side apart."""
    x, y = await processes(), await processes()
    anna, ben, first, bens = await paired_across(x, y)
    again = await x.pairing.seek(anna, CASUAL, 1)
    assert again == first and paired_answer(again, CASUAL) == {"game": first.room_id, "seat": first.seat}
    assert await y.pairing.told(bens) is True
    assert await x.pairing.told(again) is True
    assert await x.pairing.told(first) is False  # one pair, taken once
    assert await x.pairing.seek(anna, CASUAL, 0.2) is TIMED_OUT
    assert await y.pairing.seek(ben, CASUAL, 0.2) is TIMED_OUT  # Ben was told: afresh too


async def test_a_pair_whose_game_was_seen_is_taken_not_handed_again(processes: Start) -> None:
    """A one-shot client's answer is never seen to arrive (never told), but its player opened,
    moved in or finished the game: the next seek takes that pair and seeks afresh, instead of
    answering with the same game (over, by then, in an outside probe's run)."""
    seen: set[str] = set()
    x, y = await processes(seen=seen), await processes()
    anna, _ben, first, _bens = await paired_across(x, y)
    assert await x.pairing.seek(anna, CASUAL, 1) == first  # not seen yet: handed as before
    seen.add(first.room_id)
    assert await x.pairing.seek(anna, CASUAL, 0.2) is TIMED_OUT  # a fresh seek: nobody else there
    assert await x.pairing.told(first) is False  # taken by that seek

"""Quick pairing's pools on the real Valkey: what pairs with what, when, and exactly once.

Every test has a hash tag of its own (``PairingStore(tag=...)``), so the shared Valkey's other
users never meet its seeks. Time is an argument (``now_ms``): windows widen and seeks die
without the test waiting.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import secrets
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from server.core.pools import POOLS, Pool, compatible
from server.core.room import Player
from server.store.keys import (
    paired_key,
    pool_key,
    seekers_key,
    seeks_key,
    seeks_live_key,
)
from server.store.pairing import (
    LIVE_MS,
    PAIRED_TTL_MS,
    Answer,
    Pair,
    PairingStore,
    Ticket,
    _kept,
)

T0 = 1_700_000_000_000
CASUAL = POOLS["live-3+2/brettspielnetz/casual"]
RATED = POOLS["live-3+2/brettspielnetz/rated"]
OTHER = POOLS["live-3+2/coan/rated"]


def ticket(pool: Pool, rating: float = 1500, joined: int = T0, player: str | None = None) -> Ticket:
    pid = player or "g" + secrets.token_hex(4)
    return Ticket.new(Player(pid, pid.upper()), pool, rating, joined)


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    redis = aioredis.Redis.from_url(redis_url)
    yield redis
    await redis.aclose()


@pytest.fixture
async def store(client: aioredis.Redis) -> AsyncIterator[PairingStore]:
    tag = "pairing-test-" + secrets.token_hex(4)
    yield PairingStore(client, tag=tag)
    await client.delete(*[pool_key(p, tag) for p in POOLS], seeks_key(tag), seeks_live_key(tag), seekers_key(tag),
                        paired_key(tag))


async def waiting_in(store: PairingStore, pool: Pool) -> set[str]:
    return {raw.decode() for raw in await store.redis.zrange(pool_key(pool.id, store.tag), 0, -1)}


# ---------------------------------------------------------------------- one seek at a time


async def test_a_casual_seek_pairs_with_the_one_waiting(store: PairingStore) -> None:
    first, second = ticket(CASUAL), ticket(CASUAL, joined=T0 + 500)
    assert (await store.seek(first, T0)).answer is Answer.WAITING
    assert await waiting_in(store, CASUAL) == {first.seek}
    reply = await store.seek(second, T0 + 500)
    assert reply.answer is Answer.FORMED
    pair = reply.pair
    assert pair is not None and pair.room == second.room and pair.pool == CASUAL and pair.formed_ms == T0 + 500
    assert pair.seat_of(second.player.id) == second.seat
    assert set(pair.players) == {first.player, second.player} and set(pair.seeks) == {first.seek, second.seek}
    assert await waiting_in(store, CASUAL) == set()
    assert await store.refresh([first.seek], T0 + 600) == [pair]  # the waiter's process learns it this way too


async def test_casual_pools_ignore_ratings(store: PairingStore) -> None:
    await store.seek(ticket(CASUAL, 900, T0), T0)
    assert (await store.seek(ticket(CASUAL, 2400, T0 + 1_000), T0 + 1_000)).answer is Answer.FORMED


async def test_pools_never_mix(store: PairingStore) -> None:
    for pool in (CASUAL, RATED, OTHER, POOLS["live-5+3/brettspielnetz/rated"], POOLS["live-3+2/coan/casual"]):
        assert (await store.seek(ticket(pool), T0)).answer is Answer.WAITING
    assert sum((await store.census()).values()) == 5


async def test_one_seek_per_player_and_the_refusal_changes_nothing(store: PairingStore) -> None:
    first = ticket(CASUAL, player="gAnna")
    await store.seek(first, T0)
    for pool in (CASUAL, RATED):  # the same pool or another: refused
        again = ticket(pool, player="gAnna")
        assert (await store.seek(again, T0 + 10)).answer is Answer.ALREADY_SEEKING
    assert await waiting_in(store, CASUAL) == {first.seek} and await waiting_in(store, RATED) == set()
    assert (await store.seek_of("gAnna")) == first
    assert (await store.seek(ticket(CASUAL), T0 + 20)).answer is Answer.FORMED  # and it still pairs


async def test_a_new_seek_takes_the_closest_of_those_waiting(store: PairingStore) -> None:
    spread = {rating: ticket(RATED, rating) for rating in (1000, 1330, 1455, 1570, 2000)}
    for t in spread.values():
        assert (await store.seek(t, T0)).answer is Answer.WAITING  # all more than 100 apart
    reply = await store.seek(ticket(RATED, 1500, T0), T0)
    assert reply.answer is Answer.FORMED and reply.pair is not None
    assert spread[1455].player in reply.pair.players  # 45 away beats 70 and 120
    reply = await store.seek(ticket(RATED, 1500, T0), T0)
    assert reply.pair is not None and spread[1570].player in reply.pair.players  # then 70
    assert (await store.seek(ticket(RATED, 1500, T0), T0)).answer is Answer.WAITING  # 1330 is 170 away


async def test_ties_go_to_the_longer_waiting(store: PairingStore) -> None:
    below, above = ticket(RATED, 1400, T0 + 100), ticket(RATED, 1600, T0)
    await store.seek(below, T0 + 100)
    await store.seek(above, T0 + 100)
    reply = await store.seek(ticket(RATED, 1500, T0 + 100), T0 + 100)
    assert reply.pair is not None and above.player in reply.pair.players


async def test_windows_widen_with_waiting_and_both_must_hold(store: PairingStore) -> None:
    a = ticket(RATED, 1500, T0)
    b = ticket(RATED, 1700, T0)
    await store.seek(a, T0)
    assert (await store.seek(b, T0)).answer is Answer.WAITING  # 200 apart, windows 100
    assert await store.match(RATED, T0 + 3_999) == []  # 199.975 < 200
    [pair] = await store.match(RATED, T0 + 4_000)  # 200: exactly at the edge
    assert set(pair.seeks) == {a.seek, b.seek} and pair.formed_ms == T0 + 4_000
    # a newcomer's narrow window holds back a pair the old seeker would take
    old, new = ticket(RATED, 1500, T0), ticket(RATED, 1800, T0 + 8_000)
    await store.seek(old, T0)
    assert (await store.seek(new, T0 + 8_000)).answer is Answer.WAITING  # old's window 300, new's 100
    for now in (T0 + 4_000, T0 + 8_000, T0 + 12_000):  # (their processes keep them alive)
        await store.refresh([old.seek, new.seek], now)
    assert await store.match(RATED, T0 + 12_000) == []  # old's 400, new's 200 < 300
    for now in (T0 + 16_000, T0 + 20_000):
        await store.refresh([old.seek, new.seek], now)
    assert len(await store.match(RATED, T0 + 20_000)) == 1  # old's unlimited, new's 400


@pytest.mark.parametrize("gap, wait_a, wait_b", [
    (100, 0, 0), (100.5, 0, 0), (125, 1_000, 1_000), (125, 1_000, 999), (0.1, 0, 0), (550, 18_000, 18_000),
    (575, 18_999, 19_000), (600, 19_999, 19_999), (5_000, 20_000, 20_000), (5_000, 20_000, 19_999),
    (349.999, 9_999, 10_000), (350, 10_000, 10_000), (0, 0, 0),
])
async def test_the_scripts_window_is_the_policys(store: PairingStore, gap: float, wait_a: int, wait_b: int) -> None:
    """The Lua arithmetic agrees with :func:`server.core.pools.compatible`, edges included."""
    now = T0 + 30_000
    a, b = ticket(RATED, 1500, now - wait_a), ticket(RATED, 1500 + gap, now - wait_b)
    await store.seek(a, now - 10)
    await store.seek(b, now - 10)  # (their windows at entry are what they are; match decides at now)
    paired = bool(await store.match(RATED, now)) or not await waiting_in(store, RATED)
    assert paired == compatible(store.window, gap, wait_a, wait_b)


# ---------------------------------------------------------------------- liveness, ends, hand-over


async def test_dead_seeks_are_skipped_and_dropped(store: PairingStore) -> None:
    dead = ticket(CASUAL, player="gDead")
    await store.seek(dead, T0)
    live = ticket(CASUAL, joined=T0 + LIVE_MS)
    assert (await store.seek(live, T0 + LIVE_MS)).answer is Answer.WAITING  # not paired with the dead one
    assert await waiting_in(store, CASUAL) == {live.seek}  # and the dead one is gone from the pool
    assert await store.seek_of("gDead") is None
    assert await store.refresh([dead.seek], T0 + LIVE_MS) == [False]
    # its player seeks again at once: fine, and pairs with the live one
    assert (await store.seek(ticket(CASUAL, player="gDead"), T0 + LIVE_MS)).answer is Answer.FORMED


async def test_refresh_keeps_a_seek_alive(store: PairingStore) -> None:
    kept = ticket(CASUAL)
    await store.seek(kept, T0)
    assert await store.refresh([kept.seek], T0 + 5_000) == [True]
    assert (await store.seek(ticket(CASUAL), T0 + 10_000)).answer is Answer.FORMED


async def test_a_dead_seek_of_the_same_player_is_forgotten_not_paired_with_its_player(store: PairingStore) -> None:
    old = ticket(CASUAL, player="gSame")
    await store.seek(old, T0)
    again = ticket(CASUAL, player="gSame", joined=T0 + LIVE_MS + 1)
    assert (await store.seek(again, T0 + LIVE_MS + 1)).answer is Answer.WAITING
    assert await waiting_in(store, CASUAL) == {again.seek}


async def test_sweep_forgets_what_nobody_kept_alive(store: PairingStore) -> None:
    dead_waiting = ticket(RATED, 1000, player="gW")
    await store.seek(dead_waiting, T0)
    a, b = ticket(CASUAL, player="gA"), ticket(CASUAL, player="gB")
    await store.seek(a, T0)
    await store.seek(b, T0)  # paired, never taken
    assert await store.sweep(T0 + LIVE_MS) == 1  # the waiting one
    assert await store.sweep(T0 + PAIRED_TTL_MS) == 2  # the untaken pair
    for key in (seeks_key(store.tag), seekers_key(store.tag), seeks_live_key(store.tag), paired_key(store.tag)):
        assert await store.redis.exists(key) == 0
    await store.match(RATED, T0 + PAIRED_TTL_MS)
    assert await waiting_in(store, RATED) == set()


async def test_end_cancels_a_waiting_seek(store: PairingStore) -> None:
    t = ticket(RATED)
    await store.seek(t, T0)
    assert (await store.end(t, take=True)).answer is Answer.CANCELLED
    assert await waiting_in(store, RATED) == set() and await store.seek_of(t.player.id) is None
    assert (await store.end(t, take=True)).answer is Answer.GONE
    assert (await store.seek(ticket(RATED), T0)).answer is Answer.WAITING  # nobody to pair with


async def test_an_untaken_pair_is_handed_to_the_players_next_seek(store: PairingStore) -> None:
    waiter, other = ticket(CASUAL, player="gGone"), ticket(CASUAL)
    await store.seek(waiter, T0)
    formed = (await store.seek(other, T0)).pair
    assert (await store.end(waiter, take=False)).pair == formed  # its request closed a moment too late
    handed = await store.seek(ticket(RATED, player="gGone"), T0 + 1_000)
    assert handed.answer is Answer.HANDED and handed.pair == formed
    again = await store.seek(ticket(RATED, player="gGone"), T0 + 2_000)  # that answer never arrived
    assert again.answer is Answer.HANDED and again.pair == formed
    assert formed is not None and await store.take(formed, "gGone") is True  # this one did
    assert await store.take(formed, "gGone") is False
    assert (await store.seek(ticket(RATED, player="gGone"), T0 + 3_000)).answer is Answer.WAITING  # taken: afresh


async def test_a_taken_pair_is_not_handed_again(store: PairingStore) -> None:
    waiter, other = ticket(CASUAL, player="gTold"), ticket(CASUAL)
    await store.seek(waiter, T0)
    pair = (await store.seek(other, T0)).pair
    assert pair is not None
    await store.announce(pair, told=other)
    assert (await store.end(waiter, take=True)).pair == pair
    assert (await store.seek(ticket(CASUAL, player="gTold"), T0 + 10)).answer is Answer.WAITING
    assert (await store.seek(ticket(CASUAL, player=other.player.id), T0 + 10)).answer is Answer.FORMED


# ---------------------------------------------------------------------- many at once


async def test_concurrent_seekers_over_several_clients(redis_url: str, store: PairingStore) -> None:
    """240 seeks from four clients (four "processes") at once over six pools (casual ones and
    rated ones with spread ratings), then match passes from all clients as time goes on: every
    seek is paired at most once, within its pool, never with its own player; after each round
    no two compatible seeks still wait; once windows are open, everyone but one in an odd pool
    is paired."""
    rng = random.Random(7)
    pools = [CASUAL, RATED, OTHER, POOLS["corr-3d/coan/rated"], POOLS["live-1+1/coan/casual"],
             POOLS["live-10+5/brettspielnetz/rated"]]
    sizes = [40, 40, 40, 40, 41, 39]
    tickets = [ticket(pool, rng.uniform(800, 2600), T0 + rng.randrange(0, 500))
               for pool, n in zip(pools, sizes, strict=True) for _ in range(n)]
    by_seek = {t.seek: t for t in tickets}
    clients = [aioredis.Redis.from_url(redis_url) for _ in range(4)]
    stores = [PairingStore(c, tag=store.tag) for c in clients]
    pairs: list[Pair] = []
    try:
        replies = await asyncio.gather(*(stores[i % 4].seek(t, t.joined_ms) for i, t in enumerate(tickets)))
        pairs += [r.pair for r in replies if r.pair is not None]
        assert {r.answer for r in replies} <= {Answer.WAITING, Answer.FORMED}
        for now in range(T0 + 500, T0 + 22_000, 1_500):
            live = [t.seek for t in tickets]
            await store.refresh(live, now)
            rounds = await asyncio.gather(*(s.match(pool, now) for s in stores for pool in pools))
            pairs += [p for found in rounds for p in found]
            await assert_no_compatible_pair_waits(store, pools, by_seek, now)
    finally:
        for c in clients:
            await c.aclose()
    seen = list(itertools.chain.from_iterable(p.seeks for p in pairs))
    assert len(seen) == len(set(seen)), "a seek paired twice"
    for p in pairs:
        a, b = (by_seek[s] for s in p.seeks)
        assert a.pool == b.pool == p.pool and a.player != b.player
        assert p.room in (a.room, b.room)
        assert p.players == tuple(by_seek[s].player for s in p.seeks)
    assert len(pairs) == sum(n // 2 for n in sizes)  # windows are unlimited by now: all but the odd ones


async def assert_no_compatible_pair_waits(store: PairingStore, pools: list[Pool], by_seek: dict[str, Ticket],
                                          now: int) -> None:
    for pool in pools:
        left = [by_seek[s] for s in await waiting_in(store, pool)]
        for a, b in itertools.combinations(left, 2):
            fits = not pool.rated or compatible(store.window, a.rating - b.rating, now - a.joined_ms,
                                                now - b.joined_ms)
            assert not fits, f"{a.rating} and {b.rating} both wait in {pool.id} at +{now - T0} ms"


async def test_the_search_walks_past_a_closer_seek_whose_own_window_refuses(store: PairingStore) -> None:
    old = ticket(RATED, 1500, T0)
    far = ticket(RATED, 1850, T0 + 1)
    await store.seek(old, T0)
    await store.seek(far, T0 + 1)
    now = T0 + 20_000
    new = ticket(RATED, 1700, now)
    for at in range(T0 + 5_000, now + 1, 5_000):
        await store.refresh([old.seek, far.seek], at)
    assert (await store.seek(new, now)).answer is Answer.WAITING  # 1700's window is 100: nobody fits it
    [pair] = await store.match(RATED, now)  # old (unlimited) passes 1700 (refuses: 200 > 100) for 1850
    assert set(pair.seeks) == {old.seek, far.seek}
    assert await waiting_in(store, RATED) == {new.seek}


async def test_a_cancel_lost_inside_a_call_is_raised_again() -> None:
    """What ``asyncio.wait_for`` does on Python 3.11 inside redis-py when a cancel meets the
    write's completion: the call returns normally with the task still marked cancelling."""
    entered = asyncio.Event()

    async def swallowing() -> int:
        entered.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            return 1
        return 0

    task = asyncio.create_task(_kept(swallowing()))
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

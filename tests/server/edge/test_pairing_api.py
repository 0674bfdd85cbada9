"""``POST /api/v1/pairing`` over a live server: pairs, answers, refusals that change nothing,
and a seek that ends with its request.

The shared test server's pools are the real ``{pairing}`` ones; tests run one at a time and
each leaves the pools empty (checked), so none meets another's seekers. Waiting for a seek to
be stored polls the pools in Redis (bounded), never a fixed sleep.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from server.client import Api, ApiError, Guest
from server.core.pools import pool_of
from server.core.room import Player
from server.edge.api_pairing import paired_answer
from server.store.pairing import PairingStore
from server.store.seek_ends import Paired
from tests.names import unique

BLITZ = {"initial": 180, "increment": 2}
CORR = {"days": 3}


@pytest.fixture
async def pools(redis_url: str) -> AsyncIterator[PairingStore]:
    """The server's pools, read from the test (the default ``{pairing}`` tag)."""
    client = aioredis.Redis.from_url(redis_url)
    store = PairingStore(client)
    try:
        yield store
        assert sum((await store.census()).values()) == 0, "a test left a seek behind"
    finally:
        await client.aclose()


async def waiting(pools: PairingStore, pool_id: str, count: int = 1) -> None:
    """Return once ``pool_id`` holds ``count`` seeks (bounded: 10 s)."""
    for _ in range(1_000):
        if (await pools.census())[pool_id] == count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{pool_id} never held {count} seeks")


async def two(api: Api) -> tuple[Guest, Guest]:
    return await api.guest(unique("Anna")), await api.guest(unique("Ben"))


async def test_two_seekers_land_in_one_game_of_their_pool(api: Api, pools: PairingStore) -> None:
    anna, ben = await two(api)
    first = asyncio.create_task(api.pair(anna.token, clock=BLITZ, ruleset="coan", rated=True, wait_s=20))
    await waiting(pools, "live-3+2/coan/rated")
    second = await api.pair(ben.token, clock=BLITZ, ruleset="coan", rated=True, wait_s=20)
    answer = await asyncio.wait_for(first, 10)
    assert answer is not None and second is not None and answer["game"] == second["game"]
    assert {answer["seat"], second["seat"]} == {0, 1} and "computer" not in answer
    game = await api.game(answer["game"], anna.token)
    room = game["room"]
    assert game["you"] == answer["seat"] and room["ruleset"] == "coan" and room["rated"] is True
    assert room["players"][answer["seat"]]["name"] == anna.name and room["players"][second["seat"]]["id"] == ben.id
    assert (room["clock"]["initial_ms"], room["clock"]["increment_ms"]) == (180_000, 2_000)
    assert room["status"] == "playing" and room["started_ms"] is None  # the clock waits for the first move


async def test_a_correspondence_pool_plays_days_per_move(api: Api, pools: PairingStore) -> None:
    anna, ben = await two(api)
    first = asyncio.create_task(api.pair(anna.token, clock=CORR, wait_s=20))
    await waiting(pools, "corr-3d/brettspielnetz/casual")
    second = await api.pair(ben.token, clock=CORR, wait_s=20)
    assert (await asyncio.wait_for(first, 10))["game"] == second["game"]
    room = (await api.game(second["game"]))["room"]
    assert room["clock"]["per_move"] is True and room["clock"]["initial_ms"] == 3 * 86_400_000
    assert room["rated"] is False


async def test_nobody_within_wait_s_is_204_and_the_seek_is_gone(api: Api, pools: PairingStore) -> None:
    anna = await api.guest(unique("Anna"))
    assert await api.pair(anna.token, clock={"initial": 60, "increment": 1}, wait_s=1) is None
    assert await pools.seek_of(anna.id) is None


BAD: list[tuple[dict[str, Any], str]] = [
    ({"clock": {"initial": 120, "increment": 1}}, "unknown_pool"),  # no 2+1 pool
    ({"clock": BLITZ, "ruleset": "chess"}, "unknown_pool"),
    ({"clock": None}, "unknown_pool"),  # no pool is untimed
    ({"clock": {"days": 2}}, "unknown_pool"),
    ({"clock": "3+2"}, "bad_field"),
    ({"clock": {"initial": 180, "increment": -1}}, "bad_field"),
    ({"clock": {"days": 15}}, "bad_field"),
    ({"ruleset": "coan"}, "bad_field"),  # no clock
    ({"clock": BLITZ, "rated": "yes"}, "bad_field"),
    ({"clock": BLITZ, "wait_s": 0}, "bad_field"),
    ({"clock": BLITZ, "wait_s": 61}, "bad_field"),
    ({"clock": BLITZ, "wait_s": 5.0}, "bad_field"),
    ({"clock": BLITZ, "wait_s": 10, "computer_after_s": 4}, "bad_field"),
    ({"clock": BLITZ, "wait_s": 10, "computer_after_s": 11}, "bad_field"),  # never before the 204
    ({"clock": BLITZ, "wait_s": 10, "computer_after_s": True}, "bad_field"),
]


@pytest.mark.parametrize("body, code", BAD, ids=[f"{code}-{i}" for i, (_b, code) in enumerate(BAD)])
async def test_refusals_are_400_and_change_nothing(api: Api, pools: PairingStore, body: dict[str, Any],
                                                   code: str) -> None:
    anna = await api.guest(unique("Anna"))
    with pytest.raises(ApiError) as info:
        await api.request("POST", "/api/v1/pairing", anna.token, body)
    assert (info.value.status, info.value.code) == (400, code)
    assert await pools.seek_of(anna.id) is None


async def test_without_a_token_401(api: Api) -> None:
    with pytest.raises(ApiError) as info:
        await api.request("POST", "/api/v1/pairing", None, {"clock": BLITZ})
    assert (info.value.status, info.value.code) == (401, "no_token")


async def test_one_seek_at_a_time_so_never_paired_with_oneself(api: Api, pools: PairingStore) -> None:
    anna, ben = await two(api)
    first = asyncio.create_task(api.pair(anna.token, clock=BLITZ, wait_s=20))
    await waiting(pools, "live-3+2/brettspielnetz/casual")
    for clock in (BLITZ, CORR):  # the same pool (where she would meet herself) or another
        with pytest.raises(ApiError) as info:
            await api.pair(anna.token, clock=clock, wait_s=5)
        assert (info.value.status, info.value.code) == (409, "already_seeking")
    assert (await pools.census())["live-3+2/brettspielnetz/casual"] == 1  # the refusal changed nothing
    second = await api.pair(ben.token, clock=BLITZ, wait_s=20)
    assert (await asyncio.wait_for(first, 10))["game"] == second["game"]


async def test_closing_the_request_removes_the_seek(api: Api, pools: PairingStore) -> None:
    anna, ben = await two(api)
    pool = "live-5+3/brettspielnetz/casual"
    clock = {"initial": 300, "increment": 3}
    first = asyncio.create_task(api.pair(anna.token, clock=clock, wait_s=30))
    await waiting(pools, pool)
    first.cancel()  # the client closes the connection
    with pytest.raises(asyncio.CancelledError):
        await first
    await waiting(pools, pool, 0)
    assert await pools.seek_of(anna.id) is None
    assert await api.pair(ben.token, clock=clock, wait_s=1) is None  # not paired with the one who left
    again = asyncio.create_task(api.pair(anna.token, clock=clock, wait_s=20))  # she may seek again
    await waiting(pools, pool)
    second = await api.pair(ben.token, clock=clock, wait_s=20)
    assert (await asyncio.wait_for(again, 10))["game"] == second["game"]


async def test_the_computer_after_waiting_alone(api: Api, pools: PairingStore) -> None:
    anna = await api.guest(unique("Anna"))
    answer = await api.pair(anna.token, clock={"initial": 600, "increment": 5}, ruleset="coan", rated=True,
                            wait_s=30, computer_after_s=5)
    assert answer is not None and answer["computer"] is True
    assert await pools.seek_of(anna.id) is None
    game = await api.game(answer["game"], anna.token)
    room = game["room"]
    assert game["you"] == answer["seat"] and room["players"][1 - answer["seat"]]["id"] == "@bot2"
    assert room["rated"] is False and room["ruleset"] == "coan" and room["status"] == "playing"
    assert (room["clock"]["initial_ms"], room["clock"]["increment_ms"]) == (600_000, 5_000)


def test_a_pair_of_an_earlier_seek_says_so() -> None:
    """A pair formed the instant the player's earlier seek closed goes to their next seek, of
    whatever pool: the answer tells when its terms are not the ones asked for now."""
    casual, rated = pool_of("brettspielnetz", {"initial": 180, "increment": 2}, False), \
        pool_of("brettspielnetz", {"initial": 180, "increment": 2}, True)
    paired = Paired("r1", 1, Player("gA", "Anna"), casual)
    assert paired_answer(paired, casual) == {"game": "r1", "seat": 1}
    assert paired_answer(paired, rated) == {"game": "r1", "seat": 1, "earlier": True}


async def test_an_answer_that_arrived_is_taken_so_the_next_seek_starts_afresh(api: Api, pools: PairingStore) -> None:
    """Each side's answer is written, its client stays, and the pair is taken: a next seek of
    either is a seek of its own (no game handed over), never the same game twice."""
    anna, ben = await two(api)
    clock = {"initial": 600, "increment": 5}
    first = asyncio.create_task(api.pair(anna.token, clock=clock, wait_s=20))
    await waiting(pools, "live-10+5/brettspielnetz/casual")
    second = await api.pair(ben.token, clock=clock, wait_s=20)
    assert (await asyncio.wait_for(first, 10))["game"] == second["game"]
    assert await api.pair(anna.token, clock=BLITZ, wait_s=1) is None
    assert await api.pair(ben.token, clock=clock, wait_s=1) is None


async def one_shot_pair(base_url: str, token: str, clock: dict[str, int]) -> dict[str, Any]:
    """A seek by a client that reads its answer and closes at once (as ``curl`` does): the server
    cannot see that the answer arrived, so it does not take the pair."""
    import json
    from urllib.parse import urlsplit

    where = urlsplit(base_url)
    reader, writer = await asyncio.open_connection(where.hostname, where.port)
    body = json.dumps({"clock": clock, "wait_s": 20}).encode()
    writer.write(b"POST /api/v1/pairing HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token.encode()
                 + b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 20)
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
    answer = json.loads(await asyncio.wait_for(reader.readexactly(length), 10))
    writer.close()
    return answer


async def test_a_game_its_player_finished_is_not_handed_to_their_next_seek(api: Api, pools: PairingStore,
                                                                          live_server: Any) -> None:
    """A one-shot client's pair is never taken by its answer; but once its player resigned that
    game (or opened it, or moved in it) it was seen: the next seek is a seek of its own, not
    the finished game again (an outside probe got it back for 30 s)."""
    anna, ben = await two(api)
    clock = {"initial": 600, "increment": 5}
    first = asyncio.create_task(one_shot_pair(live_server.url, anna.token, clock))
    await waiting(pools, "live-10+5/brettspielnetz/casual")
    second = await api.pair(ben.token, clock=clock, wait_s=20)
    answer = await asyncio.wait_for(first, 10)
    assert answer["game"] == second["game"]
    await api.resign(anna.token, answer["game"])
    assert await api.pair(anna.token, clock=clock, wait_s=1) is None  # not the finished game

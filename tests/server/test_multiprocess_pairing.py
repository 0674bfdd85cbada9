"""Quick pairing over two server processes at once: 200 seekers in four pools, each seeking
on either process, all arriving together.

Every seeker is paired at most once, never across pools, and nobody is left waiting while a
compatible partner waits (each pool has an odd or even count, so at most one per pool ends
unpaired: the one left over). Rated pools pair everybody here: every guest is new, so all hold
the same rating.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter, defaultdict
from typing import Any

import pytest
import redis.asyncio as aioredis

from server.client import Api, Guest
from server.store.pairing import PairingStore
from tests.names import unique

pytestmark = pytest.mark.slow

POOLS: dict[str, dict[str, Any]] = {
    "live-1+1/brettspielnetz/casual": {"clock": {"initial": 60, "increment": 1}, "ruleset": "brettspielnetz",
                                       "rated": False},
    "live-3+2/coan/rated": {"clock": {"initial": 180, "increment": 2}, "ruleset": "coan", "rated": True},
    "live-3+2/coan/casual": {"clock": {"initial": 180, "increment": 2}, "ruleset": "coan", "rated": False},
    "corr-1d/brettspielnetz/rated": {"clock": {"days": 1}, "ruleset": "brettspielnetz", "rated": True},
}
COUNTS = dict(zip(POOLS, (51, 49, 50, 50), strict=True))
WAIT_S = 12


def pool_of_room(room: dict[str, Any]) -> str:
    clock = room["clock"]
    if clock.get("per_move"):
        control = f"corr-{clock['initial_ms'] // 86_400_000}d"
    else:
        control = f"live-{clock['initial_ms'] // 60_000}+{clock['increment_ms'] // 1000}"
    return f"{control}/{room['ruleset']}/{'rated' if room['rated'] else 'casual'}"


async def test_200_seekers_over_two_processes(start_server, redis_url: str) -> None:
    servers = [start_server(), start_server()]
    apis = [Api(s.url, timeout_s=30, max_connections=250) for s in servers]
    try:
        seekers: list[tuple[Guest, str, Api]] = []
        rng = random.Random(7)
        for pool_id, count in COUNTS.items():
            for i in range(count):
                guest = await apis[i % 2].guest(unique("Seeker"))
                seekers.append((guest, pool_id, rng.choice(apis)))
        rng.shuffle(seekers)

        async def seek(guest: Guest, pool_id: str, api: Api) -> dict[str, Any] | None:
            return await api.pair(guest.token, wait_s=WAIT_S, **POOLS[pool_id])

        answers = await asyncio.wait_for(asyncio.gather(*(seek(*s) for s in seekers)), WAIT_S + 30)

        games: dict[str, list[tuple[Guest, str, int]]] = defaultdict(list)
        unpaired: Counter[str] = Counter()
        for (guest, pool_id, _api), answer in zip(seekers, answers, strict=True):
            if answer is None:
                unpaired[pool_id] += 1
            else:
                games[answer["game"]].append((guest, pool_id, answer["seat"]))
        assert unpaired == Counter({pool: 1 for pool, n in COUNTS.items() if n % 2}), "left waiting with a partner"
        for game_id, members in games.items():  # two seekers per game, in two seats, of one pool
            assert len(members) == 2 and {seat for _g, _p, seat in members} == {0, 1}
            assert members[0][1] == members[1][1], f"{game_id} paired across pools"
        rooms = await asyncio.gather(*(apis[0].game(game_id) for game_id in games))
        for game, (game_id, members) in zip(rooms, games.items(), strict=True):
            room = game["room"]
            assert pool_of_room(room) == members[0][1]  # the game is the pool's: clock, rules, rated
            assert [p["id"] for p in room["players"]] == [g.id for g, _p, _s in sorted(members, key=lambda m: m[2])]
        paired = [guest.id for members in games.values() for guest, _p, _s in members]
        assert len(paired) == len(set(paired)) == len(seekers) - sum(unpaired.values())  # at most once each
        redis = aioredis.Redis.from_url(redis_url)
        try:
            assert sum((await PairingStore(redis).census()).values()) == 0  # the ones left over are gone
        finally:
            await redis.aclose()
    finally:
        for api in apis:
            await api.close()

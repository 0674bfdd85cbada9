"""Every Lua script touches keys of one Redis Cluster slot.

On a cluster a script may only touch keys of one slot, and only keys it is given in ``KEYS``
(the client routes it by them). This file lists, for every script in
:mod:`server.store.scripts`, the call sites that run it and the keys each passes for sample
ids (recorded from the real call, not restated), and checks that (1) every script has a listed
call site (a new script fails here until it is added), (2) every script touches only keys
from ``KEYS``, (3) the keys of each call hash to one slot (CRC16 of the hash tag mod 16384, as
``redis.crc.key_slot`` computes it, and the server's ``CLUSTER KEYSLOT`` where it answers).

Recording: the call sites run with the Redis side of their scripts replaced by a recorder
(``Store.link`` and the redis-py client's ``evalsha``), so nothing is written.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.crc import key_slot

from engine import Duel
from server.core.computer import computer
from server.core.decide import open_room
from server.core.pools import POOLS
from server.core.room import Player
from server.metrics import Metrics
from server.store import scripts
from server.store.pairing import Pair, PairingStore, Ticket
from server.store.player_games import PlayerGames
from server.store.players import Players, Ratings
from server.store.store import Store

ROOM, ANNA, BEN = "r0Samplee_", "gAnna", "gBen"  # a room id on a shard slot (server.store.slots)
OLD_ROOM = "r0Sample"  # an id made before ids fell on shard slots
POOL = POOLS["live-3+2/coan/rated"]
SEEK = Ticket("sSample", Player(ANNA, "Anna"), POOL, 1500.0, 1_700_000_000_000, ROOM, 0)
PAIR = Pair(ROOM, POOL, 1_700_000_000_000, (Player(ANNA, "Anna"), Player(BEN, "Ben")), ("sSample", "sOther"))
PAIRING_KEYS = ["seeks-live:{pairing}", "seeks:{pairing}", "seekers:{pairing}", "paired:{pairing}",
                "pairing:{pairing}:events"]

SCRIPTS = {name: text for name, text in vars(scripts).items()
           if name.isupper() and not name.startswith("_") and isinstance(text, str) and "redis.call" in text}
"""The scripts (``_``-prefixed names are parts that several scripts share)."""
BY_SHA = {hashlib.sha1(text.encode()).hexdigest(): name for name, text in SCRIPTS.items()}
ANSWERS: dict[str, Any] = {"COMMIT": [1, b"2", 1], "PRESENCE": 0, "SOLO_RESULT": [1, 1, 1], "NAME_CLAIM": b"ok",
                           "RATING_RESULT": b"applied", "DROP_DUE": 1, "PAIRING_SEEK": [b"waiting"],
                           "PAIRING_MATCH": [], "PAIRING_END": [b"gone"], "PAIRING_REFRESH": [b"w"],
                           "PAIRING_SWEEP": 0, "PAIRING_ANNOUNCE": 1, "KEEP_ANALYSIS": 1, "PLAYER_GAME": 1}
"""What each script answers when it succeeds, so the call site goes on as after a real call."""


class Recorder:
    """The Redis side of every script call: records which script ran with which keys."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def _record(self, name: str, keys: list[Any]) -> Any:
        self.calls.append((name, [k.decode() if isinstance(k, bytes) else k for k in keys]))
        return ANSWERS[name]

    async def evalsha(self, script: str, keys: list[str], args: list[Any]) -> Any:
        """As :class:`server.store.link.CommandLink` is called."""
        return self._record(next(n for n, text in SCRIPTS.items() if text == script), keys)

    async def evalsha_many(self, script: str, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
        return [await self.evalsha(script, keys, args) for keys, args in calls]

    async def redis_evalsha(self, sha: str, numkeys: int, *keys_and_args: Any) -> Any:
        """As redis-py's ``Script`` calls its client."""
        return self._record(BY_SHA[sha], list(keys_and_args[:numkeys]))

    async def aclose(self) -> None:
        pass


class Sites:
    """The modules that run scripts, wired to one :class:`Recorder`."""

    def __init__(self, redis_url: str, recorder: Recorder) -> None:
        self.store = Store(redis_url)
        self.redis = aioredis.Redis.from_url(redis_url)
        for client in (self.store.redis, self.redis):
            client.evalsha = recorder.redis_evalsha  # type: ignore[method-assign]
        self.players, self.ratings = Players(self.redis), Ratings(self.redis)
        self.pairing = PairingStore(self.redis)
        self.games = PlayerGames(self.store, Metrics())

    async def close(self) -> None:
        await self.store.close()
        await self.redis.aclose()


CallSite = Callable[[Sites], Awaitable[Any]]
CALL_SITES: dict[str, tuple[str, CallSite, list[str]]] = {
    # call site: (script, the call, the keys it passes)
    "Store.commit": ("COMMIT", lambda s: s.store.commit(ROOM, 1, 2, b"room", b"entry", b"message", 1_000),
                     ["game:{r0Samplee_}:state", "game:{r0Samplee_}:log", "game:{r0Samplee_}:events",
                      "clocks:{23mF}", "game:{r0Samplee_}:analysis"]),
    "Store.keep_analysis": ("KEEP_ANALYSIS", lambda s: s.store.keep_analysis(ROOM, b"analysis"),
                            ["game:{r0Samplee_}:state", "game:{r0Samplee_}:analysis"]),
    "Store.set_presence": ("PRESENCE", lambda s: s.store.set_presence(ROOM, "proc", (1, 0, 1), 30, 1_000, True),
                           ["game:{r0Samplee_}:watchers", "game:{r0Samplee_}:events"]),
    "Store.refresh_presence": ("PRESENCE", lambda s: s.store.refresh_presence([(ROOM, (1, 0, 1))], "proc", 30, 1_000),
                               ["game:{r0Samplee_}:watchers", "game:{r0Samplee_}:events"]),
    "Store.drop_clock": ("DROP_DUE", lambda s: s.store.drop_clock(ROOM, 1_000), ["clocks:{23mF}"]),
    "PlayerGames.record": ("PLAYER_GAME",  # one call per person seated (the computer has no list)
                           lambda s: s.games.record(open_room(ROOM, Duel.new(random.Random(1)),
                                                              (Player(ANNA, "Anna"), computer(1)), None, 1_000).room),
                           ["pg:{gAnna}:on", "pg:{gAnna}:over", "pg:{gAnna}:sum"]),
    "Store.record_solo": ("SOLO_RESULT", lambda s: s.store.record_solo("beginner", "classic", "d20260101", ANNA,
                                                                       "{}", 1_000, 500, 86_400),
                          ["lb:{solo}:beginner:classic:all", "lb:{solo}:beginner:classic:d20260101",
                           "pb:{solo}:gAnna"]),
    "Players.register": ("NAME_CLAIM", lambda s: s.players.register(ANNA, "Anna"),
                         ["pl:{players}:gAnna", "names:{players}"]),
    "Players.rename": ("NAME_CLAIM", lambda s: s.players.rename(ANNA, "Hanna"),
                       ["pl:{players}:gAnna", "names:{players}"]),
    "Ratings.apply_result": ("RATING_RESULT",
                             lambda s: s.ratings.apply_result(ROOM, "blitz", (ANNA, BEN), 1.0, 1_700_000_000_000),
                             ["rg:{ratings}:r0Samplee_", "rt:{ratings}:gAnna", "rt:{ratings}:gBen",
                              "rh:{ratings}:gAnna:blitz", "rh:{ratings}:gBen:blitz", "rlb:{ratings}:blitz"]),
    "PairingStore.seek": ("PAIRING_SEEK", lambda s: s.pairing.seek(SEEK, 1_700_000_000_000),
                          [*PAIRING_KEYS, "pool:{pairing}:live-3+2/coan/rated"]),
    "PairingStore.match": ("PAIRING_MATCH", lambda s: s.pairing.match(POOL, 1_700_000_000_000),
                           [*PAIRING_KEYS, "pool:{pairing}:live-3+2/coan/rated"]),
    "PairingStore.end": ("PAIRING_END", lambda s: s.pairing.end(SEEK, take=True),
                         [*PAIRING_KEYS, "pool:{pairing}:live-3+2/coan/rated"]),
    "PairingStore.take": ("PAIRING_END", lambda s: s.pairing.take(PAIR, ANNA),
                          [*PAIRING_KEYS, "pool:{pairing}:live-3+2/coan/rated"]),
    "PairingStore.refresh": ("PAIRING_REFRESH", lambda s: s.pairing.refresh(["sSample"], 1_700_000_000_000),
                             PAIRING_KEYS),
    "PairingStore.sweep": ("PAIRING_SWEEP", lambda s: s.pairing.sweep(1_700_000_000_000), PAIRING_KEYS),
    "PairingStore.announce": ("PAIRING_ANNOUNCE", lambda s: s.pairing.announce(PAIR, told=SEEK), PAIRING_KEYS),
}

OLD_ROOM_SITES: dict[str, tuple[CallSite, list[str]]] = {
    # the same calls for a room made before ids fell on shard slots: its due index is the old global one
    "Store.commit": (lambda s: s.store.commit(OLD_ROOM, 1, 2, b"room", b"entry", b"message", 1_000),
                     ["game:{r0Sample}:state", "game:{r0Sample}:log", "game:{r0Sample}:events", "clocks",
                      "game:{r0Sample}:analysis"]),
    "Store.drop_clock": (lambda s: s.store.drop_clock(OLD_ROOM, 1_000), ["clocks"]),
}


async def record(redis_url: str, call: CallSite) -> list[tuple[str, list[str]]]:
    """The script calls ``call`` makes."""
    recorder = Recorder()
    sites = Sites(redis_url, recorder)
    await sites.store.link.aclose()
    sites.store.link = recorder  # the move path's client seam
    try:
        await call(sites)
    finally:
        await sites.close()
    return recorder.calls


@pytest.fixture
async def recorded(redis_url: str) -> dict[str, list[tuple[str, list[str]]]]:
    """Each call site's recorded script calls."""
    return {site: await record(redis_url, call) for site, (_script, call, _keys) in CALL_SITES.items()}


def slots(keys: list[str]) -> set[int]:
    return {key_slot(key.encode()) for key in keys}


def test_every_script_has_a_listed_call_site(recorded) -> None:
    """A script added to server/store/scripts/ fails here until its call sites are listed."""
    assert {script for script, _call, _keys in CALL_SITES.values()} == set(SCRIPTS)
    assert set(ANSWERS) == set(SCRIPTS)


@pytest.mark.parametrize("site", list(CALL_SITES))
def test_a_call_site_passes_the_listed_keys(recorded, site: str) -> None:
    script, _call, keys = CALL_SITES[site]
    assert recorded[site] == [(script, keys)]


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_a_script_touches_only_keys_it_is_given(name: str) -> None:
    """Every command's key is a ``KEYS[...]`` entry: the recorded keys are all it touches."""
    keyless = {"TIME", "PUBSUB"}  # PUBSUB NUMSUB counts a channel's subscribers: no key is read
    calls = re.findall(r"redis\.call\(\s*'(\w+)'\s*(?:,\s*([^,)]+))?", SCRIPTS[name])
    calls += re.findall(r"pcall\(redis\.call,\s*'(\w+)'\s*,\s*([^,)]+)", SCRIPTS[name])
    assert calls
    for command, first in calls:
        if command not in keyless:
            assert re.fullmatch(r"KEYS\[[^\]]+\]", first.strip()), f"{name}: {command} {first}"


@pytest.mark.parametrize("site", list(CALL_SITES))
def test_a_call_sites_keys_share_one_slot(recorded, site: str) -> None:
    for _script, keys in recorded[site]:
        assert len(slots(keys)) == 1, f"{site}: {keys}"


@pytest.mark.parametrize("site", list(OLD_ROOM_SITES))
async def test_a_room_made_before_shard_slots_keeps_the_global_due_index(redis_url: str, site: str) -> None:
    """The one cross-slot call left: a room whose id is on no shard slot (made before ids were)
    keeps its place in the global ``clocks``, which the sweepers still read; a cluster starts
    without such rooms."""
    call, keys = OLD_ROOM_SITES[site]
    assert await record(redis_url, call) == [(CALL_SITES[site][0], keys)]
    assert len(slots([k for k in keys if k != "clocks"])) <= 1  # the room's own keys: one slot


def test_the_families_use_their_own_slots(recorded) -> None:
    """Sanity of the recording: a room, ``{solo}``, ``{players}``, ``{ratings}``, ``{pairing}`` and
    a player's games are six slots."""
    first_keys = [recorded[site][0][1][0] for site in
                  ("Store.set_presence", "Store.record_solo", "Players.register", "Ratings.apply_result",
                   "PairingStore.seek", "PlayerGames.record")]
    assert len(slots(first_keys)) == 6


@pytest.fixture
async def server_slot(redis_url: str) -> AsyncIterator[Callable[[str], Awaitable[int]]]:
    """The embedded Valkey's own slot of a key (``CLUSTER KEYSLOT`` answers without cluster mode;
    a server that cannot answer fails the test: it must never pass unchecked)."""
    client = aioredis.Redis.from_url(redis_url)

    async def slot(key: str) -> int:
        return int(await client.execute_command("CLUSTER", "KEYSLOT", key))

    yield slot
    await client.aclose()


async def test_the_server_computes_the_same_slots(recorded, server_slot) -> None:
    for calls in recorded.values():
        for _script, keys in calls:
            for key in keys:
                assert await server_slot(key) == key_slot(key.encode())

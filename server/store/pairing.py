"""Quick pairing's pools in Redis: seeks wait in a pool until one script pairs two of them.

A **seek** (:class:`Ticket`) is one player waiting in one pool. It draws, when it is made, the
room id and the seat its player would get if *this* seek's script call forms the pair (the
other seek's drawings go unused), so a pair is complete the moment the script forms it and any
process can open its room later under that id. Its lifecycle, all in the ``{pairing}`` slot
(:mod:`server.store.keys`; every script declares all its keys):

- **waiting**: in its pool's ZSET (scored by rating, or by join time in a casual pool, so the
  longest waiting comes first), its record in ``seeks``, the player's one seek in ``seekers``,
  and alive until a time in ``seeks-live`` that its process pushes on while it waits
  (:meth:`PairingStore.refresh`). A seek whose time passed is *dead* (its process died or
  stalled): scripts skip it and drop it wherever they meet it, :meth:`PairingStore.sweep`
  forgets it, and it is never paired.
- **paired**: :meth:`PairingStore.seek` (the new seek against the pool: one call) or
  :meth:`PairingStore.match` (a pool's waiting seeks against each other, as windows widen) took
  it and its partner out of the pool and wrote their :class:`Pair` under both seeks. The pair
  stays until its seeker is told (:meth:`PairingStore.take`, once the answer reached a client
  still there) or, untold, until ``paired_ttl_ms`` pass: meanwhile each next seek of the player
  is handed that pair instead of a new one, until one is told (a seeker whose request closed,
  or whose process died, as the pair formed still finds the game). Handing it over does not
  take it: an answer that never reached its client leaves it for the seek after.
- **ended**: cancelled, timed out or told; nothing of it remains.

Who pairs with whom (:class:`~server.core.pools.Window`, the same arithmetic in Lua): never the
same player; in a rated pool the closest rating within both seekers' windows (ties: the longer
waiting), in a casual pool the longest waiting. A search looks at ``scan`` candidates on each
side of the rating at most, and ``match`` at the pool's first ``match_size`` seeks.

Time (``now_ms``) is always an argument: the caller's wall clock, shared by the processes.
"""

from __future__ import annotations

import asyncio
import json
import random
import secrets
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

import redis.asyncio as aioredis

from ..core.pools import POOLS, Pool, Window
from ..core.room import Player
from . import scripts
from .keys import (
    PAIRING,
    paired_key,
    pairing_channel,
    pool_key,
    seekers_key,
    seeks_key,
    seeks_live_key,
    state_key,
)
from .slots import new_room_id

LIVE_MS = 6_000
"""A waiting seek is dead this long after its process last pushed its time on."""
PAIRED_TTL_MS = 30_000
"""How long a pair waits to be taken by its seeker (or the player's next seek)."""
SCAN = 64
MATCH_SIZE = 1_000
MATCH_PAIRS = 100
SWEEP_LIMIT = 500
DEFAULT_WINDOW = Window()
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Ticket:
    """One seek: a player in a pool, with the room and seat it opens if it forms the pair."""

    seek: str
    player: Player
    pool: Pool
    rating: float
    joined_ms: int
    room: str
    seat: int

    @classmethod
    def new(cls, player: Player, pool: Pool, rating: float, now_ms: int) -> Ticket:
        """A fresh seek (ids and seat from the system's random source); ``rating`` counts only
        in a rated pool."""
        return cls("s" + secrets.token_urlsafe(9), player, pool, float(rating) if pool.rated else 0.0, now_ms,
                   new_room_id(), random.SystemRandom().randrange(2))

    @property
    def score(self) -> float:
        """Its place in the pool: by rating (rated) or by join time (casual: first come, first paired)."""
        return self.rating if self.pool.rated else float(self.joined_ms)

    def to_json(self) -> str:
        return json.dumps({"seek": self.seek, "player": self.player.id, "name": self.player.name,
                           "pool": self.pool.id, "rating": self.rating, "joined": self.joined_ms,
                           "room": self.room, "seat": self.seat})


@dataclass(frozen=True, slots=True)
class Pair:
    """Two seeks paired: the room they play in, and its players by seat."""

    room: str
    pool: Pool
    formed_ms: int
    players: tuple[Player, Player]
    seeks: tuple[str, str]

    def seat_of(self, player_id: str) -> int | None:
        for seat, player in enumerate(self.players):
            if player.id == player_id:
                return seat
        return None

    def to_json(self) -> str:
        return json.dumps({"room": self.room, "pool": self.pool.id, "formed": self.formed_ms,
                           "players": [[p.id, p.name, s] for p, s in zip(self.players, self.seeks, strict=True)]})

    @classmethod
    def from_json(cls, text: bytes | str) -> Pair:
        data = json.loads(text)
        (id0, name0, seek0), (id1, name1, seek1) = data["players"]
        return cls(data["room"], POOLS[data["pool"]], int(data["formed"]), (Player(id0, name0), Player(id1, name1)),
                   (seek0, seek1))


class Answer(StrEnum):
    """What a pairing script says about a seek."""

    WAITING = "waiting"
    """Entered its pool; nobody fits yet."""
    FORMED = "formed"
    """This call paired it: the caller opens the room and announces the pair."""
    HANDED = "handed"
    """The player's earlier seek was paired and its seeker never told: here is that pair (still
    untaken: it is handed again until :meth:`PairingStore.take`)."""
    ALREADY_SEEKING = "already_seeking"
    """The player has a live waiting seek; nothing changed."""
    PAIRED = "paired"
    """(end) It was paired: here is the pair."""
    CANCELLED = "cancelled"
    """(end) It was waiting and is gone now."""
    GONE = "gone"
    """(end) Nothing of it was left (ended before, or dead and swept)."""


@dataclass(frozen=True, slots=True)
class Reply:
    answer: Answer
    pair: Pair | None = None


async def _kept(call: Awaitable[T]) -> T:
    """``await call``, keeping a cancel that redis-py lost: on Python 3.11 its writes go through
    ``asyncio.wait_for``, which drops a cancel that arrives as the write completes (CPython
    gh-86296, fixed in 3.12; seen here as a seek that went on waiting after its request closed).
    The task then runs on with ``cancelling()`` set, so that is the cancel to raise again."""
    result = await call
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
    return result


def _reply(raw: Any) -> Reply:
    answer = Answer(raw[0].decode())
    return Reply(answer, Pair.from_json(raw[1]) if len(raw) > 1 else None)


class PairingStore:
    """The pools over a redis-py client; one instance per process (it holds no state)."""

    def __init__(self, redis: aioredis.Redis, *, window: Window = DEFAULT_WINDOW, tag: str = PAIRING,
                 live_ms: int = LIVE_MS, paired_ttl_ms: int = PAIRED_TTL_MS, scan: int = SCAN,
                 match_size: int = MATCH_SIZE, match_pairs: int = MATCH_PAIRS) -> None:
        self.redis = redis
        self.window = window
        self.tag = tag
        self.live_ms = live_ms
        self.paired_ttl_ms = paired_ttl_ms
        self.scan = scan
        self.match_size = match_size
        self.match_pairs = match_pairs
        self.channel = pairing_channel(tag)
        self._keys = [seeks_live_key(tag), seeks_key(tag), seekers_key(tag), paired_key(tag), self.channel]
        self._seek = redis.register_script(scripts.PAIRING_SEEK)
        self._match = redis.register_script(scripts.PAIRING_MATCH)
        self._end = redis.register_script(scripts.PAIRING_END)
        self._refresh = redis.register_script(scripts.PAIRING_REFRESH)
        self._sweep = redis.register_script(scripts.PAIRING_SWEEP)
        self._announce = redis.register_script(scripts.PAIRING_ANNOUNCE)

    def _search_args(self, pool: Pool, now_ms: int) -> list[Any]:
        w = self.window
        return [now_ms, "1" if pool.rated else "0", repr(w.base), repr(w.per_s), w.open_after_ms, self.scan,
                self.paired_ttl_ms]

    # ------------------------------------------------------------------ a seek's life

    async def seek(self, ticket: Ticket, now_ms: int) -> Reply:
        """Enter ``ticket`` in its pool, or pair it at once with the best live partner there.
        ``WAITING``, ``FORMED`` (the caller opens the room), ``HANDED`` or ``ALREADY_SEEKING``."""
        raw = await _kept(self._seek(keys=[*self._keys, pool_key(ticket.pool.id, self.tag)],
                                     args=[*self._search_args(ticket.pool, now_ms), ticket.to_json(),
                                           repr(ticket.score), now_ms + self.live_ms]))
        return _reply(raw)

    async def end(self, ticket: Ticket, take: bool, tell: bool = False) -> Reply:
        """End a seek: ``CANCELLED`` if it was waiting (it is gone now), ``PAIRED`` with its pair
        (taken: marked told, if ``take``; else left for the player's next seek: see
        :meth:`take`), or ``GONE``.
        ``tell`` publishes the end, so its waiter in any process stops at once."""
        raw = await _kept(self._end(keys=[*self._keys, pool_key(ticket.pool.id, self.tag)],
                                    args=[ticket.seek, ticket.player.id, "1" if take else "0", "1" if tell else "0"]))
        return _reply(raw)

    async def take(self, pair: Pair, player_id: str) -> bool:
        """``player_id``'s seeker was told of ``pair`` (the answer reached a client still there):
        the pair is consumed, so the player's next seek starts afresh. False if it was gone
        already (taken, or expired)."""
        seat = pair.seat_of(player_id)
        assert seat is not None, "a pair taken by a player not in it"
        raw = await _kept(self._end(keys=[*self._keys, pool_key(pair.pool.id, self.tag)],
                                    args=[pair.seeks[seat], player_id, "1", "0"]))
        return _reply(raw).answer is Answer.PAIRED

    async def refresh(self, seeks: Sequence[str], now_ms: int) -> list[Pair | bool]:
        """Keep ``seeks`` alive: per seek its :class:`Pair` if paired, True if still waiting,
        False if it is gone (cancelled elsewhere, or dropped as dead)."""
        if not seeks:
            return []
        raw = await _kept(self._refresh(keys=self._keys, args=[now_ms + self.live_ms, *seeks]))
        return [Pair.from_json(item) if item not in (b"w", b"") else item == b"w" for item in raw]

    async def announce(self, pair: Pair, told: Ticket | None = None) -> None:
        """Publish ``pair`` (its room is open) to every process; ``told``: this process's own
        seeker in it, who is told by the caller and so takes the pair now."""
        told_seek, told_player = (told.seek, told.player.id) if told else ("", "")
        await _kept(self._announce(keys=self._keys, args=[pair.to_json(), told_seek, told_player]))

    # ------------------------------------------------------------------ every process, periodically

    async def match(self, pool: Pool, now_ms: int) -> list[Pair]:
        """Pair what waits in ``pool`` now (the longest waiting first, each with its best
        partner); the caller opens each pair's room and announces it."""
        raw = await _kept(self._match(keys=[*self._keys, pool_key(pool.id, self.tag)],
                                      args=[*self._search_args(pool, now_ms), self.match_size, self.match_pairs]))
        return [Pair.from_json(text) for text in raw]

    async def sweep(self, now_ms: int, limit: int = SWEEP_LIMIT) -> int:
        """Forget seeks that nobody kept alive; how many."""
        return int(await _kept(self._sweep(keys=self._keys, args=[now_ms, limit])))

    # ------------------------------------------------------------------ reading

    async def census(self) -> dict[str, int]:
        """Seeks in each pool (one round trip). Dead ones count until a match pass of their pool
        drops them (a tick after their time ran out)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for pool_id in POOLS:
                pipe.zcard(pool_key(pool_id, self.tag))
            counts = await _kept(pipe.execute())
        return dict(zip(POOLS, counts, strict=True))

    async def seek_of(self, player_id: str) -> Ticket | None:
        """The player's waiting seek, if any (also a dead one not yet forgotten)."""
        seek = await _kept(self.redis.hget(seekers_key(self.tag), player_id))
        raw = await _kept(self.redis.hget(seeks_key(self.tag), seek)) if seek else None
        if raw is None:
            return None
        data = json.loads(raw)
        return Ticket(data["seek"], Player(data["player"], data["name"]), POOLS[data["pool"]], data["rating"],
                      data["joined"], data["room"], data["seat"])

    async def room_exists(self, room_id: str) -> bool:
        return bool(await _kept(self.redis.exists(state_key(room_id))))

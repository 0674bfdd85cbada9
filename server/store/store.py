"""The room store over Redis: load, commit, clocks, presence, the shared secret.

Keys and their layout: :mod:`server.store.keys`; the scripts: :mod:`server.store.scripts`.
The move path (``commit``, ``load``, ``load_many``) goes through the client seam
(:mod:`server.store.link`: the lean pipelined client or redis-py), everything else through a
bounded redis-py pool.

Durability: the embedded server runs ``appendfsync always``, so Redis fsyncs the AOF before it
sends the script's reply and the PUBLISHed message (both leave in the same event-loop turn,
after the fsync): an update frame is built from a durable commit. With an external server the
commit also waits for ``WAITAOF 1 0``, sent right behind the script on the same connection
(``WAITAOF`` waits only for the writes of the connection that sends it; see docs/RELIABILITY.md,
"Faults", for the trade-off with ``appendfsync everysec``).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from . import scripts
from .keys import (
    CLOCK_KEYS,
    LOBBY,
    ONLINE,
    ONLINE_SEEN,
    SECRET,
    analysis_key,
    channel,
    clock_key,
    log_key,
    solo_bests_key,
    solo_board_key,
    state_key,
    ticket_key,
    unpack,
    watchers_key,
)
from .link import open_link
from .messages import Attendance
from .resp import ScriptCall

log = logging.getLogger("mineduel.store")

PRESENCE_KEEP_S = 86_400
PING_TIMEOUT_S = 2.0
"""How long ``/healthz`` waits for the store's answer."""
LOBBY_KEEP = 500
LOBBY_MAX_AGE_MS = 7 * 24 * 3600 * 1000
"""A room's presence hash (and when each seat left) outlives its last connection this long."""


WAITAOF_MS = 1000
"""How long a commit waits for its write to be fsynced (an external Redis; see the module's doc)."""

KeepDue = Literal["keep"]
KEEP_DUE: KeepDue = "keep"
"""A commit's ``deadline_ms`` that leaves the room's entry in its due index as it is (the commits
of a finished game after its end: :meth:`server.store.service.RoomService.act`)."""


class Committed(NamedTuple):
    """What :meth:`Store.commit` found: ``ok`` (written); ``version``, the new version when
    written, else the stored one (``None``: no room); ``published``, whether the commit's
    message went out on the room's channel (only if somebody other than the committer
    listens: ``scripts.rooms.COMMIT``)."""

    ok: bool
    version: int | None
    published: bool = False


class Store:
    """Thin async wrapper over Redis; knows keys, not rules. The move path (``commit``,
    ``load``) uses one pipelined connection (:mod:`server.resp`), the rest a redis-py pool."""

    def __init__(self, url: str, waitaof: bool = False, max_connections: int = 64, lean: bool = True) -> None:
        self.url = url
        self.lean = lean
        # Bounded: under a burst, callers wait for a free connection instead of opening hundreds.
        # Timeouts: a Redis that stops answering fails calls (edges answer "unavailable")
        # instead of hanging them; no retries: a failed commit is reported, never replayed.
        pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=max_connections, timeout=10,
                                                        socket_timeout=5, socket_connect_timeout=2)
        self.redis = aioredis.Redis(connection_pool=pool, decode_responses=False)
        # the move path (commit, load) goes through the client seam: server/store/link.py
        self.link = open_link(url, lean=lean, timeout_s=5, connect_timeout_s=2)
        self._drop_due = self.redis.register_script(scripts.DROP_DUE)
        self._solo_result = self.redis.register_script(scripts.SOLO_RESULT)
        self._keep_analysis = self.redis.register_script(scripts.KEEP_ANALYSIS)
        self.waitaof = waitaof

    async def close(self) -> None:
        await self.link.aclose()
        await self.redis.aclose()

    async def ping(self, timeout_s: float = PING_TIMEOUT_S) -> bool:
        """Whether the store answers within ``timeout_s`` (``/healthz``: a load balancer's health
        check waits a few seconds at most; a hung store made it wait the client's 5 s)."""
        try:
            return bool(await asyncio.wait_for(self.redis.ping(), timeout_s))
        except Exception:
            return False

    # ------------------------------------------------------------------ rooms

    async def load(self, room_id: str) -> tuple[int, bytes] | None:
        """``(version, packed room)`` or ``None`` if the room does not exist."""
        v, data = await self.link.execute("HMGET", state_key(room_id), "v", "data")
        if v is None or data is None:
            return None
        return int(v), data

    async def load_many(self, room_ids: Sequence[str]) -> list[bytes | None]:
        """The packed rooms of ``room_ids`` (``None`` where one does not exist), read in one
        pipelined batch: the pages that list rooms pay one round trip, not one per room."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for room_id in room_ids:
                pipe.hget(state_key(room_id), "data")
            return list(await pipe.execute())

    async def commit(
        self,
        room_id: str,
        expected: int | None,
        version: int,
        data: bytes,
        log_entry: bytes,
        message: bytes,
        deadline_ms: int | None | KeepDue,
        ttl_s: int | None = None,
        own_channel: str = "",
    ) -> Committed:
        """Write version ``version`` iff the stored one is ``expected`` (``None`` = must not exist).

        ``deadline_ms``: the room's place in its due index (:func:`~server.store.keys.clock_key`;
        ``None``: none; :data:`KEEP_DUE`: whatever it is now).
        ``ttl_s`` (re)sets the expiry of the room's state and log (``None``: keep them).
        ``own_channel``: this process's link channel if it counts itself among the subscribers
        of the room's channel (:meth:`~.cache.RoomCache.own_channel`); ``message`` is published
        only to others. When the settings ask for it, waits until the write is fsynced to the
        AOF before returning.
        """
        keys = [state_key(room_id), log_key(room_id), channel(room_id), clock_key(room_id), analysis_key(room_id)]
        args = [
            -1 if expected is None else expected, version, data, log_entry, message, room_id,
            "" if deadline_ms is None else deadline_ms, "" if not ttl_s else int(ttl_s), own_channel,
        ]
        if self.waitaof:
            reply, waited = await self.link.evalsha_durable(scripts.COMMIT, keys, args, WAITAOF_MS)
            self._check_aof(waited)
        else:
            reply = await self.link.evalsha(scripts.COMMIT, keys, args)
        if not reply[0]:
            current = reply[1]
            return Committed(False, int(current) if current not in (b"", None) else None)
        return Committed(True, version, bool(reply[2]))

    def _check_aof(self, waited: Any) -> None:
        """What ``WAITAOF`` answered after a commit: fsynced, not fsynced in time (logged), or
        unknown to the server (logged once; then the server's fsync policy is all there is)."""
        if isinstance(waited, ResponseError):
            log.warning("WAITAOF unsupported (%s); relying on the server's fsync policy", waited)
            self.waitaof = False
        elif isinstance(waited, Exception):
            raise waited
        elif int(waited[0]) < 1:
            log.warning("WAITAOF: the write is not fsynced locally (is appendonly on?)")

    async def durability(self) -> dict[str, str]:
        """The server's ``appendonly`` and ``appendfsync`` settings (empty if CONFIG is refused)."""
        try:
            found = await self.redis.config_get("append*")
        except ResponseError:
            return {}
        return {(k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
                for k, v in found.items() if k in (b"appendonly", b"appendfsync", "appendonly", "appendfsync")}

    async def analysis(self, room_id: str) -> bytes | None:
        """A finished game's stored analysis (:mod:`server.store.analyses`), if it is stored."""
        return await self.redis.get(analysis_key(room_id))

    async def keep_analysis(self, room_id: str, data: bytes) -> bytes | None:
        """Store a finished game's analysis once, expiring with the room; returns what is
        stored now (``data``, or the bytes an earlier writer stored), ``None`` when the room
        is gone (nothing stored)."""
        found = await self._keep_analysis(keys=[state_key(room_id), analysis_key(room_id)], args=[data])
        if found == 1:
            return data
        return found if isinstance(found, bytes) else None

    async def move_log(self, room_id: str) -> list[Any]:
        return [unpack(x) for x in await self.redis.lrange(log_key(room_id), 0, -1)]

    # ------------------------------------------------------------------ clocks, presence, secret

    async def due_clocks(self, now_ms: int, limit: int = 100) -> list[tuple[str, int]]:
        """The rooms whose due time has come (at most ``limit``, the earliest first), each with
        that time: every due index read in one round trip (16 shard slots' and the old global
        one, :data:`~server.store.keys.CLOCK_KEYS`). Asked through the move path's link, not
        the redis-py pool: every process asks every 0.1 s, and a redis-py call cost as much of
        the app's CPU as the sweeper's whole rest (0.9% of it at 500 rooms under load)."""
        found = await self.link.execute_many(
            [("ZRANGEBYSCORE", key, "-inf", now_ms, "WITHSCORES", "LIMIT", 0, limit) for key in CLOCK_KEYS])
        due = [entry for entries in found for entry in _due_pairs(entries)]
        due.sort(key=lambda entry: entry[1])
        return due[:limit]

    async def drop_clock(self, room_id: str, due_ms: int) -> bool:
        """Take ``room_id`` out of its due index if its due time is still ``due_ms`` (as read by
        :meth:`due_clocks`); a commit since then has set the room's current one."""
        return bool(await self._drop_due(keys=[clock_key(room_id)], args=[room_id, due_ms]))

    async def postpone_clock(self, room_id: str, due_ms: int) -> None:
        """Move ``room_id``'s due time to ``due_ms`` if it is in its due index (a finished room
        whose end failed to settle: tried again then, not at every sweep)."""
        await self.redis.zadd(clock_key(room_id), {room_id: due_ms}, xx=True)

    async def discard_room(self, room_id: str) -> None:
        """Delete a room nobody was ever shown (a rematch room whose link lost its race): its
        state, log and place in its due index, so no sweeper acts on it later."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.delete(state_key(room_id), log_key(room_id), analysis_key(room_id))
            pipe.zrem(clock_key(room_id), room_id)
            await pipe.execute()

    async def list_room(self, room_id: str, created_ms: int, keep: int = LOBBY_KEEP,
                        max_age_ms: int = LOBBY_MAX_AGE_MS) -> None:
        """Put a room on the lobby's list; the list keeps its newest ``keep`` entries that
        are at most ``max_age_ms`` old. Through the move path's link, in one write: every
        rematch is listed (about one move in 50 under load), and a redis-py pipeline costs the
        app several times the lean client's CPU."""
        await self.link.execute_many([("ZADD", LOBBY, created_ms, room_id),
                                      ("ZREMRANGEBYSCORE", LOBBY, "-inf", created_ms - max_age_ms),
                                      ("ZREMRANGEBYRANK", LOBBY, 0, -keep - 1)])

    async def relist_room(self, room_id: str, listed_ms: int) -> None:
        """Put a room back on the lobby's list, as listed at ``listed_ms``, if it is not on it
        (``ZADD NX``: one command, and nothing changes for a room that is listed). Through the move path's link: a player's
        every connection to a listed room asks it (:meth:`server.store.hub.Hub.attach`). No
        trimming: the next :meth:`list_room` trims, and the lobby's read never looks past
        :data:`LOBBY_KEEP`."""
        await self.link.execute("ZADD", LOBBY, "NX", listed_ms, room_id)

    async def listed_rooms(self, count: int) -> list[str]:
        """The newest ``count`` listed room ids (one read: a snapshot of the list, so a page
        through them meets every room once, whatever is listed or unlisted meanwhile)."""
        return [raw.decode() for raw in await self.redis.zrevrange(LOBBY, 0, count - 1)]

    async def attendance_fields(self, room_ids: Sequence[str]) -> list[dict[bytes, bytes]]:
        """The presence hash of each room (read only, one round trip): see
        :func:`server.store.presence.attendance_of`."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for room_id in room_ids:
                pipe.hgetall(watchers_key(room_id))
            return list(await pipe.execute()) if room_ids else []

    async def set_online(self, process_id: str, players: int, now_ms: int, alive_ms: int) -> int:
        """Write this process's count of connected players; returns the sum over the processes
        that wrote theirs within ``alive_ms`` (one round trip; a dead process's count is
        dropped by the next writer)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(ONLINE, process_id, players)
            pipe.zadd(ONLINE_SEEN, {process_id: now_ms})
            pipe.zrangebyscore(ONLINE_SEEN, now_ms - alive_ms, "+inf")
            pipe.hgetall(ONLINE)
            _, _, alive, counts = await pipe.execute()
        live = set(alive)
        dead = [field for field in counts if field not in live]
        if dead:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hdel(ONLINE, *dead)
                pipe.zrem(ONLINE_SEEN, *dead)
                await pipe.execute()
        return sum(int(n) for field, n in counts.items() if field in live)

    async def unlist(self, room_ids: Sequence[str]) -> None:
        """Take rooms off the lobby's list (the lobby's read: rooms over, gone, or left by their
        people)."""
        if room_ids:
            await self.redis.zrem(LOBBY, *room_ids)

    async def record_solo(self, preset: str, mode: str, day: str, player_id: str, result: str, time_ms: int,
                          keep: int, day_ttl_s: int, room_id: str | None = None, day_until_ms: int = 0,
                          replace_best: bool = False) -> bool:
        """Put a won classic game on its leaderboards (idempotent: ``result`` is unique per
        game); True if it is the player's best. ``replace_best``: it is, whatever the time of
        the best stored now (which is no best: :meth:`server.store.results.Results.finished`).

        ``room_id``: the game's room, kept as long as a board links to it. On the all-time
        board, its state and log lose their expiry (``PERSIST``: its replay and fairness proof
        stay); only on the day's board, they live at least until ``day_until_ms`` (the day's
        board is gone by then; a longer expiry stays). Right after the script, not in it: the
        room's keys are in another slot. A failure here raises, and the whole call is made again
        (the script answers the same for the same result).

        A player's best alone keeps nothing: guests are free, so every guest's first win is a
        best, and keeping those would let the store grow without bound (an outside probe: 12
        guests, 12 rooms kept for good). A best's replay lives as long as any finished game.
        A game once kept stays kept when faster ones push it off the board: letting it expire
        again would need the retention of finished rooms here and a look at the boards; what
        is kept grows only with the records set (entries into a board's top 500)."""
        found = await self._solo_result(
            keys=[solo_board_key(preset, mode, "all"), solo_board_key(preset, mode, day), solo_bests_key(player_id)],
            args=[result, time_ms, keep, day_ttl_s, f"{preset}:{mode}", "1" if replace_best else ""])
        best, on_all, on_day = (int(x) for x in found)
        if room_id is not None and (on_all or on_day):
            async with self.redis.pipeline(transaction=False) as pipe:
                for key in (state_key(room_id), log_key(room_id)):
                    if on_all:
                        pipe.persist(key)
                    else:
                        pipe.pexpireat(key, day_until_ms, gt=True)  # GT: never shortened, never given to a kept key
                await pipe.execute()
        return bool(best)

    async def solo_board(self, preset: str, mode: str, period: str, count: int) -> list[str]:
        """The best ``count`` results (JSON), fastest first."""
        return [raw.decode() for raw in await self.redis.zrange(solo_board_key(preset, mode, period), 0, count - 1)]

    async def solo_bests(self, player_id: str) -> dict[str, str]:
        found = await self.redis.hgetall(solo_bests_key(player_id))
        return {k.decode(): v.decode() for k, v in found.items()}

    async def set_presence(self, room_id: str, process_id: str, counts: tuple[int, int, int], ttl_s: int,
                           now_ms: int, publish: bool) -> Attendance:
        """Set this process's connections to a room (spectators, seat 0, seat 1); returns who
        is connected over all processes (and publishes it when ``publish``). Through the move
        path's link: each rematch writes two rooms' presence, and through redis-py a write
        cost about 0.3 ms of the app's CPU (1.3% of it under load, docs/PERFORMANCE.md)."""
        text = await self.link.evalsha(scripts.PRESENCE, *_presence_call(room_id, process_id, counts, ttl_s, now_ms,
                                                                          publish))
        return _attendance(text)

    async def refresh_presence(self, rooms: Sequence[tuple[str, tuple[int, int, int]]], process_id: str, ttl_s: int,
                               now_ms: int) -> list[Attendance]:
        """:meth:`set_presence` without publishing, for each ``(room id, counts)`` of ``rooms``,
        in one round trip through the move path's link: a process's periodic refresh of its
        fields. Why: one redis-py call per room every 10 s was 1.6% of the app's CPU with 500
        rooms under load, and a redis-py pipeline of them still 0.6% (docs/PERFORMANCE.md)."""
        calls = [_presence_call(room_id, process_id, counts, ttl_s, now_ms, False) for room_id, counts in rooms]
        return [_attendance(text) for text in await self.link.evalsha_many(scripts.PRESENCE, calls)]

    async def publish_presence(self, room_id: str, attendance: Attendance) -> None:
        """Publish ``attendance`` on the room's channel as the ``PRESENCE`` script does (``P``
        and its text): for a change no write of this process made (another one's fields expired)."""
        await self.link.execute("PUBLISH", channel(room_id), "P" + attendance.to_text())

    async def claim_ticket(self, ticket: str, ttl_ms: int) -> bool:
        """Mark a room page's socket ticket used (``SET NX``, expiring after ``ttl_ms``): True
        the first time, False when a socket claimed it before (:mod:`server.web.socket_ticket`)."""
        return await self.link.execute("SET", ticket_key(ticket), "1", "NX", "PX", ttl_ms) is not None

    async def shared_secret(self) -> str:
        """A random signing key created once and shared through Redis."""
        await self.redis.set(SECRET, secrets.token_hex(32), nx=True)
        value = await self.redis.get(SECRET)
        return value.decode()


def _presence_call(room_id: str, process_id: str, counts: tuple[int, int, int], ttl_s: int, now_ms: int,
                   publish: bool) -> ScriptCall:
    """The ``PRESENCE`` script's keys and arguments."""
    spectators, seat0, seat1 = counts
    return ([watchers_key(room_id), channel(room_id)],
            [process_id, spectators, ttl_s, "1" if publish else "0", seat0, seat1, now_ms, PRESENCE_KEEP_S])


def _attendance(text: Any) -> Attendance:
    return Attendance.from_text(text.decode() if isinstance(text, bytes) else str(text))


def _due_pairs(found: list[Any]) -> list[tuple[str, int]]:
    """``ZRANGEBYSCORE ... WITHSCORES`` as ``(room id, due ms)`` pairs, flat (RESP2, the lean
    client) or paired (redis-py)."""
    if found and isinstance(found[0], (list, tuple)):
        return [(room_id.decode(), int(float(due))) for room_id, due in found]
    return [(found[k].decode(), int(float(found[k + 1]))) for k in range(0, len(found), 2)]

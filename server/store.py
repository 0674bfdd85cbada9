"""Redis keys and the atomic commit. Every key of a room carries the hash tag ``{<room id>}``.

=========================  ======  ==========================================================
key                        type    content
=========================  ======  ==========================================================
``game:{id}:state``        hash    ``v`` (version) and ``data`` (msgpack of ``Room.to_data()``)
``game:{id}:log``          list    one msgpack ``[v, kind, data]`` per committed change
``game:{id}:events``       chan    commit messages ``[b"commit", v, room, events]``; presence ``P<n>``
``game:{id}:watchers``     hash    spectators per server process (fields expire if it dies)
``clocks``                 zset    room id → clock deadline (ms) of rooms with a running clock
``mineduel:secret``        string  the shared token-signing key when ``SECRET_KEY`` is unset
=========================  ======  ==========================================================

The commit is ONE Lua script: compare the stored version with the expected one, and only then
write the state, append to the log, update the clock deadline, renew the room's retention
(``EXPIRE`` on its state and log: see :class:`~server.config.Settings` ``finished_ttl_s`` and
``idle_ttl_s``) and publish. Two processes can never both commit version N.

Durability: the embedded server runs ``appendfsync always``, so Redis fsyncs the AOF before it
sends the script's reply and the PUBLISHed message (both leave in the same event-loop turn,
after the fsync): an update frame is built from a durable commit. With an external server the
commit also waits for ``WAITAOF 1 0`` (see docs/RELIABILITY.md, "Faults", for the trade-off
with ``appendfsync everysec``). (``clocks`` is one global key: on a Redis Cluster it would have to
become one ZSET per slot; everything else is cluster-ready.)
"""

from __future__ import annotations

import logging
from typing import Any

import msgpack
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from .resp import RespClient

log = logging.getLogger("mineduel.store")

CLOCKS = "clocks"
SECRET = "mineduel:secret"

_COMMIT = """
local cur = redis.call('HGET', KEYS[1], 'v')
if ARGV[1] == '-1' then
  if cur then return {0, cur} end
elseif cur ~= ARGV[1] then
  return {0, cur or ''}
end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'data', ARGV[3])
redis.call('RPUSH', KEYS[2], ARGV[4])
if ARGV[7] == '' then
  redis.call('ZREM', KEYS[4], ARGV[6])
else
  redis.call('ZADD', KEYS[4], ARGV[7], ARGV[6])
end
if ARGV[8] ~= '' then
  redis.call('EXPIRE', KEYS[1], ARGV[8])
  redis.call('EXPIRE', KEYS[2], ARGV[8])
end
redis.call('PUBLISH', KEYS[3], ARGV[5])
return {1, ARGV[2]}
"""

_PRESENCE = """
if tonumber(ARGV[2]) > 0 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  local ok = pcall(redis.call, 'HEXPIRE', KEYS[1], ARGV[3], 'FIELDS', 1, ARGV[1])
  if not ok then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
else
  redis.call('HDEL', KEYS[1], ARGV[1])
end
local total = 0
for _, n in ipairs(redis.call('HVALS', KEYS[1])) do total = total + tonumber(n) end
if ARGV[4] == '1' then redis.call('PUBLISH', KEYS[2], 'P' .. total) end
return total
"""


def state_key(room_id: str) -> str:
    return f"game:{{{room_id}}}:state"


def log_key(room_id: str) -> str:
    return f"game:{{{room_id}}}:log"


def channel(room_id: str) -> str:
    return f"game:{{{room_id}}}:events"


def watchers_key(room_id: str) -> str:
    return f"game:{{{room_id}}}:watchers"


def room_of_channel(name: bytes | str) -> str:
    """Inverse of :func:`channel`."""
    text = name.decode() if isinstance(name, bytes) else name
    return text[text.index("{") + 1 : text.index("}")]


def pack(obj: Any) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


def unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


class Store:
    """Thin async wrapper over Redis; knows keys, not rules. The move path (``commit``,
    ``load``) uses one pipelined connection (:mod:`server.resp`), the rest a redis-py pool."""

    def __init__(self, url: str, waitaof: bool = False, max_connections: int = 64) -> None:
        self.url = url
        # Bounded: under a burst, callers wait for a free connection instead of opening hundreds.
        # Timeouts: a Redis that stops answering fails calls (edges answer "unavailable")
        # instead of hanging them; no retries: a failed commit is reported, never replayed.
        pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=max_connections, timeout=10,
                                                        socket_timeout=5, socket_connect_timeout=2)
        self.redis = aioredis.Redis(connection_pool=pool, decode_responses=False)
        # the move path (commit, load) goes through one pipelined connection: server/resp.py
        self.fast = RespClient(url, timeout_s=5, connect_timeout_s=2)
        self._presence = self.redis.register_script(_PRESENCE)
        self.waitaof = waitaof

    async def close(self) -> None:
        self.fast.close()
        await self.redis.aclose()

    async def ping(self) -> bool:
        try:
            return bool(await self.redis.ping())
        except Exception:
            return False

    # ------------------------------------------------------------------ rooms

    async def load(self, room_id: str) -> tuple[int, bytes] | None:
        """``(version, packed room)`` or ``None`` if the room does not exist."""
        v, data = await self.fast.execute("HMGET", state_key(room_id), "v", "data")
        if v is None or data is None:
            return None
        return int(v), data

    async def commit(
        self,
        room_id: str,
        expected: int | None,
        version: int,
        data: bytes,
        log_entry: bytes,
        message: bytes,
        deadline_ms: int | None,
        ttl_s: int | None = None,
    ) -> tuple[bool, int | None]:
        """Write version ``version`` iff the stored one is ``expected`` (``None`` = must not exist).

        Returns ``(True, version)`` or ``(False, stored version or None)``. ``ttl_s`` (re)sets
        the expiry of the room's state and log (``None``: keep them). When the settings ask
        for it, waits until the write is fsynced to the AOF before returning.
        """
        ok, current = await self.fast.evalsha(
            _COMMIT,
            [state_key(room_id), log_key(room_id), channel(room_id), CLOCKS],
            [
                -1 if expected is None else expected, version, data, log_entry, message, room_id,
                "" if deadline_ms is None else deadline_ms, "" if not ttl_s else int(ttl_s),
            ],
        )
        if not ok:
            return False, int(current) if current not in (b"", None) else None
        if self.waitaof:
            await self._wait_aof()
        return True, version

    async def _wait_aof(self) -> None:
        try:
            local, _replicas = await self.redis.execute_command("WAITAOF", 1, 0, 1000)
            if int(local) < 1:
                log.warning("WAITAOF: the write is not fsynced locally (is appendonly on?)")
        except ResponseError as exc:  # an old server without WAITAOF: stop asking
            log.warning("WAITAOF unsupported (%s); relying on the server's fsync policy", exc)
            self.waitaof = False

    async def durability(self) -> dict[str, str]:
        """The server's ``appendonly`` and ``appendfsync`` settings (empty if CONFIG is refused)."""
        try:
            found = await self.redis.config_get("append*")
        except ResponseError:
            return {}
        return {(k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
                for k, v in found.items() if k in (b"appendonly", b"appendfsync", "appendonly", "appendfsync")}

    async def move_log(self, room_id: str) -> list[Any]:
        return [unpack(x) for x in await self.redis.lrange(log_key(room_id), 0, -1)]

    # ------------------------------------------------------------------ clocks, presence, secret

    async def due_clocks(self, now_ms: int, limit: int = 100) -> list[str]:
        ids = await self.redis.zrangebyscore(CLOCKS, "-inf", now_ms, start=0, num=limit)
        return [i.decode() for i in ids]

    async def drop_clock(self, room_id: str) -> None:
        await self.redis.zrem(CLOCKS, room_id)

    async def set_watchers(self, room_id: str, process_id: str, count: int, ttl_s: int, publish: bool) -> int:
        """Set this process's spectator count for a room; returns the total over processes."""
        total = await self._presence(
            keys=[watchers_key(room_id), channel(room_id)],
            args=[process_id, count, ttl_s, "1" if publish else "0"],
        )
        return int(total)

    async def shared_secret(self) -> str:
        """A random signing key created once and shared through Redis."""
        import secrets

        await self.redis.set(SECRET, secrets.token_hex(32), nx=True)
        value = await self.redis.get(SECRET)
        return value.decode()

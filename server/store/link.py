"""The seam between the store and a Redis client, for the commands on the move path.

The commit (``EVALSHA``), the room load (``HMGET``), the sweeper's due list (one
``ZRANGEBYSCORE`` per due index, written together every 0.1 s) and the presence writes (the
``PRESENCE`` script: two rooms' at each rematch, and every room's refresh, written together in
batches) go through a :class:`CommandLink`:

- :class:`~server.store.resp.RespClient`, the lean pipelined client (a speed bypass: redis-py
  spends as much Python per command as the engine spends on a move), when the URL is one it
  serves (``redis://``, ``valkey://``, ``unix://``) and ``lean`` is on;
- :class:`RedisPyLink`, redis-py's client, for every other URL redis-py accepts (``rediss://``,
  options in the query) and whenever ``MINEDUEL_LEAN_REDIS=off``: the plain path, which CI
  runs the server tests on too. A cluster-aware client can replace this seam later.

Both raise redis-py's exception classes, so the rest of the server treats failures alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from .resp import Address, RespClient, ScriptCall


class CommandLink(Protocol):
    async def execute(self, *args: bytes | str | int) -> Any: ...

    async def execute_many(self, commands: Sequence[tuple[bytes | str | int, ...]]) -> list[Any]:
        """The commands written together (one round trip, no transaction): their replies in
        order, or the first failure raised."""
        ...

    async def evalsha(self, script: str, keys: list[str], args: list[bytes | str | int]) -> Any:
        """``EVALSHA`` of ``script``, loading it first if the server does not know it."""
        ...

    async def evalsha_many(self, script: str, calls: Sequence[ScriptCall]) -> list[Any]:
        """``EVALSHA`` of ``script`` once per ``(keys, args)`` of ``calls``, written together (one
        round trip, no transaction; all again after loading the script if the server did not
        know it, so the script must be one that may run twice): the replies in order, or the
        first failure raised."""
        ...

    async def evalsha_durable(self, script: str, keys: list[str], args: list[bytes | str | int],
                              timeout_ms: int) -> tuple[Any, Any]:
        """``EVALSHA`` and then ``WAITAOF 1 0 timeout_ms`` on one connection (``WAITAOF`` waits
        only for the writes of the connection that sends it): the script's reply, and
        ``WAITAOF``'s or the exception it failed with (a server without it)."""
        ...

    async def aclose(self) -> None: ...


class RedisPyLink:
    """:class:`CommandLink` over a redis-py client (its own small pool)."""

    def __init__(self, url: str, timeout_s: float, connect_timeout_s: float, max_connections: int = 64) -> None:
        # Bounded: a burst of callers waits for a connection instead of opening thousands. No
        # retries, as with the lean client: a failed commit is reported, never replayed.
        pool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=10, socket_timeout=timeout_s,
            socket_connect_timeout=connect_timeout_s, retry=Retry(NoBackoff(), 0))
        self.redis = aioredis.Redis(connection_pool=pool, decode_responses=False)
        self._scripts: dict[str, Any] = {}

    async def execute(self, *args: bytes | str | int) -> Any:
        return await self.redis.execute_command(*args)

    async def execute_many(self, commands: Sequence[tuple[bytes | str | int, ...]]) -> list[Any]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for command in commands:
                pipe.execute_command(*command)
            return list(await pipe.execute())

    async def evalsha(self, script: str, keys: list[str], args: list[bytes | str | int]) -> Any:
        return await self._registered(script)(keys=keys, args=args)

    async def evalsha_many(self, script: str, calls: Sequence[ScriptCall]) -> list[Any]:
        registered = self._registered(script)
        async with self.redis.pipeline(transaction=False) as pipe:
            for keys, args in calls:
                await registered(keys=keys, args=args, client=pipe)
            return list(await pipe.execute())

    async def evalsha_durable(self, script: str, keys: list[str], args: list[bytes | str | int],
                              timeout_ms: int) -> tuple[Any, Any]:
        async with self.redis.pipeline(transaction=False) as pipe:  # one connection for both
            await self._registered(script)(keys=keys, args=args, client=pipe)
            pipe.execute_command("WAITAOF", 1, 0, timeout_ms)
            reply, waited = await pipe.execute(raise_on_error=False)
        if isinstance(reply, Exception):
            raise reply
        return reply, waited

    async def aclose(self) -> None:
        await self.redis.aclose()

    def _registered(self, script: str) -> Any:
        registered = self._scripts.get(script)
        if registered is None:
            registered = self._scripts[script] = self.redis.register_script(script)
        return registered


class LeanLink(RespClient):
    """:class:`CommandLink` over the lean client."""

    async def aclose(self) -> None:
        self.close()


def open_link(url: str, *, lean: bool = True, timeout_s: float = 5.0, connect_timeout_s: float = 2.0) -> CommandLink:
    """The lean client if it can serve ``url`` and ``lean`` is on, else redis-py's."""
    if lean:
        try:
            Address.from_url(url)
        except ValueError:
            pass
        else:
            return LeanLink(url, timeout_s=timeout_s, connect_timeout_s=connect_timeout_s)
    return RedisPyLink(url, timeout_s, connect_timeout_s)

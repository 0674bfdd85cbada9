"""The hub's pub/sub connection: one interface, two implementations behind :func:`open_pubsub`.

The hub must *know* when the connection dropped (messages published meanwhile are lost and
every local room needs a fresh snapshot) and when a SUBSCRIBE has taken effect (only then is
a snapshot read safe). redis-py's ``PubSub`` reconnects and resubscribes by itself, silently,
and hides both; so both implementations here are plain connections that do exactly this and
nothing more: ``connect``, ``subscribe``/``unsubscribe`` (confirmations arrive as events),
and ``read()`` returning ``("message", channel, data)``, ``("subscribe", channel, count)`` or
``("unsubscribe", ...)``, raising ``ConnectionError`` when the link drops.

- :class:`LeanPubSub` reads whole socket chunks and parses them with :mod:`server.store.resp`
  (one read usually holds several messages under load): the fast path.
- :class:`RedisPyPubSub` uses one raw redis-py connection, so it serves every URL redis-py
  accepts (``rediss://``, options in the query): the fallback, and the plain path when the
  lean client is switched off (``MINEDUEL_LEAN_REDIS=off``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Protocol

from redis.asyncio.connection import ConnectionPool
from redis.exceptions import RedisError

from .resp import Address, ErrorReply, ReplyBuffer, encode


class PubSubError(ConnectionError):
    pass


class PubSub(Protocol):
    async def connect(self, timeout_s: float = 5.0) -> None: ...

    async def close(self) -> None: ...

    async def subscribe(self, *channels: str) -> None: ...

    async def unsubscribe(self, *channels: str) -> None: ...

    async def read(self) -> tuple[str, str, object]:
        """The next push: ``(kind, channel, payload)``; raises ``ConnectionError`` when it drops."""
        ...


def open_pubsub(url: str, lean: bool = True) -> PubSub:
    """The lean connection when it can serve ``url`` and ``lean`` is on, else redis-py's."""
    if lean:
        try:
            return LeanPubSub(Address.from_url(url))
        except ValueError:
            pass
    return RedisPyPubSub(url)


def _push(reply: object) -> tuple[str, str, object] | None:
    """A pub/sub push as ``(kind, channel, payload)``; ``None`` for a ``pong``; raises on an error."""
    if isinstance(reply, ErrorReply):
        raise PubSubError(reply.message)
    if isinstance(reply, list) and len(reply) >= 3:
        kind = reply[0].decode() if isinstance(reply[0], bytes) else str(reply[0])
        chan = reply[1].decode() if isinstance(reply[1], bytes) else str(reply[1])
        return kind, chan, reply[2]
    return None


class LeanPubSub:
    def __init__(self, address: Address) -> None:
        self.address = address
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._buffer = ReplyBuffer()
        self._replies: deque[object] = deque()

    async def connect(self, timeout_s: float = 5.0) -> None:
        self._buffer.clear()
        self._replies.clear()
        self._reader, self._writer = await asyncio.wait_for(self.address.open_streams(limit=2**22), timeout_s)
        for command in self.address.login():
            if command[0] == "SELECT":
                continue  # channels are not per database
            self._send(*command)
            reply = await asyncio.wait_for(self._read_reply(), timeout_s)
            if isinstance(reply, ErrorReply):
                raise PubSubError(reply.message)

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None

    async def subscribe(self, *channels: str) -> None:
        if channels:
            self._send("SUBSCRIBE", *channels)

    async def unsubscribe(self, *channels: str) -> None:
        if channels:
            self._send("UNSUBSCRIBE", *channels)

    def _send(self, *args: str | int) -> None:
        if self._writer is None or self._writer.is_closing():
            raise PubSubError("pub/sub connection is closed")
        self._writer.write(encode(*args))

    async def read(self) -> tuple[str, str, object]:
        while True:
            push = _push(await self._read_reply())
            if push is not None:
                return push

    async def _read_reply(self) -> object:
        """The next reply, parsed (:class:`server.store.resp.ReplyBuffer`) from whole chunks of
        the socket."""
        while not self._replies:
            reader = self._reader
            if reader is None:
                raise PubSubError("pub/sub connection is closed")
            data = await reader.read(1 << 16)
            if not data:
                raise PubSubError("pub/sub connection lost")
            self._replies.extend(self._buffer.feed(data))  # a ProtocolError is a ConnectionError too
        return self._replies.popleft()


class RedisPyPubSub:
    """The same over one raw redis-py connection (TLS, every URL option, AUTH and the rest done
    by redis-py; no reconnects behind our back: a drop raises)."""

    def __init__(self, url: str) -> None:
        self._pool = ConnectionPool.from_url(url, socket_timeout=None, socket_connect_timeout=5)
        self._conn = None

    async def connect(self, timeout_s: float = 5.0) -> None:
        await self.close()
        conn = self._pool.make_connection()
        try:
            await asyncio.wait_for(conn.connect(), timeout_s)
        except RedisError as exc:  # not an OSError: say it the way the lean link does
            raise PubSubError(f"cannot connect the pub/sub link: {exc}") from exc
        self._conn = conn

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.disconnect(nowait=True)

    async def subscribe(self, *channels: str) -> None:
        if channels:
            await self._connection().send_command("SUBSCRIBE", *channels, check_health=False)

    async def unsubscribe(self, *channels: str) -> None:
        if channels:
            await self._connection().send_command("UNSUBSCRIBE", *channels, check_health=False)

    async def read(self) -> tuple[str, str, object]:
        while True:
            conn = self._connection()
            try:
                reply = await conn.read_response(disable_decoding=True, timeout=None, disconnect_on_error=True,
                                                 push_request=True)
            except (RedisError, OSError) as exc:  # redis-py's ConnectionError is not an OSError
                raise PubSubError(f"pub/sub connection lost: {exc!r}") from exc
            push = _push(ErrorReply(str(reply)) if isinstance(reply, Exception) else reply)
            if push is not None:
                return push

    def _connection(self):  # noqa: ANN202 - redis-py's Connection
        if self._conn is None:
            raise PubSubError("pub/sub connection is closed")
        return self._conn

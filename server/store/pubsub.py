"""The hub's pub/sub connection: one interface, two implementations behind :func:`open_pubsub`.

The hub must *know* when the connection dropped (messages published meanwhile are lost and
every local room needs a fresh snapshot) and when a SUBSCRIBE has taken effect (only then is
a snapshot read safe). redis-py's ``PubSub`` reconnects and resubscribes by itself, silently,
and hides both; so both implementations here are plain connections that do exactly this and
nothing more: ``connect``, ``subscribe``/``unsubscribe`` (confirmations arrive as events),
and ``read()`` returning ``("message", channel, data)``, ``("subscribe", channel, count)`` or
``("unsubscribe", ...)``, raising ``ConnectionError`` when the link drops; ``listen(on_push)``
hands each of those to ``on_push`` until it drops.

- :class:`LeanPubSub` parses whole socket chunks with :mod:`server.store.resp` as they arrive
  (one chunk usually holds several messages under load), and while listening hands each push
  on from its protocol's ``data_received``, so no task is woken a message: the fast path.
- :class:`RedisPyPubSub` uses one raw redis-py connection, so it serves every URL redis-py
  accepts (``rediss://``, options in the query): the fallback, and the plain path when the
  lean client is switched off (``MINEDUEL_LEAN_REDIS=off``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
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

    async def listen(self, on_push: Callable[[str, str, object], None]) -> None:
        """Hand every push to ``on_push`` as it arrives (those read before first, in order)
        until the link drops, then raise ``ConnectionError`` (or what ``on_push`` raised)."""
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


def _hand_on(replies: Iterable[object], on_push: Callable[[str, str, object], None]) -> None:
    """Each push among ``replies`` to ``on_push``, in order (a ``pong`` is none)."""
    for reply in replies:
        push = _push(reply)
        if push is not None:
            on_push(*push)


async def listen_by_reading(pubsub: PubSub, on_push: Callable[[str, str, object], None]) -> None:
    """:meth:`PubSub.listen` for a connection that can only :meth:`~PubSub.read`: one push at
    a time, until ``read`` raises."""
    while True:
        on_push(*await pubsub.read())


class _PushReader(asyncio.Protocol):
    """The lean connection's reading end: whole chunks parsed as they arrive; while someone
    listens, each push is handed on from here (no task woken a message), else the replies are
    kept for :meth:`LeanPubSub.read`."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = ReplyBuffer()
        self.replies: deque[object] = deque()
        self.on_push: Callable[[str, str, object], None] | None = None
        self.waiter: asyncio.Future[None] | None = None  # a read, or a listen waiting for the loss
        self.lost: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            replies = self.buffer.feed(data)  # a ProtocolError is a ConnectionError too
            on_push = self.on_push
            if on_push is None:
                self.replies.extend(replies)
                self._wake()
                return
            _hand_on(replies, on_push)
        except Exception as exc:  # a broken stream, an error reply, or the listener failed: done
            self._lose(exc)
            if self.transport is not None:
                self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lose(PubSubError(f"pub/sub connection lost: {exc!r}" if exc else "pub/sub connection lost"))

    def _lose(self, exc: Exception) -> None:
        if self.lost is None:
            self.lost = exc
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self) -> None:
        """Until the next chunk of replies (reading) or the loss (listening)."""
        self.waiter = asyncio.get_running_loop().create_future()
        try:
            await self.waiter
        finally:
            self.waiter = None


class LeanPubSub:
    def __init__(self, address: Address) -> None:
        self.address = address
        self._reader: _PushReader | None = None

    async def connect(self, timeout_s: float = 5.0) -> None:
        await self.close()
        _transport, self._reader = await asyncio.wait_for(self.address.open(_PushReader), timeout_s)
        for command in self.address.login():
            if command[0] == "SELECT":
                continue  # channels are not per database
            self._send(*command)
            reply = await asyncio.wait_for(self._read_reply(), timeout_s)
            if isinstance(reply, ErrorReply):
                raise PubSubError(reply.message)

    async def close(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None and reader.transport is not None:
            reader.transport.close()

    async def subscribe(self, *channels: str) -> None:
        if channels:
            self._send("SUBSCRIBE", *channels)

    async def unsubscribe(self, *channels: str) -> None:
        if channels:
            self._send("UNSUBSCRIBE", *channels)

    def _send(self, *args: str | int) -> None:
        reader = self._reader
        if reader is None or reader.lost is not None or reader.transport is None or reader.transport.is_closing():
            raise PubSubError("pub/sub connection is closed")
        reader.transport.write(encode(*args))

    async def read(self) -> tuple[str, str, object]:
        while True:
            push = _push(await self._read_reply())
            if push is not None:
                return push

    async def listen(self, on_push: Callable[[str, str, object], None]) -> None:
        reader = self._live()
        read_before, reader.replies = reader.replies, deque()
        _hand_on(read_before, on_push)  # read before listening: first, in order
        reader.on_push = on_push
        try:
            while reader.lost is None:
                await reader.wait()
        finally:
            reader.on_push = None
        raise reader.lost

    async def _read_reply(self) -> object:
        """The next reply, parsed (:class:`server.store.resp.ReplyBuffer`) from whole chunks of
        the socket."""
        reader = self._live()
        while not reader.replies:
            if reader.lost is not None:
                raise reader.lost
            await reader.wait()
        return reader.replies.popleft()

    def _live(self) -> _PushReader:
        if self._reader is None:
            raise PubSubError("pub/sub connection is closed")
        return self._reader


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

    async def listen(self, on_push: Callable[[str, str, object], None]) -> None:
        await listen_by_reading(self, on_push)

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

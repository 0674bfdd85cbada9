"""A minimal RESP2 pub/sub connection on asyncio streams.

redis-py's PubSub reconnects and resubscribes by itself, silently; the hub must *know* when
the connection dropped (messages published meanwhile are lost and every local room needs a
fresh snapshot) and when a SUBSCRIBE has taken effect (only then is a snapshot read safe).
This class does exactly that and nothing more (the RESP encoding and parsing are
:mod:`server.resp`'s): ``connect``, ``subscribe``/``unsubscribe``
(fire and forget; confirmations arrive as events), and ``read()`` yielding
``("message", channel, data)``, ``("subscribe", channel, count)`` or ``("unsubscribe", ...)``.
"""

from __future__ import annotations

import asyncio
from collections import deque

from .resp import Address, ErrorReply, ReplyBuffer, encode


class PubSubError(ConnectionError):
    pass


class PubSubConnection:
    def __init__(self, url: str) -> None:
        self.address = Address.from_url(url)
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._buffer = ReplyBuffer()
        self._replies: deque[object] = deque()

    async def connect(self, timeout_s: float = 5.0) -> None:
        self._buffer.clear()
        self._replies.clear()
        self._reader, self._writer = await asyncio.wait_for(
            asyncio.open_connection(self.address.host, self.address.port, limit=2**22), timeout_s
        )
        for command in self.address.login():
            if command[0] == "SELECT":
                continue  # channels are not per database
            self._send(*command)
            reply = await asyncio.wait_for(self._read_reply(), timeout_s)
            if isinstance(reply, ErrorReply):
                raise PubSubError(reply.message)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None

    @property
    def connected(self) -> bool:
        return self._writer is not None and not self._writer.is_closing()

    def subscribe(self, *channels: str) -> None:
        if channels:
            self._send("SUBSCRIBE", *channels)

    def unsubscribe(self, *channels: str) -> None:
        if channels:
            self._send("UNSUBSCRIBE", *channels)

    def ping(self) -> None:
        self._send("PING")

    def _send(self, *args: str | int) -> None:
        if self._writer is None or self._writer.is_closing():
            raise PubSubError("pub/sub connection is closed")
        self._writer.write(encode(*args))

    async def read(self) -> tuple[str, str, object]:
        """The next push: ``(kind, channel, payload)``; raises ``ConnectionError`` when it drops."""
        while True:
            reply = await self._read_reply()
            if isinstance(reply, list) and len(reply) >= 3:
                kind = reply[0].decode() if isinstance(reply[0], bytes) else str(reply[0])
                chan = reply[1].decode() if isinstance(reply[1], bytes) else str(reply[1])
                return kind, chan, reply[2]
            if isinstance(reply, list) and reply and reply[0] == b"pong":
                continue
            if isinstance(reply, ErrorReply):
                raise PubSubError(reply.message)

    async def _read_reply(self) -> object:
        """The next reply, parsed (:class:`server.resp.ReplyBuffer`) from whole chunks of the
        socket (one read usually holds several messages under load)."""
        while not self._replies:
            reader = self._reader
            if reader is None:
                raise PubSubError("pub/sub connection is closed")
            data = await reader.read(1 << 16)
            if not data:
                raise PubSubError("pub/sub connection lost")
            self._replies.extend(self._buffer.feed(data))  # a ProtocolError is a ConnectionError too
        return self._replies.popleft()

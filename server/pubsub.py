"""A minimal RESP2 pub/sub connection on asyncio streams.

redis-py's PubSub reconnects and resubscribes by itself, silently; the hub must *know* when
the connection dropped (messages published meanwhile are lost and every local room needs a
fresh snapshot) and when a SUBSCRIBE has taken effect (only then is a snapshot read safe).
This class does exactly that and nothing more: ``connect``, ``subscribe``/``unsubscribe``
(fire and forget; confirmations arrive as events), and ``read()`` yielding
``("message", channel, data)``, ``("subscribe", channel, count)`` or ``("unsubscribe", ...)``.
"""

from __future__ import annotations

import asyncio
from urllib.parse import unquote, urlparse


class PubSubError(ConnectionError):
    pass


class PubSubConnection:
    def __init__(self, url: str) -> None:
        u = urlparse(url)
        if u.scheme not in ("redis", "valkey"):
            raise ValueError(f"pub/sub needs a redis:// URL, not {url!r}")
        self.host = u.hostname or "127.0.0.1"
        self.port = u.port or 6379
        self.username = unquote(u.username) if u.username else None
        self.password = unquote(u.password) if u.password else None
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def connect(self, timeout_s: float = 5.0) -> None:
        self._reader, self._writer = await asyncio.wait_for(
            asyncio.open_connection(self.host, self.port, limit=2**22), timeout_s
        )
        if self.password is not None:
            args = ["AUTH", self.password] if self.username is None else ["AUTH", self.username, self.password]
            self._send(*args)
            reply = await asyncio.wait_for(self._read_reply(), timeout_s)
            if isinstance(reply, PubSubError):
                raise reply

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

    def _send(self, *args: str) -> None:
        if self._writer is None or self._writer.is_closing():
            raise PubSubError("pub/sub connection is closed")
        parts = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a.encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self._writer.write(b"".join(parts))

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
            if isinstance(reply, PubSubError):
                raise reply

    async def _read_reply(self) -> object:
        reader = self._reader
        if reader is None:
            raise PubSubError("pub/sub connection is closed")
        line = await reader.readline()
        if not line.endswith(b"\r\n"):
            raise PubSubError("pub/sub connection lost")
        kind, rest = line[:1], line[1:-2]
        if kind == b"*":
            n = int(rest)
            return [await self._read_reply() for _ in range(max(n, 0))]
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = await reader.readexactly(n + 2)
            return data[:-2]
        if kind == b":":
            return int(rest)
        if kind == b"+":
            return rest
        if kind == b"-":
            return PubSubError(rest.decode(errors="replace"))
        raise PubSubError(f"unexpected RESP type {kind!r}")

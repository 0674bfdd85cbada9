"""A lean, pipelined RESP2 client for the commands on the move path (commit and load, and the
sweepers' due list).

Why not redis-py here: a move costs one ``EVALSHA``, and redis-py spends about as much Python
around each command (pool checkout, retry wrapper, a timeout context per read, parsing through
several layers) as the engine spends on the move itself: 10-13 % of the server's CPU in the
load profile (docs/PERFORMANCE.md). This client is one connection, shared by every caller:
a command is encoded once and written at once, its future queued; replies come back in order
and resolve the futures one by one, so concurrent callers pipeline on the one socket for free
(Redis executes them in order, and with ``appendfsync always`` one fsync covers the batch).
Everything else (pages, presence, the other clock commands, the ``WAITAOF`` check) keeps
using redis-py.

Failures raise redis-py's exception classes, so the rest of the server (:mod:`server.ops`)
treats them exactly like redis-py's own: a lost or refused connection raises
``ConnectionError``, a reply later than ``timeout_s`` raises ``TimeoutError`` (and the
connection is dropped: replies are matched by order, so one late reply means all later ones
are in doubt), a loading server ``BusyLoadingError``, any other error reply ``ResponseError``. Nothing
is retried: the caller reports a failed commit, it never replays it. The next call
reconnects.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from redis.exceptions import BusyLoadingError, NoScriptError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

CRLF = b"\r\n"


class Incomplete(Exception):
    """The buffer ends inside a reply: wait for more bytes."""


class ProtocolError(RedisConnectionError):
    """The server sent something that is not RESP2: the connection is unusable."""


class ErrorReply:
    """An error reply (``-ERR ...``), kept as a value so that it fails only its own command."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ErrorReply) and other.message == self.message

    def __repr__(self) -> str:
        return f"ErrorReply({self.message!r})"

    def exception(self) -> Exception:
        if self.message.startswith("LOADING"):
            return BusyLoadingError(self.message)
        if self.message.startswith("NOSCRIPT"):
            return NoScriptError(self.message)
        return ResponseError(self.message)


ScriptCall = tuple[list[str], list[bytes | str | int]]
"""One run of a script: its keys and its arguments."""


def encode(*args: bytes | str | int) -> bytes:
    """One command as a RESP array of bulk strings."""
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a if isinstance(a, bytes) else str(a).encode()
        parts.append(b"$%d\r\n" % len(b))
        parts.append(b)
        parts.append(CRLF)
    return b"".join(parts)


def parse(buf: bytes | bytearray, pos: int = 0) -> tuple[Any, int]:
    """One reply from ``buf`` at ``pos``: ``(value, position after it)``; raises
    :class:`Incomplete` if the buffer ends first. Bulk and simple strings are ``bytes``,
    integers ``int``, arrays ``list``, nil ``None``, errors :class:`ErrorReply`."""
    end = buf.find(CRLF, pos)
    if end < 0:
        raise Incomplete
    kind = buf[pos]
    if kind == 36:  # $ bulk string
        n = int(buf[pos + 1 : end])
        if n < 0:
            return None, end + 2
        start = end + 2
        if len(buf) < start + n + 2:
            raise Incomplete
        return bytes(buf[start : start + n]), start + n + 2
    if kind == 42:  # * array
        n = int(buf[pos + 1 : end])
        if n < 0:
            return None, end + 2
        items = []
        at = end + 2
        for _ in range(n):
            item, at = parse(buf, at)
            items.append(item)
        return items, at
    if kind == 58:  # : integer
        return int(buf[pos + 1 : end]), end + 2
    if kind == 43:  # + simple string
        return bytes(buf[pos + 1 : end]), end + 2
    if kind == 45:  # - error
        return ErrorReply(bytes(buf[pos + 1 : end]).decode(errors="replace")), end + 2
    raise ProtocolError(f"unexpected RESP type byte {bytes([kind])!r}")


class ReplyBuffer:
    """Bytes from a socket in, complete replies out (a reply may span several reads)."""

    __slots__ = ("_buf",)

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        """Every reply completed by ``data``, in order; raises :class:`ProtocolError` on garbage."""
        buf = self._buf
        buf += data
        pos = 0
        replies = []
        try:
            while pos < len(buf):
                value, pos = parse(buf, pos)
                replies.append(value)
        except Incomplete:
            pass
        except ValueError as exc:  # a length or integer that is not one
            raise ProtocolError(f"bad reply from Redis: {exc!r}") from exc
        del buf[:pos]
        return replies


class _Protocol(asyncio.Protocol):
    """The socket: writes commands, parses replies in order, fails everything on loss."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.pending: deque[tuple[asyncio.Future[Any], float]] = deque()
        self.replies = ReplyBuffer()
        self.lost: Exception | None = None
        # made in its loop (by create_connection's factory); kept because
        # asyncio.get_running_loop() costs a getpid() system call a call on Python 3.11
        self.loop = asyncio.get_running_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def request(self, command: bytes, future: asyncio.Future[Any]) -> None:
        if self.lost is not None or self.transport is None or self.transport.is_closing():
            raise RedisConnectionError("Redis connection lost")
        self.transport.write(command)
        self.pending.append((future, time.monotonic()))

    def request_many(self, commands: bytes, futures: list[asyncio.Future[Any]]) -> None:
        """Several commands in one write; ``futures`` (at least one) get their replies in order."""
        self.request(commands, futures[0])
        sent = self.pending[-1][1]
        self.pending.extend((future, sent) for future in futures[1:])

    def data_received(self, data: bytes) -> None:
        try:
            replies = self.replies.feed(data)
        except ProtocolError as exc:
            self.abort(exc)
            return
        for value in replies:
            if not self.pending:  # a reply nobody asked for: the stream cannot be trusted
                self.abort(ProtocolError("unexpected reply from Redis"))
                return
            future, _sent = self.pending.popleft()
            if not future.done():
                future.set_result(value)

    def abort(self, exc: Exception) -> None:
        if self.lost is None:
            self.lost = exc
        if self.transport is not None:
            self.transport.abort()
        self._fail_all()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.lost is None:
            self.lost = RedisConnectionError(f"Redis connection lost: {exc!r}" if exc else "Redis closed the connection")
        self._fail_all()

    def _fail_all(self) -> None:
        while self.pending:
            future, _sent = self.pending.popleft()
            if not future.done():
                future.set_exception(self.lost if self.lost is not None else RedisConnectionError("Redis connection lost"))


@dataclass(frozen=True)
class Address:
    """Where a Redis server is and how to log in, for the URLs this client can serve:
    ``redis://[[user]:password@]host[:port][/db]`` (or ``valkey://``) and
    ``unix://[[user]:password@]/path/to/socket[?db=N]``. Anything else (TLS, options in the
    query) raises ``ValueError``: the caller falls back to redis-py (:mod:`server.store.link`)."""

    host: str
    port: int
    username: str | None
    password: str | None
    db: int
    path: str | None = None
    """A unix socket's path (``host`` and ``port`` are then unused)."""

    @classmethod
    def from_url(cls, url: str) -> "Address":
        u = urlparse(url)
        user = unquote(u.username) if u.username else None
        password = unquote(u.password) if u.password else None
        query = parse_qs(u.query)
        if u.scheme == "unix":
            if set(query) - {"db"} or not u.path:
                raise ValueError(f"the lean client takes unix://path[?db=N], not {url!r}")
            return cls("", 0, user, password, int(query.get("db", ["0"])[0]), u.path)
        if u.scheme not in ("redis", "valkey") or query:
            raise ValueError(f"the lean client takes redis:// URLs without options, not {url!r}")
        return cls(u.hostname or "127.0.0.1", u.port or 6379, user, password, int(u.path.lstrip("/") or 0))

    @property
    def where(self) -> str:
        return self.path if self.path is not None else f"{self.host}:{self.port}"

    async def open(self, factory: Any) -> tuple[asyncio.BaseTransport, Any]:
        """A connection with ``factory`` as its protocol (TCP or unix socket)."""
        loop = asyncio.get_running_loop()
        if self.path is not None:
            return await loop.create_unix_connection(factory, self.path)
        return await loop.create_connection(factory, self.host, self.port)

    def login(self) -> list[tuple[str | int, ...]]:
        """The commands that open a session: ``AUTH`` (if a password is set), ``SELECT`` (db > 0)."""
        commands: list[tuple[str | int, ...]] = []
        if self.password is not None:
            commands.append(("AUTH", self.password) if self.username is None
                            else ("AUTH", self.username, self.password))
        if self.db:
            commands.append(("SELECT", self.db))
        return commands


class RespClient:
    """One pipelined connection to ``url`` (any URL :class:`Address` takes)."""

    def __init__(self, url: str, timeout_s: float = 5.0, connect_timeout_s: float = 2.0) -> None:
        self.address = Address.from_url(url)
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self._proto: _Protocol | None = None
        self._connecting: asyncio.Lock | None = None
        self._watchdog: asyncio.TimerHandle | None = None
        self._shas: dict[str, str] = {}

    async def execute(self, *args: bytes | str | int) -> Any:
        """Send one command and return its reply (raising the error a failure maps to)."""
        proto = self._live() or await self._connect()
        future = proto.loop.create_future()
        proto.request(encode(*args), future)
        reply = await future
        if isinstance(reply, ErrorReply):
            raise reply.exception()
        return reply

    async def execute_many(self, commands: Sequence[tuple[bytes | str | int, ...]]) -> list[Any]:
        """The commands in one write; their replies in order (the first error raised, after
        every reply has come: the connection stays in step)."""
        if not commands:
            return []
        proto = self._live() or await self._connect()
        futures = [proto.loop.create_future() for _ in commands]
        proto.request_many(b"".join(encode(*command) for command in commands), futures)
        replies = await asyncio.gather(*futures, return_exceptions=True)  # (all retrieved)
        for reply in replies:
            if isinstance(reply, BaseException):  # the connection was lost
                raise reply
            if isinstance(reply, ErrorReply):
                raise reply.exception()
        return replies

    async def evalsha(self, script: str, keys: list[str], args: list[bytes | str | int]) -> Any:
        """``EVALSHA`` of ``script``, loading it first if the server does not know it (a
        restarted Redis forgets scripts)."""
        sha = self._sha(script)
        try:
            return await self.execute("EVALSHA", sha, len(keys), *keys, *args)
        except NoScriptError:
            await self.execute("SCRIPT", "LOAD", script)
            return await self.execute("EVALSHA", sha, len(keys), *keys, *args)

    async def evalsha_many(self, script: str, calls: Sequence[ScriptCall]) -> list[Any]:
        """``EVALSHA`` of ``script`` for each ``(keys, args)`` of ``calls`` in one write; all of
        them again after ``SCRIPT LOAD`` if the server did not know the script."""
        sha = self._sha(script)
        commands = [("EVALSHA", sha, len(keys), *keys, *args) for keys, args in calls]
        try:
            return await self.execute_many(commands)
        except NoScriptError:
            await self.execute("SCRIPT", "LOAD", script)
            return await self.execute_many(commands)

    async def evalsha_durable(self, script: str, keys: list[str], args: list[bytes | str | int],
                              timeout_ms: int) -> tuple[Any, Any]:
        """``EVALSHA`` and then ``WAITAOF 1 0 timeout_ms``, written together on this connection
        (``WAITAOF`` waits only for the writes of the connection that sends it): the script's
        reply, and ``WAITAOF``'s or the exception it failed with (a server without it)."""
        proto = self._live() or await self._connect()
        sha = self._sha(script)
        loop = asyncio.get_running_loop()
        ran, waited = loop.create_future(), loop.create_future()
        proto.request(encode("EVALSHA", sha, len(keys), *keys, *args), ran)
        proto.request(encode("WAITAOF", 1, 0, timeout_ms), waited)
        reply, wait_reply = await asyncio.gather(ran, waited, return_exceptions=True)  # (both retrieved)
        for outcome in (reply, wait_reply):
            if isinstance(outcome, BaseException):  # the connection was lost
                raise outcome
        if isinstance(reply, ErrorReply):
            error = reply.exception()
            if not isinstance(error, NoScriptError):
                raise error
            await self.execute("SCRIPT", "LOAD", script)  # a restarted Redis forgets scripts
            return await self.evalsha_durable(script, keys, args, timeout_ms)
        return reply, wait_reply.exception() if isinstance(wait_reply, ErrorReply) else wait_reply

    def _live(self) -> _Protocol | None:
        """The connection unless it is lost (or not made yet): then ``_connect`` makes it again.
        Not a coroutine: this is on every command's path."""
        proto = self._proto
        return proto if proto is not None and proto.lost is None else None

    def _sha(self, script: str) -> str:
        sha = self._shas.get(script)
        if sha is None:
            sha = self._shas[script] = hashlib.sha1(script.encode()).hexdigest()
        return sha

    def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self._proto is not None:
            self._proto.abort(RedisConnectionError("client closed"))
            self._proto = None

    async def _connect(self) -> _Protocol:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._proto is not None and self._proto.lost is None:
                return self._proto  # another caller connected meanwhile
            loop = asyncio.get_running_loop()
            try:
                _transport, proto = await asyncio.wait_for(self.address.open(_Protocol), self.connect_timeout_s)
            except asyncio.TimeoutError as exc:
                raise RedisTimeoutError(f"could not connect to Redis at {self.address.where} in time") from exc
            except OSError as exc:
                raise RedisConnectionError(f"could not connect to Redis at {self.address.where}: {exc}") from exc
            self._proto = proto
            for command in self.address.login():
                future = loop.create_future()
                proto.request(encode(*command), future)
                reply = await asyncio.wait_for(future, self.timeout_s)
                if isinstance(reply, ErrorReply):
                    proto.abort(RedisConnectionError(reply.message))
                    raise RedisConnectionError(f"Redis refused {command[0]}: {reply.message}")
            if self._watchdog is None:
                self._watchdog = loop.call_later(self.timeout_s / 4, self._check_timeouts)
            return proto

    def _check_timeouts(self) -> None:
        """Drop the connection if the oldest reply is overdue (replies come in order, so
        everything after it is overdue too); re-armed while the client lives."""
        proto = self._proto
        if proto is not None and proto.pending and time.monotonic() - proto.pending[0][1] > self.timeout_s:
            proto.abort(RedisTimeoutError(f"Redis did not answer within {self.timeout_s:g} s"))
        self._watchdog = asyncio.get_running_loop().call_later(self.timeout_s / 4, self._check_timeouts)

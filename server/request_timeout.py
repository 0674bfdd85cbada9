"""A time limit for reading a request: uvicorn's httptools protocol with a deadline.

uvicorn closes an idle keep-alive connection, but a connection that sends a request's head (or
its body) slowly is never closed: a client that trickles a header line every few seconds holds
a connection and its file descriptor for as long as it likes ("slowloris"; the per-address cap
on websockets does not count these). :class:`RequestTimeoutProtocol` gives each request
``MINEDUEL_REQUEST_TIMEOUT_S`` (10 s) from its first byte, or from the connection's opening,
until the server has read all of it, head and body; a request still unread then is answered
``408`` (if the app has not seen it yet) and its connection closed. A websocket's upgrade ends
the deadline: an open socket is the websocket protocol's (pings, the app's own limits).

Why a subclass and not a proxy: the server must hold up on its own on the open internet (a
proxy in front still helps); uvicorn takes the protocol class as its ``http`` setting
(``server/__main__.py``), and only these four hooks of it are touched.
"""

from __future__ import annotations

import asyncio
import functools
import math
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .config import Settings

_SAID = b"the request was not sent in time\n"
TIMED_OUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
             b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_SAID), _SAID))


@functools.cache
def timeout_s() -> float:
    """The limit (read once per process from the environment, as every setting is)."""
    return Settings.from_env().request_timeout_s


class RequestTimeoutProtocol(HttpToolsProtocol):
    """uvicorn's ``httptools`` protocol; each request must be read within :func:`timeout_s`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()  # nothing sent yet: the first request's time runs from here

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:  # a later request on a kept-alive connection
            self._arm()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def handle_websocket_upgrade(self) -> None:
        self._disarm()
        super().handle_websocket_upgrade()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        limit = timeout_s()
        if 0 < limit < math.inf:  # (0, or a setting that is not a time: no limit)
            self._deadline = self.loop.call_later(limit, self._timed_out)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _timed_out(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_complete:  # the app has not got this request
            self.transport.write(TIMED_OUT)
        self.transport.close()

"""A local connection's outgoing frames: in order, at most ``maxsize`` waiting, never blocking.

:class:`Outbox` is the :class:`~server.store.fanout.Connection` both websocket edges register
with the hub. Two ways to get frames out, behind one switch (``settings.inline_send``):

- **inline** (the default; a speed bypass): a frame is written right away when nothing is
  waiting. The edge's send coroutine (uvicorn's ASGI ``send``) completes without suspending
  while the socket is writable, so it is stepped to its end in place, the way Python 3.12's
  eager tasks start a coroutine; only a send that suspends (the kernel buffer is full: a slow
  reader) is handed to a task, which drains what queues meanwhile. Why: a writer task per
  connection cost a task switch and a loop iteration per push, and kept a future and
  coroutines alive per idle socket, which the cyclic GC then had to traverse (tens of ms
  with thousands of sockets). Send coroutines must not depend on ``current_task()`` (no
  ``asyncio.timeout`` inside): inline they run in the caller's task.
- **a writer task** (``MINEDUEL_INLINE_SEND=off``): the plain asyncio way, one task per
  connection awaiting each send in turn. CI runs the server tests on this path too.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from ..metrics import Metrics
from ..outage import is_outage, redis_down

SERVER_ERROR = 1011

Frame = bytes | str
log = logging.getLogger("mineduel.outbox")


class Outbox:
    """A :class:`~server.store.fanout.Connection`: frames go out in order, at most ``maxsize``
    waiting (see the module's docstring for ``inline``).

    The edge creates it with the async functions that really send and close, runs
    :meth:`run` as a task (it ends when the connection is closed or a send failed),
    registers the box with the hub, and awaits/cancels that task when done::

        box = Outbox(viewer, "msgpack", player_id, frame_sender(websocket), close_fn, maxsize=64,
                     write_now=frame_writer(websocket))
        writer = asyncio.create_task(box.run())

    ``write_now`` (inline only): writes a frame without a coroutine when it can, and says
    whether it did (:func:`~server.edge.raw_send.frame_writer`); when it did not, the frame
    takes ``send``.
    """

    __slots__ = ("viewer", "codec", "player_id", "version", "_waiting", "_maxsize", "_send", "_close",
                 "_busy", "_done", "_inline", "_write_now", "closed", "close_code", "on_rematch")

    def __init__(
        self,
        viewer: int,
        codec: str,
        player_id: str | None,
        send: Callable[[Frame], Awaitable[None]],
        close: Callable[[int, str], Awaitable[None]],
        maxsize: int = 64,
        inline: bool = True,
        write_now: Callable[[Frame], bool] | None = None,
    ) -> None:
        self.viewer = viewer
        self.codec = codec
        self.player_id = player_id
        self.version: int | None = None
        self._waiting: deque[Frame | tuple[int, str]] = deque()
        self._maxsize = maxsize
        self._send = send
        self._close = close
        self._busy: asyncio.Task[None] | None = None  # finishing a suspended send, then the waiting ones
        self._done = asyncio.Event()  # closed, or a send failed
        self._inline = inline
        self._write_now = write_now if inline else None
        self.closed = False
        self.close_code: int | None = None
        self.on_rematch: Callable[[str], None] | None = None

    def send(self, frame: Frame) -> bool:
        if self.closed:
            return False
        if self._busy is not None:
            if len(self._waiting) >= self._maxsize:
                return False
            self._waiting.append(frame)
            return True
        if self._write_now is not None:
            try:
                if self._write_now(frame):
                    return True
            except Exception:
                self._failed(frame)
                return True
        self._start(frame)
        return True

    def close(self, code: int, reason: str = "", after_frames: bool = False) -> None:
        """Close with ``code``: at once, dropping the frames still waiting (a closing connection
        need not get them), or with ``after_frames`` once they are out (an edge's last words, as
        the pairing page's answer: with sends in tasks, bypasses off, all but the first were
        dropped)."""
        if self.closed:
            return
        self.closed = True
        self.close_code = code
        if not after_frames:  # jump the queue
            self._waiting.clear()
        if self._busy is not None:
            self._waiting.append((code, reason))
        else:
            self._start((code, reason))

    async def run(self) -> None:
        """Wait until the connection is closed (or a send failed); cancelling it also stops a
        send stuck on a peer that stopped reading."""
        try:
            await self._done.wait()
        finally:
            if self._busy is not None:
                self._busy.cancel()

    async def fail(self, exc: Exception, room_id: str, metrics: Metrics, send_now: Callable[[Frame], Awaitable[None]],
                   unavailable: Frame) -> None:
        """The edge's handler stopped on ``exc`` (call it from the ``except`` block): an outage
        (could not attach while Redis is away) gets the ``unavailable`` frame, sent directly with
        ``send_now`` since closing drops what still waits, and close 1011 (the client reconnects
        later); anything else is logged as a bug and closed 1011."""
        if self.closed:
            return
        if not is_outage(exc):
            log.exception("websocket handler failed (room %s, codec %s)", room_id, self.codec)
            self.close(SERVER_ERROR, "server error")
            return
        redis_down(metrics, "attach", exc, room=room_id, player=self.player_id)
        try:
            await send_now(unavailable)
        except Exception:
            pass
        self.close(SERVER_ERROR, "service interrupted")

    async def finish(self, writer: asyncio.Task[None]) -> None:
        """The edge is done (after ``hub.detach``): close normally unless already closing, and
        give the close 5 s to go out (``writer`` is the :meth:`run` task)."""
        if not self.closed:
            self.close(1000, "")
        try:
            await asyncio.wait_for(writer, 5)
        except (asyncio.TimeoutError, Exception):
            writer.cancel()

    def _coroutine(self, item: Frame | tuple[int, str]) -> Coroutine[Any, Any, None]:
        return self._close(*item) if isinstance(item, tuple) else self._send(item)

    def _start(self, item: Frame | tuple[int, str]) -> None:
        """Run ``item``'s send (or close): inline, handed to a task if it suspends; or, with
        ``inline`` off, in a task at once."""
        coro = self._coroutine(item)
        if not self._inline:
            self._busy = asyncio.ensure_future(self._drain(coro, None, item, stepped=False))
            return
        try:
            suspended_on = coro.send(None)
        except StopIteration:
            if isinstance(item, tuple):
                self._done.set()
            return
        except Exception:
            self._failed(item)
            return
        self._busy = asyncio.ensure_future(self._drain(coro, suspended_on, item, stepped=True))

    async def _drain(self, coro: Coroutine[Any, Any, None], suspended_on: Any, item: Frame | tuple[int, str],
                     stepped: bool) -> None:
        """Complete ``item``'s send (``stepped``: it was started inline and suspended on
        ``suspended_on``), then send what queued meanwhile."""
        try:
            if stepped:
                await _resume(coro, suspended_on)
            else:
                await coro
            while self._waiting:
                item = self._waiting.popleft()
                await self._coroutine(item)
        except asyncio.CancelledError:
            self._done.set()
            raise
        except Exception:
            self._failed(item)
            return
        finally:
            self._busy = None
        if isinstance(item, tuple):
            self._done.set()

    def _failed(self, item: Frame | tuple[int, str]) -> None:
        """A send failed (the peer is gone) or the close did: nothing more goes out."""
        self.closed = True
        self._waiting.clear()
        self._done.set()


async def _resume(coro: Coroutine[Any, Any, None], suspended_on: Any) -> None:
    """Run a coroutine that was stepped by hand and suspended on ``suspended_on`` to its end,
    as its task would have."""
    while True:
        try:
            if suspended_on is None:  # a bare yield (asyncio.sleep(0))
                await asyncio.sleep(0)
                suspended_on = coro.send(None)
            else:
                # what a task does with a yielded future: take it over, then wait on it
                suspended_on._asyncio_future_blocking = False
                try:
                    await suspended_on
                except BaseException as exc:  # incl. cancellation: the send gets it
                    suspended_on = coro.throw(exc)
                else:
                    suspended_on = coro.send(None)
        except StopIteration:
            return

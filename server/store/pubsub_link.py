"""The hub's pub/sub link: read it, and when it drops, reconnect however long Redis is away.

:class:`PubSubLink` owns the connection's state (``connected``, the reconnect count, this process's
outage log entries) and the read loop; what the messages and the link's changes mean for the
rooms is the hub's (the ``on_*`` callables it gives at construction):

- ``on_message(kind, channel, payload)`` for every message read;
- ``on_lost()`` when the link drops (every room is stale from then on);
- ``on_unavailable(exc)`` once, when the first reconnect attempt fails (tell the connections);
- ``on_back()`` when it is back (resubscribe, resync).

On every connection it makes, the link first subscribes to this process's link channel
(:func:`~.keys.link_channel`), which the commit script reads as "this connection is up";
nothing arrives on it but the confirmation, which is not handed on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from ..logs import event
from ..metrics import Metrics
from ..outage import is_outage, redis_down
from .outage_log import OutageLog
from .pubsub import PubSub

log = logging.getLogger("mineduel.hub")

FIRST_BACKOFF_S = 0.05
MAX_BACKOFF_S = 2.0


class PubSubLink:
    def __init__(self, pubsub: PubSub, metrics: Metrics, outages: OutageLog,
                 on_message: Callable[[str, str, object], None], on_lost: Callable[[], None],
                 on_unavailable: Callable[[Exception], None], on_back: Callable[[], Awaitable[None]],
                 link_channel: str) -> None:
        self.pubsub = pubsub
        self.link_channel = link_channel
        self.metrics = metrics
        self.outages = outages
        self.on_message, self.on_lost, self.on_unavailable, self.on_back = on_message, on_lost, on_unavailable, on_back
        self.connected = asyncio.Event()
        """Set while the link is up."""
        self.reconnects = 0
        self.stopping = False

    async def connect(self) -> None:
        await self._open()
        self.connected.set()

    async def _open(self) -> None:
        await self.pubsub.connect()
        await self.pubsub.subscribe(self.link_channel)

    async def run(self) -> None:
        """Read and hand on every message until stopped; reconnect after each loss."""
        backoff = FIRST_BACKOFF_S
        link = self.link_channel
        while not self.stopping:
            heard = False

            def on_push(kind: str, chan: str, payload: object) -> None:
                nonlocal heard
                heard = True
                if chan != link:
                    self.on_message(kind, chan, payload)

            try:
                await self.pubsub.listen(on_push)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self.stopping:
                    return
                redis_down(self.metrics, "pubsub", exc)
            if heard:  # the link worked since it was (re)made: the next reconnect starts afresh
                backoff = FIRST_BACKOFF_S
            backoff = await self._reconnect(backoff)

    async def _reconnect(self, backoff: float) -> float:
        """The link dropped: reconnect with backoff (≤ 2 s, until Redis is back or the process
        stops), then ``on_back``."""
        lost_at = time.monotonic()
        self.outages.lost()
        self.connected.clear()
        await self.pubsub.close()
        self.on_lost()
        attempts = 0
        while not self.stopping:
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_S)
            try:
                await self._open()
                break
            except Exception as exc:  # keep trying whatever it is: without the link nothing reaches anyone
                if not is_outage(exc) and not isinstance(exc, asyncio.TimeoutError):
                    log.exception("cannot reconnect the pub/sub link")
                attempts += 1
                if attempts == 1:
                    self.on_unavailable(exc)
        if self.stopping:
            return backoff
        self.outages.back()
        self.reconnects += 1
        self.metrics.pubsub_reconnects.inc()
        self.connected.set()
        event(log, "redis_restored", level=logging.WARNING, down_ms=int(1000 * (time.monotonic() - lost_at)))
        await self.on_back()
        return backoff

"""The pairing channel, as one process listens to it: a pub/sub link of its own that stays up.

Every process that opens a pair's room announces it on the pairing channel, and every process
listens there to wake its waiters of that pair at once (:mod:`.matchmaker`). This module is
the listening: subscribe (confirmed before :meth:`PairingChannel.link` returns), read each
message into ``on_message``, and after a drop relink with a backoff of at most 2 s and call
``on_relinked``: the announcements sent meanwhile were lost, so the caller asks for its pairs
at once instead of waiting for its next tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from ..metrics import Metrics
from ..outage import redis_down
from .pubsub import PubSub

log = logging.getLogger("mineduel.pairing")

LINK_TIMEOUT_S = 5.0


class PairingChannel:
    def __init__(self, pubsub: PubSub, channel: str, metrics: Metrics, on_message: Callable[[object], None],
                 on_relinked: Callable[[], None]) -> None:
        self.pubsub = pubsub
        self.channel = channel
        self.metrics = metrics
        self.on_message = on_message
        self.on_relinked = on_relinked
        self.stopping = False
        """Set by the owner before it stops :meth:`listen`'s task: no relinking any more."""

    async def link(self) -> None:
        """Connect and subscribe; return once the subscription is confirmed."""
        await self.pubsub.connect(LINK_TIMEOUT_S)
        await self.pubsub.subscribe(self.channel)
        async with asyncio.timeout(LINK_TIMEOUT_S):
            while (await self.pubsub.read())[0] != "subscribe":
                pass

    async def listen(self) -> None:
        """Read the channel until stopped; after a drop, relink and tell ``on_relinked``."""
        while not self.stopping:
            try:
                while True:
                    kind, _channel, payload = await self.pubsub.read()
                    if kind == "message":
                        self.on_message(payload)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not redis_down(self.metrics, "pairing_pubsub", exc):
                    log.exception("pairing: the listener failed; relinking")
            await self._relink()
            self.on_relinked()

    async def close(self) -> None:
        await self.pubsub.close()

    async def _relink(self) -> None:
        backoff = 0.05
        while not self.stopping:
            await asyncio.sleep(backoff)
            backoff = min(2 * backoff, 2.0)
            with contextlib.suppress(Exception):
                await self.pubsub.close()
                await self.link()
                return

"""In-process room server parts on the real Valkey: the same wiring as the app (``Parts``)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Callable

import pytest

from server.app import Parts
from server.core.ratings import Rating
from server.edge.codec_msgpack import MsgpackCodec
from server.metrics import Metrics
from server.store.cache import RoomCache
from server.store.pubsub import PubSub, listen_by_reading, open_pubsub
from server.store.service import RoomService
from server.store.store import Store
from tests.conftest import app_settings


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    """A metric's current value as ``/metrics`` would show it (0 when never set)."""
    return metrics.registry.get_sample_value(name, labels) or 0.0


def other_process(store: Store) -> RoomService:
    """A room service as another server process has it: its own cache, no hub of ours."""
    return RoomService(store, RoomCache(), Metrics())


@contextlib.asynccontextmanager
async def running_parts(redis_url: str) -> AsyncIterator[Parts]:
    """The app's parts on ``redis_url``, the hub started; stopped and closed after."""
    built = Parts.build(redis_url, app_settings(redis_url=redis_url), {"msgpack": MsgpackCodec()}, Metrics())
    await built.hub.start()
    try:
        yield built
    finally:
        await built.hub.stop()
        await built.store.close()


@pytest.fixture
async def parts(redis_url: str) -> AsyncIterator[Parts]:
    async with running_parts(redis_url) as built:
        yield built


@pytest.fixture
async def gated(redis_url: str) -> AsyncIterator[tuple[Parts, "GatedPubSub"]]:
    """:func:`parts` whose hub reads its pub/sub messages through a :class:`GatedPubSub`."""
    settings = app_settings(redis_url=redis_url)
    gate = GatedPubSub(open_pubsub(redis_url, lean=settings.lean_redis))
    built = Parts.build(redis_url, settings, {"msgpack": MsgpackCodec()}, Metrics(), pubsub=gate)
    await built.hub.start()
    try:
        yield built, gate
    finally:
        if gate.open is not None:
            gate.open.set()
        await built.hub.stop()
        await built.store.close()


class PubSubOver:
    """A pub/sub link passing everything to ``inner``: tests override :meth:`read`."""

    def __init__(self, inner: PubSub) -> None:
        self.inner = inner

    async def connect(self, timeout_s: float = 5.0) -> None:
        await self.inner.connect(timeout_s)

    async def close(self) -> None:
        await self.inner.close()

    async def subscribe(self, *channels: str) -> None:
        await self.inner.subscribe(*channels)

    async def unsubscribe(self, *channels: str) -> None:
        await self.inner.unsubscribe(*channels)

    async def read(self) -> tuple[str, str, object]:
        return await self.inner.read()

    async def listen(self, on_push: Callable[[str, str, object], None]) -> None:
        """Through :meth:`read`, one push at a time (what the tests override)."""
        await listen_by_reading(self, on_push)


class GatedPubSub(PubSubOver):
    """A pub/sub link whose messages wait at a gate the test opens: what the hub reads, and
    when, is up to the test (it races an attach against a message deterministically)."""

    def __init__(self, inner: PubSub) -> None:
        super().__init__(inner)
        self.open = None  # set on the loop by the test: an asyncio.Event

    async def read(self) -> tuple[str, str, object]:
        item = await self.inner.read()
        if item[0] == "message" and self.open is not None:
            await self.open.wait()
        return item


def as_stored(found: Rating, expected: Rating) -> bool:
    """``found`` (a rating as read: aged to the moment of the read) is ``expected`` (as the
    test computed it): the same games and end, the numbers but for the growth of the ms or
    seconds between (Rating.aged: about 1e-9 of a point a second for an established rating)."""
    return (found.games == expected.games and found.last_ms == expected.last_ms
            and math.isclose(found.rating, expected.rating, abs_tol=1e-6)
            and math.isclose(found.deviation, expected.deviation, abs_tol=1e-6)
            and math.isclose(found.volatility, expected.volatility, abs_tol=1e-9))


def all_as_stored(found: tuple[Rating, ...], expected: tuple[Rating, ...]) -> bool:
    return len(found) == len(expected) and all(as_stored(f, e) for f, e in zip(found, expected, strict=True))

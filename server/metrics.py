"""Prometheus metrics of one server process, served at ``GET /metrics``.

Each app gets its own registry (no module-level metrics): several apps in one test process,
or a restarted app, never collide. Names follow Prometheus conventions; the help texts say
what is counted. Counters and the histograms are updated where things happen (room service,
hub, edges); the gauges that describe the hub's current state (connections, rooms, caches,
the pub/sub link) come from a custom collector that asks the hub for its census when
``/metrics`` is scraped (:meth:`Metrics.observe`), so they cannot drift.

Every label has a small fixed set of values: ``kind`` (player/spectator), ``codec``
(msgpack/html), commit ``kind`` (create/join/move/rematch), Redis ``op``
(commit/load/pubsub/sweep/health/presence/http), close ``reason`` (:func:`reason_label`),
what a finished game leaves behind (``what``: rating/solo/games).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

GC_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)  # full passes: seconds at scale
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
REASONS = frozenset({"rate_limit_exceeded", "frame_too_large", "bad_token", "unknown_game", "foreign_origin"})


def reason_label(reason: str) -> str:
    """A close reason as a bounded label: known slugs as themselves, anything else ``other``."""
    slug = re.sub(r"[^a-z0-9]+", "_", reason.lower()).strip("_")
    return slug if slug in REASONS else ("none" if not slug else "other")


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.moves_committed = Counter(
            "mineduel_moves_committed", "Room changes committed by this process, by kind (create/join/move/rematch).",
            ["kind"], registry=r,
        )
        self.commit_conflicts = Counter(
            "mineduel_commit_conflicts", "Commits that lost the compare-and-set on the room version.", registry=r
        )
        self.push_latency = Histogram(
            "mineduel_move_to_push_seconds",
            "From receiving a move to queueing its update on the local connections (moves taken by this process).",
            buckets=LATENCY_BUCKETS, registry=r,
        )
        self.redis_errors = Counter("mineduel_redis_errors", "Redis calls that failed, by operation.", ["op"],
                                    registry=r)
        self.pubsub_reconnects = Counter("mineduel_pubsub_reconnects", "Pub/sub reconnections after a loss.",
                                         registry=r)
        self.slow_consumers = Counter(
            "mineduel_slow_consumers_dropped", "Connections closed because their send queue was full.", registry=r
        )
        self.policy_closes = Counter(
            "mineduel_policy_closes", "Connections closed with 1008, by reason.", ["reason"], registry=r
        )
        self.bad_messages = Counter("mineduel_bad_messages", "Client frames refused by the wire parser.", registry=r)
        self.unavailable = Counter(
            "mineduel_unavailable_refusals", "Client actions refused because Redis was unreachable.", registry=r
        )
        self.settle_failures = Counter(
            "mineduel_settle_failures", "What a commit leaves behind that failed to be written, by what "
            "(rating/solo/games); the move itself stands, and an end is tried again by the sweeper.", ["what"],
            registry=r,
        )
        self.loop_lag = Histogram(
            "mineduel_loop_lag_seconds", "How much later than asked the event loop ran a 20 ms timer "
            "(server/loop_lag.py): long callbacks, GC passes, a backlog, waiting for a CPU.",
            buckets=LAG_BUCKETS, registry=r,
        )
        self.gc_pause = Histogram(
            "mineduel_gc_pause_seconds", "Cyclic garbage collection passes run by the GC policy, by generation "
            "(full: the policy runs no other); every pass stops the process.", ["generation"], buckets=GC_BUCKETS, registry=r,
        )

    def observe(self, census: "Callable[[], HubCensus]", codecs: Iterable[str]) -> None:
        """Read the hub's state through ``census`` at every scrape (a custom collector)."""
        self.registry.register(_HubCollector(census, tuple(codecs)))

    def render(self) -> bytes:
        """The exposition text."""
        return generate_latest(self.registry)


class HubCensus(Protocol):
    """What the hub reports (``server.store.hub.Census``)."""

    connections: dict[tuple[str, str], int]
    rooms: int
    cached_rooms: int
    pending_commits: int
    linked: bool
    frames: int


class _HubCollector:
    def __init__(self, census: "Callable[[], HubCensus]", codecs: tuple[str, ...]) -> None:
        self.census = census
        self.codecs = codecs

    def describe(self) -> list[Metric]:
        return []  # the families are only known at collection; nothing to check at registration

    def collect(self) -> Iterator[Metric]:
        now = self.census()
        connections = GaugeMetricFamily("mineduel_connections",
                                        "Open websocket connections by kind (player/spectator) and codec.",
                                        labels=["kind", "codec"])
        for kind in ("player", "spectator"):
            for codec in self.codecs:
                connections.add_metric([kind, codec], now.connections.get((kind, codec), 0))
        yield connections
        yield GaugeMetricFamily("mineduel_rooms_live", "Rooms with at least one local connection.", value=now.rooms)
        yield GaugeMetricFamily("mineduel_hub_cached_rooms", "Rooms whose latest state the hub caches.",
                                value=now.cached_rooms)
        yield GaugeMetricFamily("mineduel_hub_pending_local_commits",
                                "Local commits waiting for their pub/sub echo (bounded cache).",
                                value=now.pending_commits)
        yield GaugeMetricFamily("mineduel_redis_up", "1 while the pub/sub link to Redis is up, else 0.",
                                value=1 if now.linked else 0)
        # the fan-out's own count, read here: not a Counter taking its lock on every fan-out
        yield CounterMetricFamily("mineduel_frames_queued", "Frames queued on local connections by the hub.",
                                  value=now.frames)

"""Prometheus metrics of one server process, served at ``GET /metrics``.

Each app gets its own registry (no module-level metrics): several apps in one test process,
or a restarted app, never collide. Names follow Prometheus conventions; the help texts say
what is counted.
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.connections = Gauge(
            "mineduel_connections", "Open websocket connections by kind (player/spectator) and codec.",
            ["kind", "codec"], registry=r,
        )
        self.rooms_live = Gauge("mineduel_rooms_live", "Rooms with at least one local connection.", registry=r)
        self.moves_committed = Counter("mineduel_moves_committed", "Room changes committed by this process.", registry=r)
        self.commit_conflicts = Counter(
            "mineduel_commit_conflicts", "Commits that lost the compare-and-set on the room version.", registry=r
        )
        self.push_latency = Histogram(
            "mineduel_move_to_push_seconds", "From receiving a move to queueing its update on a local connection.",
            buckets=LATENCY_BUCKETS, registry=r,
        )
        self.redis_errors = Counter("mineduel_redis_errors", "Redis calls that failed.", registry=r)
        self.slow_consumers = Counter(
            "mineduel_slow_consumers_dropped", "Connections closed because their send queue was full.", registry=r
        )
        self.policy_closes = Counter(
            "mineduel_policy_closes", "Connections closed with 1008, by reason.", ["reason"], registry=r
        )
        self.bad_messages = Counter("mineduel_bad_messages", "Client frames refused by the wire parser.", registry=r)

    def render(self) -> bytes:
        return generate_latest(self.registry)

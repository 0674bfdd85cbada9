"""A failed operation is a Redis error (counted, logged, an outage or not) only when Redis
raised it: a bug in what the operation also does (a decision, a render) is not the store's."""

from __future__ import annotations

import logging

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from server.metrics import Metrics
from server.outage import redis_down


def errors(metrics: Metrics, op: str) -> float:
    return metrics.registry.get_sample_value("mineduel_redis_errors_total", {"op": op}) or 0.0


@pytest.mark.parametrize(("exc", "outage"), [
    (RedisConnectionError("refused"), True), (ConnectionResetError(), True), (TimeoutError(), True),
    (ResponseError("WRONGTYPE"), False),
])
def test_a_redis_failure_is_counted_and_logged_and_an_outage_is_told_apart(exc, outage, caplog) -> None:
    metrics = Metrics()
    with caplog.at_level(logging.WARNING, logger="mineduel.outage"):
        assert redis_down(metrics, "move", exc, room="r1") is outage
    assert errors(metrics, "move") == 1
    assert "event=redis_error" in caplog.text and f"outage={outage}" in caplog.text


@pytest.mark.parametrize("exc", [IndexError("tuple index out of range"), TypeError(), ValueError(), KeyError("x")])
def test_an_exception_that_is_not_redis_s_is_left_to_propagate_uncounted(exc, caplog) -> None:
    metrics = Metrics()
    with caplog.at_level(logging.DEBUG, logger="mineduel.outage"):
        assert redis_down(metrics, "move", exc, room="r1") is False
    assert errors(metrics, "move") == 0
    assert "redis_error" not in caplog.text

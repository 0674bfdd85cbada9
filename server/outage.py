"""Redis outages: how every part of the server tells "the store is unreachable" from a bug.

:func:`redis_down` is what a caller does when a Redis call fails: count it, log one
``event=redis_error`` line (ids only), and learn whether it was an outage (connection
refused/reset/timed out, server loading) — then it answers ``unavailable`` — or anything
else, a bug it lets propagate.
"""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .logs import event
from .metrics import Metrics

log = logging.getLogger("mineduel.outage")

OUTAGE = (RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError, OSError)
"""Exceptions that mean "Redis is unreachable right now" (redis-py's, and the pub/sub link's)."""

UNAVAILABLE = "unavailable"
UNAVAILABLE_MESSAGE = ("service interrupted: the game store is unreachable, so moves are not played; "
                       "a fresh board follows when it is back")


def is_outage(exc: BaseException) -> bool:
    return isinstance(exc, OUTAGE)


def redis_down(metrics: Metrics | None, op: str, exc: BaseException, **ids: Any) -> bool:
    """Count and log a failed Redis call; True if it is an outage (the caller then answers
    ``unavailable``), False for anything else (a bug: the caller lets it propagate). An
    exception that is not Redis's (the callers wrap whole operations, decisions included) is
    neither counted nor logged here: it is a bug, and the handler that catches it logs it."""
    if not isinstance(exc, (RedisError, *OUTAGE)):
        return False
    outage = is_outage(exc)
    if metrics is not None:
        metrics.redis_errors.labels(op).inc()
    event(log, "redis_error", level=logging.WARNING, op=op, error=type(exc).__name__, outage=outage, **ids)
    return outage

"""Operations: ``GET /metrics``, Redis outages seen from the edges, and policy-close accounting.

- :data:`routes`: ``/metrics`` (Prometheus text format, this process's registry).
- :func:`redis_down`: what an edge does when a Redis call fails — count it, log one
  ``event=redis_error`` line (ids only), and tell the caller whether it was an outage
  (connection refused/reset/timed out, server loading) as opposed to a bug.
- :data:`exception_handlers`: an HTTP route that hit a Redis outage answers ``503
  unavailable`` (JSON under ``/api``, plain text elsewhere) with ``Retry-After``.
- :class:`CloseObserver`: ASGI middleware that sees every websocket close the app sends; each
  1008 (policy) close is counted by reason and logged once, with room and player ids, whichever
  edge or check sent it.
"""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .logs import event
from .metrics import Metrics, reason_label

log = logging.getLogger("mineduel.ops")

OUTAGE = (RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError, OSError)
"""Exceptions that mean "Redis is unreachable right now" (redis-py's, and the pub/sub link's)."""

UNAVAILABLE = "unavailable"
UNAVAILABLE_MESSAGE = ("service interrupted: the game store is unreachable, so moves are not played; "
                       "a fresh board follows when it is back")


def is_outage(exc: BaseException) -> bool:
    return isinstance(exc, OUTAGE)


def redis_down(metrics: Metrics | None, op: str, exc: BaseException, **ids: Any) -> bool:
    """Count and log a failed Redis call; True if it is an outage (the caller then answers
    ``unavailable``), False for anything else (a bug: the caller lets it propagate)."""
    outage = is_outage(exc)
    if metrics is not None:
        metrics.redis_errors.labels(op).inc()
    event(log, "redis_error", level=logging.WARNING, op=op, error=type(exc).__name__, outage=outage, **ids)
    return outage


# ---------------------------------------------------------------------- /metrics


async def metrics_endpoint(request: Request) -> Response:
    state = request.app.state
    metrics: Metrics = state.metrics
    hub = getattr(state, "hub", None)
    return Response(metrics.render(hub), media_type=metrics.content_type)


routes = [Route("/metrics", metrics_endpoint)]


# ---------------------------------------------------------------------- HTTP during an outage


async def _outage_response(request: Any, exc: Exception) -> Response | None:
    metrics = getattr(request.app.state, "metrics", None)
    if request.scope.get("type") != "http":  # a websocket: the edges handle their own outages
        redis_down(metrics, "ws", exc)
        try:
            await request.close(1011, "service interrupted")
        except Exception:
            pass
        return None
    redis_down(metrics, "http", exc, path=request.url.path)
    headers = {"Retry-After": "5"}
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": {"code": UNAVAILABLE, "message": UNAVAILABLE_MESSAGE}}, status_code=503,
                            headers=headers)
    return PlainTextResponse("Service interrupted: the game store is unreachable. Try again in a moment.",
                             status_code=503, headers=headers)


exception_handlers = {RedisConnectionError: _outage_response, RedisTimeoutError: _outage_response}


# ---------------------------------------------------------------------- policy closes


class CloseObserver:
    """Counts and logs every 1008 close sent on a websocket (ASGI middleware).

    The edges may put the player's id in ``scope["mineduel.player"]`` so the line names it.
    """

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return

        async def observed_send(message: Message) -> None:
            if message.get("type") == "websocket.close" and message.get("code") == 1008:
                reason = str(message.get("reason") or "")
                self.metrics.policy_closes.labels(reason_label(reason)).inc()
                room = (scope.get("path_params") or {}).get("id")
                event(log, "policy_close", room=room, player=scope.get("mineduel.player"), reason=reason_label(reason),
                      path=scope.get("path"))
            await send(message)

        await self.app(scope, receive, observed_send)

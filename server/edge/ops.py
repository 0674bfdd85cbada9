"""Operations at the edge: ``GET /metrics``, HTTP answers during a Redis outage, and the
accounting of policy closes.

- :data:`routes`: ``/metrics`` (Prometheus text format, this process's registry).
- :data:`exception_handlers`: an HTTP route that hit a Redis outage answers ``503
  unavailable`` (JSON under ``/api``, plain text elsewhere) with ``Retry-After``; a client
  that left in the middle of its request's body is not a server error; an address no route
  serves (404) or a method its route does not take (405, with ``Allow``) answers in the API's
  JSON shape under ``/api`` (the browser edge answers its pages' own, ``server.web.site``).
- :class:`CloseObserver`: ASGI middleware that sees every websocket close the app sends; each
  1008 (policy) close is counted by reason and logged once, with room and player ids, whichever
  edge or check sent it.
"""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..logs import event
from ..metrics import Metrics, reason_label
from ..outage import UNAVAILABLE, UNAVAILABLE_MESSAGE, redis_down

log = logging.getLogger("mineduel.ops")


async def metrics_endpoint(request: Request) -> Response:
    metrics: Metrics = request.app.state.metrics
    return Response(metrics.render(), media_type=metrics.content_type)


routes = [Route("/metrics", metrics_endpoint)]


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


async def _client_gone(request: Request, _exc: Exception) -> Response:
    """The client closed the connection before its request's body was all there: nobody is
    left to answer, and it is not a server error (Starlette raises ``ClientDisconnect`` from
    the body's read, which would be logged as an exception in the application). The status
    is nginx's "client closed request"."""
    event(log, "client_gone", path=request.url.path)
    return Response(status_code=499)


HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}
"""The API's error code for each of the router's own refusals."""


async def http_error(request: Request, exc: Exception) -> Response:
    """The router's own refusals: no route for the address (404) or not for that method (405,
    with the ``Allow`` header). Under ``/api/`` in the API's shape (``{"error": {"code",
    "message"}}``), so a client reads every refusal the same way; elsewhere plain text."""
    assert isinstance(exc, HTTPException)
    if request.url.path.startswith("/api/"):
        body = {"error": {"code": HTTP_CODES.get(exc.status_code, "bad_request"), "message": exc.detail}}
        return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)
    return PlainTextResponse(exc.detail, status_code=exc.status_code, headers=exc.headers)


exception_handlers = {RedisConnectionError: _outage_response, RedisTimeoutError: _outage_response,
                      ClientDisconnect: _client_gone, HTTPException: http_error}


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

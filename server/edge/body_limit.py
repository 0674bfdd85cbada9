"""HTTP request bodies above a limit get 413 before a route has buffered them."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimit:
    """Refuse HTTP bodies above ``limit`` bytes with 413, without buffering them.

    A declared ``Content-Length`` above the limit is refused before the route runs; a chunked
    body is counted as it arrives and the route's read fails at the limit (the 413 is sent if
    the route has not started its response, which ours never have while reading the body).
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                if not value.isdigit() or int(value) > self.limit:
                    await self._refuse(scope, receive, send)
                    return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if not started:
                await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"the request body is limited to {self.limit} bytes"
        if scope.get("path", "").startswith("/api/"):
            body = json.dumps({"error": {"code": "too_large", "message": message}}).encode()
            media = b"application/json"
        else:
            body, media = message.encode(), b"text/plain; charset=utf-8"
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", media), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass

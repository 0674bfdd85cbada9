"""Security headers for the browser edge, as a small pure-ASGI middleware.

The pages run htmx and its websocket extension, both served by the app itself, and no other
script: there is no inline script, no inline style and no ``eval`` anywhere (htmx is told so
by its ``htmx-config`` meta tag: no indicator styles, no eval, no script tags in swaps). So
the policy can be strict: everything from our own origin only. ``connect-src 'self'`` covers
the page's own ``ws://``/``wss://`` origin in current browsers (CSP Level 3; checked by the
browser tests, whose websocket runs under exactly this header).

Mounted per route (``Route(..., middleware=[Middleware(SecurityHeaders)])``) by
:mod:`server.pages` and :mod:`server.ws_browser`, so the JSON API keeps its own headers.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])

HEADERS: dict[str, str] = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()",
}


class SecurityHeaders:
    """Adds :data:`HEADERS` to every HTTP response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)

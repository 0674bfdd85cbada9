"""Where a request comes from: may a page of that origin act on this server?

Guards against cross-site websocket hijacking (our websockets) and CSRF (our forms): an
origin is allowed if it is one of ``settings.allowed_origins`` or, when none are configured,
the request's own host, and, when the request came over TLS, only a page that did too: a plain
``http://`` page of our host (one a network attacker can write into) may not act on the ``https``
site (TLS as :func:`~.peer.is_tls` tells it, a trusted proxy's ``X-Forwarded-Proto`` included). A
request that arrived as plain http may come from either (behind a TLS proxy that is not
trusted, the server cannot tell which its pages use).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import HTTPConnection

from ..config import Settings
from .peer import is_tls


def _origin_of(url: str) -> tuple[str, str]:
    parts = urlsplit(url.strip())
    return parts.scheme.lower(), parts.netloc.lower()


def origin_allowed(origin: str, conn: HTTPConnection, settings: Settings) -> bool:
    """May a page of ``origin`` (an ``Origin`` or ``Referer`` value) act on this server?"""
    scheme, netloc = _origin_of(origin)
    if not netloc:
        return False
    if settings.allowed_origins:
        return f"{scheme}://{netloc}" in settings.allowed_origins
    if scheme not in ("http", "https"):
        return False
    if scheme != "https" and is_tls(conn, settings):
        return False
    return netloc == conn.headers.get("host", "").lower()


def websocket_origin_ok(conn: HTTPConnection, settings: Settings) -> bool:
    """A websocket upgrade without ``Origin`` comes from a program (browsers always send one on
    websockets), which is fine: it authenticates with its token, not with ambient cookies."""
    origin = conn.headers.get("origin")
    return origin is None or origin_allowed(origin, conn, settings)


def form_origin_ok(conn: HTTPConnection, settings: Settings) -> bool:
    """A state-changing form must come from one of our pages: ``Origin``, else ``Referer``.

    Browsers send ``Origin`` on every cross-site POST; a request with neither header is an old
    client or a program, and carries no SameSite=Lax cookie cross-site anyway. ``Origin: null``
    (sandboxed frames, some redirects) is refused whatever the ``Referer`` says: the browser
    hid where the request comes from, and a ``Referer`` cannot vouch for what it hid.
    """
    origin = conn.headers.get("origin")
    if origin == "null":
        return False
    if origin is None:
        referer = conn.headers.get("referer")
        return referer is None or origin_allowed(referer, conn, settings)
    return origin_allowed(origin, conn, settings)

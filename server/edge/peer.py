"""Who the client is: its address and whether it came over TLS.

Both read the connection itself, or the reverse proxy's ``X-Forwarded-For`` /
``X-Forwarded-Proto`` only when ``settings.trusted_proxy`` is on (otherwise anybody could
claim any address and dodge the per-IP limits).
"""

from __future__ import annotations

from starlette.requests import HTTPConnection

from ..config import Settings


def client_ip(conn: HTTPConnection, settings: Settings) -> str:
    """The client's address: the TCP peer, or the proxy's last ``X-Forwarded-For`` entry when
    ``settings.trusted_proxy`` is on (the last one is the address the proxy itself saw; the
    earlier ones are whatever the client wrote)."""
    if settings.trusted_proxy:
        forwarded = conn.headers.get("x-forwarded-for", "")
        last = forwarded.rsplit(",", 1)[-1].strip()
        if last:
            return last[:64]
    client = conn.client
    return client.host if client is not None else "unknown"


def is_tls(conn: HTTPConnection, settings: Settings) -> bool:
    """Served over TLS: the connection's own scheme, or ``X-Forwarded-Proto`` from a trusted proxy."""
    if conn.url.scheme in ("https", "wss"):
        return True
    if settings.trusted_proxy:
        proto = conn.headers.get("x-forwarded-proto", "").rsplit(",", 1)[-1].strip().lower()
        return proto == "https"
    return False

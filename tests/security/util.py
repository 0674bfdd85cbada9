"""Small helpers shared by the security tests: browser identities, raw websocket attempts."""

from __future__ import annotations

import asyncio

import httpx
from itsdangerous import URLSafeSerializer
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.names import unique

COOKIE = "mineduel_guest"
TRACE_MARKERS = ("Traceback", 'File "/', ".py\", line", "site-packages", "/work/")
"""What a leaked stack trace or file path looks like in a response."""


def ws_base(url: str) -> str:
    return url.replace("http://", "ws://")


def form_guest(base: str, name: str, exact: bool = False, **headers: str) -> tuple[str, str]:
    """A guest made through the home page's form: ``(cookie value, API token)``, named
    ``name`` plus a unique suffix (names are unique on a server), or ``exact``ly ``name``.

    The cookie holds the API token signed with the app secret; the token itself is readable
    without the key (``loads_unsafe``), as any client could read its own cookie."""
    r = httpx.post(base + "/guest", data={"name": name if exact else unique(name), "next": "/"},
                   headers={"origin": base, **headers}, follow_redirects=False)
    assert r.status_code == 303, (r.status_code, r.text[:200])
    cookie = r.cookies[COOKIE]
    ok, token = URLSafeSerializer("unused", salt="mineduel-cookie").loads_unsafe(cookie)
    assert isinstance(token, str)
    return cookie, token


async def ws_attempt(url: str, **kwargs) -> int | ClientConnection:
    """Open a websocket: the HTTP status of a refused upgrade, or the open connection."""
    try:
        return await connect(url, open_timeout=10, max_size=2**22, **kwargs)
    except InvalidStatus as exc:
        return exc.response.status_code


def is_heartbeat(frame: str | bytes) -> bool:
    """A browser socket's heartbeat alone (``#hb``, every second: server/edge/ws_pair.py)."""
    return isinstance(frame, str) and frame.startswith('<div id="hb"') and frame.count('id="') == 1


async def recv_news(ws: ClientConnection, timeout_s: float = 10, bound: int = 100) -> str | bytes:
    """The next frame that is not a heartbeat (at most ``bound`` heartbeats read past)."""
    for _ in range(bound):
        frame = await asyncio.wait_for(ws.recv(), timeout_s)
        if not is_heartbeat(frame):
            return frame
    raise AssertionError(f"only heartbeats in {bound} frames")


async def close_code_after(ws: ClientConnection, bound: int = 500, timeout_s: float = 10) -> int | None:
    """Read (at most ``bound`` frames) until the server closes; its close code."""
    try:
        for _ in range(bound):
            await asyncio.wait_for(ws.recv(), timeout_s)
    except ConnectionClosed:
        pass
    return ws.close_code

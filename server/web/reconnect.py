"""How a room page gets its socket back quickly after the server was away, without script.

The htmx ws extension reopens a lost socket by itself, but with "full jitter" backoff (a
random wait of up to 1, 2, 4 … 64 s, growing with every failed attempt and reset only by a
successful one): after a restart of ~10 s the page took 22–32 s to come back. Its
``htmx.config.wsReconnectDelay`` takes only ``"full-jitter"`` or a *function*, which the
``htmx-config`` meta (JSON) cannot carry and our CSP (no ``unsafe-eval``, no own script) does
not allow.

So every room page holds a hidden ``#reconnect`` element (``_room.html``, ``reconnect``) that
does it the htmx way:

- on ``htmx:wsClose`` from ``#room`` (after :func:`delay_ms`) it GETs the page it is on again
  (``hx-get=""``: the current URL, so a replay step's ``?at=`` is kept) and swaps the answer's
  ``#room`` in for the old one. The new ``#room`` carries ``ws-connect``: the extension opens
  a new socket at once (a new element starts with no backoff), the first frame is the
  snapshot; htmx's cleanup of the old element closes its socket;
- while the server is still away the GET fails: ``htmx:sendError`` (nothing answers) or
  ``htmx:responseError`` (a proxy's 502, a 503 while the store is away) tries again after a
  short fixed delay, until an answer comes;
- the GET carries ``reconnect=n+1``: a page that got its ``#room`` this way but whose socket is
  refused again at once (an address over its socket cap is refused before the upgrade, which
  the browser reports as 1006, like a dead server) waits :func:`delay_ms` of the next ``n``,
  growing up to 30 s, instead of looping. Every snapshot brings a fresh element with ``n = 0``
  (a socket that got its snapshot worked), as the extension's own counter resets on open;
- a socket the server closes on purpose (1008: unknown game, flood, oversized frame) gets an
  *inert* ``#reconnect`` first, so that page does not come back; an unknown game answers the
  page's GET with ``HX-Refresh`` (the page shows the "no such game" page once, not a loop).

The quick-mode radios survive the swap (``hx-preserve`` on ``#modes``).
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup
from starlette.requests import Request

from ..edge.wire import digits_value

FIRST_DELAY_MS = 100
"""The wait after a socket closed before the first GET (a dying server may still answer)."""
MAX_DELAY_MS = 30_000
MAX_COUNT = 12
"""``reconnect=`` beyond this reads as this (the delay is at its cap long before)."""


def delay_ms(n: int) -> int:
    """The wait after the socket closed before the page is fetched again, for a page that got
    its ``#room`` from the ``n``-th quick reconnect in a row (0: from a snapshot or a load).

    >>> [delay_ms(n) for n in range(6)]
    [100, 400, 1600, 6400, 25600, 30000]
    """
    return min(FIRST_DELAY_MS * 4 ** max(0, n), MAX_DELAY_MS)


def count_of(request: Request) -> int:
    """The ``reconnect`` query parameter of a page request (0 when absent or malformed)."""
    found = digits_value(request.query_params.get("reconnect"), 999)
    return 0 if found is None else min(found, MAX_COUNT)


def reconnect_area(macros: Any, request: Request) -> Markup:
    """The page's ``#reconnect`` element (``macros``: ``_room.html``'s), counting on from the
    request's ``reconnect`` parameter."""
    n = count_of(request)
    return macros.reconnect(n, delay_ms(n))


def inert(macros: Any) -> str:
    """``#reconnect`` that does nothing: sent before the server closes a socket on purpose."""
    return str(macros.reconnect(armed=False))

"""A room page's socket ticket: each render of ``#room`` may open one socket, once.

Why: the htmx ws extension (2.0.4, the latest) keeps a lost socket's retry timer running when
htmx replaces the element that holds it, and htmx's cleanup wipes that element's data, so a
socket the timer opens afterwards belongs to a detached element that nothing can close
(bigskysoftware/htmx-extensions#161). After the server was away, ``#reconnect`` brings a fresh
``#room`` (:mod:`server.web.reconnect`), and in about half the reconnects the old element's
timer fired after the swap: a second socket stayed open beside the new one, fed by the hub,
until the page closed. A fix inside the extension needs JavaScript of our own, which the pages
do not have (htmx and its extensions only).

So every render's ``ws-connect`` URL carries a ticket, ``<render time in ms, hex>.<nonce>``,
and the browser socket claims it (:meth:`server.store.store.Store.claim_ticket`: ``SET NX`` with
an expiry). A ticket used already, or older than :data:`TICKET_MAX_AGE_MS`, is a leftover of
a replaced element: that socket is closed with :data:`SUPERSEDED` (4001), which the extension
does not retry, and whose ``htmx:wsClose`` on a detached element reaches nobody. A page that
still shows that element (a page restored from the browser's cache, say) is brought back by
``#reconnect`` like after any close: a new render, a new ticket. A live page never needs one
ticket twice, because every way back goes through ``#reconnect``. A URL without a ticket (or
with one this module cannot read) is served as before: tickets are the pages' own convention,
not a credential.
"""

from __future__ import annotations

import secrets
from urllib.parse import quote

SUPERSEDED = 4001
"""The close code of a socket whose ticket was used already or is too old."""
TICKET_MAX_AGE_MS = 10 * 60 * 1000
"""A page opens its socket as soon as it is shown; a ticket this old is a cached page's."""
NONCE_CHARS = 12
MAX_TICKET = 32


def new_ticket(now_ms: int) -> str:
    """A fresh ticket for a render at ``now_ms``."""
    return f"{now_ms:x}.{secrets.token_urlsafe(9)}"


def rendered_ms(ticket: str) -> int | None:
    """The render time a ticket carries; ``None`` if it is not one of ours."""
    if not 0 < len(ticket) <= MAX_TICKET or not ticket.isascii():
        return None
    stamp, dot, nonce = ticket.partition(".")
    if not dot or len(nonce) != NONCE_CHARS or not stamp.isalnum() or not all(c.isalnum() or c in "-_" for c in nonce):
        return None
    try:
        return int(stamp, 16)
    except ValueError:  # letters past f
        return None


def is_fresh(ticket: str, now_ms: int) -> bool:
    """Whether a ticket's render lies within :data:`TICKET_MAX_AGE_MS` before ``now_ms`` (a
    render a little ahead of ``now_ms``, another process's clock, is fresh)."""
    made = rendered_ms(ticket)
    return made is not None and -TICKET_MAX_AGE_MS < now_ms - made <= TICKET_MAX_AGE_MS


def socket_url(room_id: str, ticket: str, shows_end: bool = False) -> str:
    """The room page's ``ws-connect`` URL (``end=1``: the page was served finished)."""
    return f"/g/{quote(room_id, safe='')}/ws?t={ticket}" + ("&end=1" if shows_end else "")


def render_socket_url(room_id: str, now_ms: int, shows_end: bool = False) -> str:
    """The ``ws-connect`` URL of a room page rendered at ``now_ms``, with a fresh ticket (the
    duel's page and the classic game's alike)."""
    return socket_url(room_id, new_ticket(now_ms), shows_end)

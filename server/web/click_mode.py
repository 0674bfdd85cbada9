"""The classic game's click mode, open or flag, remembered per browser.

The board's clicks go over the socket with the mode the page's radio buttons say (there are no
right clicks: they need JavaScript, which the site does not write). A reload rendered the page
in "open" again, so a player flagging on a phone who reloaded revealed with the next click, and
could lose the game to it. The radio buttons now post the mode when it changes (htmx, a
``change`` trigger, nothing swapped back); the answer sets this cookie, and every classic page
renders the mode it says. A plain preference: nothing to sign, anything else reads as "open".
"""

from __future__ import annotations

from starlette.requests import HTTPConnection, Request
from starlette.responses import Response

from ..edge.peer import is_tls

COOKIE = "mineduel_click"
COOKIE_MAX_AGE = 365 * 24 * 3600
MODES = ("reveal", "flag")
"""The modes, the default first (the radio buttons' values, and what a click carries)."""


def click_mode(conn: HTTPConnection) -> str:
    """The mode the reader last chose, else the default."""
    mode = conn.cookies.get(COOKIE)
    return mode if mode in MODES else MODES[0]


def remember(response: Response, request: Request, mode: str) -> None:
    """Set the preference on ``response`` (a year, the whole site); ``mode`` is one of :data:`MODES`."""
    response.set_cookie(COOKIE, mode, max_age=COOKIE_MAX_AGE, path="/", httponly=True, samesite="lax",
                        secure=is_tls(request, request.app.state.settings))

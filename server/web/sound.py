"""The optional "your turn" sound of a duel's page: off unless the reader turned it on.

No script plays it: the frame that makes it the reader's turn carries an ``<audio autoplay>``
element (``web/static/sounds/turn.wav``), which the browser plays when htmx puts it in the page.
A page whose reader turned the sound on (a cookie, :func:`sound_on`, set by the room page's
toggle, ``POST /g/{id}/sound``) is served by :class:`SoundHtml`, the html codec of the page's language with ``"+sound"`` (``"html+sound"``, ``"html/de+sound"``); every
other page by the plain ``"html"`` codec, so no audio element ever reaches a page that did not
ask for it. The fan-out renders per (codec, viewer class), so a room with sound pages costs one
more render per viewer class.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.requests import HTTPConnection, Request
from starlette.responses import Response

from engine import Event

from ..core.room import Room, Status
from ..edge.peer import is_tls
from ..store.messages import Attendance
from .html_codec import HtmlCodec

COOKIE = "mineduel_sound"
COOKIE_MAX_AGE = 365 * 24 * 3600
SUFFIX = "+sound"
"""A socket's codec name with the sound on: its language's html codec's name and this."""


def sound_on(conn: HTTPConnection) -> bool:
    """Whether the reader turned the sound on (a plain preference: nothing to sign)."""
    return conn.cookies.get(COOKIE) == "on"


def codec_name(conn: HTTPConnection, plain: str) -> str:
    """The codec a browser socket gets: ``plain`` + ``"+sound"`` with the sound on, else ``plain``."""
    return plain + SUFFIX if sound_on(conn) else plain


def remember(response: Response, request: Request, on: bool) -> None:
    """Set the preference on ``response`` (a year, the whole site)."""
    response.set_cookie(COOKIE, "on" if on else "off", max_age=COOKIE_MAX_AGE, path="/", httponly=True,
                        samesite="lax", secure=is_tls(request, request.app.state.settings))


def turn_began(old: Room, new: Room, viewer: int) -> bool:
    """``new`` makes it ``viewer``'s turn in a duel being played, and ``old`` did not."""
    if viewer not in (0, 1) or new.kind != "duel" or new.status is not Status.PLAYING:
        return False
    if new.view(viewer).to_move != viewer:
        return False
    return old.status is not Status.PLAYING or old.view(viewer).to_move != viewer


class SoundHtml:
    """The ``"html"`` codec's frames, plus the sound in the update that begins the reader's turn."""

    def __init__(self, html: HtmlCodec) -> None:
        self.html = html
        self.name = html.name + SUFFIX

    def snapshot(self, room: Room, viewer: int) -> str:
        """A (re)connect's picture: no sound (the turn did not begin now)."""
        return self.html.snapshot(room, viewer)

    def update(self, old: Room, new: Room, viewer: int, events: Sequence[Event]) -> str:
        frame = self.html.update(old, new, viewer, events)
        if turn_began(old, new, viewer):
            frame += str(self.html.m.sound(True))
        return frame

    def presence(self, room: Room, attendance: Attendance) -> str:
        return self.html.presence(room, attendance)

    def error(self, code: str, message: str, v: int | None = None) -> str:
        return self.html.error(code, message, v)

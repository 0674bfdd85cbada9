"""The reader's language at the browser edge: chosen once per request and per websocket, the
switch in the site's header, and the HTML codec once per language.

- :class:`ReaderLanguage` (ASGI middleware) picks the language of every page request and every
  websocket (:func:`server.web.i18n.negotiate`: the ``lang`` cookie, else ``Accept-Language``,
  else English), puts it in ``scope["mineduel.lang"]`` and runs the handler inside
  :func:`server.web.i18n.using`, so pages, their htmx fragments, error pages and whatever a
  socket's handler renders itself speak it. The JSON API (``/api``) stays English.
- ``POST /lang`` (the header's switch, a plain form checked like every form) sets the cookie and
  goes back to the page it came from.
- :class:`Localized`: the hub renders frames outside any request (``Fanout.publish``), so the
  HTML codec is registered once per language, as ``html`` (English) and ``html/<lang>``. A
  socket's codec name carries its language and the fan-out shares a frame per (codec, viewer
  class): a frame is shared only among sockets of one language.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from starlette.middleware import Middleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..edge.csp import SecurityHeaders
from ..edge.peer import is_tls
from . import i18n
from .forms import (
    BadForm,
    foreign_form,
    form_of,
    same_origin,
)
from .i18n import _
from .site import (
    redirect,
    safe_next,
)

COOKIE = "lang"
COOKIE_MAX_AGE = 365 * 24 * 3600
SCOPE_KEY = "mineduel.lang"


def lang_of(conn: HTTPConnection) -> str:
    """The language chosen for this request or websocket (by :class:`ReaderLanguage`)."""
    return conn.scope.get(SCOPE_KEY, i18n.DEFAULT)


class ReaderLanguage:
    """ASGI middleware: each page request and websocket in its reader's language."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope.get("path", "").startswith("/api"):
            await self.app(scope, receive, send)
            return
        conn = HTTPConnection(scope)
        lang = i18n.negotiate(conn.cookies.get(COOKIE), conn.headers.get("accept-language"))
        scope[SCOPE_KEY] = lang
        with i18n.using(lang):
            await self.app(scope, receive, send)


# ---------------------------------------------------------------------- the switch


async def switch(request: Request) -> Response:
    """``POST /lang`` (``lang=de``): remember the language in the cookie, back to the page."""
    if not same_origin(request):
        return await foreign_form(request)
    lang = (await form_of(request)).get("lang", "")
    if lang not in i18n.LANGS:  # the button sends one of ours; anything else changes nothing
        raise BadForm(_("There is no such language."))
    back = urlsplit(request.headers.get("referer", ""))
    response = redirect(safe_next(back.path + (f"?{back.query}" if back.query else "")))
    response.set_cookie(COOKIE, lang, max_age=COOKIE_MAX_AGE, path="/", httponly=True, samesite="lax",
                        secure=is_tls(request, request.app.state.settings))
    return response


routes = [Route("/lang", switch, methods=["POST"], middleware=[Middleware(SecurityHeaders)])]


# ---------------------------------------------------------------------- frames per language


class Localized:
    """A codec speaking one language: every method of the wrapped codec runs inside
    :func:`server.web.i18n.using`. Attributes pass through (``labels``, ``env``, ``m``...).

    A proxy rather than a subclass, so a method added to :class:`~server.web.html_codec.HtmlCodec`
    later speaks the socket's language without anybody remembering to wrap it."""

    def __init__(self, codec: Any, lang: str) -> None:
        self.codec = codec
        self.lang = lang
        self.name: str = codec.name if lang == i18n.DEFAULT else f"{codec.name}/{lang}"

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self.codec, attr)
        if not callable(value):
            return value
        speaking = self.__dict__[attr] = self._speaking(value)  # wrapped once: frames are a hot path
        return speaking

    def _speaking(self, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            with i18n.using(self.lang):
                return method(*args, **kwargs)

        return call


def localized(codec: Any) -> dict[str, Localized]:
    """``codec`` once per language of the site, by language."""
    return {lang: Localized(codec, lang) for lang in i18n.LANGS}

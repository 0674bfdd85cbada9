"""What the browser pages share: templates, assets and the guest cookie (one :class:`Web` per
app, built by the lifespan once the signing secret is known), and the small helpers of every
form handler (origin check, form parsing, redirects, error pages).

The guest's identity is the API token of ``POST /api/v1/guests`` (issued through the same
:class:`server.edge.auth.Auth`), kept in a signed, HttpOnly, SameSite=Lax cookie.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl

from itsdangerous import BadSignature, URLSafeSerializer
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ..core.room import Player
from ..edge.limits import Limited, guard_of
from ..edge.origin import form_origin_ok
from ..edge.peer import is_tls
from .assets import Assets
from .html_codec import HtmlCodec
from .i18n import _

ROOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""A room id as a page's path or form carries one."""
COOKIE = "mineduel_guest"
COOKIE_MAX_AGE = 365 * 24 * 3600


class Web:
    """What the browser edge builds once per app: templates, assets, cookie signer."""

    def __init__(self, codec: HtmlCodec, assets: Assets, secret: str, speaking: dict[str, Any] | None = None) -> None:
        self.codec = codec
        self.speaking = speaking or {}
        """The codec once per language (:class:`server.web.language.Localized`), by language."""
        self.env = codec.env
        self.assets = assets
        self.env.globals["asset"] = assets.url
        self.cookies = URLSafeSerializer(secret, salt="mineduel-cookie")

    def render(self, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(**context)
        return HTMLResponse(html, status_code=status_code, headers={"cache-control": "no-store"})

    def codec_for(self, lang: str) -> Any:
        """The codec whose frames speak ``lang`` (its name is the fan-out's sharing key)."""
        return self.speaking.get(lang) or self.codec

    def token_of(self, conn: HTTPConnection) -> str | None:
        raw = conn.cookies.get(COOKIE)
        if not raw or len(raw) > 1024:
            return None
        try:
            token = self.cookies.loads(raw)
        except BadSignature:
            return None
        return token if isinstance(token, str) else None

    def player_of(self, conn: HTTPConnection) -> Player | None:
        """The guest behind the request's cookie, or ``None``."""
        token = self.token_of(conn)
        return conn.app.state.auth.resolve(token) if token else None

    def set_cookie(self, response: Response, request: Request, token: str) -> None:
        response.set_cookie(
            COOKIE, self.cookies.dumps(token), max_age=COOKIE_MAX_AGE, path="/",
            httponly=True, samesite="lax", secure=is_tls(request, request.app.state.settings),
        )


def web_of(conn: HTTPConnection) -> Web:
    """The app's :class:`Web`."""
    return conn.app.state.web


def same_origin(request: Request) -> bool:
    """A state-changing form must come from our own pages (the cookie is SameSite=Lax too):
    ``Origin`` (else ``Referer``) is one of the allowed origins, by default our own host
    (:func:`server.edge.origin.form_origin_ok`)."""
    return form_origin_ok(request, request.app.state.settings)


def foreign_form(web: Web) -> Response:
    """The answer to a form that :func:`same_origin` refused: 403, and why, in the reader's
    language."""
    return error_page(web, 403, _("Forbidden"), _("That form came from another site."))


def safe_next(value: object, default: str = "/") -> str:
    """Only local paths: ``/g/abc`` yes, ``//evil.example`` and ``https://…`` no."""
    if isinstance(value, str) and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value[:200]
    return default


MAX_FORM = 4096


async def form_of(request: Request) -> dict[str, str]:
    """The fields of a small ``application/x-www-form-urlencoded`` body (first value wins).

    Parsed here rather than with ``request.form()``: our forms are tiny and urlencoded, and
    this needs no multipart parser. Oversized or undecodable bodies give ``{}``.
    """
    body = await request.body()
    if len(body) > MAX_FORM:
        return {}
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=32)
    except (UnicodeDecodeError, ValueError):
        return {}
    fields: dict[str, str] = {}
    for key, value in pairs:
        fields.setdefault(key, value)
    return fields


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def error_page(web: Web, status: int, title: str, message: str, me: Player | None = None) -> HTMLResponse:
    return web.render("error.html", status_code=status, title=title, message=message, me=me)


def limited_page(web: Web, exc: Limited, me: Player | None = None) -> HTMLResponse:
    message = _("too many %(what)s from your address; try again in %(seconds)d s.") % {
        "what": _("new games") if exc.what == "new games" else _("new guests"), "seconds": exc.retry_after_s}
    response = error_page(web, 429, _("Slow down"), message, me)
    response.headers["retry-after"] = str(exc.retry_after_s)
    return response


async def guest_of(request: Request) -> tuple[Player, str | None]:
    """The visitor's guest, or a new one with a generated name for a newcomer (one click to
    play: no name asked first) and its token to set as the cookie. Raises ``Limited`` when this
    address has made too many guests."""
    me = web_of(request).player_of(request)
    if me is not None:
        return me, None
    guard_of(request).new_guest(request)
    return await request.app.state.guests.create(None)


def redirect_as(request: Request, url: str, token: str | None) -> RedirectResponse:
    """:func:`redirect`, setting the cookie of a guest just made (``token``; ``None``: none)."""
    response = redirect(url)
    if token is not None:
        web_of(request).set_cookie(response, request, token)
    return response


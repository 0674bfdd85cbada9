"""What the browser pages share: templates, assets and the guest cookie (one :class:`Web` per
app, built by the lifespan once the signing secret is known), and the small helpers of every
form handler (origin check, form parsing and its refusals, redirects, error pages).

The guest's identity is the API token of ``POST /api/v1/guests`` (issued through the same
:class:`server.edge.auth.Auth`), kept in a signed, HttpOnly, SameSite=Lax cookie. The token
names the guest as they were called when it was issued; the header of a page shows the name
registered now (:func:`visitor_of`, :func:`render_page`).

A form is refused before it changes anything: a body that is not a small urlencoded form
(:func:`form_of`) or a value its page never offers raises :class:`BadForm`, which the route
answers with its error page (:func:`refused_form`; the app does for routes that do not).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any
from urllib.parse import parse_qsl

from itsdangerous import BadSignature, URLSafeSerializer
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from engine import RULESETS

from ..core.room import Player
from ..edge.csp import HEADERS
from ..edge.limits import Limited, guard_of
from ..edge.origin import form_origin_ok
from ..edge.peer import is_tls
from ..outage import redis_down
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


async def foreign_form(request: Request) -> Response:
    """The answer to a form that :func:`same_origin` refused: 403, and why, in the reader's
    language."""
    return await error_page_for(request, 403, _("Forbidden"), _("That form came from another site."))


def safe_next(value: object, default: str = "/") -> str:
    """Only local paths: ``/g/abc`` yes, ``//evil.example`` and ``https://…`` no."""
    if isinstance(value, str) and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value[:200]
    return default


FORM_TYPE = "application/x-www-form-urlencoded"
MAX_FORM = 4096
MAX_FIELDS = 32


class BadForm(Exception):
    """A form refused before it changed anything: ``status`` (400 a value or a body that cannot
    be read, 413 too large, 415 not urlencoded, 403 a test hook that is off) and why, in the
    reader's language. Raised where the form is read; answered by :func:`refused_form`."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.status = message, status


async def form_of(request: Request) -> dict[str, str]:
    """The fields of a small ``application/x-www-form-urlencoded`` body (first value wins).

    An empty body is an empty form whatever its type (a form of one button sends no field). Any
    other body that is not such a form raises :class:`BadForm` rather than reading as empty, so a
    form never runs on defaults it did not ask for. Parsed here rather than with
    ``request.form()``: our forms are tiny and urlencoded, and this needs no multipart parser.
    """
    body = await request.body()
    if not body:
        return {}
    if request.headers.get("content-type", "").split(";", 1)[0].strip().lower() != FORM_TYPE:
        raise BadForm(_("Our pages send forms URL-encoded; this one came in another format."), 415)
    if len(body) > MAX_FORM:
        raise BadForm(_("It is larger than %(most)d bytes.") % {"most": MAX_FORM}, 413)
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FIELDS,
                          encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise BadForm(_("Its text is not valid UTF-8.")) from None
    except ValueError:
        raise BadForm(_("It has more than %(most)d fields.") % {"most": MAX_FIELDS}) from None
    fields: dict[str, str] = {}
    for key, value in pairs:
        fields.setdefault(key, value)
    return fields


def ticked(form: dict[str, str], field: str, on: Collection[str] = ("on",), off: Collection[str] = ()) -> bool:
    """A checkbox: ``on`` (what the box sends), or absent or ``off`` (what a page's hidden field
    sends for an unticked box); any other value raises :class:`BadForm`."""
    value = form.get(field)
    if value is not None and value not in on and value not in off:
        raise BadForm(_("“%(field)s” is a box to tick or leave empty; the form said something else.")
                      % {"field": field})
    return value in on


def ruleset_of(form: dict[str, str]) -> str:
    """The form's rules (Brettspielnetz's when it names none); unknown ones raise :class:`BadForm`."""
    ruleset = form.get("ruleset", "brettspielnetz")
    if ruleset not in RULESETS:
        raise BadForm(_("There are no such rules."))
    return ruleset


def seed_of(request: Request, form: dict[str, str]) -> int | None:
    """The test-only layout hook: a ``seed`` is refused (403) unless the test hooks are on, as
    the JSON API refuses it (``test_hooks_off``); no page sends one."""
    seed = form.get("seed")
    if seed is None:
        return None
    if not request.app.state.settings.test_hooks:
        raise BadForm(_("The seed is a test-only hook, turned off on this server."), 403)
    if not (seed.isascii() and seed.isdigit() and len(seed) < 19):
        raise BadForm(_("A seed is a whole number."))
    return int(seed)


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


async def visitor_of(request: Request) -> Player | None:
    """The visitor's guest under the name registered now (:meth:`Guests.current`, one Redis
    read), or ``None``. The cookie's token keeps the name it was issued with: after a rename
    through the API that name is free and may be someone else's, so the header must not show
    it. Redis away: the cookie's name (the page still works)."""
    me = web_of(request).player_of(request)
    if me is None:
        return None
    try:
        return await request.app.state.guests.current(me)
    except Exception as exc:
        if not redis_down(request.app.state.metrics, "guests", exc, player=me.id):
            raise
        return me


def render_page(request: Request, template: str, me: Player | None, status_code: int = 200,
                **context: Any) -> HTMLResponse:
    """``template`` for ``me`` (as :func:`visitor_of` read them). A cookie whose name is no longer
    the registered one is issued again with it, as a rename does, so that what reads only the
    cookie (the room page's header, the sockets) shows the registered name from now on."""
    web = web_of(request)
    response = web.render(template, status_code=status_code, me=me, **context)
    cookie = web.player_of(request)
    if me is not None and cookie is not None and cookie.id == me.id and cookie.name != me.name:
        web.set_cookie(response, request, request.app.state.auth.token_for(me))
    return response


async def error_page_for(request: Request, status: int, title: str, message: str) -> HTMLResponse:
    """The error page, with the visitor's header ("Playing as …", "My games"): every error a
    form or page of ours answers is shown as the rest of the site is, signed in or not."""
    return render_page(request, "error.html", await visitor_of(request), status, title=title, message=message)


async def refused_form(request: Request, exc: BadForm, title: str | None = None) -> HTMLResponse:
    """The page of a :class:`BadForm`: ``title`` says what the form was for (else: it could not
    be read), the message why."""
    return await error_page_for(request, exc.status, title or _("Cannot read that form"), exc.message)


async def _bad_form(request: Request, exc: Exception) -> Response:
    """The app's answer to a :class:`BadForm` that its route did not answer itself; raised past
    the route's own middleware, so the page gets the security headers here."""
    assert isinstance(exc, BadForm)
    response = await refused_form(request, exc)
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    return response


exception_handlers = {BadForm: _bad_form}
"""The browser edge's exception handlers (``server.app`` installs them with the pages)."""


async def limited_page(request: Request, exc: Limited) -> HTMLResponse:
    message = _("too many %(what)s from your address; try again in %(seconds)d s.") % {
        "what": _("new games") if exc.what == "new games" else _("new guests"), "seconds": exc.retry_after_s}
    response = await error_page_for(request, 429, _("Slow down"), message)
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


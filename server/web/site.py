"""What the browser pages share: templates, assets and the guest cookie (one :class:`Web` per
app, built by the lifespan once the signing secret is known), and the small helpers of every
page handler (the visitor, redirects, error pages). The forms' own helpers are
:mod:`server.web.forms`.

The guest's identity is the API token of ``POST /api/v1/guests`` (issued through the same
:class:`server.edge.auth.Auth`), kept in a signed, HttpOnly, SameSite=Lax cookie. The token
names the guest as they were called when it was issued; the header of a page shows the name
registered now (:func:`visitor_of`, :func:`render_page`).
"""

from __future__ import annotations

import re
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ..core.room import Player
from ..edge.csp import HEADERS
from ..edge.limits import Limited, guard_of
from ..edge.ops import http_error
from ..edge.peer import is_tls
from ..outage import redis_down
from .assets import Assets
from .html_codec import HtmlCodec
from .i18n import N_, _

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


def safe_next(value: object, default: str = "/") -> str:
    """Only local paths: ``/g/abc`` yes, ``//evil.example`` and ``https://…`` no."""
    if isinstance(value, str) and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value[:200]
    return default


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


async def visitor_of(request: Request) -> Player | None:
    """The visitor's guest under the name registered now (:meth:`Guests.current`, one Redis
    read), or ``None``. The cookie's token keeps the name it was issued with: after a rename
    through the API that name is no longer the one shown for them, so the header must not show
    it. Redis away: the cookie's name (the page still works)."""
    me = web_of(request).player_of(request)
    if me is None:
        return None
    try:
        current = await request.app.state.guests.current(me)
    except Exception as exc:
        if not redis_down(request.app.state.metrics, "guests", exc, player=me.id):
            raise
        return me
    request.state.my_turns = await _turns_waiting(request, current.id)
    return current


async def ongoing_of(request: Request, player_id: str) -> list[dict[str, Any]]:
    """The player's ongoing games (``PlayerGames.ongoing``: a read of their list and rooms),
    read once per request: the header's count and a page's list ("My games", one's own page)."""
    held = getattr(request.state, "ongoing", None)
    if held is not None and held[0] == player_id:
        return held[1]
    games = await request.app.state.games.ongoing(player_id)
    request.state.ongoing = (player_id, games)
    return games


async def ongoing_shown(request: Request, player_id: str) -> list[dict[str, Any]]:
    """:func:`ongoing_of` for what a page shows beside its own content (the header's count, the
    pairing page's way back to a game): none while Redis is away (logged and counted)."""
    try:
        return await ongoing_of(request, player_id)
    except Exception as exc:
        if not redis_down(request.app.state.metrics, "games", exc, player=player_id):
            raise
        return []


async def _turns_waiting(request: Request, player_id: str) -> int:
    """How many of the player's games wait for their move: the header's count beside "My
    games" (:func:`render_page`). Why: a correspondence player learns of a move to make on any
    page of the site, not only on "My games" (an outside probe). A game's own page leaves that
    game out: the page says whose turn it is there, and a count rendered once went stale as
    the game went on (it still said 1 after the game ended: an outside probe). Redis away:
    none shown."""
    shown = request.path_params.get("id") if request.url.path.startswith("/g/") else None
    return sum(1 for entry in await ongoing_shown(request, player_id)
               if entry.get("your_turn") and entry["id"] != shown)


def render_page(request: Request, template: str, me: Player | None, status_code: int = 200,
                **context: Any) -> HTMLResponse:
    """``template`` for ``me`` (as :func:`visitor_of` read them, with how many of their games wait
    for their move). A cookie whose name is no longer
    the registered one is issued again with it, as a rename does, so that what reads only the
    cookie (the room page's header, the sockets) shows the registered name from now on."""
    web = web_of(request)
    context.setdefault("my_turns", getattr(request.state, "my_turns", 0))
    response = web.render(template, status_code=status_code, me=me, **context)
    cookie = web.player_of(request)
    if me is not None and cookie is not None and cookie.id == me.id and cookie.name != me.name:
        web.set_cookie(response, request, request.app.state.auth.token_for(me))
    return response


async def error_page_for(request: Request, status: int, title: str, message: str) -> HTMLResponse:
    """The error page, with the visitor's header ("Playing as …", "My games"): every error a
    form or page of ours answers is shown as the rest of the site is, signed in or not."""
    return render_page(request, "error.html", await visitor_of(request), status, title=title, message=message)


def secured(response: Response) -> Response:
    """``response`` with the pages' security headers (CSP, nosniff, frames): for a page answered
    by an exception handler, outside the route's own middleware."""
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    return response


MISSING = {404: (N_("Page not found"), N_("There is no page at this address.")),
           405: (N_("Not here"), N_("This address does not take that kind of request."))}


async def missing_page(request: Request, exc: Exception) -> Response:
    """The router's own refusals (no route: 404; not for that method: 405, with ``Allow``) as
    the site's error page in the reader's language, with the visitor's header; the API's
    addresses and the metrics keep their own answer (:func:`server.edge.ops.http_error`)."""
    assert isinstance(exc, HTTPException)
    if exc.status_code not in MISSING or request.url.path.startswith(("/api/", "/metrics")):
        return await http_error(request, exc)
    title, message = MISSING[exc.status_code]
    response = await error_page_for(request, exc.status_code, _(title), _(message))
    response.headers.update(exc.headers or {})
    return secured(response)


LIMITED = {"new games": N_("Too many new games from your address; try again in %(seconds)d\u00a0s."),
           "new guests": N_("Too many new guests from your address; try again in %(seconds)d\u00a0s.")}
"""What each per-IP limit (:attr:`Limited.what`) says: one whole sentence each, so that every
language words it as a whole (German "neue Spiele", never a fragment spliced into a frame)."""
LIMITED_ANY = N_("Too many requests from your address; try again in %(seconds)d\u00a0s.")


def limited_text(exc: Limited) -> str:
    """What a refused per-IP limit says, in the reader's language."""
    return _(LIMITED.get(exc.what, LIMITED_ANY)) % {"seconds": exc.retry_after_s}


async def limited_page(request: Request, exc: Limited) -> HTMLResponse:
    response = await error_page_for(request, 429, _("Slow down"), limited_text(exc))
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


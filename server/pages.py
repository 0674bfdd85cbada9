"""The browser's HTML routes: home, game room, replay steps, guest cookie, static assets.

Pages are server-rendered with the same Jinja2 macros as the websocket frames
(:mod:`server.html_render`), so what a reload shows is exactly what the live page showed.
Forms are plain HTML forms (POST, then 303 to a page); the only script on any page is htmx
and its websocket extension, served from ``web/node_modules`` at a versioned URL with a
one-year immutable cache.

The guest's identity is the API token of ``POST /api/v1/guests`` (issued here through the same
:class:`server.auth.Auth`), kept in a signed, HttpOnly, SameSite=Lax cookie. State-changing
forms also check the ``Origin`` header.

The per-app pieces (Jinja environment, asset table, cookie signer) are built on first use and
kept on ``app.state.web``: building them needs the shared secret, which only exists once the
lifespan has opened Redis.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from itsdangerous import BadSignature, URLSafeSerializer
from starlette.middleware import Middleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from engine import RULESETS, SPECTATOR

from .auth import BadName, validate_name
from .csp import SecurityHeaders
from .guard import Limited, form_origin_ok, guard_of, is_tls
from .html_render import WEB_DIR, HtmlCodec, oob, player_names, points_text
from .room import Player, Room, Status
from .rooms import BadRequest, NotOver, RoomError, UnknownRoom

COOKIE = "mineduel_guest"
COOKIE_MAX_AGE = 365 * 24 * 3600
IMMUTABLE = "public, max-age=31536000, immutable"
ROOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CLOCKS: dict[str, tuple[int, int] | None] = {
    "none": None,
    "180+2": (180_000, 2_000),
    "300+0": (300_000, 0),
    "600+5": (600_000, 5_000),
}

# ---------------------------------------------------------------------- assets

NODE_ASSETS = {
    "htmx.min.js": Path("node_modules/htmx.org/dist/htmx.min.js"),
    "ws.min.js": Path("node_modules/htmx-ext-ws/dist/ws.min.js"),
}
_COMPRESSIBLE = (".js", ".css", ".svg")


@dataclass(frozen=True, slots=True)
class Asset:
    body: bytes
    gzipped: bytes | None
    media_type: str
    etag: str


class Assets:
    """The static files, read once: htmx from ``web/node_modules``, the rest from ``web/static``.

    One version hash covers all of them, so relative URLs inside the CSS (icons) stay valid:
    ``/static/v/<version>/<path>``. A request for another version (a page from before a deploy)
    still gets the current file, but with ``no-cache`` instead of the one-year immutable cache.
    """

    def __init__(self, web_dir: Path = WEB_DIR) -> None:
        files: dict[str, Path] = {name: web_dir / rel for name, rel in NODE_ASSETS.items()}
        static = web_dir / "static"
        if static.is_dir():
            for path in sorted(static.rglob("*")):
                if path.is_file():
                    files[path.relative_to(static).as_posix()] = path
        self.files: dict[str, Asset] = {}
        self.missing: list[str] = []
        digest = hashlib.sha256()
        for name, path in sorted(files.items()):
            try:
                body = path.read_bytes()
            except OSError:
                self.missing.append(name)
                continue
            digest.update(name.encode() + b"\0" + body + b"\0")
            media = mimetypes.guess_type(name)[0] or "application/octet-stream"
            if media.startswith("text/") or media in ("application/javascript", "image/svg+xml"):
                media += "; charset=utf-8"
            zipped = gzip.compress(body, 9, mtime=0) if name.endswith(_COMPRESSIBLE) else None
            tag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            self.files[name] = Asset(body, zipped if zipped and len(zipped) < len(body) else None, media, tag)
        self.version = digest.hexdigest()[:12]

    def url(self, name: str) -> str:
        return f"/static/v/{self.version}/{name}"

    def response(self, request: Request, version: str, name: str) -> Response:
        asset = self.files.get(name)
        if asset is None:
            return Response("not found", status_code=404, media_type="text/plain")
        cache = IMMUTABLE if version == self.version else "no-cache"
        headers = {"cache-control": cache, "etag": asset.etag, "vary": "accept-encoding"}
        if request.headers.get("if-none-match") == asset.etag:
            return Response(status_code=304, headers=headers)
        body = asset.body
        if asset.gzipped is not None and "gzip" in request.headers.get("accept-encoding", ""):
            body = asset.gzipped
            headers["content-encoding"] = "gzip"
        return Response(body, media_type=asset.media_type, headers=headers)


# ---------------------------------------------------------------------- per-app state


class Web:
    """What the browser edge builds once per app: templates, assets, cookie signer."""

    def __init__(self, codec: HtmlCodec, assets: Assets, secret: str) -> None:
        self.codec = codec
        self.env = codec.env
        self.assets = assets
        self.env.globals["asset"] = assets.url
        self.cookies = URLSafeSerializer(secret, salt="mineduel-cookie")

    def render(self, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(**context)
        return HTMLResponse(html, status_code=status_code, headers={"cache-control": "no-store"})

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


async def web_of(conn: HTTPConnection) -> Web:
    state = conn.app.state
    web = getattr(state, "web", None)
    if web is None:
        codec = state.codecs.get("html") if hasattr(state, "codecs") else None
        if not isinstance(codec, HtmlCodec):
            codec = HtmlCodec()
        secret = state.settings.secret_key or await state.store.shared_secret()
        web = state.web = Web(codec, Assets(), secret)
    return web


def same_origin(request: Request) -> bool:
    """A state-changing form must come from our own pages (the cookie is SameSite=Lax too):
    ``Origin`` (else ``Referer``) is one of the allowed origins, by default our own host
    (:func:`server.guard.form_origin_ok`)."""
    return form_origin_ok(request, request.app.state.settings)


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
    response = error_page(web, 429, "Slow down", f"{exc}.", me)
    response.headers["retry-after"] = str(exc.retry_after_s)
    return response


def viewer_of(room: Room, player: Player | None) -> int:
    seat = room.seat_of(player.id) if player else None
    return SPECTATOR if seat is None else seat


# ---------------------------------------------------------------------- pages


@dataclass(frozen=True, slots=True)
class GameRow:
    id: str
    names: tuple[str | None, str | None]
    score: str
    open: bool


LOBBY = "web:lobby"
"""ZSET: room id → creation time (ms) of the games created from the home page (and their
rematches). The home page lists the live ones; finished and vanished ones are pruned as it
reads. One global key (like the room server's ``clocks``)."""
LOBBY_SCAN = 60
LOBBY_KEEP = 500
LOBBY_MAX_AGE_MS = 7 * 24 * 3600 * 1000


async def lobby_add(state: Any, room: Room) -> None:
    """List ``room``; the set stays bounded (newest ``LOBBY_KEEP``, at most a week old)."""
    try:
        async with state.store.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(LOBBY, {room.id: room.created_ms})
            pipe.zremrangebyscore(LOBBY, "-inf", room.created_ms - LOBBY_MAX_AGE_MS)
            pipe.zremrangebyrank(LOBBY, 0, -LOBBY_KEEP - 1)
            await pipe.execute()
    except Exception:  # the lobby is a convenience; the game exists either way
        pass


async def live_games(state: Any, limit: int = 20) -> list[GameRow]:
    """The newest games still waiting or playing, for the home page."""
    try:
        ids = await state.store.redis.zrevrange(LOBBY, 0, LOBBY_SCAN - 1)
    except Exception:
        return []
    rows: list[GameRow] = []
    stale: list[bytes] = []
    for raw in ids:
        try:
            room = await state.rooms.load(raw.decode())
        except (UnknownRoom, ValueError, UnicodeDecodeError):
            stale.append(raw)
            continue
        if room.status is Status.OVER:
            stale.append(raw)
            continue
        if len(rows) < limit:
            a, b = room.view(SPECTATOR).scores
            playing = room.status is Status.PLAYING
            rows.append(GameRow(room.id, player_names(room), f"{a}\u00a0:\u00a0{b}" if playing else "open",
                                not playing))
    if stale:
        try:
            await state.store.redis.zrem(LOBBY, *stale)
        except Exception:
            pass
    return rows


async def home(request: Request) -> Response:
    web = await web_of(request)
    me = web.player_of(request)
    games = await live_games(request.app.state)
    return web.render("home.html", me=me, games=games, next=safe_next(request.query_params.get("next"), "/"),
                      error=None)


async def guest(request: Request) -> Response:
    """POST: name → a new guest and its cookie; then back to ``next`` (joining ``join`` first)."""
    web = await web_of(request)
    if not same_origin(request):
        return error_page(web, 403, "Forbidden", "That form came from another site.")
    form = await form_of(request)
    target = safe_next(form.get("next"))
    join = form.get("join")
    try:
        name = validate_name(form.get("name"))
        guard_of(request).new_guest(request)
    except BadName as exc:
        if join and ROOM_ID.match(join):
            return web.render("name.html", status_code=400, me=None, join=join, error=f"That name won’t do: {exc}.")
        return web.render("home.html", status_code=400, me=None, games=[], next=target,
                          error=f"That name won’t do: {exc}.")
    except Limited as exc:
        return limited_page(web, exc)
    player, token = request.app.state.auth.issue(name)
    if join and ROOM_ID.match(join):
        try:
            await request.app.state.rooms.join(join, player)
        except RoomError:
            pass
        target = f"/g/{join}"
    response = redirect(target)
    web.set_cookie(response, request, token)
    return response


async def create_game(request: Request) -> Response:
    web = await web_of(request)
    state = request.app.state
    if not same_origin(request):
        return error_page(web, 403, "Forbidden", "That form came from another site.")
    me = web.player_of(request)
    if me is None:
        return redirect("/")
    form = await form_of(request)
    ruleset = form.get("ruleset", "brettspielnetz")
    clock = CLOCKS.get(str(form.get("clock", "none")), None)
    seat_field = form.get("seat", "random")
    seat: int | str = int(seat_field) if seat_field in ("0", "1") else "random"
    seed = None
    if state.settings.test_hooks and form.get("seed", "").isdigit() and len(form["seed"]) < 19:
        seed = int(form["seed"])
    if ruleset not in RULESETS:
        return error_page(web, 400, "Cannot create that game", "There are no such rules.", me)
    try:
        guard_of(request).new_game(request)
        room = await state.rooms.create(me, ruleset=str(ruleset), clock=clock, seat=seat, seed=seed)
    except BadRequest as exc:
        return error_page(web, 400, "Cannot create that game", exc.message, me)
    except Limited as exc:
        return limited_page(web, exc, me)
    await lobby_add(state, room)
    return redirect(f"/g/{room.id}")


async def join_by_code(request: Request) -> Response:
    code = request.query_params.get("code", "").strip()
    match = re.search(r"(?:/g/)?([A-Za-z0-9_-]{1,64})/?$", code)
    if not match:
        return redirect("/")
    return redirect(f"/g/{match.group(1)}")


async def load_room(request: Request) -> tuple[Web, Room | None, Response | None]:
    web = await web_of(request)
    room_id = request.path_params["id"]
    if not ROOM_ID.match(room_id):
        return web, None, error_page(web, 404, "No such game", "That link does not lead to a game.")
    try:
        return web, await request.app.state.rooms.load(room_id), None
    except UnknownRoom:
        return web, None, error_page(web, 404, "No such game", "That game does not exist (or the link is mistyped).",
                                     web.player_of(request))


def _at(request: Request) -> int | None:
    raw = request.query_params.get("at")
    return int(raw) if raw is not None and raw.isdigit() and len(raw) < 7 else None


async def room_page(request: Request) -> Response:
    web, room, failed = await load_room(request)
    if failed is not None or room is None:
        return failed  # type: ignore[return-value]
    me = web.player_of(request)
    viewer = viewer_of(room, me)
    codec = web.codec
    at = _at(request) if room.status is Status.OVER else None
    areas = codec.areas(room, viewer, at=at)
    hub = request.app.state.hub
    entry = getattr(hub, "entries", {}).get(room.id)
    watchers = entry.watchers if entry is not None else 0
    names = player_names(room)
    title = f"{names[0] or '…'} vs {names[1] or '…'}"
    invite = None
    if room.status is Status.WAITING and viewer != SPECTATOR:
        url = request.url.replace(query="", fragment="")
        if url.scheme == "http" and is_tls(request, request.app.state.settings):
            url = url.replace(scheme="https")  # behind a TLS-terminating proxy
        invite = str(url)
    rules = RULESETS[room.ruleset]
    clock = ""
    if room.clock is not None:
        clock = f" \u00b7 {room.clock.initial_ms // 60000} min + {room.clock.increment_ms // 1000} s"
    return web.render(
        "room.html",
        me=me,
        title=title,
        room_id=room.id,
        viewer=viewer,
        seated=viewer != SPECTATOR,
        areas=areas,
        spectators=codec.m.spectators(watchers),
        invite_url=invite,
        ruleset=room.ruleset,
        ruleset_label=("Brettspielnetz rules" if room.ruleset == "brettspielnetz" else "Coan rules") + clock,
        rules={"hit": _signed(rules.hit_points), "wrong": _signed(rules.wrong_mark_points)},
        total_mines=room.duel.setup.total_mines,
    )


def _signed(points: int) -> str:
    return points_text(points)


async def replay_step(request: Request) -> Response:
    """A replay position of a finished game: OOB fragments for htmx, else the full page."""
    web, room, failed = await load_room(request)
    if failed is not None or room is None:
        return failed  # type: ignore[return-value]
    at = _at(request) or 0
    if room.status is not Status.OVER:
        return error_page(web, 409, "Not yet", "The replay opens when the game is over.", web.player_of(request))
    if request.headers.get("hx-request") != "true":
        return redirect(f"/g/{room.id}?at={at}")
    parts = web.codec.replay(room, at)
    body = "".join(oob(parts[k]) for k in ("board", "moves", "replay", "mines-left"))
    return HTMLResponse(body, headers={"cache-control": "no-store"})


async def join_room(request: Request) -> Response:
    web = await web_of(request)
    room_id = request.path_params["id"]
    if not same_origin(request):
        return error_page(web, 403, "Forbidden", "That form came from another site.")
    if not ROOM_ID.match(room_id):
        return redirect("/")
    me = web.player_of(request)
    if me is None:
        return web.render("name.html", me=None, join=room_id)
    try:
        await request.app.state.rooms.join(room_id, me)
    except UnknownRoom:
        return error_page(web, 404, "No such game", "That game does not exist.", me)
    except RoomError:
        pass  # full: the room page shows what happened
    return redirect(f"/g/{room_id}")


async def rematch(request: Request) -> Response:
    web = await web_of(request)
    room_id = request.path_params["id"]
    if not same_origin(request) or not ROOM_ID.match(room_id):
        return error_page(web, 403, "Forbidden", "That form came from another site.")
    me = web.player_of(request)
    if me is None:
        return redirect(f"/g/{room_id}")
    try:
        fresh = await request.app.state.rooms.rematch(room_id, me)
    except (NotOver, RoomError):
        return redirect(f"/g/{room_id}")
    await lobby_add(request.app.state, fresh)
    return redirect(f"/g/{fresh.id}")


async def static(request: Request) -> Response:
    web = await web_of(request)
    return web.assets.response(request, request.path_params["version"], request.path_params["path"])


_headers = [Middleware(SecurityHeaders)]

routes = [
    Route("/", home, middleware=_headers),
    Route("/guest", guest, methods=["POST"], middleware=_headers),
    Route("/games", create_game, methods=["POST"], middleware=_headers),
    Route("/join", join_by_code, middleware=_headers),
    Route("/g/{id}", room_page, middleware=_headers),
    Route("/g/{id}/replay", replay_step, middleware=_headers),
    Route("/g/{id}/join", join_room, methods=["POST"], middleware=_headers),
    Route("/g/{id}/rematch", rematch, methods=["POST"], middleware=_headers),
    Route("/static/v/{version}/{path:path}", static, middleware=_headers),
]

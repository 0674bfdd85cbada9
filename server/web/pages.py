"""The browser's HTML routes: home, game room, replay steps, forms, static assets.

Pages are server-rendered with the same Jinja2 macros as the websocket frames
(:mod:`server.web.html_codec`), so what a reload shows is exactly what the live page showed.
Forms are plain HTML forms (POST, then 303 to a page); the only script on any page is htmx
and its websocket extension, served from ``web/node_modules`` at a versioned URL with a
one-year immutable cache. State-changing forms check the ``Origin`` header.
"""

from __future__ import annotations

import contextlib
import logging
import re

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from engine import RULESETS, SPECTATOR, Abort
from engine.clock import Clock

from ..core.computer import computer
from ..core.decide import DeclineRematch, Join, Play, Refused
from ..core.ratings import clock_category
from ..core.room import Player, Room, Status
from ..edge import new_game
from ..edge.auth import BadName, validate_name
from ..edge.csp import SecurityHeaders
from ..edge.limits import Limited, guard_of
from ..edge.peer import is_tls
from ..outage import redis_down
from ..store.analyses import NotAnalysed, StoredAnalysis
from ..store.players import NameTaken
from ..store.service import RoomRefused
from .html_codec import HtmlCodec, oob
from .lobby import Lobby, list_room
from .pair_pages import quick_controls
from .pair_pages import routes as pair_routes
from .player_pages import routes as player_routes
from .site import (
    Web,
    error_page,
    form_of,
    limited_page,
    redirect,
    safe_next,
    same_origin,
    web_of,
)
from .solo_pages import routes as solo_routes
from .solo_pages import solo_room_page
from .view_model import away_text, player_names, points_text

log = logging.getLogger("mineduel.pages")

ROOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CLOCKS: dict[str, tuple[int, int] | tuple[str, int]] = {
    "60+1": (60_000, 1_000),
    "180+2": (180_000, 2_000),
    "300+0": (300_000, 0),
    "300+3": (300_000, 3_000),
    "600+5": (600_000, 5_000),
    "1d": ("days", 1),
    "3d": ("days", 3),
    "7d": ("days", 7),
}
"""The home page's clock choices (anything else: untimed)."""
COMPUTER_LEVELS = {1: "Easy", 2: "Medium", 3: "Strong"}


async def home(request: Request) -> Response:
    web = web_of(request)
    return await _home(request, web, web.player_of(request), safe_next(request.query_params.get("next"), "/"))


async def _home(request: Request, web: Web, me: Player | None, target: str, status_code: int = 200,
                error: str | None = None) -> Response:
    """The home page: the lobby as the feed last read it (the page's socket keeps it current)."""
    try:
        lobby = await request.app.state.lobby.current()
    except Exception:  # Redis away: the page shows an empty lobby rather than failing
        lobby = Lobby()
    return web.render("home.html", status_code=status_code, me=me, lobby=lobby, next=target, error=error,
                      computer_levels=COMPUTER_LEVELS, quick_pools=quick_controls())


async def guest(request: Request) -> Response:
    """POST: name → a new guest and its cookie; then back to ``next`` (joining ``join`` first)."""
    web = web_of(request)
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
        return await _home(request, web, None, target, 400, f"That name won’t do: {exc}.")
    except Limited as exc:
        return limited_page(web, exc)
    try:
        player, token = await request.app.state.guests.create(name)
    except NameTaken:
        message = f"Somebody is already called {name}. Please choose another name."
        if join and ROOM_ID.match(join):
            return web.render("name.html", status_code=409, me=None, join=join, error=message)
        return await _home(request, web, None, target, 409, message)
    if join and ROOM_ID.match(join):
        try:
            await request.app.state.rooms.act(join, player, Join())
        except RoomRefused:
            pass  # full or gone: the room page shows what happened
        target = f"/g/{join}"
    response = redirect(target)
    web.set_cookie(response, request, token)
    return response


async def create_game(request: Request) -> Response:
    web = web_of(request)
    state = request.app.state
    if not same_origin(request):
        return error_page(web, 403, "Forbidden", "That form came from another site.")
    me = web.player_of(request)
    if me is None:
        return redirect("/")
    form = await form_of(request)
    ruleset = form.get("ruleset", "brettspielnetz")
    clock = _clock_of(form.get("clock", "none"))
    rated = form.get("rated") == "on" and clock_category(clock) is not None
    seat_field = form.get("seat", "random")
    seat = int(seat_field) if seat_field in ("0", "1") else new_game.random_seat(2)
    seed = None
    if state.settings.test_hooks and form.get("seed", "").isdigit() and len(form["seed"]) < 19:
        seed = int(form["seed"])
    if ruleset not in RULESETS:
        return error_page(web, 400, "Cannot create that game", "There are no such rules.", me)
    me = await state.guests.current(me)
    players = (me, None) if seat == 0 else (None, me)
    try:
        guard_of(request).new_game(request)
        room = await state.rooms.create(new_game.duel(ruleset, seed), players, clock, rated=rated)
    except Limited as exc:
        return limited_page(web, exc, me)
    if form.get("private") != "on":  # a challenge from a player's page goes by its link only
        await list_room(state, room)
        state.lobby.poke()
    return redirect(f"/g/{room.id}")


def _clock_of(field: object) -> Clock | None:
    """A clock from the form's choice (anything unknown: untimed)."""
    choice = CLOCKS.get(str(field))
    if choice is None:
        return None
    if choice[0] == "days":
        return Clock.correspondence(choice[1])
    return Clock.new(choice[0], choice[1])


async def play_computer(request: Request) -> Response:
    """POST, one click from the home page: a game against the computer at ``level``, for the
    visitor's guest (made now, with a generated name, if they have none yet)."""
    web = web_of(request)
    state = request.app.state
    if not same_origin(request):
        return error_page(web, 403, "Forbidden", "That form came from another site.")
    form = await form_of(request)
    level = form.get("level")
    if level not in {str(n) for n in COMPUTER_LEVELS}:
        return error_page(web, 400, "Cannot start that game", "There is no such computer level.")
    me = web.player_of(request)
    token = None
    try:
        if me is None:
            guard_of(request).new_guest(request)
            me, token = await state.guests.create(None)
        guard_of(request).new_game(request)
    except Limited as exc:
        return limited_page(web, exc, me)
    me = await state.guests.current(me)
    seat = new_game.random_seat(2)
    players = [computer(int(level)), computer(int(level))]
    players[seat] = me
    ruleset = form.get("ruleset") if form.get("ruleset") in RULESETS else "brettspielnetz"
    room = await state.rooms.create(new_game.duel(ruleset), tuple(players), _clock_of(form.get("clock", "none")))
    await list_room(state, room)
    response = redirect(f"/g/{room.id}")
    if token is not None:
        web.set_cookie(response, request, token)
    return response


def _room_post(request: Request) -> tuple[Web, str, Player | None] | Response:
    """A form posted on a room's page: the site, the room id and the visitor (``None``: no
    guest yet), or the refusal of a form from another site."""
    web = web_of(request)
    room_id = request.path_params["id"]
    if not same_origin(request) or not ROOM_ID.match(room_id):
        return error_page(web, 403, "Forbidden", "That form came from another site.")
    return web, room_id, web.player_of(request)


async def cancel_challenge(request: Request) -> Response:
    """POST: the creator calls off their open challenge (the waiting room ends, aborted)."""
    posted = _room_post(request)
    if isinstance(posted, Response):
        return posted
    web, room_id, me = posted
    if me is not None:
        with contextlib.suppress(RoomRefused):
            room = await request.app.state.rooms.latest(room_id)
            if room.status is Status.WAITING and room.seat_of(me) is not None:
                await request.app.state.rooms.act(room_id, me, Play(Abort()))
                request.app.state.lobby.poke()
    return redirect("/")


async def join_by_code(request: Request) -> Response:
    code = request.query_params.get("code", "").strip()
    match = re.search(r"(?:/g/)?([A-Za-z0-9_-]{1,64})/?$", code)
    if not match:
        return redirect("/")
    return redirect(f"/g/{match.group(1)}")


async def load_room(request: Request) -> tuple[Web, Room | None, Response | None]:
    web = web_of(request)
    room_id = request.path_params["id"]
    if not ROOM_ID.match(room_id):
        return web, None, error_page(web, 404, "No such game", "That link does not lead to a game.")
    try:
        return web, await request.app.state.rooms.load(room_id), None
    except RoomRefused:
        return web, None, error_page(web, 404, "No such game", "That game does not exist (or the link is mistyped).",
                                     web.player_of(request))


async def load_labels(request: Request, codec: HtmlCodec, room: Room) -> None:
    """The ratings beside a rated room's names, read fresh (one round trip) for the page and for
    the frames that follow (``server.web.rating_labels``). Redis away: the page goes without."""
    try:
        await codec.labels.load(request.app.state.ratings, room)
    except Exception as exc:
        if not redis_down(request.app.state.metrics, "ratings", exc, room=room.id):
            raise


def _at(request: Request) -> int | None:
    raw = request.query_params.get("at")
    return int(raw) if raw is not None and raw.isdigit() and len(raw) < 7 else None


def _odds(request: Request) -> bool:
    """The replay's odds overlay is asked for (``odds=1``)."""
    return request.query_params.get("odds") == "1"


async def _analysis(request: Request, room: Room) -> tuple[StoredAnalysis | None, bool]:
    """A finished duel's analysis (computed off the loop if need be) and whether it failed."""
    try:
        return await request.app.state.rooms.analyses.of(room), False
    except NotAnalysed:
        return None, False
    except Exception:
        log.exception("room %s: no analysis", room.id)
        return None, True


async def room_page(request: Request) -> Response:
    web, room, failed = await load_room(request)
    if failed is not None or room is None:
        return failed  # type: ignore[return-value]
    me = web.player_of(request)
    viewer = room.viewer_of(me)
    if room.kind == "classic":
        return solo_room_page(request, web, room, me, viewer)
    codec = web.codec
    await load_labels(request, codec, room)
    at = _at(request) if room.status is Status.OVER else None
    analysis, broken = await _analysis(request, room) if room.status is Status.OVER else (None, False)
    areas = codec.areas(room, viewer, at=at, analysis=analysis, odds=_odds(request), odds_failed=broken)
    attendance = request.app.state.hub.attendance(room.id)  # the socket's presence frame brings it fresh
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
    if room.clock is not None and room.clock.per_move:
        days = room.clock.days
        clock = f" \u00b7 {days} day{'s' if days != 1 else ''} per move"
    elif room.clock is not None:
        clock = f" \u00b7 {room.clock.initial_ms // 60000} min + {room.clock.increment_ms // 1000} s"
    if room.rated:
        clock += " \u00b7 rated"
    return web.render(
        "room.html",
        me=me,
        title=title,
        room_id=room.id,
        viewer=viewer,
        seated=viewer != SPECTATOR,
        areas=areas,
        spectators=codec.m.spectators(attendance.spectators),
        away=codec.m.away(away_text(room, attendance)),
        invite_url=invite,
        ruleset=room.ruleset,
        ruleset_label=("Brettspielnetz rules" if room.ruleset == "brettspielnetz" else "Coan rules") + clock,
        rules={"hit": _signed(rules.hit_points), "wrong": _signed(rules.wrong_mark_points)},
        total_mines=room.view(viewer).total_mines,
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
    odds = _odds(request)
    if request.headers.get("hx-request") != "true":
        return redirect(f"/g/{room.id}?at={at}" + ("&odds=1" if odds else ""))
    analysis, broken = await _analysis(request, room)
    parts = web.codec.replay(room, at, analysis, odds, broken)
    body = "".join(oob(parts[k]) for k in ("board", "moves", "replay", "mines-left", "odds") if k in parts)
    return HTMLResponse(body, headers={"cache-control": "no-store"})


async def odds_step(request: Request) -> Response:
    """The odds element of a finished duel's replay step alone (what the element that loads
    itself at the end asks for): an OOB fragment for htmx, else the page of that step."""
    web, room, failed = await load_room(request)
    if failed is not None or room is None:
        return failed  # type: ignore[return-value]
    at = _at(request) or 0
    if room.status is not Status.OVER or room.kind != "duel":
        return error_page(web, 409, "Not yet", "The odds are published when the game is over.", web.player_of(request))
    odds = _odds(request)
    if request.headers.get("hx-request") != "true":
        return redirect(f"/g/{room.id}?at={at}" + ("&odds=1" if odds else ""))
    analysis, broken = await _analysis(request, room)
    return HTMLResponse(oob(web.codec.odds(room, at, analysis, odds, broken)), headers={"cache-control": "no-store"})


async def join_room(request: Request) -> Response:
    web = web_of(request)
    room_id = request.path_params["id"]
    if not same_origin(request):
        return error_page(web, 403, "Forbidden", "That form came from another site.")
    if not ROOM_ID.match(room_id):
        return redirect("/")
    me = web.player_of(request)
    if me is None:
        return web.render("name.html", me=None, join=room_id)
    try:
        await request.app.state.rooms.act(room_id, await request.app.state.guests.current(me), Join())
    except RoomRefused as exc:
        if exc.code is Refused.UNKNOWN_ROOM:
            return error_page(web, 404, "No such game", "That game does not exist.", me)
        # full: the room page shows what happened
    request.app.state.lobby.poke()  # a challenge taken: the lobby shows it at once
    return redirect(f"/g/{room_id}")


async def rematch(request: Request) -> Response:
    posted = _room_post(request)
    if isinstance(posted, Response):
        return posted
    web, room_id, me = posted
    if me is None:
        return redirect(f"/g/{room_id}")
    try:
        fresh = await request.app.state.rooms.rematch(room_id, me, new_game.rematch_of)
    except RoomRefused:
        return redirect(f"/g/{room_id}")
    if fresh.id != room_id:  # accepted: the new game (an offer stays on the old page, live)
        await list_room(request.app.state, fresh)
    return redirect(f"/g/{fresh.id}")


async def decline_rematch(request: Request) -> Response:
    """The opponent's rematch offer declined, or one's own withdrawn."""
    posted = _room_post(request)
    if isinstance(posted, Response):
        return posted
    web, room_id, me = posted
    if me is not None:
        with contextlib.suppress(RoomRefused):
            await request.app.state.rooms.act(room_id, me, DeclineRematch())
    return redirect(f"/g/{room_id}")


async def static(request: Request) -> Response:
    web = web_of(request)
    return web.assets.response(request, request.path_params["version"], request.path_params["path"])


_headers = [Middleware(SecurityHeaders)]

routes = [
    Route("/", home, middleware=_headers),
    Route("/guest", guest, methods=["POST"], middleware=_headers),
    Route("/games", create_game, methods=["POST"], middleware=_headers),
    Route("/join", join_by_code, middleware=_headers),
    Route("/g/{id}", room_page, middleware=_headers),
    Route("/g/{id}/replay", replay_step, middleware=_headers),
    Route("/g/{id}/odds", odds_step, middleware=_headers),
    Route("/g/{id}/join", join_room, methods=["POST"], middleware=_headers),
    Route("/g/{id}/rematch", rematch, methods=["POST"], middleware=_headers),
    Route("/g/{id}/rematch/decline", decline_rematch, methods=["POST"], middleware=_headers),
    Route("/g/{id}/cancel", cancel_challenge, methods=["POST"], middleware=_headers),
    Route("/play/computer", play_computer, methods=["POST"], middleware=_headers),
    Route("/static/v/{version}/{path:path}", static, middleware=_headers),
    *solo_routes,
    *pair_routes,
    *player_routes,
]

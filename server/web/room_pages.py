"""A game's room page and what is posted on it: the page (live board, or a finished game's
replay step, a duel's or a classic game's), the replay's steps and a duel's odds as htmx
fragments, joining, rematch offers and their decline, and cancelling one's own open challenge."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from engine import RULESETS, SPECTATOR, Abort

from ..core.commands import DeclineRematch, Join, Play, Refused
from ..core.room import Player, Room, Status
from ..edge import new_game
from ..edge.limits import Limited, guard_of
from ..edge.peer import is_tls
from ..edge.wire import digits_value
from ..outage import redis_down
from ..store.analyses import NotAnalysed, StoredAnalysis
from ..store.service import RoomRefused
from . import socket_ticket, sound
from .forms import (
    foreign_form,
    form_of,
    same_origin,
    ticked,
)
from .html_codec import HtmlCodec
from .html_frames import oob
from .i18n import _
from .presence_view import away_text
from .reconnect import reconnect_area
from .site import (
    ROOM_ID,
    Web,
    error_page_for,
    limited_page,
    redirect,
    render_page,
    visitor_of,
    web_of,
)
from .solo_pages import solo_room_page
from .status_view import tab_title, terms_text
from .view_model import display_name, rule_points

log = logging.getLogger("mineduel.pages")


async def load_room(request: Request) -> tuple[Web, Room | None, Response | None]:
    web = web_of(request)
    room_id = request.path_params["id"]
    if not ROOM_ID.match(room_id):
        return web, None, await error_page_for(request, 404, _("No such game"), _("That link does not lead to a game."))
    try:
        return web, await request.app.state.rooms.load(room_id), None
    except RoomRefused:
        return web, None, await error_page_for(request, 404, _("No such game"),
                                               _("That game does not exist (or the link is mistyped)."))


async def load_labels(request: Request, codec: HtmlCodec, room: Room) -> None:
    """The ratings beside a rated room's names, read fresh (one round trip) for the page and for
    the frames that follow (``server.web.rating_labels``). Redis away: the page goes without."""
    try:
        await codec.labels.load(request.app.state.ratings, room)
        if room.status is Status.OVER:  # what a rated game did to the ratings ("1512, +12")
            await codec.labels.load_change(request.app.state.ratings, room, time.monotonic())
    except Exception as exc:
        if not redis_down(request.app.state.metrics, "ratings", exc, room=room.id):
            raise


MAX_STEP = 999_999
"""The largest replay step ``?at=`` names (a game has far fewer; a larger one is no step)."""


def _at(request: Request) -> int | None:
    return digits_value(request.query_params.get("at"), MAX_STEP)


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
        if failed is not None and request.headers.get("hx-request") == "true":
            failed.headers["HX-Refresh"] = "true"  # a reconnecting page: show this page once, no retry loop
        return failed  # type: ignore[return-value]
    me = await visitor_of(request)  # the header's name is the registered one (site.visitor_of)
    viewer = room.viewer_of(me)
    at = _at(request) if room.status is Status.OVER else None
    if room.kind == "classic":
        return solo_room_page(request, web, room, me, viewer, at)
    if room.status is Status.OVER and None in room.players:
        return await _called_off(request, room)
    codec = web.codec
    await load_labels(request, codec, room)
    analysis, broken = await _analysis(request, room) if room.status is Status.OVER else (None, False)
    areas = codec.areas(room, viewer, at=at, analysis=analysis, odds=_odds(request), odds_failed=broken)
    areas["reconnect"] = reconnect_area(codec.m, request)
    attendance = request.app.state.hub.attendance(room.id)  # the socket's presence frame brings it fresh
    invite = None
    if room.status is Status.WAITING and viewer != SPECTATOR:
        url = request.url.replace(query="", fragment="")
        if url.scheme == "http" and is_tls(request, request.app.state.settings):
            url = url.replace(scheme="https")  # behind a TLS-terminating proxy
        invite = str(url)
    rules = RULESETS[room.ruleset]
    return render_page(
        request,
        "room.html",
        me,
        title=tab_title(room, viewer),
        room_id=room.id,
        viewer=viewer,
        seated=viewer != SPECTATOR,
        ws_url=socket_ticket.render_socket_url(room.id, request.app.state.rooms.now_ms(),
                                               shows_end=room.status is Status.OVER),  # snapshots keep the replay step
        areas=areas,
        spectators=codec.m.spectators(attendance.spectators),
        goto_field=codec.m.goto_field(),
        away=codec.m.away(away_text(room, attendance, request.app.state.rooms.now_ms())),
        sound_toggle=codec.m.sound_toggle(room.id, sound.sound_on(request)) if viewer != SPECTATOR else "",
        invite_url=invite,
        ruleset=room.ruleset,
        ruleset_label=terms_text(room),
        rules=rule_points(rules),
        total_mines=room.view(viewer).total_mines,
    )


async def _called_off(request: Request, room: Room) -> Response:
    """A challenge called off before anybody took it: no game was played, so no game page (an
    outside probe saw a "Game aborted" page with its layout, a replay bar, an odds table and the
    empty seat named three ways). ``410``: the game is gone for good."""
    creator = next(p for p in room.players if p is not None)
    return await error_page_for(request, 410, _("Challenge called off"),
                                _("%(name)s called this challenge off before anybody took it.")
                                % {"name": display_name(creator.name)})


async def _no_odds(request: Request) -> Response:
    """A classic game's odds step: it has no analysis (its replay steps have no odds)."""
    return await error_page_for(request, 404, _("No odds"),
                                _("Only duels have odds; a classic game's replay shows its board step by step."))


STEP_AREAS = ("board", "moves", "replay", "mines-left", "counter", "odds")
"""The elements a replay step swaps, those of them its game has (a duel: all but the classic
game's ``counter``; a classic game: ``board``, ``replay``, ``counter``)."""


async def replay_step(request: Request) -> Response:
    """A replay position of a finished game (a duel or a classic game): OOB fragments for
    htmx, else the full page."""
    web, room, failed = await load_room(request)
    if failed is not None or room is None:
        return failed  # type: ignore[return-value]
    at = _at(request) or 0
    if room.status is not Status.OVER:
        return await error_page_for(request, 409, _("Not yet"), _("The replay opens when the game is over."))
    if None in room.players:  # a challenge called off: no game was played (its page says so)
        return await _called_off(request, room)
    odds = _odds(request) and room.kind == "duel"  # a classic game has none: its steps never ask
    if request.headers.get("hx-request") != "true":
        return redirect(f"/g/{room.id}?at={at}" + ("&odds=1" if odds else ""))
    analysis, broken = await _analysis(request, room) if room.kind == "duel" else (None, False)
    parts = web.codec.replay(room, at, analysis, odds, broken)
    body = "".join(oob(parts[k]) for k in STEP_AREAS if k in parts)
    return HTMLResponse(body, headers={"cache-control": "no-store"})


async def odds_step(request: Request) -> Response:
    """The odds element of a finished duel's replay step alone (what the element that loads
    itself at the end asks for): an OOB fragment for htmx, else the page of that step."""
    web, room, failed = await load_room(request)
    if failed is not None or room is None:
        return failed  # type: ignore[return-value]
    if room.kind != "duel":
        return await _no_odds(request)
    at = _at(request) or 0
    if room.status is not Status.OVER:
        return await error_page_for(request, 409, _("Not yet"), _("The odds are published when the game is over."))
    if None in room.players:
        return await _called_off(request, room)
    odds = _odds(request)
    if request.headers.get("hx-request") != "true":
        return redirect(f"/g/{room.id}?at={at}" + ("&odds=1" if odds else ""))
    analysis, broken = await _analysis(request, room)
    return HTMLResponse(oob(web.codec.odds(room, at, analysis, odds, broken)), headers={"cache-control": "no-store"})


async def join_room(request: Request) -> Response:
    web = web_of(request)
    room_id = request.path_params["id"]
    if not same_origin(request):
        return await foreign_form(request)
    if not ROOM_ID.match(room_id):
        return redirect("/")
    await form_of(request)  # the button sends no field; a body that is no form of ours is refused (BadForm)
    me = web.player_of(request)
    if me is None:  # the name form, at an address a reload does not post again (an outside probe)
        return redirect(f"/g/{room_id}/join")
    try:
        await request.app.state.rooms.act(room_id, await request.app.state.guests.current(me), Join())
    except RoomRefused as exc:
        if exc.code is Refused.UNKNOWN_ROOM:
            return await error_page_for(request, 404, _("No such game"), _("That game does not exist."))
        # full: the room page shows what happened
    request.app.state.lobby.poke()  # a challenge taken: the lobby shows it at once
    return redirect(f"/g/{room_id}")


async def join_page(request: Request) -> Response:
    """The name form of a visitor without a guest who pressed Join (its POST comes here by a
    303); a visitor with one, or a game nobody can join any more, goes to the game's page
    (which says why: no such game, called off, over). Not for a game that cannot be joined: the
    form makes a guest, which claims a name for good (an outside probe)."""
    web, room, failed = await load_room(request)
    if failed is not None or room is None:
        return failed or redirect("/")
    if web.player_of(request) is not None or room.status is not Status.WAITING:
        return redirect(f"/g/{room.id}")
    return web.render("name.html", me=None, join=room.id)


def _posted_on_room(handler: Callable[[Request, str, Player | None], Awaitable[Response]]) \
        -> Callable[[Request], Awaitable[Response]]:
    """A form posted on a room's page: ``handler(request, room_id, visitor)`` (``None``: no
    guest yet) runs only for a form of this site and a well-formed room id."""

    async def endpoint(request: Request) -> Response:
        web = web_of(request)
        room_id = request.path_params["id"]
        if not same_origin(request) or not ROOM_ID.match(room_id):
            return await foreign_form(request)
        await form_of(request)  # these buttons send no field; a body that is no form of ours is refused (BadForm)
        return await handler(request, room_id, web.player_of(request))

    endpoint.__name__ = handler.__name__
    endpoint.__doc__ = handler.__doc__
    return endpoint


@_posted_on_room
async def rematch(request: Request, room_id: str, me: Player | None) -> Response:
    """Offer a rematch, or make it: accept the opponent's offer, play the computer again. Making
    it spends a game creation of the visitor's address ("Slow down" page, 429: nothing made,
    the offer still standing)."""
    if me is None:
        return redirect(f"/g/{room_id}")
    try:
        make = guard_of(request).charged(request, new_game.rematch_of)
        fresh = await request.app.state.rooms.rematch(room_id, me, make)
    except RoomRefused:
        return redirect(f"/g/{room_id}")
    except Limited as exc:
        return await limited_page(request, exc)
    return redirect(f"/g/{fresh.id}")  # accepted: the new game (listed by the service); an offer: this page


async def to_rematch(request: Request) -> Response:
    """GET: the way to this game's rematch. The link that takes the offering player's page there
    by itself asks with htmx and gets ``HX-Redirect`` (htmx then loads that page whole, with its
    own socket); a plain GET is redirected. No rematch linked: htmx gets nothing to do, a plain
    GET the game's own page. Changes nothing, so it needs no form's origin check."""
    web, room, failed = await load_room(request)
    if failed is not None or room is None:
        return failed  # type: ignore[return-value]
    target = f"/g/{room.rematch}" if room.rematch is not None else None
    if request.headers.get("hx-request") == "true":
        headers = {"cache-control": "no-store"} | ({"hx-redirect": target} if target else {})
        return Response(status_code=204, headers=headers)
    return redirect(target or f"/g/{room.id}")


@_posted_on_room
async def decline_rematch(request: Request, room_id: str, me: Player | None) -> Response:
    """The opponent's rematch offer declined, or one's own withdrawn."""
    if me is not None:
        with contextlib.suppress(RoomRefused):
            await request.app.state.rooms.act(room_id, me, DeclineRematch())
    return redirect(f"/g/{room_id}")


@_posted_on_room
async def cancel_challenge(request: Request, room_id: str, me: Player | None) -> Response:
    """POST: the creator calls off their open challenge (the waiting room ends, aborted). Only
    the waiting room read here: decided on its version, so a join that lands in between wins
    (the abort is refused as stale) instead of aborting the game just joined."""
    if me is not None:
        with contextlib.suppress(RoomRefused):
            room = await request.app.state.rooms.latest(room_id)
            if room.status is Status.WAITING and room.seat_of(me) is not None:
                await request.app.state.rooms.act(room_id, me, Play(Abort()), seen_version=room.version)
                request.app.state.lobby.poke()
    return redirect("/")




@_posted_on_room
async def set_sound(request: Request, room_id: str, me: Player | None) -> Response:
    """The "your turn" sound turned on or off (``sound=on|off``; :mod:`server.web.sound`), then
    back to the room, whose new socket gets the frames that go with it."""
    form = await form_of(request)
    response = redirect(f"/g/{room_id}")
    sound.remember(response, request, ticked(form, "sound", off=("off",)))  # anything else: BadForm
    return response

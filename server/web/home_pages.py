"""The home page and its forms: a guest's name, a challenge (listed in the lobby unless
private), playing the computer in one click, opening a game by its link. The lobby's live
sections are :mod:`server.web.lobby`'s; quick pairing's buttons post to :mod:`.pair_pages`."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import Response

from engine import RULESETS

from ..core.computer import computer
from ..core.decide import Join
from ..core.ratings import clock_category
from ..core.room import Player
from ..edge import new_game
from ..edge.auth import BadName, validate_name
from ..edge.limits import Limited, guard_of
from ..store.players import NameTaken
from ..store.service import RoomRefused
from .clock_choices import CLOCK_CHOICES, clock_of
from .i18n import N_, _
from .lobby import Lobby, list_room
from .pair_pages import quick_controls
from .site import (
    ROOM_ID,
    Web,
    error_page,
    foreign_form,
    form_of,
    guest_of,
    limited_page,
    redirect,
    redirect_as,
    safe_next,
    same_origin,
    web_of,
)

COMPUTER_LEVELS = {1: N_("Easy"), 2: N_("Medium"), 3: N_("Strong")}
"""English labels (marked for the catalogs); the home page translates them."""


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
                      computer_levels=COMPUTER_LEVELS, quick_pools=quick_controls(),
                      clock_choices=CLOCK_CHOICES)


async def guest(request: Request) -> Response:
    """POST: name → a new guest and its cookie; then back to ``next`` (joining ``join`` first)."""
    web = web_of(request)
    if not same_origin(request):
        return foreign_form(web)
    form = await form_of(request)
    target = safe_next(form.get("next"))
    join = form.get("join")
    try:
        name = validate_name(form.get("name"))
        guard_of(request).new_guest(request)
    except BadName as exc:
        if join and ROOM_ID.match(join):
            return web.render("name.html", status_code=400, me=None, join=join, error=_("That name won’t do: %(reason)s.") % {"reason": exc.said()})
        return await _home(request, web, None, target, 400, _("That name won’t do: %(reason)s.") % {"reason": exc.said()})
    except Limited as exc:
        return limited_page(web, exc)
    try:
        player, token = await request.app.state.guests.create(name)
    except NameTaken:
        message = _("Somebody is already called %(name)s. Please choose another name.") % {"name": name}
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
        return foreign_form(web)
    me = web.player_of(request)
    if me is None:
        return redirect("/")
    form = await form_of(request)
    ruleset = form.get("ruleset", "brettspielnetz")
    clock = clock_of(form.get("clock", "none"))
    rated = form.get("rated") == "on" and clock_category(clock) is not None
    seat_field = form.get("seat", "random")
    seat = int(seat_field) if seat_field in ("0", "1") else new_game.random_seat(2)
    seed = None
    if state.settings.test_hooks and form.get("seed", "").isdigit() and len(form["seed"]) < 19:
        seed = int(form["seed"])
    if ruleset not in RULESETS:
        return error_page(web, 400, _("Cannot create that game"), _("There are no such rules."), me)
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


async def play_computer(request: Request) -> Response:
    """POST, one click from the home page: a game against the computer at ``level``, for the
    visitor's guest (made now, with a generated name, if they have none yet)."""
    web = web_of(request)
    state = request.app.state
    if not same_origin(request):
        return foreign_form(web)
    form = await form_of(request)
    level = form.get("level")
    if level not in {str(n) for n in COMPUTER_LEVELS}:
        return error_page(web, 400, _("Cannot start that game"), _("There is no such computer level."))
    try:
        me, token = await guest_of(request)
        guard_of(request).new_game(request)
    except Limited as exc:
        return limited_page(web, exc, web.player_of(request))
    me = await state.guests.current(me)
    seat = new_game.random_seat(2)
    players = [computer(int(level)), computer(int(level))]
    players[seat] = me
    ruleset = form.get("ruleset") if form.get("ruleset") in RULESETS else "brettspielnetz"
    room = await state.rooms.create(new_game.duel(ruleset), tuple(players), clock_of(form.get("clock", "none")))
    await list_room(state, room)
    return redirect_as(request, f"/g/{room.id}", token)


async def join_by_code(request: Request) -> Response:
    code = request.query_params.get("code", "").strip()
    match = re.search(r"(?:/g/)?([A-Za-z0-9_-]{1,64})/?$", code)
    if not match:
        return redirect("/")
    return redirect(f"/g/{match.group(1)}")



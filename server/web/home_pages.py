"""The home page and its forms: a guest's name, a challenge (listed in the lobby unless
private), playing the computer in one click, opening a game by its link. The lobby's live
sections are :mod:`server.web.lobby`'s; quick pairing's buttons post to :mod:`.pair_pages`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from engine import DEFAULT_RULESET, RULESETS
from engine.clock import Clock
from engine.rules import DUEL_MINES, DUEL_WIDTH

from ..core.commands import Join
from ..core.computer import computer
from ..core.ratings import clock_category
from ..core.room import Player
from ..edge import new_game
from ..edge.auth import BadName, required_name
from ..edge.limits import Limited, guard_of
from ..store.players import NameTaken
from ..store.service import RoomRefused
from .clock_choices import CLOCK_CHOICES, clock_of
from .forms import (
    BadForm,
    foreign_form,
    form_of,
    refused_form,
    ruleset_of,
    same_origin,
    seed_of,
    ticked,
)
from .i18n import N_, _
from .lobby import Lobby
from .pair_pages import quick_controls
from .site import (
    ROOM_ID,
    error_page_for,
    guest_of,
    limited_page,
    redirect,
    redirect_as,
    render_page,
    safe_next,
    visitor_of,
    web_of,
)
from .view_model import rule_points, ruleset_label

COMPUTER_LEVELS = {1: N_("Easy"), 2: N_("Medium"), 3: N_("Strong")}
"""English labels (marked for the catalogs); the home page translates them."""


async def home(request: Request) -> Response:
    return await _home(request, await visitor_of(request), safe_next(request.query_params.get("next"), "/"))


async def _home(request: Request, me: Player | None, target: str, status_code: int = 200,
                error: str | None = None) -> Response:
    """The home page: the lobby as the feed last read it (the page's socket keeps it current)."""
    try:
        lobby = await request.app.state.lobby.current()
    except Exception:  # Redis away: the page shows an empty lobby rather than failing
        lobby = Lobby()
    return render_page(request, "home.html", me, status_code, lobby=lobby, next=target, error=error,
                       computer_levels=COMPUTER_LEVELS, quick_pools=quick_controls(), clock_choices=CLOCK_CHOICES)


async def guest(request: Request) -> Response:
    """POST: name → a new guest and its cookie; then back to ``next`` (joining ``join`` first).

    A visitor who has a guest already (the name form of a tab opened before they got one, or
    sent twice) stays that guest and goes on where the form was going, as that guest: their
    games and ratings belong to the guest in their cookie, which nothing else remembers, so a
    new guest would lose them for good. The header then says whom they play as; a name is
    changed by a rename (:mod:`.name_pages`, ``POST /api/v1/guests/me/name``), never by
    becoming somebody new.
    """
    web = web_of(request)
    if not same_origin(request):
        return await foreign_form(request)
    form = await form_of(request)
    target = safe_next(form.get("next"))
    join = form.get("join")
    if join is not None and not ROOM_ID.match(join):
        return await error_page_for(request, 400, _("No such game"), _("That link does not lead to a game."))
    me = web.player_of(request)
    if me is not None:
        return redirect(await _onward(request, await request.app.state.guests.current(me), target, join))
    try:
        name = required_name(form.get("name"))
        guard_of(request).new_guest(request)
    except BadName as exc:
        return await _name_refused(request, join, target, 400,
                                   _("That name won’t do: %(reason)s.") % {"reason": exc.said()})
    except Limited as exc:
        return await limited_page(request, exc)
    try:
        player, token = await request.app.state.guests.create(name)
    except NameTaken:
        return await _name_refused(request, join, target, 409, _(
            "Somebody is already called %(name)s. Please choose another name.") % {"name": name})
    return redirect_as(request, await _onward(request, player, target, join), token)


async def _name_refused(request: Request, join: str | None, target: str, status: int, message: str) -> Response:
    """The name form again, saying why: the game's (to join it) or the home page's."""
    if join is not None:
        return web_of(request).render("name.html", status_code=status, me=None, join=join, error=message)
    return await _home(request, None, target, status, message)


async def _onward(request: Request, player: Player, target: str, join: str | None) -> str:
    """Where the name form goes next: the game ``join`` names, joined first, else ``target``."""
    if join is None:
        return target
    try:
        await request.app.state.rooms.act(join, player, Join())
    except RoomRefused:
        pass  # full or gone: the room page shows what happened
    return f"/g/{join}"


@dataclass(frozen=True)
class Challenge:
    """What a challenge form asks for: the home page's "New game" and a player page's
    "Challenge this player" (both post to ``/games``)."""

    ruleset: str
    clock: Clock | None
    rated: bool
    seat: int
    private: bool
    seed: int | None


def challenge_of(request: Request, form: dict[str, str]) -> Challenge:
    """The challenge ``form`` asks for, each field absent taking the forms' default; raises
    :class:`BadForm` for a value neither form offers, and for a rated game without a clock (the
    JSON API's ``bad_field``: a rating needs a clock to file the game under)."""
    ruleset, clock, rated = ruleset_of(form), _clock(form), ticked(form, "rated")
    if rated and clock_category(clock) is None:
        raise BadForm(_("A rated game needs a clock."))
    seat = form.get("seat", "random")
    if seat not in ("random", "0", "1"):
        raise BadForm(_("There is no such seat."))
    return Challenge(ruleset, clock, rated, new_game.random_seat(2) if seat == "random" else int(seat),
                     ticked(form, "private"), seed_of(request, form))


def _clock(form: dict[str, str]) -> Clock | None:
    """The form's clock choice (none: untimed); one no page offers raises :class:`BadForm`."""
    try:
        return clock_of(form.get("clock", "none"))
    except ValueError:
        raise BadForm(_("There is no such clock.")) from None


async def create_game(request: Request) -> Response:
    web = web_of(request)
    state = request.app.state
    if not same_origin(request):
        return await foreign_form(request)
    me = web.player_of(request)
    if me is None:
        return redirect("/")
    form = await form_of(request)
    try:
        terms = challenge_of(request, form)
    except BadForm as exc:
        return await refused_form(request, exc, _("Cannot create that game"))
    me = await state.guests.current(me)
    players = (me, None) if terms.seat == 0 else (None, me)
    try:
        guard_of(request).new_game(request)
        room = await state.rooms.create(new_game.duel(terms.ruleset, terms.seed), players, terms.clock,
                                        rated=terms.rated, listed=not terms.private)
    except Limited as exc:
        return await limited_page(request, exc)
    if room.listed:  # a challenge from a player's page goes by its link only, and so do its rematches
        await state.rooms.aftermath.list(room)
        state.lobby.poke()
    return redirect(f"/g/{room.id}")


async def play_computer(request: Request) -> Response:
    """POST, one click from the home page: a game against the computer at ``level``, for the
    visitor's guest (made now, with a generated name, if they have none yet); ``ruleset`` and
    ``clock`` as on the challenge form (the page sends neither: Brettspielnetz, untimed)."""
    state = request.app.state
    if not same_origin(request):
        return await foreign_form(request)
    form = await form_of(request)
    try:
        level, ruleset, clock = _level(form), ruleset_of(form), _clock(form)
    except BadForm as exc:
        return await refused_form(request, exc, _("Cannot start that game"))
    try:
        me, token = await guest_of(request)
        guard_of(request).new_game(request)
    except Limited as exc:
        return await limited_page(request, exc)
    me = await state.guests.current(me)
    seat = new_game.random_seat(2)
    players = [computer(level), computer(level)]
    players[seat] = me
    room = await state.rooms.create(new_game.duel(ruleset), tuple(players), clock)
    await state.rooms.aftermath.list(room)
    return redirect_as(request, f"/g/{room.id}", token)


def _level(form: dict[str, str]) -> int:
    """The computer's level (one of the page's buttons); any other raises :class:`BadForm`."""
    level = form.get("level", "")
    if level not in {str(n) for n in COMPUTER_LEVELS}:
        raise BadForm(_("There is no such computer level."))
    return int(level)


async def join_by_code(request: Request) -> Response:
    code = request.query_params.get("code", "").strip()
    match = re.search(r"(?:/g/)?([A-Za-z0-9_-]{1,64})/?$", code)
    if not match:
        return redirect("/")
    return redirect(f"/g/{match.group(1)}")


async def rules(request: Request) -> Response:
    """How to play, for everybody (an outside probe found the rules only in a collapsed box of
    a game's page): the numbers come from the rulesets themselves (engine/rules.py), so the page
    cannot say other points than the games count."""
    sets = [{**rule_points(r), "label": ruleset_label(r.name)}
            for r in (RULESETS[DEFAULT_RULESET], *(r for name, r in RULESETS.items() if name != DEFAULT_RULESET))]
    return render_page(request, "rules.html", await visitor_of(request), rulesets=sets, width=DUEL_WIDTH,
                       mines=DUEL_MINES)

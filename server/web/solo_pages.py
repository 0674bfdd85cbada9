"""The classic (solo) game's pages: ``/solo`` (choose a board, your bests, the leaders),
``POST /solo`` (a new game), ``/solo/leaderboard`` and the room page of a solo game.

A solo game is a room like a duel (``/g/{id}``: the same websocket, snapshots, reconnects,
spectators); only its page and its frames differ (:mod:`server.web.solo_codec`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from engine import Classic
from engine.classic import MAX_HEIGHT, MAX_WIDTH, MIN_SIDE, PRESETS, BadBoard

from ..core.room import Player, Room, Status
from ..edge import new_game
from ..edge.csp import SecurityHeaders
from ..edge.limits import Limited, guard_of
from ..store.results import DEFAULT_PRESET, MODES, SoloResult, ranks
from . import click_mode as click_modes
from . import socket_ticket
from .forms import (
    BadForm,
    foreign_form,
    form_of,
    refused_form,
    same_origin,
    seed_of,
    ticked,
)
from .i18n import N_, _
from .reconnect import reconnect_area
from .site import (
    Web,
    error_page_for,
    limited_page,
    redirect,
    render_page,
    visitor_of,
    web_of,
)
from .solo_codec import tab_title, title_of
from .solo_view import timer_text

PERIODS = {"all": N_("all time"), "today": N_("today")}
"""English labels (marked for the catalogs); the template translates them."""
LEADERS_SHOWN = 3
"""The fastest wins ``/solo`` shows per board and mode (each list links to its whole board)."""


def _number(text: str | None, default: int) -> int | None:
    if text is None or text == "":
        return default
    return int(text) if text.isascii() and text.isdigit() and len(text) < 5 else None


async def solo_home(request: Request) -> Response:
    return await _solo_home(request, await visitor_of(request))


async def _solo_home(request: Request, me: Player | None, status: int = 200, error: str | None = None,
                     picked: dict[str, str] | None = None) -> Response:
    """The page; ``error`` and ``picked`` (the form as posted): a board it could not make, shown
    above the form that keeps what was typed (an outside probe's 5×5 with 30 mines went to an
    error page whose way back led to the duel's home and lost the values)."""
    results = request.app.state.rooms.results
    boards = [(preset, mode) for preset in PRESETS for mode in MODES]
    found = await asyncio.gather(*(results.leaderboard(preset, mode, "all", LEADERS_SHOWN) for preset, mode in boards))
    leaders: dict[str, dict[str, list[tuple[int, SoloResult]]]] = {preset: {} for preset in PRESETS}  # preset → mode → rows
    for (preset, mode), rows in zip(boards, found):
        leaders[preset][mode] = list(zip(ranks(rows), rows))  # (rank, row): a tie numbered as the boards do
    bests = await results.bests(me.id) if me else {}
    return render_page(request, "solo_home.html", me, status, presets=PRESETS, leaders=leaders, bests=bests,
                       seconds=_seconds, limits={"min": MIN_SIDE, "width": MAX_WIDTH, "height": MAX_HEIGHT},
                       error=error, picked={**DEFAULT_PICK, **(picked or {})})


DEFAULT_PICK = {"preset": DEFAULT_PRESET, "width": "20", "height": "12", "mines": "40", "no_guess": ""}
"""What the new-game form shows before anything was posted."""


async def create_solo(request: Request) -> Response:
    web = web_of(request)
    if not same_origin(request):
        return await foreign_form(request)
    me = web.player_of(request)
    if me is None:
        return redirect("/?next=/solo")
    form = await form_of(request)
    try:
        game = _game_of(request, form)
        guard_of(request).new_game(request, classic=True)
    except BadForm as exc:
        picked = {key: form.get(key, "")[:8] for key in DEFAULT_PICK}
        return await _solo_home(request, await visitor_of(request), exc.status,
                                _("Cannot make that board: %(reason)s") % {"reason": exc.message}, picked)
    except Limited as exc:
        return await limited_page(request, exc)
    room = await request.app.state.rooms.create(game, (await request.app.state.guests.current(me),))
    return redirect(f"/g/{room.id}")


async def set_click_mode(request: Request) -> Response:
    """POST ``mode=reveal|flag``, sent by the classic page's radio buttons when they change (an
    htmx request that swaps nothing): remembered for the next page (:mod:`.click_mode`). 204;
    any other mode 400, a foreign page 403, nothing set."""
    if not same_origin(request):
        return await foreign_form(request)
    try:
        mode = (await form_of(request)).get("mode")
        if mode not in click_modes.MODES:
            raise BadForm(_("There is no such click mode."))
    except BadForm as exc:
        return await refused_form(request, exc)
    response = Response(status_code=204)
    click_modes.remember(response, request, mode)
    return response


def _game_of(request: Request, form: dict[str, str]) -> Classic:
    """The board ``form`` asks for: a preset, or ``custom`` (also what a form without ``preset``
    asks for, as the finished game's "Play again" does) of ``width`` × ``height`` with ``mines``
    (absent: 9 × 9, 10), logic-only when ``no_guess`` is ticked (``1`` or ``on``; ``0`` is what
    "Play again" sends for an unticked box). Raises :class:`BadForm` for anything else."""
    preset = form.get("preset", "custom")
    if preset in PRESETS:
        width, height, mines = PRESETS[preset]
    elif preset == "custom":
        width, height, mines = (_number(form.get("width"), 9), _number(form.get("height"), 9),
                                _number(form.get("mines"), 10))
    else:
        raise BadForm(_("There is no such board."))
    no_guess, seed = ticked(form, "no_guess", on=("1", "on"), off=("0",)), seed_of(request, form)
    if width is None or height is None or mines is None:
        raise BadForm(_("the board's size and mines are whole numbers") + ".")
    try:
        return new_game.classic(width, height, mines, no_guess, seed)
    except BadBoard as exc:
        raise BadForm(_board_rule(exc)) from None


def _board_rule(exc: BadBoard) -> str:
    """The rule a custom board broke, in the reader's language."""
    if exc.problem == "size":
        return _("A board is %(least)d to %(width)d cells wide and %(least)d to %(height)d high.") % {
            "least": MIN_SIDE, "width": MAX_WIDTH, "height": MAX_HEIGHT}
    if exc.no_guess:  # a smaller budget: the layout's search must stay cheap (engine.classic.most_mines)
        return _("A no-guess board of %(width)d × %(height)d cells takes 1 to %(most)d mines.") % {
            "width": exc.width, "height": exc.height, "most": exc.most_mines}
    return _("A board of %(width)d × %(height)d cells takes 1 to %(most)d mines.") % {
        "width": exc.width, "height": exc.height, "most": exc.most_mines}


async def leaderboard(request: Request) -> Response:
    q = request.query_params
    preset, mode, period = q.get("preset", DEFAULT_PRESET), q.get("mode", "classic"), q.get("period", "all")
    if preset not in PRESETS or mode not in MODES or period not in PERIODS:
        return await error_page_for(request, 404, _("No such leaderboard"),
                                    _("Pick a board, a mode and a period below."))
    rows = await request.app.state.rooms.results.leaderboard(preset, mode, period)
    return render_page(request, "leaderboard.html", await visitor_of(request), rows=list(zip(ranks(rows), rows)),
                       preset=preset, mode=mode, period=period, presets=PRESETS, modes=MODES, periods=PERIODS, seconds=_seconds)


def _seconds(ms: int) -> str:
    return timer_text(ms, True)


def solo_room_page(request: Request, web: Web, room: Room, me: Player | None, viewer: int,
                   at: int | None = None) -> Response:
    """A classic game's page; ``at``: a finished game's replay step (``?at=N``; ``None``: the end)."""
    html: Any = web.codec
    watchers = request.app.state.hub.watchers(room.id)
    return web.render(
        "solo.html", me=me, title=tab_title(room, viewer), room_id=room.id, viewer=viewer,
        ws_url=socket_ticket.render_socket_url(room.id, request.app.state.rooms.now_ms(),
                                               shows_end=room.status is Status.OVER),  # snapshots keep the replay step
        seated=viewer == 0,
        click_mode=click_modes.click_mode(request),
        areas={**html.solo.areas(room, viewer, at=at), "reconnect": reconnect_area(html.m, request)},
        spectators=html.m.spectators(watchers),
        goto_field=html.m.goto_field(),
        board_title=title_of(room),
    )


_headers = [Middleware(SecurityHeaders)]

routes = [
    Route("/solo", solo_home, middleware=_headers),
    Route("/solo", create_solo, methods=["POST"], middleware=_headers),
    Route("/solo/leaderboard", leaderboard, middleware=_headers),
    Route("/solo/click-mode", set_click_mode, methods=["POST"], middleware=_headers),
]

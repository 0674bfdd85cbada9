"""Quick pairing in the browser: the home page's pool buttons post here, the "Looking for an
opponent…" page holds the seek through its websocket (:mod:`server.edge.ws_pair`), and the
landing answer takes both players into their game. No script of ours: forms, the htmx ws
extension, and one ``hx-get`` answered with ``HX-Redirect``.

- ``POST /pair`` (``pool`` = ``<time control>/<rated|casual>``, ``ruleset``): for the visitor's
  guest (made now, with a generated name, if they have none yet, as "Play the computer"
  does), 303 to the page of that pool. A correspondence pool (days per move) has no page to
  keep open: its players come days apart, so the button takes the longest-waiting open
  challenge of the same terms from the lobby, or posts one that waits there
  (:func:`by_correspondence`), and goes to that game.
- ``GET /pair?pool=<pool id>``: the page; its socket seeks while it is open.
- ``GET /pair/landing?game=<id>``: ``HX-Redirect: /g/<id>`` for htmx (a plain 303 otherwise).
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlencode

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from engine import Abort

from ..core.commands import Join, Play
from ..core.pools import POOLS, TIME_CONTROLS, Pool, TimeControl, pool_clock
from ..core.room import Player, Status
from ..edge import new_game
from ..edge.csp import SecurityHeaders
from ..edge.limits import Limited, guard_of
from ..store.service import RoomRefused
from ..store.store import LOBBY_KEEP
from .forms import (
    BadForm,
    foreign_form,
    form_of,
    refused_form,
    ruleset_of,
    same_origin,
)
from .i18n import _, ngettext
from .lobby import read_lobby
from .site import (
    ROOM_ID,
    error_page_for,
    guest_of,
    limited_page,
    ongoing_shown,
    redirect,
    redirect_as,
    render_page,
    visitor_of,
)


def pool_label(pool: Pool) -> str:
    """``3+2 · Coan rules · rated``, ``3 days per move · Brettspielnetz rules · casual``."""
    control = pool.control
    clock = (_("%(control)s per move") if control.days is not None else _("%(control)s (min + s per move)")) % {
        "control": control_label(control)}
    rules = _("Coan rules") if pool.ruleset == "coan" else _("Brettspielnetz rules")
    return f"{clock} \u00b7 {rules} \u00b7 {_('rated') if pool.rated else _('casual')}"


def control_label(control: TimeControl) -> str:
    """A pool's time control: ``3+2`` as it is, ``3 days`` in the reader's language."""
    if control.days is None:
        return control.label
    return ngettext("%(num)d day", "%(num)d days", control.days) % {"num": control.days}


def quick_controls() -> list[tuple[str, str]]:
    """The home page's buttons: (``<time control>/<rated|casual>``, label) per pool, by ruleset."""
    return [(f"{c.name}/{kind}", f"{control_label(c)} {_('rated') if kind == 'rated' else _('casual')}")
            for c in TIME_CONTROLS for kind in ("rated", "casual")]


async def start(request: Request) -> Response:
    """POST from the home page: the pool of the pressed button and the chosen rules."""
    if not same_origin(request):
        return await foreign_form(request)
    form = await form_of(request)
    try:
        pool = _pool_of(form)
    except BadForm as exc:
        return await refused_form(request, exc, _("Cannot look for that game"))
    try:
        me, token = await guest_of(request)
        if not pool.control.live:
            return redirect_as(request, f"/g/{await by_correspondence(request, me, pool)}", token)
    except Limited as exc:
        return await limited_page(request, exc)
    return redirect_as(request, "/pair?" + urlencode({"pool": pool.id}), token)


async def by_correspondence(request: Request, me: Player, pool: Pool) -> str:
    """The game a correspondence pool's button leads to: the longest-waiting open challenge of
    these terms (ruleset, days per move, rated) of somebody else's (posted before the player's
    own, if the player has one), joined; else the player's own if it is listed already (pressing
    twice posts one); else a new one, posted in the lobby with the visitor in a random seat. Why not the seek of the live pools: a seek lasts while
    its page is open (a minute at most over the API), and two players of days per move are
    seldom there in the same minute (an outside probe); a listed challenge waits as long as
    they need.

    Two presses at the same moment both find nothing and both post (an outside probe: 4 of 4
    times): so after posting, the younger of two alike challenges gives way, calling its own off
    and taking the older (the older's poster, looking again, finds none older and stays). Bounded
    to :data:`PRESS_ROUNDS` rounds."""
    state = request.app.state
    me = await state.guests.current(me)
    own: str | None = None
    for _round in range(PRESS_ROUNDS):
        alike = await _waiting_alike(state, pool)
        mine = next((row for row in alike if row.creator == me.id), None)
        others = [row for row in alike if row.creator != me.id]
        if mine is not None:
            others = [row for row in others if (row.created_ms, row.id) < (mine.created_ms, mine.id)]
            if not others:
                return mine.id
            try:  # ours first: if somebody took it meanwhile, it is our game
                await state.rooms.act(mine.id, me, Play(Abort()))
            except RoomRefused:
                return mine.id
        for row in others:
            try:
                await state.rooms.act(row.id, me, Join())
            except RoomRefused:
                continue  # taken meanwhile, or called off
            state.lobby.poke()
            return row.id
        own = await _post(request, me, pool)
    return own or await _post(request, me, pool)


PRESS_ROUNDS = 3
"""Rounds of look, take or post, look again (a challenge taken or called off between the look
and the join is looked past in the next round)."""


async def _waiting_alike(state: Any, pool: Pool) -> list[Any]:
    """The listed open challenges of ``pool``'s terms, the longest waiting first: a fresh read of
    the whole list (the lobby's page shows only the newest 40, and its copy may be 2 s old)."""
    lobby = await read_lobby(state, 0, time.time_ns() // 1_000_000, challenge_rows=LOBBY_KEEP)
    days = pool.control.days
    alike = [row for row in lobby.challenges if row.ruleset == pool.ruleset and row.rated == pool.rated
             and row.clock is not None and row.clock.days == days]
    return sorted(alike, key=lambda row: (row.created_ms, row.id))


async def _post(request: Request, me: Player, pool: Pool) -> str:
    """A new open challenge of ``pool``'s terms, the visitor in a random seat, on the lobby's list."""
    state = request.app.state
    guard_of(request).new_game(request)
    players = (me, None) if new_game.random_seat(2) == 0 else (None, me)
    room = await state.rooms.create(new_game.duel(pool.ruleset), players, pool_clock(pool), rated=pool.rated)
    await state.rooms.aftermath.list(room)
    state.lobby.poke()
    return room.id


def _pool_of(form: dict[str, str]) -> Pool:
    """The pool of ``pool`` (``<time control>/<rated|casual>``, a button's value) under the form's
    rules; raises :class:`BadForm` for rules or a pool the page does not offer."""
    ruleset = ruleset_of(form)
    pool = POOLS.get(form.get("pool", "").replace("/", f"/{ruleset}/", 1))
    if pool is None:
        raise BadForm(_("There is no such pool."))
    return pool


async def page(request: Request) -> Response:
    """The "Looking for an opponent…" page of one pool; while the visitor plays a live game, a
    way back to it instead (``anyway=1``: look all the same). Why: the browser's Back from a
    game that pairing began comes here, and the page's socket seeks at once: an outside probe
    was paired into a second game while the first one's clock ran."""
    me = await visitor_of(request)
    pool = POOLS.get(request.query_params.get("pool", ""))
    if me is None:
        return redirect("/")
    if pool is None:
        return await error_page_for(request, 404, _("No such pool"), _("That link does not name a pool."))
    playing = None if request.query_params.get("anyway") == "1" else await _live_game_of(request, me)
    return render_page(request, "pair.html", me, pool=pool, pool_label=pool_label(pool), playing=playing,
                       beats=request.app.state.settings.heartbeat_s > 0)  # its socket's heartbeat (_pair.html)


async def _live_game_of(request: Request, me: Player) -> str | None:
    """The id of a live game (a clock in minutes, not days) the visitor is playing, if any
    (Redis away: none, the page seeks as before)."""
    for entry in await ongoing_shown(request, me.id):
        clock = entry.get("clock") or {}
        if entry["status"] == Status.PLAYING.value and "initial_ms" in clock:
            return str(entry["id"])
    return None


async def landing(request: Request) -> Response:
    """Where a paired page goes: the game, by ``HX-Redirect`` (htmx navigates the whole page)."""
    game = request.query_params.get("game", "")
    if not ROOM_ID.match(game):
        return redirect("/")
    if request.headers.get("hx-request") != "true":
        return redirect(f"/g/{game}")
    return Response(status_code=200, headers={"hx-redirect": f"/g/{game}", "cache-control": "no-store"})


_headers = [Middleware(SecurityHeaders)]

routes = [
    Route("/pair", start, methods=["POST"], middleware=_headers),
    Route("/pair", page, methods=["GET"], middleware=_headers),
    Route("/pair/landing", landing, middleware=_headers),
]

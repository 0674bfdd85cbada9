"""The players' pages: ``/p/{id}`` (a player's ratings with their recent history, games being
played and finished, "Challenge this player"), ``/me`` ("My games": the visitor's games, those
where it is their turn first; the correspondence player's home) and ``/ratings`` (the
leaderboard of every category).

Server-rendered like every page; the only htmx is the refresh of "My games"' ongoing list
(``/me/ongoing``, every 30 s), so a correspondence player sees a game become their turn without
reloading. Every page reads what it shows in a few round trips: the player's name, ratings and
histories (pipelined), and their game lists (``server.store.player_games``).

A game waiting for its second player is shown only on its own player's pages: its link is an
invitation. The challenge form creates a private game through the home page's ``POST /games``
(``private=on``: not listed in the lobby); the room page it leads to shows the link to send.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..core.ratings import CATEGORIES
from ..edge.csp import SecurityHeaders
from ..store.player_games import CURSOR
from .clock_choices import CLOCK_CHOICES
from .i18n import _
from .player_view import category_text, game_row, leader_rows, rating_looks
from .site import error_page_for, ongoing_of, redirect, render_page, visitor_of, web_of

PLAYER_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
HISTORY_SHOWN = 10
FINISHED_SHOWN = 20
LEADERS_SHOWN = 50
REFRESH_S = 30
CHALLENGE_CLOCK = "180+2"
"""The challenge form's clock at first (its choices are the home page's, ``CLOCK_CHOICES``;
a rated game's needing a clock)."""


def _before(request: Request) -> str | None:
    """``?before=``: the finished games after this cursor (the "Older games" link's); anything
    else is left out (the newest)."""
    raw = request.query_params.get("before")
    return raw if raw is not None and CURSOR.match(raw) else None


async def _lists(request: Request, player_id: str, before: str | None) -> tuple[list[Any], list[Any], str | None]:
    """The player's ongoing games, :data:`FINISHED_SHOWN` finished ones (after the cursor
    ``before``, if given) and the cursor of the page after them (``None``: none older)."""
    ongoing, (finished, older) = await asyncio.gather(
        ongoing_of(request, player_id),  # read already for the header's count on one's own pages
        request.app.state.games.finished_page(player_id, FINISHED_SHOWN, before))
    return ongoing, finished, older


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


async def player_page(request: Request) -> Response:
    state = request.app.state
    me = await visitor_of(request)
    player_id = request.path_params["id"]
    name = await state.players.name_of(player_id) if PLAYER_ID.match(player_id) else None
    if name is None:
        return await error_page_for(request, 404, _("No such player"), _("Nobody plays under that link."))
    own = me is not None and me.id == player_id
    before = _before(request)
    ratings, (ongoing, finished, older) = await asyncio.gather(state.ratings.ratings_of(player_id),
                                                               _lists(request, player_id, before))
    played = [c for c in CATEGORIES if ratings[c].games]
    histories = await state.ratings.histories(player_id, played, HISTORY_SHOWN + 1) if played else {}
    now = _now_ms()
    if not own:
        ongoing = [e for e in ongoing if e["status"] != "waiting"]
    return render_page(
        request, "player.html", me, player_id=player_id, name=name, own=own,
        ratings=rating_looks(ratings, histories, HISTORY_SHOWN),
        ongoing=[game_row(e, now, None if own else name) for e in ongoing],
        finished=[game_row(e, now, None if own else name) for e in finished], older=older, before=before,
        clocks=CLOCK_CHOICES, default_clock=CHALLENGE_CLOCK,
    )


async def _my_ongoing(request: Request) -> tuple[object, list[object]]:
    web = web_of(request)
    me = web.player_of(request)
    if me is None:
        return None, []
    now = _now_ms()
    return me, [game_row(e, now) for e in await request.app.state.games.ongoing(me.id)]


async def my_games(request: Request) -> Response:
    me = await visitor_of(request)
    if me is None:
        return redirect("/?next=/me")
    before = _before(request)
    ongoing, finished, older = await _lists(request, me.id, before)
    now = _now_ms()
    return render_page(request, "my_games.html", me, ongoing=[game_row(e, now) for e in ongoing],
                       finished=[game_row(e, now) for e in finished], older=older, before=before,
                       refresh_s=REFRESH_S)


async def my_ongoing(request: Request) -> Response:
    """The ongoing list of "My games" alone (htmx refreshes it); opened as a page (a link
    copied, a reload of it), "My games" itself (it showed a blank page, an outside probe)."""
    if request.headers.get("hx-request") != "true":
        return redirect("/me")
    web = web_of(request)
    me, rows = await _my_ongoing(request)
    if me is None:
        return HTMLResponse("", status_code=401, headers={"cache-control": "no-store"})
    html = web.env.get_template("_games.html").module.ongoing_section(rows, REFRESH_S)  # type: ignore[attr-defined]
    return HTMLResponse(str(html), headers={"cache-control": "no-store"})


async def ratings_page(request: Request) -> Response:
    state = request.app.state
    boards = await asyncio.gather(*(state.ratings.leaderboard(c, LEADERS_SHOWN) for c in CATEGORIES))
    names = await state.players.names_of(sorted({pid for board in boards for pid, _ in board}))
    return render_page(request, "ratings.html", await visitor_of(request),
                       boards=[(c, category_text(c), leader_rows(board, names))
                               for c, board in zip(CATEGORIES, boards, strict=True)])


_headers = [Middleware(SecurityHeaders)]

routes = [
    Route("/p/{id}", player_page, middleware=_headers),
    Route("/me", my_games, middleware=_headers),
    Route("/me/ongoing", my_ongoing, middleware=_headers),
    Route("/ratings", ratings_page, middleware=_headers),
]

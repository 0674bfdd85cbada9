"""HTTP JSON routes about players (docs/PROTOCOL.md, "Players"): a player's name, ratings and
games (``GET /api/v1/players/{id}``) and their lists of games being played or finished
(``GET /api/v1/players/{id}/games?status=playing|over``).

Everything here is public but one thing: a game still waiting for its second player is listed
only to that player (its link is an invitation; a player's page must not hand it to anyone).
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..core.ratings import Rating
from ..store.player_games import CURSOR
from .json_edge import ApiError, handles, player_of
from .wire import digits_value

PLAYER_ID = re.compile(r"^[A-Za-z0-9_@-]{1,64}$")
STATUSES = ("playing", "over")
FINISHED_SHOWN = 10
"""Finished games on a player's own answer (the list route pages up to :data:`MAX_LIMIT`)."""
DEFAULT_LIMIT = 20
MAX_LIMIT = 100
HIDDEN_FIELDS = ("v",)
"""Summary fields the API leaves out (the index's own bookkeeping)."""


def rating_json(rating: Rating) -> dict[str, Any]:
    won, drawn, lost = rating.record
    return {"rating": round(rating.rating, 2), "deviation": round(rating.deviation, 2), "games": rating.games,
            "won": won, "drawn": drawn, "lost": lost, "provisional": rating.provisional, "display": rating.display}


def game_entry_json(entry: dict[str, Any]) -> dict[str, Any]:
    """A game of a player's list as the API shows it (``server.core.summary.for_player``)."""
    return {k: v for k, v in entry.items() if k not in HIDDEN_FIELDS}


def visible(entries: list[dict[str, Any]], own: bool) -> list[dict[str, Any]]:
    """The ongoing games others may see: not the ones waiting for an opponent (their links
    are invitations), unless the list is the caller's own."""
    return entries if own else [e for e in entries if e["status"] != "waiting"]


async def knownplayer_of(request: Request) -> tuple[str, str]:
    """The path's player id and name; ``404 unknown_player`` for anyone without a name."""
    player_id = request.path_params["id"]
    name = await request.app.state.players.name_of(player_id) if PLAYER_ID.match(player_id) else None
    if name is None:
        raise ApiError(404, "unknown_player", f"there is no player {player_id!r}")
    return player_id, name


def _own(request: Request, player_id: str) -> bool:
    caller = player_of(request, required=False)
    return caller is not None and caller.id == player_id


def _limit(request: Request) -> int:
    raw = request.query_params.get("limit")
    if raw is None:
        return DEFAULT_LIMIT
    limit = digits_value(raw, MAX_LIMIT)
    if not limit:
        raise ApiError(400, "bad_field", f"\"limit\" must be a whole number in 1..{MAX_LIMIT}")
    return limit


def _before(request: Request) -> str | None:
    """``before``: the finished games after this cursor (a page's ``older``, or a time in ms)."""
    raw = request.query_params.get("before")
    if raw is not None and not CURSOR.match(raw):
        raise ApiError(400, "bad_field", "\"before\" must be a page's \"older\" (or a time in ms)")
    return raw


@handles
async def player(request: Request) -> JSONResponse:
    """``{"id", "name", "ratings": {category: {...}}, "games": [ongoing..., newest finished...]}``."""
    state = request.app.state
    player_id, name = await knownplayer_of(request)
    ratings = await state.ratings.ratings_of(player_id)
    ongoing, finished = await state.games.overview(player_id, FINISHED_SHOWN)
    games = visible(ongoing, _own(request, player_id)) + finished
    return JSONResponse({"id": player_id, "name": name,
                         "ratings": {category: rating_json(r) for category, r in ratings.items()},
                         "games": [game_entry_json(e) for e in games]})


@handles
async def player_games(request: Request) -> JSONResponse:
    """``?status=playing`` (default; waiting games too, to their player only) or ``over``
    (newest first, ``limit`` of them)."""
    state = request.app.state
    status = request.query_params.get("status", "playing")
    if status not in STATUSES:
        raise ApiError(400, "bad_field", "\"status\" must be \"playing\" or \"over\"")
    limit = _limit(request)
    before = _before(request)
    player_id, _name = await knownplayer_of(request)
    answer: dict[str, Any] = {"id": player_id, "status": status}
    if status == "over":
        games, answer["older"] = await state.games.finished_page(player_id, limit, before)
    else:
        games = visible(await state.games.ongoing(player_id), _own(request, player_id))
    return JSONResponse({**answer, "games": [game_entry_json(e) for e in games]})


routes = [
    Route("/api/v1/players/{id}", player),
    Route("/api/v1/players/{id}/games", player_games),
]

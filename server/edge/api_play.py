"""Acting on a game over the API (docs/PROTOCOL.md): join, read it, its record and analysis
after the end, resign, abort, claim an abandoned game, and rematch offers."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from engine import Abort, Resign

from ..core.commands import Claim, DeclineRematch, Join, Play, Refused
from ..store.analyses import NotAnalysed
from . import new_game
from .json_edge import ApiError, game_json, handles, player_of, read_body
from .limits import guard_of
from .wire import version_value


@handles
async def join_game(request: Request) -> JSONResponse:
    player = await request.app.state.guests.current(player_of(request))
    room = await request.app.state.rooms.act(request.path_params["id"], player, Join())
    return JSONResponse({"id": room.id, "seat": room.seat_of(player), "v": room.version})


@handles
async def get_game(request: Request) -> JSONResponse:
    player = player_of(request, required=False)
    room = await request.app.state.rooms.load(request.path_params["id"])
    return JSONResponse(game_json(room, room.viewer_of(player)))


@handles
async def get_record(request: Request) -> JSONResponse:
    return JSONResponse(await request.app.state.rooms.record(request.path_params["id"]))


@handles
async def get_analysis(request: Request) -> JSONResponse:
    """After the end: every move's odds and each player's summary (docs/PROTOCOL.md, "Analysis")."""
    try:
        found = await request.app.state.rooms.analysis(request.path_params["id"])
    except NotAnalysed as exc:
        raise ApiError(409 if exc.code == Refused.NOT_OVER.value else 404, exc.code, exc.message) from None
    return JSONResponse(found.to_data())


@handles
async def rematch(request: Request) -> JSONResponse:
    """Accept the opponent's rematch offer (``201``: the new game) or offer one (``202``: the
    old game, now carrying the offer, which the opponent accepts the same way). Making the new
    game spends a game creation of the client's address (429 ``rate_limited``: nothing made, an
    offer left standing)."""
    player = player_of(request)
    game_id = request.path_params["id"]
    make = guard_of(request).charged(request, new_game.rematch_of)
    room = await request.app.state.rooms.rematch(game_id, player, make)
    if room.id == game_id:
        return JSONResponse({"id": room.id, "offered": True, "v": room.version}, status_code=202)
    return JSONResponse({"id": room.id, "seat": room.seat_of(player), "v": room.version}, status_code=201)


@handles
async def decline_rematch(request: Request) -> JSONResponse:
    """Decline the opponent's rematch offer, or withdraw one's own."""
    room = await request.app.state.rooms.act(request.path_params["id"], player_of(request), DeclineRematch())
    return JSONResponse({"id": room.id, "v": room.version})


@handles
async def resign(request: Request) -> JSONResponse:
    """``{"v": version}`` (optional): checked like a move's (a stale resignation is refused)."""
    return await _end_by(request, Resign())


@handles
async def abort(request: Request) -> JSONResponse:
    """``{"v": version}`` (optional): the game called off without a result, until both have moved."""
    return await _end_by(request, Abort())


async def _end_by(request: Request, move: Resign | Abort) -> JSONResponse:
    player = player_of(request)
    body = await read_body(request)
    seen = body.get("v")
    if seen is not None and version_value(seen) is None:
        raise ApiError(400, "bad_field", "\"v\" must be the version you saw (an integer), or left out")
    room = await request.app.state.rooms.act(request.path_params["id"], player, Play(move), seen)
    return JSONResponse({"id": room.id, "v": room.version})


@handles
async def claim(request: Request) -> JSONResponse:
    """``{"result": "win"|"draw"}``: the opponent left a live game more than a minute ago."""
    state = request.app.state
    player = player_of(request)
    body = await read_body(request)
    if body.get("result") not in ("win", "draw"):
        raise ApiError(400, "bad_field", "\"result\" must be \"win\" or \"draw\"")
    room_id = request.path_params["id"]
    room = await state.rooms.latest(room_id)
    seat = room.seat_of(player)
    away = await state.hub.presence.away_since(room_id, 1 - seat) if seat in (0, 1) else None
    room = await state.rooms.act(room_id, player, Claim(body["result"] == "draw", away))
    return JSONResponse({"id": room.id, "v": room.version})


routes = [
    Route("/api/v1/games/{id}", get_game),
    Route("/api/v1/games/{id}/join", join_game, methods=["POST"]),
    Route("/api/v1/games/{id}/record", get_record),
    Route("/api/v1/games/{id}/analysis", get_analysis),
    Route("/api/v1/games/{id}/rematch", rematch, methods=["POST"]),
    Route("/api/v1/games/{id}/rematch/decline", decline_rematch, methods=["POST"]),
    Route("/api/v1/games/{id}/resign", resign, methods=["POST"]),
    Route("/api/v1/games/{id}/abort", abort, methods=["POST"]),
    Route("/api/v1/games/{id}/claim", claim, methods=["POST"]),
]

"""The HTTP JSON API under ``/api/v1`` (docs/PROTOCOL.md) and ``/healthz``: guests, the
classic game's leaderboard, the health check, and the route table of every API module
(:mod:`.json_edge` says how each reads its request and answers)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from engine import PRESETS

from ..store.players import NameTaken
from ..store.results import DEFAULT_PRESET, MODES, ranks
from . import api_games, api_pairing, api_play
from .auth import BadName, validate_name
from .json_edge import ApiError, handles, player_of, read_body
from .limits import guard_of


@handles
async def create_guest(request: Request) -> JSONResponse:
    name = _name_in(await read_body(request))
    guard_of(request).new_guest(request)
    try:
        player, token = await request.app.state.guests.create(name)
    except NameTaken:
        raise ApiError(409, "name_taken", f"another player is called {name!r} (names are unique, whatever "
                       "their case)") from None
    return JSONResponse({"id": player.id, "name": player.name, "token": token}, status_code=201)


@handles
async def rename_guest(request: Request) -> JSONResponse:
    """``{"name"}``: the caller's new display name, and a token that carries it. A rename that
    claims a name spends a guest creation of the address (a name given up stays its player's:
    renames claim names as new guests do); taking one's own back claims nothing."""
    player = player_of(request)
    name = _name_in(await read_body(request))
    if name is None:
        raise ApiError(400, "bad_field", "\"name\" must be a non-empty name")
    guests = request.app.state.guests
    try:
        if await guests.claims_new(player, name):
            guard_of(request).new_guest(request)
        player, token = await guests.rename(player, name)
    except NameTaken:
        raise ApiError(409, "name_taken", f"another player is called {name!r}") from None
    return JSONResponse({"id": player.id, "name": player.name, "token": token})


def _name_in(body: dict[str, Any]) -> str | None:
    """The body's ``"name"``, checked (``None``: none given)."""
    try:
        return validate_name(body.get("name"))
    except BadName as exc:
        raise ApiError(400, "bad_field", f"\"name\": {exc}") from None


@handles
async def leaderboard(request: Request) -> JSONResponse:
    """``?preset=&mode=classic|no-guess&period=all|today``: the fastest wins, best first."""
    q = request.query_params
    preset, mode, period = q.get("preset", DEFAULT_PRESET), q.get("mode", "classic"), q.get("period", "all")
    if preset not in PRESETS or mode not in MODES or period not in ("all", "today"):
        raise ApiError(400, "bad_field", f"preset in {sorted(PRESETS)}, mode in {list(MODES)}, period all|today")
    rows = await request.app.state.rooms.results.leaderboard(preset, mode, period)
    return JSONResponse({"preset": preset, "mode": mode, "period": period, "results": [
        {"rank": rank, "game": r.room, "player": {"id": r.player_id, "name": r.name}, "time_ms": r.time_ms,
         "three_bv": r.three_bv, "bv_per_s": round(r.bv_per_s, 3), "efficiency": round(r.efficiency, 3),
         "ended_ms": r.ended_ms} for rank, r in zip(ranks(rows), rows, strict=True)]})


async def healthz(request: Request) -> JSONResponse:
    state = request.app.state
    redis_ok = await state.store.ping()
    census = state.hub.census()
    if not redis_ok:
        state.metrics.redis_errors.labels("health").inc()
    body = {"ok": redis_ok and census.linked, "redis": redis_ok, "pubsub": census.linked,
            "rooms_local": census.rooms, "connections": sum(census.connections.values()),
            "stats": {**state.hub.stats, **state.hub.fanout.stats, **state.rooms.stats, **state.pairing.stats,
                      "pubsub_reconnects": state.hub.reconnects}}
    return JSONResponse(body, status_code=200 if body["ok"] else 503)


routes = [
    Route("/healthz", healthz),
    Route("/api/v1/guests", create_guest, methods=["POST"]),
    Route("/api/v1/guests/me/name", rename_guest, methods=["POST"]),
    Route("/api/v1/leaderboard", leaderboard),
    *api_games.routes,
    *api_pairing.routes,
    *api_play.routes,
]

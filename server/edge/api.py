"""HTTP JSON routes under ``/api/v1`` (see docs/PROTOCOL.md) and ``/healthz``.

Errors are ``{"error": {"code": ..., "message": ...}}`` with a fitting status: the room core's
refusal codes map through :data:`STATUS`. The caller's identity comes from
``Authorization: Bearer <token>`` (or ``?token=``); routes that change a game require it.
Fields are checked by type exactly: an integer is an int (not a float, a string or a boolean).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from engine import PRESETS, RULESETS, Abort, Resign
from engine.clock import Clock

from ..core.computer import computer
from ..core.decide import Claim, DeclineRematch, Join, Play, Refused
from ..core.pools import Pool, PoolError, pool_of
from ..core.ratings import clock_category
from ..core.room import Player, Room
from ..outage import redis_down
from ..store.analyses import NotAnalysed
from ..store.matchmaker import AlreadySeeking, Paired, Unpaired
from ..store.players import NameTaken
from ..store.results import MODES
from ..store.service import RoomRefused
from . import new_game
from .auth import BadName, bearer_token, validate_name
from .codec_msgpack import now_ms
from .limits import Limited, guard_of, too_many
from .wire import version_value

MAX_BODY = 4096
MAX_CLOCK_S = 3 * 3600
MAX_INCREMENT_S = 600
MAX_DAYS = 14
DEFAULT_WAIT_S = 30
MAX_WAIT_S = 60
MIN_COMPUTER_AFTER_S = 5

STATUS: dict[Refused, int] = {
    Refused.UNKNOWN_ROOM: 404,
    Refused.NOT_SEATED: 403,
    Refused.NOT_A_SEAT: 403,
    Refused.BUSY: 503,
}
"""HTTP status of a refusal; every other code (stale, room full, not your turn...) is a 409 conflict."""


def error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise ApiError(413, "too_large", f"the body is limited to {MAX_BODY} bytes")
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: absurdly deep nesting
        raise ApiError(400, "malformed", "the body is not JSON") from None
    if not isinstance(data, dict):
        raise ApiError(400, "malformed", "the body must be a JSON object")
    return data


def _player(request: Request, required: bool = True) -> Player | None:
    token = bearer_token(request.headers, request.query_params)
    player = request.app.state.auth.resolve(token) if token else None
    if token and player is None:
        raise ApiError(401, "bad_token", "the token is not valid")
    if required and player is None:
        raise ApiError(401, "no_token", "this needs a guest token: POST /api/v1/guests, then Authorization: Bearer <token>")
    return player


def _handles(fn: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """The route ``fn``, with its refusals answered as JSON errors."""

    async def endpoint(request: Request) -> Response:
        try:
            return await fn(request)
        except ApiError as exc:
            return error(exc.status, exc.code, exc.message)
        except RoomRefused as exc:
            return error(STATUS.get(exc.code, 409), exc.code.value, exc.message)
        except Limited as exc:
            return too_many(exc, json_body=True)

    endpoint.__name__ = fn.__name__
    return endpoint


def game_json(room: Room, viewer: int) -> dict[str, Any]:
    """The caller's view of a game (the same content as a websocket snapshot)."""
    return {"v": room.version, "you": viewer, "room": room.meta_data(now_ms()),
            "commitment": room.commitment, "view": room.view(viewer).to_data()}


def _number(value: Any) -> bool:
    return type(value) is int or (type(value) is float and not math.isnan(value))  # not a bool, not NaN


def _clock(value: Any) -> Clock | None:
    """``null`` (untimed), ``{"initial": s, "increment": s}`` or ``{"days": n}`` (correspondence)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ApiError(400, "bad_field", "\"clock\" must be null, {\"initial\": seconds, \"increment\": seconds} "
                       "or {\"days\": days per move}")
    if "days" in value:
        days = value["days"]
        if set(value) != {"days"} or type(days) is not int or not 1 <= days <= MAX_DAYS:
            raise ApiError(400, "bad_field", f"clock days must be a whole number of days per move in 1..{MAX_DAYS}")
        return Clock.correspondence(days)
    initial, increment = value.get("initial"), value.get("increment", 0)
    for name, x, top in (("initial", initial, MAX_CLOCK_S), ("increment", increment, MAX_INCREMENT_S)):
        if not _number(x) or not (0 <= x <= top):
            raise ApiError(400, "bad_field", f"clock {name} must be a number of seconds in 0..{top}")
    if initial <= 0:
        raise ApiError(400, "bad_field", "clock initial must be > 0")
    return Clock.new(int(initial * 1000), int(increment * 1000))


def _seed(state: Any, seed: Any) -> int | None:
    """A test-only deterministic layout (refused unless the test hooks are on)."""
    if seed is None:
        return None
    if not state.settings.test_hooks:
        raise ApiError(403, "test_hooks_off", "\"seed\" is a test-only hook and is disabled on this server")
    if type(seed) is not int:
        raise ApiError(400, "bad_field", "\"seed\" must be an integer")
    return seed


# ---------------------------------------------------------------------- routes


@_handles
async def create_guest(request: Request) -> JSONResponse:
    body = await _body(request)
    try:
        name = validate_name(body.get("name"))
    except BadName as exc:
        raise ApiError(400, "bad_field", f"\"name\": {exc}") from None
    guard_of(request).new_guest(request)
    try:
        player, token = await request.app.state.guests.create(name)
    except NameTaken:
        raise ApiError(409, "name_taken", f"another player is called {name!r} (names are unique, whatever "
                       "their case)") from None
    return JSONResponse({"id": player.id, "name": player.name, "token": token}, status_code=201)


@_handles
async def rename_guest(request: Request) -> JSONResponse:
    """``{"name"}``: the caller's new display name, and a token that carries it."""
    player = _player(request)
    body = await _body(request)
    try:
        name = validate_name(body.get("name"))
    except BadName as exc:
        raise ApiError(400, "bad_field", f"\"name\": {exc}") from None
    if name is None:
        raise ApiError(400, "bad_field", "\"name\" must be a non-empty name")
    try:
        player, token = await request.app.state.guests.rename(player, name)
    except NameTaken:
        raise ApiError(409, "name_taken", f"another player is called {name!r}") from None
    return JSONResponse({"id": player.id, "name": player.name, "token": token})


@_handles
async def create_game(request: Request) -> JSONResponse:
    state = request.app.state
    player = _player(request)
    body = await _body(request)
    ruleset = body.get("ruleset", "brettspielnetz")
    if not isinstance(ruleset, str):
        raise ApiError(400, "bad_field", "\"ruleset\" must be a string")
    if ruleset not in RULESETS:
        raise ApiError(400, "bad_request", f"unknown ruleset; use one of {sorted(RULESETS)}")
    seat = body.get("seat", "random")
    if not (seat == "random" or (type(seat) is int and seat in (0, 1))):
        raise ApiError(400, "bad_field", "\"seat\" must be \"random\", 0 or 1")
    seed = _seed(state, body.get("seed"))
    clock = _clock(body.get("clock"))
    opponent = _opponent(body.get("opponent"))
    rated = body.get("rated", False)
    if type(rated) is not bool:
        raise ApiError(400, "bad_field", "\"rated\" must be true or false")
    if rated and (opponent is not None or clock_category(clock) is None):
        raise ApiError(400, "bad_field", "a rated game is between two people and has a clock")
    guard_of(request).new_game(request)
    if seat == "random":
        seat = new_game.random_seat(2)
    players: list[Player | None] = [opponent, opponent]
    players[seat] = await state.guests.current(player)
    room = await state.rooms.create(new_game.duel(ruleset, seed), tuple(players), clock, rated=rated)
    try:  # listed in the lobby: an open challenge while its creator is connected, then a live game
        await state.store.list_room(room.id, room.created_ms)
    except Exception as exc:
        redis_down(state.metrics, "list", exc, room=room.id)
    return JSONResponse({"id": room.id, "seat": seat, **game_json(room, seat)}, status_code=201)


def _opponent(value: Any) -> Player | None:
    """``null`` (a person will join) or ``{"computer": 1|2|3}``."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"computer"}:
        raise ApiError(400, "bad_field", "\"opponent\" must be null or {\"computer\": 1, 2 or 3}")
    try:
        return computer(value["computer"])
    except ValueError as exc:
        raise ApiError(400, "bad_field", str(exc)) from None


@_handles
async def create_solo(request: Request) -> JSONResponse:
    """A classic single-player game: ``{"width", "height", "mines", "no_guess"}`` or
    ``{"preset": "beginner"|"intermediate"|"expert", "no_guess"}``."""
    state = request.app.state
    player = _player(request)
    body = await _body(request)
    preset = body.get("preset")
    if preset is not None:
        if preset not in PRESETS:
            raise ApiError(400, "bad_field", f"\"preset\" must be one of {sorted(PRESETS)}")
        width, height, mines = PRESETS[preset]
    else:
        width, height, mines = body.get("width", 9), body.get("height", 9), body.get("mines", 10)
    no_guess = body.get("no_guess", False)
    if type(no_guess) is not bool:
        raise ApiError(400, "bad_field", "\"no_guess\" must be true or false")
    seed = _seed(state, body.get("seed"))
    try:
        game = new_game.classic(width, height, mines, no_guess, seed)
    except ValueError as exc:
        raise ApiError(400, "bad_field", str(exc)) from None
    guard_of(request).new_game(request)
    room = await state.rooms.create(game, (await state.guests.current(player),))
    return JSONResponse({"id": room.id, "seat": 0, **game_json(room, 0)}, status_code=201)


@_handles
async def leaderboard(request: Request) -> JSONResponse:
    """``?preset=&mode=classic|no-guess&period=all|today``: the fastest wins, best first."""
    q = request.query_params
    preset, mode, period = q.get("preset", "beginner"), q.get("mode", "classic"), q.get("period", "all")
    if preset not in PRESETS or mode not in MODES or period not in ("all", "today"):
        raise ApiError(400, "bad_field", f"preset in {sorted(PRESETS)}, mode in {list(MODES)}, period all|today")
    rows = await request.app.state.rooms.results.leaderboard(preset, mode, period)
    return JSONResponse({"preset": preset, "mode": mode, "period": period, "results": [
        {"rank": i + 1, "game": r.room, "player": {"id": r.player_id, "name": r.name}, "time_ms": r.time_ms,
         "three_bv": r.three_bv, "bv_per_s": round(r.bv_per_s, 3), "efficiency": round(r.efficiency, 3),
         "ended_ms": r.ended_ms} for i, r in enumerate(rows)]})


@_handles
async def layout(request: Request) -> JSONResponse:
    """Test-only (``MINEDUEL_TEST_HOOKS``): a game's mines, to play it by script."""
    if not request.app.state.settings.test_hooks:
        raise ApiError(403, "test_hooks_off", "this is a test-only hook and is disabled on this server")
    game = (await request.app.state.rooms.load(request.path_params["id"])).game
    mines = getattr(game, "mines", None)
    if mines is None and hasattr(game, "setup"):
        mines = getattr(game.setup, "mines", None)
    return JSONResponse({"mines": sorted(list(m) for m in mines) if mines is not None else None})


@_handles
async def pair(request: Request) -> Response:
    """Quick pairing: ``{"ruleset", "clock": {"initial", "increment"} | {"days"}, "rated",
    "wait_s", "computer_after_s"}``. Answers ``200 {"game", "seat"}`` once paired, ``204``
    after ``wait_s`` with the seek gone, or (``computer_after_s``: nobody came that long) ``200
    {"game", "seat", "computer": true}``; a client that closes the request ends its seek."""
    state = request.app.state
    player = _player(request)
    body = await _body(request)
    pool, wait_s, computer_after_s = _seek_of(body)
    guard_of(request).new_game(request)
    me = await state.guests.current(player)
    try:
        paired = await _unless_disconnected(request, state.pairing.seek(me, pool, computer_after_s or wait_s))
    except AlreadySeeking as exc:
        raise ApiError(409, exc.code, "you are seeking already (one seek at a time, on any server)") from None
    if isinstance(paired, Paired):
        return JSONResponse({"game": paired.room_id, "seat": paired.seat})
    if paired is Unpaired.TIMED_OUT and computer_after_s is not None:
        room, seat = await new_game.computer_game(state.rooms, pool, me)
        return JSONResponse({"game": room.id, "seat": seat, "computer": True})
    return Response(status_code=204)


def _seek_of(body: dict[str, Any]) -> tuple[Pool, int, int | None]:
    """A seek's pool, ``wait_s`` and ``computer_after_s`` (``None``: never), or the refusal."""
    if "clock" not in body:
        raise ApiError(400, "bad_field", '"clock" is required: {"initial": s, "increment": s} or {"days": n}')
    wait_s = body.get("wait_s", DEFAULT_WAIT_S)
    if type(wait_s) is not int or not 1 <= wait_s <= MAX_WAIT_S:
        raise ApiError(400, "bad_field", f'"wait_s" must be a whole number of seconds in 1..{MAX_WAIT_S}')
    after = body.get("computer_after_s")
    if after is not None and (type(after) is not int or not MIN_COMPUTER_AFTER_S <= after <= wait_s):
        raise ApiError(400, "bad_field", f'"computer_after_s" must be a whole number of seconds in '
                       f'{MIN_COMPUTER_AFTER_S}..wait_s ({wait_s})')
    try:
        pool = pool_of(body.get("ruleset", "brettspielnetz"), body["clock"], body.get("rated", False))
    except PoolError as exc:
        raise ApiError(400, exc.code, str(exc)) from None
    return pool, wait_s, after


T = TypeVar("T")
GONE = object()
"""What :func:`_unless_disconnected` returns when the client left first."""


async def _unless_disconnected(request: Request, work: Awaitable[T]) -> T | object:
    """``work``'s result, or :data:`GONE` as soon as the client closes the connection (then
    ``work`` is cancelled: its own cleanup runs). Starlette does not cancel a handler whose
    client left; the server says so on ``receive`` (``http.disconnect``), which after the body
    was read waits for exactly that: no polling."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_client_gone(request))
    try:
        await asyncio.wait((task, gone), return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # the server is stopping: the work stops too
        task.cancel()
        raise
    finally:
        gone.cancel()
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.wait((task,))
    if not task.cancelled():
        task.exception()  # retrieved: nobody is left to answer, and a failure was logged where it happened
    return GONE


async def _client_gone(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        await asyncio.sleep(0.1)  # a stray body message (none is due after the body): never a busy loop


@_handles
async def join_game(request: Request) -> JSONResponse:
    player = await request.app.state.guests.current(_player(request))
    room = await request.app.state.rooms.act(request.path_params["id"], player, Join())
    return JSONResponse({"id": room.id, "seat": room.seat_of(player), "v": room.version})


@_handles
async def get_game(request: Request) -> JSONResponse:
    player = _player(request, required=False)
    room = await request.app.state.rooms.load(request.path_params["id"])
    return JSONResponse(game_json(room, room.viewer_of(player)))


@_handles
async def get_record(request: Request) -> JSONResponse:
    return JSONResponse(await request.app.state.rooms.record(request.path_params["id"]))


@_handles
async def get_analysis(request: Request) -> JSONResponse:
    """After the end: every move's odds and each player's summary (docs/PROTOCOL.md, "Analysis")."""
    try:
        found = await request.app.state.rooms.analysis(request.path_params["id"])
    except NotAnalysed as exc:
        raise ApiError(409 if exc.code == Refused.NOT_OVER.value else 404, exc.code, exc.message) from None
    return JSONResponse(found.to_data())


@_handles
async def rematch(request: Request) -> JSONResponse:
    """Accept the opponent's rematch offer (``201``: the new game) or offer one (``202``: the
    old game, now carrying the offer, which the opponent accepts the same way)."""
    player = _player(request)
    game_id = request.path_params["id"]
    room = await request.app.state.rooms.rematch(game_id, player, new_game.rematch_of)
    if room.id == game_id:
        return JSONResponse({"id": room.id, "offered": True, "v": room.version}, status_code=202)
    return JSONResponse({"id": room.id, "seat": room.seat_of(player), "v": room.version}, status_code=201)


@_handles
async def decline_rematch(request: Request) -> JSONResponse:
    """Decline the opponent's rematch offer, or withdraw one's own."""
    room = await request.app.state.rooms.act(request.path_params["id"], _player(request), DeclineRematch())
    return JSONResponse({"id": room.id, "v": room.version})


@_handles
async def resign(request: Request) -> JSONResponse:
    """``{"v": version}`` (optional): checked like a move's (a stale resignation is refused)."""
    return await _end_by(request, Resign())


@_handles
async def abort(request: Request) -> JSONResponse:
    """``{"v": version}`` (optional): the game called off without a result, until both have moved."""
    return await _end_by(request, Abort())


async def _end_by(request: Request, move: Resign | Abort) -> JSONResponse:
    player = _player(request)
    body = await _body(request)
    seen = body.get("v")
    if seen is not None and version_value(seen) is None:
        raise ApiError(400, "bad_field", "\"v\" must be the version you saw (an integer), or left out")
    room = await request.app.state.rooms.act(request.path_params["id"], player, Play(move), seen)
    return JSONResponse({"id": room.id, "v": room.version})


@_handles
async def claim(request: Request) -> JSONResponse:
    """``{"result": "win"|"draw"}``: the opponent left a live game more than a minute ago."""
    state = request.app.state
    player = _player(request)
    body = await _body(request)
    if body.get("result") not in ("win", "draw"):
        raise ApiError(400, "bad_field", "\"result\" must be \"win\" or \"draw\"")
    room_id = request.path_params["id"]
    room = await state.rooms.latest(room_id)
    seat = room.seat_of(player)
    away = await state.hub.presence.away_since(room_id, 1 - seat) if seat in (0, 1) else None
    room = await state.rooms.act(room_id, player, Claim(body["result"] == "draw", away))
    return JSONResponse({"id": room.id, "v": room.version})


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
    Route("/api/v1/games", create_game, methods=["POST"]),
    Route("/api/v1/solo", create_solo, methods=["POST"]),
    Route("/api/v1/leaderboard", leaderboard),
    Route("/api/v1/pairing", pair, methods=["POST"]),
    Route("/api/v1/games/{id}/layout", layout),
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

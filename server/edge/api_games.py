"""Making games over the API: a duel (``POST /api/v1/games``: rules, seat, clock, an opponent
that is a person or the computer, rated or casual) and a classic solo game
(``POST /api/v1/solo``), plus the test-only layout hook; docs/PROTOCOL.md."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from engine import PRESETS, RULESETS
from engine.clock import Clock

from ..core.clock_terms import BadClock, clock_of
from ..core.computer import computer
from ..core.ratings import clock_category
from ..core.room import Player
from . import new_game
from .json_edge import ApiError, game_json, handles, player_of, read_body
from .limits import guard_of


def _clock(value: Any) -> Clock | None:
    """The request's clock (:func:`server.core.clock_terms.clock_of`), or ``bad_field``."""
    try:
        return clock_of(value)
    except BadClock as exc:
        raise ApiError(400, "bad_field", str(exc)) from None


def _seed(state: Any, seed: Any) -> int | None:
    """A test-only deterministic layout (refused unless the test hooks are on)."""
    if seed is None:
        return None
    if not state.settings.test_hooks:
        raise ApiError(403, "test_hooks_off", "\"seed\" is a test-only hook and is disabled on this server")
    if type(seed) is not int:
        raise ApiError(400, "bad_field", "\"seed\" must be an integer")
    return seed


@handles
async def create_game(request: Request) -> JSONResponse:
    state = request.app.state
    player = player_of(request)
    body = await read_body(request)
    ruleset = body.get("ruleset", "brettspielnetz")
    if not isinstance(ruleset, str):
        raise ApiError(400, "bad_field", "\"ruleset\" must be a string")
    if ruleset not in RULESETS:
        raise ApiError(400, "bad_field", f"unknown ruleset; use one of {sorted(RULESETS)}")
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
    await state.rooms.aftermath.list(room)  # in the lobby: an open challenge while its creator is connected, then a live game
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


BOARD_FIELDS = frozenset({"width", "height", "mines"})
"""A custom board's fields in ``POST /api/v1/solo`` (each defaults to Beginner's)."""


@handles
async def create_solo(request: Request) -> JSONResponse:
    """A classic single-player game: ``{"width", "height", "mines", "no_guess"}`` or
    ``{"preset": "beginner"|"intermediate"|"expert", "no_guess"}``."""
    state = request.app.state
    player = player_of(request)
    body = await read_body(request)
    preset = body.get("preset")
    if preset is not None:
        if type(preset) is not str or preset not in PRESETS:
            raise ApiError(400, "bad_field", f"\"preset\" must be one of {sorted(PRESETS)}")
        if not BOARD_FIELDS.isdisjoint(body):  # which would win is a guess: refused, not guessed
            raise ApiError(400, "bad_field", "name a preset or a board's width, height and mines, not both")
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
    guard_of(request).new_game(request, classic=True)
    room = await state.rooms.create(game, (await state.guests.current(player),))
    return JSONResponse({"id": room.id, "seat": 0, **game_json(room, 0)}, status_code=201)


@handles
async def layout(request: Request) -> JSONResponse:
    """Test-only (``MINEDUEL_TEST_HOOKS``): a game's mines, to play it by script."""
    if not request.app.state.settings.test_hooks:
        raise ApiError(403, "test_hooks_off", "this is a test-only hook and is disabled on this server")
    game = (await request.app.state.rooms.load(request.path_params["id"])).game
    mines = getattr(game, "mines", None)
    if mines is None and hasattr(game, "setup"):
        mines = getattr(game.setup, "mines", None)
    return JSONResponse({"mines": sorted(list(m) for m in mines) if mines is not None else None})


routes = [
    Route("/api/v1/games", create_game, methods=["POST"]),
    Route("/api/v1/solo", create_solo, methods=["POST"]),
    Route("/api/v1/games/{id}/layout", layout),
]

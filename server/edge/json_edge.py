"""How a JSON route under ``/api/v1`` reads its request and answers (docs/PROTOCOL.md).

Errors are ``{"error": {"code": ..., "message": ...}}`` with a fitting status: the room core's
refusal codes map through :data:`STATUS`. The caller's identity comes from
``Authorization: Bearer <token>`` (or ``?token=``); routes that change a game require it.
Fields are checked by type exactly: an integer is an int (not a float, a string or a boolean).
Every route module of the API (``api_*.py``, ``players_api.py``) is built on these.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..core.commands import Refused
from ..core.room import Player, Room
from ..store.service import RoomRefused
from .auth import bearer_token
from .codec_msgpack import now_ms
from .limits import Limited, too_many

MAX_BODY = 4096

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


async def read_body(request: Request) -> dict[str, Any]:
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


def player_of(request: Request, required: bool = True) -> Player | None:
    token = bearer_token(request.headers, request.query_params)
    player = request.app.state.auth.resolve(token) if token else None
    if token and player is None:
        raise ApiError(401, "bad_token", "the token is not valid")
    if required and player is None:
        raise ApiError(401, "no_token", "this needs a guest token: POST /api/v1/guests, then Authorization: Bearer <token>")
    return player


def handles(fn: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
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

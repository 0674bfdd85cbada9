"""The programmatic websocket ``/api/v1/games/{id}/ws``: msgpack frames both ways.

Protocol: docs/PROTOCOL.md. The token comes from ``Authorization: Bearer`` or ``?token=``;
without one the socket is a spectator's. A page of another site may not open it (``Origin``
checked before the upgrade: 403; see :mod:`server.edge.admission`). The first frame is a
snapshot; the hub sends every later change (with ``?follow=rematch`` the socket follows its
game to the rematch: :mod:`server.edge.follow`). Client frames are parsed once by
:mod:`server.edge.wire`; a bad frame gets an error frame (the socket stays open), an
oversized frame or a flood closes it with 1008.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket

from engine import Abort, Resign

from ..core.commands import Claim, DeclineRematch, Play, Refused
from ..core.room import Player
from ..outage import UNAVAILABLE, UNAVAILABLE_MESSAGE, redis_down
from ..store.service import RoomRefused
from . import new_game, wire
from .admission import admitted
from .auth import bearer_token
from .follow import Whereabouts
from .frames import client_frames
from .limits import Limited, guard_of
from .outbox import Outbox
from .peer import client_ip
from .raw_send import frame_sender, frame_writer

log = logging.getLogger("mineduel.ws")

POLICY = 1008
SERVER_ERROR = 1011
FOLLOW_HEADER = b"x-mineduel-follow"
"""In the upgrade's answer to a socket opened with ``?follow=rematch``: the server will move it."""

WIRE_CODES = {Refused.NOT_SEATED: "spectator"}
"""Refusal codes that this socket names differently (docs/PROTOCOL.md); the rest keep theirs."""


def wire_code(code: Refused) -> str:
    return WIRE_CODES.get(code, code.value)


async def _game_socket(websocket: WebSocket) -> None:
    state = websocket.app.state
    settings, rooms, hub = state.settings, state.rooms, state.hub
    codec = state.codecs["msgpack"]
    room_id = websocket.path_params["id"]
    token = bearer_token(websocket.headers, websocket.query_params)
    player = state.auth.resolve(token) if token else None
    follow = websocket.query_params.get("follow") == "rematch"
    await websocket.accept(headers=[(FOLLOW_HEADER, b"rematch")] if follow else None)
    websocket.scope["mineduel.player"] = player.id if player else None
    if token and player is None:
        await websocket.send_bytes(codec.error("bad_token", "the token is not valid"))
        await websocket.close(POLICY, "bad token")
        return
    try:
        room = await rooms.latest(room_id)
    except RoomRefused as exc:
        await websocket.send_bytes(codec.error(exc.code.value, exc.message))
        await websocket.close(POLICY, "unknown game")
        return
    except Exception as exc:
        if not redis_down(state.metrics, "load", exc, room=room_id):
            raise
        await websocket.send_bytes(codec.error(UNAVAILABLE, UNAVAILABLE_MESSAGE))
        await websocket.close(SERVER_ERROR, "service interrupted")  # reconnect with backoff
        return

    async def close(code: int, reason: str) -> None:
        await websocket.close(code, reason)

    box = Outbox(room.viewer_of(player), "msgpack", player.id if player else None, frame_sender(websocket), close,
                 maxsize=settings.send_queue, inline=settings.inline_send, write_now=frame_writer(websocket))
    writer = asyncio.create_task(box.run())
    where = Whereabouts(hub, box, room_id, follow)
    source = client_ip(websocket, settings)  # (once: what a costly move's share of the board worker is counted by)
    try:
        await hub.attach(room_id, box)
        where.attached()
        async for frame in client_frames(websocket, settings, box, solo=room.kind == "classic"):
            started = time.perf_counter()
            parsed = wire.parse_msgpack(frame)
            if isinstance(parsed, wire.BadMessage):
                state.metrics.bad_messages.inc()
                box.send(codec.error(parsed.code, parsed.message, box.version))
                continue
            await _handle(parsed, player, box, where.room_id, state, started, websocket, source)
    except Exception as exc:
        await box.fail(exc, where.room_id, state.metrics, websocket.send_bytes,
                       codec.error(UNAVAILABLE, UNAVAILABLE_MESSAGE, box.version))
    finally:
        await where.leave()
        await box.finish(writer)


async def _handle(msg: wire.ClientMessage, player: Player | None, box: Outbox, room_id: str, state: Any,
                  started: float, websocket: WebSocket, source: str) -> None:
    """Play ``msg`` for the socket's player. Nothing comes back on success (the update reaches
    this socket through the hub like every other); a refusal is one error frame, followed by a
    fresh snapshot after a stale move, or once Redis answers again after an outage. A rematch
    that makes the new game spends a game creation of the socket's address (``websocket``):
    refused, ``rate_limited``, nothing made. ``source``: the socket's address (a no-guess first
    click's share of the board worker)."""
    codec, hub = state.codecs["msgpack"], state.hub
    try:
        if isinstance(msg, wire.ClaimMessage):
            away = await hub.presence.away_since(room_id, 1 - box.viewer) if box.viewer in (0, 1) else None
            await state.rooms.act(room_id, player, Claim(msg.draw, away))
            return
        if isinstance(msg, wire.RematchMessage):  # what the HTTP calls do; the updates tell the outcome
            if msg.decline:
                await state.rooms.act(room_id, player, DeclineRematch())
            else:
                make = guard_of(websocket).charged(websocket, new_game.rematch_of)
                await state.rooms.rematch(room_id, player, make)
            return
        move = msg.move if isinstance(msg, wire.MoveMessage) else Abort() if isinstance(msg, wire.AbortMessage) \
            else Resign()
        await state.rooms.act(room_id, player, Play(move), msg.v, started, source=source)
        return
    except RoomRefused as exc:
        box.send(codec.error(wire_code(exc.code), exc.message, box.version))
        if exc.code is Refused.STALE and exc.room is not None:
            hub.send_snapshot(box, exc.room)
    except Limited as exc:  # a rematch over the address's new-game budget; the socket stays open
        box.send(codec.error("rate_limited", str(exc), box.version))
    except Exception as exc:  # Redis unreachable: the move is refused (the commit is all or nothing)
        if not redis_down(state.metrics, "move", exc, room=room_id, player=box.player_id):
            raise
        state.metrics.unavailable.inc()
        box.send(codec.error(UNAVAILABLE, UNAVAILABLE_MESSAGE, box.version))
        hub.refresh_later(room_id, box)  # a snapshot follows once Redis answers: it shows what happened


game_socket = admitted(_game_socket)

routes = [WebSocketRoute("/api/v1/games/{id}/ws", game_socket)]

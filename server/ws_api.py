"""The programmatic websocket ``/api/v1/games/{id}/ws``: msgpack frames both ways.

Protocol: docs/PROTOCOL.md. The token comes from ``Authorization: Bearer`` or ``?token=``;
without one the socket is a spectator's. A page of another site may not open it (``Origin``
checked before the upgrade: 403; see :mod:`server.guard`). The first frame is a snapshot; the hub sends every
later change. Client frames are parsed once by :mod:`server.wire`; a bad frame gets an error
frame (the socket stays open), an oversized frame or a flood closes it with 1008.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket

from engine import SPECTATOR, Explore, IllegalMove, Mark

from . import wire
from .auth import bearer_token
from .fanout import Outbox, frame_sender
from .guard import admitted, client_frames
from .ops import UNAVAILABLE, UNAVAILABLE_MESSAGE, redis_down
from .room import Room
from .rooms import RoomError, StaleVersion, UnknownRoom

log = logging.getLogger("mineduel.ws")

POLICY = 1008
SERVER_ERROR = 1011


async def _game_socket(websocket: WebSocket) -> None:
    state = websocket.app.state
    settings, rooms, hub = state.settings, state.rooms, state.hub
    codec = state.codecs["msgpack"]
    room_id = websocket.path_params["id"]
    token = bearer_token(websocket.headers, websocket.query_params)
    player = state.auth.resolve(token) if token else None
    await websocket.accept()
    websocket.scope["mineduel.player"] = player.id if player else None
    if token and player is None:
        await websocket.send_bytes(codec.error("bad_token", "the token is not valid"))
        await websocket.close(POLICY, "bad token")
        return
    try:
        room = await rooms.load(room_id)
    except UnknownRoom as exc:
        await websocket.send_bytes(codec.error(exc.code, exc.message))
        await websocket.close(POLICY, "unknown game")
        return
    except Exception as exc:
        if not redis_down(hub.metrics, "load", exc, room=room_id):
            raise
        await websocket.send_bytes(codec.error(UNAVAILABLE, UNAVAILABLE_MESSAGE))
        await websocket.close(SERVER_ERROR, "service interrupted")  # reconnect with backoff
        return
    seat = room.seat_of(player.id) if player else None

    async def close(code: int, reason: str) -> None:
        await websocket.close(code, reason)

    box = Outbox(SPECTATOR if seat is None else seat, "msgpack", player.id if player else None,
                 frame_sender(websocket), close, maxsize=settings.send_queue)
    writer = asyncio.create_task(box.run())
    try:
        await hub.attach(room_id, box)
        async for frame in client_frames(websocket, settings, box):
            parsed = wire.parse_msgpack(frame)
            if isinstance(parsed, wire.BadMessage):
                hub.metrics.bad_messages.inc()
                box.send(codec.error(parsed.code, parsed.message, box.version))
                continue
            await _handle(parsed, box, room_id, rooms, hub, codec)
    except Exception as exc:
        await box.fail(exc, room_id, hub.metrics, websocket.send_bytes,
                       codec.error(UNAVAILABLE, UNAVAILABLE_MESSAGE, box.version))
    finally:
        await hub.detach(room_id, box)
        await box.finish(writer)


async def _handle(msg: wire.ClientMessage, box: Outbox, room_id: str, rooms, hub, codec) -> None:
    """Play ``msg`` for the box's seat. Nothing comes back on success (the update reaches this
    socket through the hub like every other); a refusal is one error frame, followed by a fresh
    snapshot after a stale move, or once Redis answers again after an outage."""
    fresh: Room | None = None
    outage = False
    seat = box.viewer
    try:
        if seat == SPECTATOR:
            code, message = "spectator", "spectators cannot move; join the game to play"
        elif isinstance(msg, wire.ResignMessage):
            await rooms.resign(room_id, seat)
            return
        else:
            move = Explore(msg.cell) if msg.action == "explore" else Mark(msg.cell)
            await rooms.play(room_id, seat, move, msg.v)
            return
    except StaleVersion as exc:
        code, message, fresh = exc.code, exc.message, exc.room
    except RoomError as exc:  # time_out, not_playing, busy, ...
        code, message = exc.code, exc.message
    except IllegalMove as exc:
        code, message = exc.code.value, exc.message
    except Exception as exc:  # Redis unreachable: the move is refused (the commit is all or nothing)
        if not redis_down(hub.metrics, "move", exc, room=room_id, player=box.player_id):
            raise
        hub.metrics.unavailable.inc()
        code, message, outage = UNAVAILABLE, UNAVAILABLE_MESSAGE, True
    box.send(codec.error(code, message, box.version))
    if fresh is not None:
        hub.send_snapshot(box, fresh)
    if outage:
        hub.refresh_later(room_id, box)  # a snapshot follows once Redis answers: it shows what happened


game_socket = admitted(_game_socket)

routes = [WebSocketRoute("/api/v1/games/{id}/ws", game_socket)]

"""The lobby websocket (``/lobby/ws``): the home page's live sections, pushed as they change.

The page connects with the htmx ws extension; every frame is the changed sections of
:mod:`server.web.lobby` (open challenges, live games, counts), swapped by id. The socket sends
nothing the page needs to act on: clients may send frames (the extension never does here),
which are read within the usual limits and ignored. One :class:`~server.web.lobby_feed.LobbyFeed`
per process reads and renders the lobby for all of its sockets.
"""

from __future__ import annotations

import asyncio

from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket

from engine import SPECTATOR

from ..web.language import lang_of
from ..web.lobby_feed import LobbyWatcher
from ..web.site import web_of
from .admission import admitted
from .frames import client_frames
from .outbox import Outbox
from .raw_send import frame_sender, frame_writer


async def _lobby_socket(websocket: WebSocket) -> None:
    state = websocket.app.state
    settings, feed = state.settings, state.lobby
    player = web_of(websocket).player_of(websocket)
    await websocket.accept()

    async def close(code: int, reason: str) -> None:
        await websocket.close(code, reason)

    conn = Outbox(SPECTATOR, "html", player.id if player else None, frame_sender(websocket, text=True), close,
                  maxsize=settings.send_queue, inline=settings.inline_send,
                  write_now=frame_writer(websocket, text=True))
    writer = asyncio.create_task(conn.run(), name="ws-lobby-writer")
    watcher = LobbyWatcher(conn.player_id, conn.send, lang_of(websocket))
    feed.watch(watcher)
    try:
        async for _frame in client_frames(websocket, settings, conn):
            pass  # nothing to answer: the lobby is read-only over this socket
    finally:
        feed.unwatch(watcher)
        await conn.finish(writer)


lobby_socket = admitted(_lobby_socket)

routes = [WebSocketRoute("/lobby/ws", lobby_socket)]

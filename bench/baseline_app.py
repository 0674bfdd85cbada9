"""The load bench's baseline: a minimal Starlette websocket fan-out app (no Redis, no game, no disk).

Clients connect to ``/rooms/{id}/ws``. Each message a client sends is sent, the same bytes,
to every *other* socket of that room, one after the other. On connect the app sends the
socket one hello frame (msgpack ``{"t": "snapshot", "v": 0}``), so that the load client can
wait for "registered in its room" exactly as it waits for our server's snapshot; nothing else
is ever sent unasked.

    python bench/baseline_app.py        # PORT, HOST, WORKERS, ... as for ``python -m server``

It is served by uvicorn with *exactly* the arguments ``python -m server`` passes (same
websocket implementation, ping interval and timeout, max frame size, deflate, loop, HTTP
parser, workers): :func:`main` runs ``server.__main__.main`` with ``uvicorn.run`` intercepted
and only the application swapped, and with ``REDIS_URL`` set (never connected to) so that no
embedded Valkey is started. Whatever ``server/__main__.py`` changes in how uvicorn runs, the
baseline follows. Its rooms live in one process's memory, so it is meant for one process
(``bench/load.py`` runs it so even when our server gets ``WORKERS=2``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

HELLO = b"\x82\xa1t\xa8snapshot\xa1v\x00"  # msgpack {"t": "snapshot", "v": 0}

ROOMS: dict[str, set[WebSocket]] = {}


async def room_ws(websocket: WebSocket) -> None:
    room_id = websocket.path_params["id"]
    await websocket.accept()
    room = ROOMS.setdefault(room_id, set())
    room.add(websocket)
    try:
        await websocket.send_bytes(HELLO)
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            data = message.get("bytes")
            if data is None:
                data = message.get("text", "").encode()
            for other in tuple(room):
                if other is not websocket:
                    try:
                        await other.send_bytes(data)
                    except (WebSocketDisconnect, RuntimeError, OSError):
                        pass  # that socket is closing; its own handler removes it
    except WebSocketDisconnect:
        pass
    finally:
        room.discard(websocket)
        if not room:
            ROOMS.pop(room_id, None)


app = Starlette(routes=[WebSocketRoute("/rooms/{id}/ws", room_ws)])


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    import uvicorn

    import server.__main__ as server_main

    real_run = uvicorn.run

    def run_baseline(_app: object, **kwargs: object) -> None:
        kwargs.pop("factory", None)
        print("baseline: uvicorn settings " + ", ".join(f"{k}={v!r}" for k, v in sorted(kwargs.items())), flush=True)
        real_run("bench.baseline_app:app", **kwargs)  # type: ignore[arg-type]

    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:1/0")  # not used: only keeps the embedded Valkey off
    server_main.uvicorn.run = run_baseline  # type: ignore[assignment]
    return server_main.main()


if __name__ == "__main__":
    sys.exit(main())

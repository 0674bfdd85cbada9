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

``BASELINE_STORE=1`` (``load.py play --with-store``) adds what a durable move costs in Redis
and nothing else of ours: the embedded Valkey is started as ``python -m server`` starts it
(``appendfsync always``), and each message is first committed with our own ``COMMIT`` script
through our own lean clients (the same compare-and-set, a stored state of a room's size, the
message appended to the room's log, a clock deadline, the message published on the room's
channel only if somebody besides this process listens, which it tells the script by naming its
link channel for a room whose subscription is confirmed), then sent to the room's other
sockets from the script's reply when nothing was published, else when this process's pub/sub
subscription delivers it, as our fan-out does (docs/ARCHITECTURE.md, "A move, end to end",
steps 5 and 6). No game, no views, no checks: the distance from this app to ours is our own
code's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

HELLO = b"\x82\xa1t\xa8snapshot\xa1v\x00"  # msgpack {"t": "snapshot", "v": 0}

ROOMS: dict[str, set[WebSocket]] = {}

STORED_STATE = bytes(range(256)) * 18
"""What the store mode writes as a room's state each message: 4.5 KB, the size of our packed
room in a game of 20-60 moves (docs/PERFORMANCE.md: 3.9-5 KB)."""


async def fan_out(room: set[WebSocket], sender: WebSocket | None, data: bytes) -> None:
    """The same bytes to every socket of ``room`` but the sender, one after the other (the plain
    mode's handler calls it for each message, the store mode's reader for each publication)."""
    for other in tuple(room):
        if other is not sender:
            try:
                await other.send_bytes(data)
            except (WebSocketDisconnect, RuntimeError, OSError):
                pass  # that socket is closing; its own handler removes it


class Store:
    """``BASELINE_STORE=1``: each message committed and published through the embedded Valkey
    (our ``COMMIT`` script, our lean clients), fanned out when its publication comes back."""

    def __init__(self, url: str) -> None:
        from server.store.link import open_link
        from server.store.pubsub import open_pubsub
        from server.store.scripts import COMMIT

        self.script = COMMIT
        self.link = open_link(url)
        self.pubsub = open_pubsub(url)
        self.link_channel = f"link:baseline-{os.getpid()}"
        self.live: set[str] = set()  # rooms whose subscription is confirmed
        self.keys: dict[str, list[str]] = {}  # a room's: state, log, channel, clocks, analysis
        self.versions: dict[str, int] = {}
        self.senders: dict[int, WebSocket] = {}
        self.reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.pubsub.connect()
        await self.pubsub.subscribe(self.link_channel)
        self.reader = asyncio.create_task(self._read())

    async def stop(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
        await self.pubsub.close()
        await self.link.aclose()

    async def joined(self, room_id: str, websocket: WebSocket) -> None:
        self.senders[id(websocket)] = websocket
        if room_id not in self.keys:
            tag = f"b:{{{room_id}}}"
            self.keys[room_id] = [f"{tag}:state", f"{tag}:log", f"{tag}:events", "b:clocks", f"{tag}:analysis"]
            await self.pubsub.subscribe(f"{tag}:events")

    def left(self, room_id: str, websocket: WebSocket) -> None:
        self.senders.pop(id(websocket), None)

    async def commit(self, room_id: str, websocket: WebSocket, data: bytes) -> None:
        """Our commit's Redis work for one message: the compare-and-set on the room's version (taken
        here before the await, so commands of one room reach Valkey in order), state, log, clock,
        publish (the message tagged with its sender, whom the fan-out skips)."""
        version = self.versions.get(room_id, 0)
        self.versions[room_id] = version + 1
        tagged = id(websocket).to_bytes(8, "little") + data
        own = self.link_channel if room_id in self.live else ""
        args: list[bytes | str | int] = [str(version) if version else "-1", str(version + 1), STORED_STATE, data,
                                         tagged, room_id, int(time.time() * 1000) + 60_000, "", own]
        reply = await self.link.evalsha(self.script, self.keys[room_id], args)
        room = ROOMS.get(room_id)
        if reply[0] and not reply[2] and room is not None:  # nobody else listens: no message
            await fan_out(room, websocket, data)

    async def _read(self) -> None:
        while True:
            kind, chan, payload = await self.pubsub.read()
            if kind == "subscribe" and chan != self.link_channel:
                self.live.add(chan.removeprefix("b:{").removesuffix("}:events"))
            if kind != "message" or not isinstance(payload, bytes):
                continue
            sender = self.senders.get(int.from_bytes(payload[:8], "little"))
            room = ROOMS.get(chan.removeprefix("b:{").removesuffix("}:events"))
            if room is not None:
                await fan_out(room, sender, payload[8:])


STORE: Store | None = None


@contextlib.asynccontextmanager
async def lifespan(_app: Starlette) -> AsyncIterator[None]:
    global STORE
    if os.environ.get("BASELINE_STORE") == "1":
        STORE = Store(os.environ["REDIS_URL"])
        await STORE.start()
    try:
        yield
    finally:
        if STORE is not None:
            await STORE.stop()


async def room_ws(websocket: WebSocket) -> None:
    room_id = websocket.path_params["id"]
    await websocket.accept()
    room = ROOMS.setdefault(room_id, set())
    room.add(websocket)
    store = STORE
    try:
        if store is not None:
            await store.joined(room_id, websocket)
        await websocket.send_bytes(HELLO)
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            data = message.get("bytes")
            if data is None:
                data = message.get("text", "").encode()
            if store is None:
                await fan_out(room, websocket, data)
            else:
                await store.commit(room_id, websocket, data)
    except WebSocketDisconnect:
        pass
    finally:
        room.discard(websocket)
        if store is not None:
            store.left(room_id, websocket)
        if not room:
            ROOMS.pop(room_id, None)


app = Starlette(routes=[WebSocketRoute("/rooms/{id}/ws", room_ws)], lifespan=lifespan)


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

    if os.environ.get("BASELINE_STORE") != "1":
        os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:1/0")  # not used: only keeps the embedded Valkey off
    server_main.uvicorn.run = run_baseline  # type: ignore[assignment]
    return server_main.main()


if __name__ == "__main__":
    sys.exit(main())

"""The server's CPU per push, written through uvicorn's ASGI ``send`` or straight to its transport.

Why: ``server.edge.raw_send.frame_writer`` writes a data frame's header and bytes to uvicorn's
transport where the ASGI ``send`` (stepped inline by :class:`~server.edge.outbox.Outbox`) makes a
coroutine, a message dict and websockets' frame object first. A figure under load cannot show a
few microseconds a push (the load bench's rounds differ by more), so this measures the push
alone: uvicorn in this process with ``--conns`` sockets, a client process that reads them all,
and ``--frames`` frames of ``--size`` bytes sent round the sockets through an ``Outbox`` each
way, in alternating rounds; the thread's CPU clock (user + system: the write's system call is
in it) a push, the median of the rounds of each way, and their ratio.

    python bench/push.py --conns 100 --frames 20000 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import socket
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import uvicorn  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.routing import WebSocketRoute  # noqa: E402
from starlette.websockets import WebSocket  # noqa: E402

from server.edge.outbox import Outbox  # noqa: E402
from server.edge.raw_send import ExposeRawSend, frame_sender, frame_writer  # noqa: E402


def read_all(port: int, conns: int, ready: mp.Event, stop: mp.Event) -> None:
    """The client process: open ``conns`` websockets and read (and drop) what comes."""
    import selectors

    sel = selectors.DefaultSelector()
    for _ in range(conns):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    ready.set()
    while not stop.is_set():
        for key, _ in sel.select(0.1):
            try:
                key.fileobj.recv(1 << 20)  # type: ignore[union-attr]
            except BlockingIOError:
                pass


class Sockets:
    def __init__(self) -> None:
        self.boxes: list[tuple[Outbox, Outbox]] = []
        self.done = asyncio.Event()

    async def handle(self, websocket: WebSocket) -> None:
        await websocket.accept()

        async def close(code: int, reason: str) -> None:
            await websocket.close(code, reason)

        send = frame_sender(websocket)
        by_send = Outbox(0, "msgpack", None, send, close, maxsize=1 << 20)
        direct = Outbox(0, "msgpack", None, send, close, maxsize=1 << 20, write_now=frame_writer(websocket))
        self.boxes.append((by_send, direct))
        await self.done.wait()


def per_push_us(boxes: list[Outbox], frames: int, frame: bytes) -> float:
    n = len(boxes)
    t0 = time.thread_time()
    for i in range(frames):
        boxes[i % n].send(frame)
    return (time.thread_time() - t0) / frames * 1e6


async def main(args: argparse.Namespace) -> None:
    sockets = Sockets()
    app = ExposeRawSend(Starlette(routes=[WebSocketRoute("/ws", sockets.handle)]))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off",
                                           ws_per_message_deflate=False))
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    ready, stop = mp.Event(), mp.Event()
    client = mp.Process(target=read_all, args=(port, args.conns, ready, stop), daemon=True)
    client.start()
    while len(sockets.boxes) < args.conns:
        await asyncio.sleep(0.01)
    if sockets.boxes[0][1]._write_now is None:
        raise SystemExit("no direct writer: this uvicorn does not serve the socket with its sans-I/O protocol")
    frame = os.urandom(args.size)
    figures: dict[str, list[float]] = {"asgi send": [], "direct": []}
    for r in range(args.rounds):
        for k in ((0, 1) if r % 2 == 0 else (1, 0)):
            way = list(figures)[k]
            figures[way].append(per_push_us([pair[k] for pair in sockets.boxes], args.frames, frame))
            await asyncio.sleep(0.2)  # the client drains
    stop.set()
    sockets.done.set()
    server.should_exit = True
    await serving
    client.join(5)
    print(f"# python bench/push.py --conns {args.conns} --frames {args.frames} --size {args.size} --rounds {args.rounds}")
    print(f"# load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("CPU µs a push (thread clock, user + system), each round:")
    for way, xs in figures.items():
        print(f"  {way:<10} median {statistics.median(xs):6.2f}  min {min(xs):6.2f}  max {max(xs):6.2f}  "
              f"({', '.join(f'{x:.2f}' for x in xs)})")
    ratio = statistics.median(figures["direct"]) / statistics.median(figures["asgi send"])
    print(f"direct / asgi send: {ratio:.2f}x")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conns", type=int, default=100)
    ap.add_argument("--frames", type=int, default=20_000, help="pushes a round")
    ap.add_argument("--size", type=int, default=180, help="bytes a frame (a move's update is about 150-250)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of each way, alternating")
    asyncio.run(main(ap.parse_args()))

"""server/edge/raw_send.py: a data frame written straight to uvicorn's transport is the frame
websockets would have written, it reaches a real client whole, and the direct write steps aside
(writes nothing, says so) whenever uvicorn's own ``send`` would do more than write it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import uvicorn
from hypothesis import given
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket
from websockets.asyncio.client import connect
from websockets.frames import Frame, Opcode

from server.edge.raw_send import ExposeRawSend, frame_header, frame_writer

LENGTHS = st.one_of(st.integers(0, 300), st.sampled_from([125, 126, 127, 65535, 65536, 65537]),
                    st.integers(0, 70_000))


@given(LENGTHS, st.sampled_from([Opcode.TEXT, Opcode.BINARY]))
def test_a_frames_header_and_payload_are_the_bytes_websockets_writes(length: int, opcode: Opcode) -> None:
    payload = bytes(range(256)) * (length // 256) + bytes(length % 256)
    expected = Frame(opcode, payload).serialize(mask=False, extensions=[])
    assert frame_header(opcode.value, length) + payload == expected


class Echo:
    """A websocket endpoint that, on each client message, writes the frames it names through
    :func:`frame_writer` (``"<kind>:<length>"``) and reports what the writer said."""

    def __init__(self) -> None:
        self.writers: list[Callable[[Any], bool] | None] = []
        self.closed = asyncio.Event()
        self.after_close: list[bool] = []
        self.filled: asyncio.Future[int] | None = None

    async def handle(self, websocket: WebSocket) -> None:
        await websocket.accept()
        binary, text = frame_writer(websocket), frame_writer(websocket, text=True)
        self.writers.append(binary)
        try:
            while True:
                kind, length = (await websocket.receive_text()).split(":")
                n = int(length)
                if kind == "fill":  # until the transport pauses (the client does not read)
                    assert binary is not None
                    self.filled = asyncio.get_running_loop().create_future()
                    big = bytes(256 * 1024)
                    self.filled.set_result(next((i for i in range(n) if not binary(big)), -1))
                elif kind == "bytes":
                    assert binary is not None and binary(bytes(range(256)) * (n // 256) + bytes(n % 256))
                else:
                    assert text is not None and text("ä" * n)
        except Exception:
            pass
        finally:
            if binary is not None:
                self.after_close.append(binary(b"late"))
            self.closed.set()


@contextlib.asynccontextmanager
async def serving(endpoint: Echo, raw: bool = True, deflate: bool = False) -> AsyncIterator[str]:
    app: Any = Starlette(routes=[WebSocketRoute("/ws", endpoint.handle)])
    if raw:
        app = ExposeRawSend(app)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", ws_per_message_deflate=deflate,
                            lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}/ws"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


async def test_frames_written_directly_reach_a_client_whole_across_every_length_header() -> None:
    endpoint = Echo()
    async with serving(endpoint) as url:
        async with connect(url, compression=None, max_size=None) as client:
            for n in (0, 125, 126, 65535, 65536, 70_000):
                await client.send(f"bytes:{n}")
                assert await client.recv() == bytes(range(256)) * (n // 256) + bytes(n % 256)
            await client.send("text:200")  # 400 bytes of UTF-8: a two-byte length
            assert await client.recv() == "ä" * 200
        await asyncio.wait_for(endpoint.closed.wait(), 5)
    assert endpoint.writers[0] is not None  # uvicorn's default protocol serves it: the direct path was taken
    assert endpoint.after_close == [False]  # closed: nothing written, the caller's send decides


async def test_a_full_transport_is_left_to_uvicorns_send() -> None:
    """Once the kernel's and the transport's buffers are full (a peer that stops reading), the
    writer writes nothing more: the outbox's send then waits for the transport, as uvicorn's does."""
    endpoint = Echo()
    async with serving(endpoint) as url:
        async with connect(url, compression=None, max_size=None) as client:
            await client.send("fill:400")  # at most 100 MB; loopback buffers hold a few MB
            while endpoint.filled is None:
                await asyncio.sleep(0.01)
            written = await endpoint.filled
            assert written > 0  # it wrote until the transport paused, then refused
            client.transport.abort()


async def test_no_direct_writer_without_the_raw_send_or_with_compression() -> None:
    for raw, deflate, compression in ((False, False, None), (True, True, "deflate")):
        endpoint = Echo()
        async with serving(endpoint, raw=raw, deflate=deflate) as url:
            async with connect(url, compression=compression) as client:
                await client.send("bytes:0")
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.recv(), 1)
        assert endpoint.writers == [None]


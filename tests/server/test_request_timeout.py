"""Each HTTP request must be read within ``MINEDUEL_REQUEST_TIMEOUT_S`` (server/request_timeout.py):
a client that sends nothing, or a request's head or body too slowly, gets 408 (when the app has
not seen the request) and its connection closed; a request sent at once is served, a kept-alive
connection's next request gets its own time, and an open websocket is never cut by it. Against
``python -m server`` (the protocol is uvicorn's ``http`` setting there), with a limit of 0.5 s;
every wait below is a bound, not a measurement."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable, Iterator

import msgpack
import pytest
from websockets.asyncio.client import connect

from tests.conftest import LiveServer

LIMIT_S = 0.5
BOUND_S = 30.0


@pytest.fixture
def server(start_server: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    yield start_server(MINEDUEL_REQUEST_TIMEOUT_S=str(LIMIT_S))


def opened(server: LiveServer) -> socket.socket:
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=BOUND_S)
    raw.settimeout(BOUND_S)
    return raw


def read_to_close(raw: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (bounded by the socket's timeout)."""
    got = b""
    while chunk := raw.recv(4096):
        got += chunk
    return got


def response(raw: socket.socket) -> bytes:
    """One whole response's head and body (by its content-length)."""
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = raw.recv(4096)
        assert chunk, "closed before a response"
        got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += raw.recv(4096)
    return head


def test_a_connection_that_sends_nothing_or_half_a_head_is_closed_with_408(server: LiveServer) -> None:
    with opened(server) as silent:
        assert read_to_close(silent).startswith(b"HTTP/1.1 408 ")
    with opened(server) as slow:
        slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        assert read_to_close(slow).startswith(b"HTTP/1.1 408 ")


def test_a_body_sent_too_slowly_closes_the_connection(server: LiveServer) -> None:
    with opened(server) as slow:
        slow.sendall(b"POST /api/v1/guests HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                     b"content-length: 40\r\n\r\n{\"name\":")
        assert b" 201 " not in read_to_close(slow)  # closed, the guest never made
    assert "Traceback" not in server.log()


def test_requests_sent_at_once_are_served_and_a_kept_alive_connection_gets_its_own_time(server: LiveServer) -> None:
    with opened(server) as kept:
        for _ in range(3):
            kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert response(kept).startswith(b"HTTP/1.1 200 ")
            time.sleep(2 * LIMIT_S)  # idle between requests is keep-alive's (5 s), not this limit's
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        assert read_to_close(kept).startswith(b"HTTP/1.1 408 ")


def test_an_open_websocket_outlives_the_limit(server: LiveServer) -> None:
    async def run() -> None:
        import httpx

        async with httpx.AsyncClient(base_url=server.url) as http:
            token = (await http.post("/api/v1/guests", json={"name": "Wes"})).json()["token"]
            room = (await http.post("/api/v1/games", json={}, headers={"authorization": f"Bearer {token}"})).json()
        ws_url = server.url.replace("http", "ws", 1) + f"/api/v1/games/{room['id']}/ws?token={token}"
        async with connect(ws_url, open_timeout=BOUND_S) as ws:
            assert msgpack.unpackb(await asyncio.wait_for(ws.recv(), BOUND_S))["t"] == "snapshot"
            await asyncio.sleep(4 * LIMIT_S)
            await ws.send(msgpack.packb({"t": "nonsense"}))
            for _ in range(10):  # bounded: presence frames may come first
                frame = msgpack.unpackb(await asyncio.wait_for(ws.recv(), BOUND_S))
                if frame["t"] == "error":
                    assert frame["code"] == "unknown_type"
                    return
            raise AssertionError("no answer on the websocket")

    asyncio.run(run())

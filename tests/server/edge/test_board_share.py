"""A no-guess first click's share of the board worker is counted by the client's address at both
edges that take classic moves: the API's msgpack socket and the classic page's socket. With the
address's share in flight (one, here), another player's first click from the same address is
refused at once (``busy``) and changes nothing; it works once the board is made. In-process (all
of the test client's connections come from one address) against a real Valkey, the board
worker's job held at a gate (``tests/server/store/held_jobs.py``): no timing."""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's "use httpx2" notice: the same API for these tests
    from starlette.testclient import TestClient

from server.app import create_app
from server.web.site import COOKIE
from tests.conftest import app_settings
from tests.names import unique
from tests.server.store.held_jobs import Gate, HeldOffload

BASE = "http://testserver"
FIRST_CLICK = (8, 15)
FRAMES = 20  # read at most this many frames looking for one (a bound)


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    settings = app_settings(redis_url=redis_url, secret_key="board-share-test")
    with TestClient(create_app(settings), base_url=BASE, follow_redirects=False) as test_client:
        yield test_client


def expert_no_guess(client: TestClient) -> tuple[str, str, str]:
    """A new guest's no-guess Expert game: (room id, token, the cookie a browser of theirs carries)."""
    token = client.post("/api/v1/guests", json={"name": unique("Sol")}).json()["token"]
    made = client.post("/api/v1/solo", json={"preset": "expert", "no_guess": True},
                       headers={"authorization": f"Bearer {token}"})
    assert made.status_code == 201, made.text
    return made.json()["id"], token, client.app.state.web.cookies.dumps(token)  # type: ignore[attr-defined]


def frame_of(ws: Any, kind: str) -> dict[str, Any]:
    for _ in range(FRAMES):
        frame = msgpack.unpackb(ws.receive_bytes())
        if frame["t"] == kind:
            return frame
    raise AssertionError(f"no {kind} frame")


def click() -> bytes:
    return msgpack.packb({"t": "move", "v": 1, "action": "reveal", "cell": list(FIRST_CLICK)})


def until_started(gate: Gate) -> None:
    deadline = time.monotonic() + 60  # a bound, not an expectation
    while gate.started() < 1:
        assert time.monotonic() < deadline, "the held board never started"
        time.sleep(0.01)


def test_an_address_s_share_of_the_board_worker_holds_at_both_sockets(client: TestClient, tmp_path: Path) -> None:
    gate = Gate(tmp_path)
    rooms = client.app.state.rooms  # type: ignore[attr-defined]
    rooms.boards = HeldOffload(gate, most_per_group=1)
    held, other, page = (expert_no_guess(client) for _ in range(3))
    try:
        with client.websocket_connect(f"/api/v1/games/{held[0]}/ws", headers={"authorization": f"Bearer {held[1]}"}) \
                as first, client.websocket_connect(f"/api/v1/games/{other[0]}/ws",
                                                   headers={"authorization": f"Bearer {other[1]}"}) as second:
            frame_of(first, "snapshot")
            frame_of(second, "snapshot")
            first.send_bytes(click())
            until_started(gate)
            second.send_bytes(click())
            refused = frame_of(second, "error")
            assert refused["code"] == "busy" and refused["v"] == 1, refused
            # the classic page's socket: the same address, refused the same way
            with client.websocket_connect(f"/g/{page[0]}/ws", headers={"origin": BASE, "cookie": f"{COOKIE}={page[2]}"}) \
                    as browser:
                assert browser.receive_text().startswith("<!--snapshot-->")
                browser.send_text(json.dumps({"cell": "%d-%d" % FIRST_CLICK, "mode": "reveal", "v": "1"}))
                for _ in range(FRAMES):
                    notice = browser.receive_text()
                    if "The game is busy right now" in notice:
                        break
                else:
                    raise AssertionError("no busy notice on the page")
            for room_id in (other[0], page[0]):
                unchanged = client.get(f"/api/v1/games/{room_id}").json()
                assert unchanged["v"] == 1 and unchanged["view"]["mines"] is None, unchanged
            gate.open()
            assert frame_of(first, "update")["v"] == 2
            second.send_bytes(click())
            assert frame_of(second, "update")["v"] == 2
    finally:
        gate.open()
        rooms.boards.close()

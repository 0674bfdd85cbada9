"""The room page's ``#reconnect`` element (``server/web/reconnect.py``) over HTTP and the
browser socket, in-process against the real Valkey: it counts quick reconnects in a row and
waits longer each time, a snapshot resets it, and a page that must not come back (an unknown
game) does not loop."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from server.app import create_app
from server.web.reconnect import MAX_DELAY_MS, delay_ms
from tests.conftest import app_settings

from .test_pages import BASE, as_, named

TRIGGER = re.compile(r'<span id="reconnect" hidden hx-get="" hx-vals=\'\{"reconnect": (\d+)\}\' '
                     r'hx-trigger="htmx:wsClose from:#room delay:(\d+)ms, ')


@pytest.fixture(scope="module")
def client(redis_url: str) -> Iterator[TestClient]:
    settings = app_settings(redis_url=redis_url, secret_key="reconnect-test", test_hooks=True)
    with TestClient(create_app(settings), base_url=BASE, follow_redirects=False) as test_client:
        yield test_client


def armed(html: str) -> tuple[int, int]:
    """(the next ``reconnect`` count, the delay in ms) of the one ``#reconnect`` in ``html``."""
    found = TRIGGER.findall(html)
    assert len(found) == 1, html.count('id="reconnect"')
    return int(found[0][0]), int(found[0][1])


def test_the_delay_grows_with_quick_reconnects_in_a_row_and_is_capped() -> None:
    delays = [delay_ms(n) for n in range(12)]
    assert delays[0] <= 100  # the first fetch: at once (the server is polled while away)
    assert all(a <= b for a, b in zip(delays, delays[1:])) and delays[-1] == MAX_DELAY_MS


@pytest.mark.parametrize("make", ["duel", "solo"])
def test_pages_count_reconnects_and_snapshots_reset_the_count(client: TestClient, make: str) -> None:
    anna = named(client, "Anna")
    if make == "duel":
        response = as_(client, anna).post("/games", data={"ruleset": "coan", "clock": "none", "seat": "0"},
                                          headers={"origin": BASE})
    else:
        response = as_(client, anna).post("/solo", data={"preset": "beginner", "no_guess": "0"},
                                          headers={"origin": BASE})
    room_url = response.headers["location"]
    assert armed(as_(client, anna).get(room_url).text) == (1, delay_ms(0))
    again = client.get(room_url, params={"reconnect": "2"}, headers={"hx-request": "true"})
    assert armed(again.text) == (3, delay_ms(2))
    assert 'id="modes"' in again.text and "hx-preserve" in again.text  # quick mode survives the swap
    assert armed(client.get(room_url, params={"reconnect": "x1"}).text) == (1, delay_ms(0))
    with client.websocket_connect(room_url + "/ws", headers={"origin": BASE}) as ws:
        snapshot = ws.receive_text()
    assert snapshot.startswith("<!--snapshot-->")
    assert armed(snapshot) == (1, delay_ms(0))  # a socket that got its snapshot worked: back to 0


def test_an_unknown_game_neither_reconnects_nor_loops(client: TestClient) -> None:
    # the page's fetch of a room that is gone: the browser loads that page once (no retries)
    gone = client.get("/g/doesnotexist", params={"reconnect": "1"}, headers={"hx-request": "true"})
    assert gone.status_code == 404 and gone.headers["hx-refresh"] == "true"
    assert "hx-refresh" not in client.get("/g/doesnotexist").headers  # a plain visit: a plain 404
    # its socket: an inert #reconnect before the 1008 close, so the page does not come back
    with client.websocket_connect("/g/doesnotexist/ws", headers={"origin": BASE}) as ws:
        frame = ws.receive_text()
    assert '<span id="reconnect" hidden></span>' in frame and "hx-get" not in frame

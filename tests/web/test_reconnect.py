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

from starlette.websockets import WebSocketDisconnect

from server.app import create_app
from server.web import socket_ticket
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


def new_room(client: TestClient, jar: dict[str, str], make: str) -> str:
    """A new duel (waiting for its opponent) or classic game of ``jar``'s; its page's URL."""
    if make == "duel":
        response = as_(client, jar).post("/games", data={"ruleset": "coan", "clock": "none", "seat": "0"},
                                         headers={"origin": BASE})
    else:
        response = as_(client, jar).post("/solo", data={"preset": "beginner", "no_guess": "0"},
                                         headers={"origin": BASE})
    return response.headers["location"]


def test_the_delay_grows_with_quick_reconnects_in_a_row_and_is_capped() -> None:
    delays = [delay_ms(n) for n in range(12)]
    assert delays[0] <= 100  # the first fetch: at once (the server is polled while away)
    assert all(a <= b for a, b in zip(delays, delays[1:])) and delays[-1] == MAX_DELAY_MS


@pytest.mark.parametrize("make", ["duel", "solo"])
def test_pages_count_reconnects_and_snapshots_reset_the_count(client: TestClient, make: str) -> None:
    anna = named(client, "Anna")
    room_url = new_room(client, anna, make)
    assert armed(as_(client, anna).get(room_url).text) == (1, delay_ms(0))
    again = client.get(room_url, params={"reconnect": "2"}, headers={"hx-request": "true"})
    assert armed(again.text) == (3, delay_ms(2))
    assert 'id="modes"' in again.text and "hx-preserve" in again.text  # quick mode survives the swap
    for odd in ("x1", "\u00b2", "\u2460", "\uff11", "-1"):  # ASCII digits only (² once answered 500)
        assert armed(client.get(room_url, params={"reconnect": odd}).text) == (1, delay_ms(0)), odd
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


def socket_url_of(page: str) -> str:
    found = re.findall(r'ws-connect="([^"]+)"', page)
    assert len(found) == 1
    return found[0].replace("&amp;", "&")


@pytest.mark.parametrize("make", ["duel", "solo"])
def test_each_render_of_the_room_opens_one_socket_once(client: TestClient, make: str) -> None:
    """The page's ticket (``server/web/socket_ticket.py``): the render's socket is served; a
    second socket on the same ticket (a replaced element's retry timer) and a socket on an
    old render's ticket are closed with 4001 before anything is sent; a fresh render serves
    again, and a socket without a ticket is served as ever."""
    anna = named(client, "Anna")
    room_url = new_room(client, anna, make)
    url = socket_url_of(as_(client, anna).get(room_url).text)
    assert url.startswith(room_url + "/ws?t=")
    with client.websocket_connect(url, headers={"origin": BASE}) as ws:
        assert ws.receive_text().startswith("<!--snapshot-->")
    for used in (url, url.replace("?t=", "?t=" + "0." + "a" * 12 + "&old=")):  # used; rendered in 1970
        with client.websocket_connect(used, headers={"origin": BASE}) as ws:
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
        assert closed.value.code == socket_ticket.SUPERSEDED
    again = socket_url_of(client.get(room_url, params={"reconnect": "1"}, headers={"hx-request": "true"}).text)
    assert again != url
    for served in (again, room_url + "/ws", room_url + "/ws?t=not-ours"):
        with client.websocket_connect(served, headers={"origin": BASE}) as ws:
            assert ws.receive_text().startswith("<!--snapshot-->")


def test_a_ticket_carries_its_render_time_and_is_fresh_for_ten_minutes() -> None:
    now = 1_700_000_000_000
    ticket = socket_ticket.new_ticket(now)
    assert socket_ticket.rendered_ms(ticket) == now and ticket != socket_ticket.new_ticket(now)
    assert socket_ticket.is_fresh(ticket, now) and socket_ticket.is_fresh(ticket, now + socket_ticket.TICKET_MAX_AGE_MS)
    assert not socket_ticket.is_fresh(ticket, now + socket_ticket.TICKET_MAX_AGE_MS + 1)
    assert socket_ticket.is_fresh(ticket, now - 1000)  # another process's clock a little behind
    for bad in ("", "abc", "lq0.short", "x" * 40, "zz." + "a" * 12, "lq0." + "a" * 11 + "!", "é." + "a" * 12,
                "." + "a" * 12):
        assert socket_ticket.rendered_ms(bad) is None, bad
        assert not socket_ticket.is_fresh(bad, now)
    assert socket_ticket.socket_url("r1", ticket, shows_end=True) == f"/g/r1/ws?t={ticket}&end=1"

"""The lobby over real servers: open challenges, live games and counts, pushed over the lobby
socket of any process; a challenge vanishes when its creator leaves; the computer is one click."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
import warnings
from collections.abc import Callable
from types import SimpleNamespace

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

from server.app import create_app
from server.web.lobby import Lobby, read_lobby
from server.web.lobby_feed import LobbyFeed, LobbyWatcher
from tests.conftest import LiveServer, app_settings
from tests.names import unique
from tests.security.util import COOKIE, form_guest, ws_base

REFRESH = {"MINEDUEL_LOBBY_REFRESH_S": "0.2"}
WAIT_S = 15.0
SECTION = re.compile(r'<(?:div|p) id="(lobby-[a-z]+)"')


class LobbyTap:
    """A lobby socket: the latest html of each section it was sent."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.sections: dict[str, str] = {}

    @classmethod
    async def open(cls, server: LiveServer, cookie: str | None = None) -> "LobbyTap":
        headers = {"Cookie": f"{COOKIE}={cookie}"} if cookie else {}
        ws = await connect(f"{ws_base(server.url)}/lobby/ws", origin=server.url, additional_headers=headers,
                           open_timeout=10)
        return cls(ws)

    async def until(self, pred: Callable[[dict[str, str]], bool]) -> dict[str, str]:
        """Read frames (bounded) until ``pred(sections)`` holds."""
        deadline = time.monotonic() + WAIT_S
        while not pred(self.sections):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"the lobby never showed it: {self.sections}")
            try:
                frame = await asyncio.wait_for(self.ws.recv(), left)
            except TimeoutError:
                raise AssertionError(f"the lobby never showed it: {self.sections}") from None
            starts = [(m.start(), m.group(1)) for m in SECTION.finditer(frame)] + [(len(frame), "")]
            for (start, name), (end, _next) in zip(starts, starts[1:], strict=False):
                self.sections[name] = frame[start:end]
        return self.sections


def post(server: LiveServer, path: str, cookie: str | None, **data: str) -> httpx.Response:
    cookies = {COOKIE: cookie} if cookie else {}
    return httpx.post(server.url + path, data=data, cookies=cookies, headers={"origin": server.url},
                      follow_redirects=False)


def challenge(sections: dict[str, str], room_id: str) -> str | None:
    """The challenge's row as shown, or ``None``."""
    found = re.search(rf'<li class="game-row challenge" id="challenge-{room_id}">.*?</li>',
                      sections.get("lobby-challenges", ""), re.S)
    return found.group(0) if found else None


@pytest.fixture
def two_servers(start_server) -> tuple[LiveServer, LiveServer]:
    return start_server(**REFRESH), start_server(**REFRESH)


async def test_a_challenge_shows_live_on_every_process_and_goes_when_taken_or_cancelled(two_servers) -> None:
    a, b = two_servers
    anna, _ = await asyncio.to_thread(form_guest, a.url, "Anna")
    ben, _ = await asyncio.to_thread(form_guest, b.url, "Ben")
    watcher = await LobbyTap.open(b)  # a stranger's lobby on the other process
    own = await LobbyTap.open(a, anna)  # the creator's own lobby
    try:
        made = await asyncio.to_thread(post, a, "/games", anna, ruleset="coan", clock="180+2", rated="on", seat="0")
        room_id = made.headers["location"].rsplit("/", 1)[1]
        seen = await watcher.until(lambda s: challenge(s, room_id) is not None)
        row = challenge(seen, room_id)
        assert "Coan" in row and "3+2" in row and "rated" in row and "(1500?)" in row
        assert f'id="accept-{room_id}"' in row and "Cancel" not in row
        # the button says whose challenge it accepts, on what terms (every row's button reads "Accept")
        assert f'aria-describedby="who-{room_id} terms-{room_id}"' in row
        assert f'id="who-{room_id}"' in row and f'id="terms-{room_id}"' in row
        mine = challenge(await own.until(lambda s: challenge(s, room_id) is not None), room_id)
        assert f'id="cancel-{room_id}"' in mine and "Accept" not in mine
        taken = await asyncio.to_thread(post, b, f"/g/{room_id}/join", ben)
        assert taken.headers["location"] == f"/g/{room_id}"
        shown = await watcher.until(lambda s: challenge(s, room_id) is None and f"live-{room_id}" in s["lobby-live"])
        assert f'id="watch-{room_id}"' in shown["lobby-live"] and "(1500?)" in shown["lobby-live"]
        assert f'aria-describedby="who-{room_id}"' in shown["lobby-live"]  # whose game Watch opens
        # another challenge, cancelled by its creator: gone, and the room is over
        again = await asyncio.to_thread(post, a, "/games", anna, seat="1")
        other = again.headers["location"].rsplit("/", 1)[1]
        await watcher.until(lambda s: challenge(s, other) is not None)
        assert (await asyncio.to_thread(post, b, f"/g/{other}/cancel", ben)).status_code == 303  # not Ben's
        assert (await asyncio.to_thread(post, a, f"/g/{other}/cancel", anna)).headers["location"] == "/"
        await watcher.until(lambda s: challenge(s, other) is None)
        room = httpx.get(f"{a.url}/api/v1/games/{other}").json()
        assert room["room"]["status"] == "over" and room["view"]["outcome"][0] == "aborted"
    finally:
        await watcher.ws.close()
        await own.ws.close()


async def test_a_challenge_goes_when_its_creator_leaves_its_page(two_servers) -> None:
    a, b = two_servers
    anna, _ = await asyncio.to_thread(form_guest, a.url, "Anna")
    watcher = await LobbyTap.open(b)
    try:
        made = await asyncio.to_thread(post, a, "/games", anna, seat="0")
        room_id = made.headers["location"].rsplit("/", 1)[1]
        page = await connect(f"{ws_base(a.url)}/g/{room_id}/ws", origin=a.url,
                             additional_headers={"Cookie": f"{COOKIE}={anna}"}, open_timeout=10)
        await watcher.until(lambda s: challenge(s, room_id) is not None)
        await page.close()  # the tab closes (how long a reload keeps it listed: tests/server/core/test_listing.py)
        await watcher.until(lambda s: challenge(s, room_id) is None)
        # still reachable by its link: the room waits
        assert httpx.get(f"{a.url}/api/v1/games/{room_id}").json()["room"]["status"] == "waiting"
    finally:
        await watcher.ws.close()


async def test_the_computer_is_one_click_away_and_counts_show_who_is_here(two_servers) -> None:
    a, b = two_servers
    clicked = await asyncio.to_thread(post, a, "/play/computer", None, level="2")  # a newcomer: no name yet
    assert clicked.status_code == 303 and clicked.headers["location"].startswith("/g/")
    cookie = clicked.cookies[COOKIE]
    room_id = clicked.headers["location"].rsplit("/", 1)[1]
    game = httpx.get(f"{a.url}/api/v1/games/{room_id}").json()
    names = [p["name"] for p in game["room"]["players"]]
    assert game["room"]["status"] == "playing" and "Computer (medium)" in names
    assert any(n.startswith("Guest-") for n in names)
    assert (await asyncio.to_thread(post, a, "/play/computer", cookie, level="7")).status_code == 400
    page = await connect(f"{ws_base(a.url)}/g/{room_id}/ws", origin=a.url,
                         additional_headers={"Cookie": f"{COOKIE}={cookie}"}, open_timeout=10)
    watcher = await LobbyTap.open(b)
    try:
        shown = await watcher.until(lambda s: f"live-{room_id}" in s.get("lobby-live", "")
                                    and int(re.search(r'id="online-count">(\d+)', s["lobby-counts"]).group(1)) >= 1)
        assert "Computer (medium)" in shown["lobby-live"] and "casual" in shown["lobby-live"]
        playing = int(re.search(r'id="playing-count">(\d+)', shown["lobby-counts"]).group(1))
        assert playing >= 1
    finally:
        await page.close()
        await watcher.ws.close()


async def test_the_lobby_socket_refuses_other_sites_and_ignores_what_it_is_sent(two_servers) -> None:
    a, _ = two_servers
    with pytest.raises(Exception) as refused:
        await connect(f"{ws_base(a.url)}/lobby/ws", origin="https://evil.example", open_timeout=10)
    assert "403" in str(refused.value)
    tap = await LobbyTap.open(a)
    try:
        await tap.until(lambda s: "lobby-counts" in s)
        await tap.ws.send('{"anything": "at all"}')
        await tap.ws.send(b"\x00\x01")
        assert httpx.get(a.url + "/healthz").status_code == 200
        await tap.ws.ping()
    finally:
        await tap.ws.close()


def test_a_new_lobby_socket_gets_no_lobby_older_than_its_page() -> None:
    """A socket opened after nobody watched for a while would first get the lobby read then
    (older than the page it came with, which it would overwrite): it gets the latest only if
    it is fresh, else the read its watch wakes."""

    async def run() -> tuple[list[str], list[str]]:
        feed = LobbyFeed(state=None, render=lambda lobby, _player: {"counts": str(lobby.online)}, interval_s=1.0,
                         players_connected=set, process_id="p")
        stale, fresh = [], []
        feed.latest = Lobby(online=3, read_ms=time.time_ns() // 1_000_000 - 20_000)
        feed.watch(LobbyWatcher(None, lambda html: stale.append(html) or True))
        feed.latest = Lobby(online=4, read_ms=time.time_ns() // 1_000_000)
        feed.watch(LobbyWatcher(None, lambda html: fresh.append(html) or True))
        return stale, fresh

    stale, fresh = asyncio.run(run())
    assert stale == [] and fresh == ["4"]


def test_a_classic_restart_is_not_listed_and_a_one_seat_room_cannot_take_the_lobby_down(redis_url: str) -> None:
    """A classic game's restart is a rematch, and rematches are listed: not a game of one seat.
    One listed anyway (as before) is dropped from the list instead of failing every read."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    settings = app_settings(redis_url=redis_url, secret_key="lobby-test")
    with TestClient(create_app(settings)) as client:
        state = client.app.state  # type: ignore[attr-defined]
        made = client.post("/api/v1/guests", json={"name": unique("Sol")}).json()
        auth = {"authorization": f"Bearer {made['token']}"}
        first = client.post("/api/v1/solo", json={"preset": "beginner"}, headers=auth).json()["id"]
        assert client.post(f"/api/v1/games/{first}/resign", headers=auth).status_code == 200
        again = client.post(f"/api/v1/games/{first}/rematch", headers=auth)
        assert again.status_code == 201
        restart = again.json()["id"]

        async def listed_and_read() -> tuple[list[str], list[str], Lobby, list[str]]:
            before = await state.store.listed_rooms(10_000)
            await state.store.list_room(restart, time.time_ns() // 1_000_000)  # as an older process listed it
            listed = await state.store.listed_rooms(10_000)
            lobby = await read_lobby(state, 0, time.time_ns() // 1_000_000)
            return before, listed, lobby, await state.store.listed_rooms(10_000)

        before, listed, lobby, after = client.portal.call(listed_and_read)  # type: ignore[union-attr]
        assert restart not in before  # never listed by the restart
        assert restart in listed and restart not in after  # listed anyway: dropped by the read, which works
        assert isinstance(lobby, Lobby) and client.get("/").status_code == 200


def test_a_bug_in_a_lobby_read_is_logged_as_one_and_the_feed_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    """Redis away is a warning (``redis_error``); anything else is a bug: logged with its
    traceback, and the feed tries again next period rather than stopping."""

    class Broken:
        calls = 0

        async def set_online(self, *_args: object) -> int:
            Broken.calls += 1
            raise IndexError("a bug")

    async def run() -> None:
        state = SimpleNamespace(store=Broken(), metrics=None)
        feed = LobbyFeed(state, render=lambda lobby, _p: {}, interval_s=0.02, players_connected=set, process_id="p")
        feed.watch(LobbyWatcher(None, lambda html: True))
        task = asyncio.create_task(feed.run())
        for _ in range(100):  # bounded: 2 s
            if Broken.calls >= 2:
                break
            await asyncio.sleep(0.02)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    with caplog.at_level(logging.WARNING, logger="mineduel.lobby"):
        asyncio.run(run())
    assert Broken.calls >= 2  # it went on
    failures = [r for r in caplog.records if r.name == "mineduel.lobby" and "lobby read failed" in r.getMessage()]
    assert failures and all(r.levelno == logging.ERROR and r.exc_info for r in failures)

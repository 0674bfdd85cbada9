"""Quick pairing's pages and socket without a browser: the guards (foreign ``Origin`` on the
socket and on the form), the guest made on the way, the landing answer, and the socket as
the seek (closing it removes the seek; a second socket of the same player takes over)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
import redis
from websockets.exceptions import ConnectionClosed

from server.store.keys import pool_key
from tests.conftest import LiveServer
from tests.security.util import (
    COOKIE,
    close_code_after,
    form_guest,
    is_heartbeat,
    recv_news,
    ws_attempt,
    ws_base,
)

EVIL = "http://evil.example"
POOL = "live-5+3/coan/rated"


@pytest.fixture
def seeks(redis_url: str) -> Iterator[object]:
    client = redis.Redis.from_url(redis_url)
    yield lambda pool_id=POOL: client.zcard(pool_key(pool_id))
    client.close()


async def until(check, what: str) -> None:
    for _ in range(1_000):  # at most 10 s
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never: {what}")


def socket_url(server: LiveServer, pool: str = POOL) -> str:
    return f"{ws_base(server.url)}/pair/ws?pool={quote(pool)}"


async def test_the_socket_refuses_foreign_origins_and_holds_the_seek(live_server: LiveServer, seeks) -> None:
    cookie, _token = form_guest(live_server.url, "Anna")
    credentials = {"Cookie": f"{COOKIE}={cookie}"}
    for origin in (EVIL, "null", "http://127.0.0.1:1"):
        status = await ws_attempt(socket_url(live_server), additional_headers={**credentials, "Origin": origin})
        assert status == 403, origin
    assert seeks() == 0
    ws = await ws_attempt(socket_url(live_server), additional_headers={**credentials, "Origin": live_server.url})
    assert not isinstance(ws, int)
    await until(lambda: seeks() == 1, "the socket's seek waits")
    again = await ws_attempt(socket_url(live_server), additional_headers=credentials)  # another tab: takes over
    assert not isinstance(again, int)
    frame = await recv_news(ws)
    assert "This search ended" in frame
    assert await close_code_after(ws) == 1000  # htmx does not reopen it
    await until(lambda: seeks() == 1, "the new tab's seek waits")
    await again.close()
    await until(lambda: seeks() == 0, "closing the socket removed the seek")


async def test_cancel_over_the_socket(live_server: LiveServer, seeks) -> None:
    cookie, _token = form_guest(live_server.url, "Anna")
    ws = await ws_attempt(socket_url(live_server), additional_headers={"Cookie": f"{COOKIE}={cookie}"})
    assert not isinstance(ws, int)
    await until(lambda: seeks() == 1, "the seek waits")
    await ws.send(json.dumps({"action": "cancel", "HEADERS": {"HX-Request": "true"}}))
    frames = []
    while not any('id="pair-actions"' in f for f in frames):
        frames.append(await asyncio.wait_for(ws.recv(), 10))
    news = [f for f in frames if not is_heartbeat(f)]
    assert "You stopped looking" in news[0] and 'id="pair-actions"' in news[1]
    # the heartbeat stops first, without its "Connection lost" timer: the search ended, on purpose
    assert '<div id="hb" class="hb"></div>' in frames and frames.index('<div id="hb" class="hb"></div>') < len(frames) - 2
    assert await close_code_after(ws) == 1000
    assert seeks() == 0


async def test_without_a_guest_or_with_an_unknown_pool_the_socket_closes(live_server: LiveServer) -> None:
    cookie, _token = form_guest(live_server.url, "Anna")
    for url, headers in ((socket_url(live_server), {}),
                         (socket_url(live_server, "live-2+1/coan/rated"), {"Cookie": f"{COOKIE}={cookie}"})):
        ws = await ws_attempt(url, additional_headers=headers)
        assert not isinstance(ws, int)
        assert "cannot start" in await asyncio.wait_for(ws.recv(), 10)
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 10)
        assert ws.close_code == 1008


def test_the_form_refuses_cross_site_posts_and_makes_a_guest_on_the_way(live_server: LiveServer) -> None:
    base = live_server.url
    form = {"pool": "live-5+3/rated", "ruleset": "coan"}
    for headers in ({"origin": EVIL}, {"origin": "null"}, {"referer": EVIL + "/x"}):
        r = httpx.post(base + "/pair", data=form, headers=headers, follow_redirects=False)
        assert r.status_code == 403 and "set-cookie" not in r.headers and "location" not in r.headers
    r = httpx.post(base + "/pair", data=form, headers={"origin": base}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/pair?pool=live-5%2B3%2Fcoan%2Frated"
    assert COOKIE in r.cookies  # a newcomer gets a guest (a generated name), as for the computer
    page = httpx.get(base + r.headers["location"], cookies={COOKIE: r.cookies[COOKIE]})
    assert page.status_code == 200 and "Looking for an opponent" in page.text
    assert 'ws-connect="/pair/ws?pool=live-5%2B3/coan/rated"' in page.text
    assert "Guest-" in page.text
    for bad in ({"pool": "live-2+1/rated", "ruleset": "coan"}, {"pool": "live-5+3/rated", "ruleset": "chess"},
                {"pool": "live-5+3", "ruleset": "coan"}):
        assert httpx.post(base + "/pair", data=bad, headers={"origin": base}).status_code == 400


def test_the_home_page_offers_every_pool(live_server: LiveServer) -> None:
    page = httpx.get(live_server.url + "/").text
    assert 'action="/pair"' in page and page.count('name="pool"') == 14
    assert 'id="quick-live-1-1-rated"' in page and 'id="quick-corr-7d-casual"' in page


def test_the_landing_redirects_htmx_and_plain_requests(live_server: LiveServer) -> None:
    base = live_server.url
    r = httpx.get(base + "/pair/landing?game=r0abc", headers={"hx-request": "true"}, follow_redirects=False)
    assert r.status_code == 200 and r.headers["hx-redirect"] == "/g/r0abc"
    r = httpx.get(base + "/pair/landing?game=r0abc", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/g/r0abc"
    r = httpx.get(base + "/pair/landing?game=//evil.example", headers={"hx-request": "true"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/" and "hx-redirect" not in r.headers


def test_a_correspondence_button_takes_a_waiting_challenge_or_posts_one(start_server, own_redis) -> None:
    """Days per move: no page to keep open. The first player's press posts a challenge of the
    pool's terms in the lobby (pressing again leads to it), the next player's press takes it:
    the game is on with both; a third player's press posts one of their own."""
    server = start_server(REDIS_URL=own_redis.url)  # a lobby of this test's own
    pool = {"pool": "corr-3d/rated", "ruleset": "coan"}

    def press(cookie: str) -> str:
        answer = httpx.post(server.url + "/pair", data=pool, headers={"origin": server.url},
                            cookies={COOKIE: cookie}, follow_redirects=False)
        assert answer.status_code == 303 and answer.headers["location"].startswith("/g/"), answer.text[:300]
        return answer.headers["location"][3:]

    (anna, _a), (ben, _b), (cleo, _c) = (form_guest(server.url, n) for n in ("Anna", "Ben", "Cleo"))
    posted = press(anna)
    assert press(anna) == posted  # already posted: the same challenge
    room = httpx.get(f"{server.url}/api/v1/games/{posted}").json()["room"]
    assert room["status"] == "waiting" and room["rated"] and room["ruleset"] == "coan"
    assert room["clock"]["per_move"] and room["clock"]["initial_ms"] == 3 * 86_400_000
    home = httpx.get(server.url + "/", cookies={COOKIE: ben}).text
    assert f'challenge-{posted}' in home  # listed, though Anna's page was never open
    assert press(ben) == posted
    room = httpx.get(f"{server.url}/api/v1/games/{posted}").json()["room"]
    seated = {p["id"] for p in room["players"] if p}
    assert room["status"] == "playing" and len(seated) == 2
    assert press(cleo) != posted


async def test_two_presses_at_once_of_the_same_correspondence_button_meet(start_server, own_redis) -> None:
    """Both find nothing and both post: the younger challenge gives way to the older (an outside
    probe: two challenges, four times out of four). Three rounds of two presses at once."""
    server = start_server(REDIS_URL=own_redis.url)
    pool = {"pool": "corr-7d/casual", "ruleset": "coan"}
    async with httpx.AsyncClient(base_url=server.url, headers={"origin": server.url}, follow_redirects=False,
                                 timeout=30) as http:
        async def press(cookie: str) -> str:
            answer = await http.post("/pair", data=pool, headers={"cookie": f"{COOKIE}={cookie}"})
            assert answer.status_code == 303 and answer.headers["location"].startswith("/g/"), answer.text[:300]
            return answer.headers["location"][3:]

        for trial in range(3):
            (a, _a), (b, _b) = form_guest(server.url, "Anna"), form_guest(server.url, "Ben")
            first, second = await asyncio.gather(press(a), press(b))
            assert first == second, trial
            room = (await http.get(f"/api/v1/games/{first}")).json()["room"]
            assert room["status"] == "playing" and all(room["players"]), trial


def test_while_a_live_game_is_played_the_page_leads_back_to_it(live_server: LiveServer) -> None:
    """The browser's Back from a game that pairing began opens this page, whose socket seeks at
    once: an outside probe was paired into a second game while the first one's clock ran. A
    correspondence game does not stop the search; ``anyway=1`` looks all the same."""
    base = live_server.url
    page_url = base + "/pair?pool=" + quote(POOL, safe="")
    (anna, anna_token), (_ben, ben_token) = form_guest(base, "Anna"), form_guest(base, "Ben")

    def game(clock: dict[str, float]) -> str:
        made = httpx.post(base + "/api/v1/games", json={"seat": 0, "clock": clock},
                          headers={"authorization": f"Bearer {anna_token}"})
        joined = httpx.post(f"{base}/api/v1/games/{made.json()['id']}/join",
                            headers={"authorization": f"Bearer {ben_token}"})
        assert made.status_code == 201 and joined.status_code == 200, (made.text, joined.text)
        return made.json()["id"]

    game({"days": 3})
    assert 'ws-connect="/pair/ws' in httpx.get(page_url, cookies={COOKIE: anna}).text
    live = game({"initial": 300, "increment": 3})
    page = httpx.get(page_url, cookies={COOKIE: anna}).text
    assert "You are playing a game" in page and f'href="/g/{live}" id="pair-back"' in page
    assert "ws-connect" not in page
    assert 'ws-connect="/pair/ws' in httpx.get(page_url + "&anyway=1", cookies={COOKIE: anna}).text


async def test_the_page_s_socket_beats_while_it_seeks(live_server: LiveServer) -> None:
    """Its ``#hb`` comes every second, as a game page's: the page shows "Connection lost" when
    it stops (an outside probe saw the page wait on with the network gone)."""
    cookie, _token = form_guest(live_server.url, "Anna")
    page = httpx.get(f"{live_server.url}/pair?pool={quote(POOL, safe='')}", cookies={COOKIE: cookie}).text
    assert '<div id="hb" class="hb"><p class="lost">Connection lost' in page
    ws = await ws_attempt(socket_url(live_server), additional_headers={"Cookie": f"{COOKIE}={cookie}"})
    assert not isinstance(ws, int)
    try:
        assert is_heartbeat(await asyncio.wait_for(ws.recv(), 10))
        assert is_heartbeat(await asyncio.wait_for(ws.recv(), 10))
    finally:
        await ws.close()

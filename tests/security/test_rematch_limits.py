"""Every route that makes a room spends a game creation of the client's address, a rematch's
too: accepting an offer (charged to the address that accepts, which makes the room), a rematch
against the computer (which accepts at once) and a classic game's restart. Refused: 429
``rate_limited`` over HTTP, an ``error`` frame on the msgpack socket, the "Slow down" page in the
browser, and then nothing is made and the offer still stands. Classic games have their own,
larger bucket, so restarting them does not meet the duels' limit.

Before, an outside probe made 40 rooms in a row by resign + rematch while ``POST /api/v1/solo``
answered 429, and a browser player restarting the classic game met "Slow down" after 31 games.

A real server that trusts ``X-Forwarded-For``: each test plays from its own made-up addresses.
The buckets hardly refill (a credit every few days), so the counts are exact.
"""

from __future__ import annotations

import asyncio

import httpx
import msgpack
import pytest
from websockets.asyncio.client import connect

from tests.names import unique

from .util import COOKIE, form_guest, ws_base

DUELS, CLASSICS = 3, 50
"""The test server's budgets per address: duels, classic games."""


@pytest.fixture(scope="module")
def server(make_server):
    return make_server(
        MINEDUEL_TRUSTED_PROXY="1",
        MINEDUEL_RATE_IP_GAMES=f"{DUELS}/1000000",
        MINEDUEL_RATE_IP_CLASSIC=f"{CLASSICS}/1000000",
    )


def xff(ip: str) -> dict[str, str]:
    return {"X-Forwarded-For": f"203.0.113.9, {ip}"}


def api(token: str, ip: str) -> dict[str, str]:
    return {**xff(ip), "Authorization": f"Bearer {token}"}


def new_guest(base: str, name: str) -> tuple[str, str]:
    """``(player id, token)``."""
    r = httpx.post(base + "/api/v1/guests", json={"name": unique(name)})
    assert r.status_code == 201, r.text
    return r.json()["id"], r.json()["token"]


def spend_duels(base: str, ip: str) -> None:
    """Spend ``ip``'s duels, by a guest of its own (its challenges are on nobody else's list)."""
    _id, token = new_guest(base, "Spender")
    statuses = [httpx.post(base + "/api/v1/games", json={}, headers=api(token, ip)).status_code
                for _ in range(DUELS + 1)]
    assert statuses == [201] * DUELS + [429]


def room_of(base: str, game_id: str) -> dict:
    r = httpx.get(f"{base}/api/v1/games/{game_id}")
    assert r.status_code == 200, r.text
    return r.json()["room"]


def playing(base: str, player_id: str) -> list:
    r = httpx.get(f"{base}/api/v1/players/{player_id}/games", params={"status": "playing"})
    assert r.status_code == 200, r.text
    return r.json()["games"]


def offered_duel(base: str, anna_token: str, ip: str) -> str:
    """A duel Anna (seat 0) resigned, whose rematch Ben (seat 1) offers from his own spent
    address (an offer makes no room, so it costs nothing): its id."""
    _ben, ben = new_guest(base, "Ben")
    r = httpx.post(base + "/api/v1/games", json={"seat": 0}, headers=api(anna_token, f"{ip}.9"))
    assert r.status_code == 201, r.text
    game_id = r.json()["id"]
    assert httpx.post(f"{base}/api/v1/games/{game_id}/join", headers=api(ben, f"{ip}.8")).status_code == 200
    assert httpx.post(f"{base}/api/v1/games/{game_id}/resign", json={}, headers=api(anna_token, f"{ip}.9")).status_code == 200
    spend_duels(base, f"{ip}.2")
    r = httpx.post(f"{base}/api/v1/games/{game_id}/rematch", headers=api(ben, f"{ip}.2"))
    assert r.status_code == 202 and r.json()["offered"] is True, r.text
    return game_id


def assert_offer_stands(base: str, game_id: str, anna_id: str) -> None:
    room = room_of(base, game_id)
    assert room["rematch"] is None and room["rematch_offer"] == 1  # Ben's offer, nothing linked
    assert playing(base, anna_id) == []  # no rematch on Anna's list either


def accepted_elsewhere(base: str, game_id: str, anna_token: str, ip: str) -> None:
    """The offer stood: from an address with budget left, Anna's accept makes the rematch."""
    r = httpx.post(f"{base}/api/v1/games/{game_id}/rematch", headers=api(anna_token, ip))
    assert r.status_code == 201, r.text
    assert room_of(base, game_id)["rematch"] == r.json()["id"]


# ---------------------------------------------------------------------- accepting an offer


def test_accepting_over_the_api_is_refused_once_the_address_spent_its_games(server):
    base = server.url
    anna_id, anna = new_guest(base, "Anna")
    game_id = offered_duel(base, anna, "10.20.0")
    spend_duels(base, "10.20.0.1")
    r = httpx.post(f"{base}/api/v1/games/{game_id}/rematch", headers=api(anna, "10.20.0.1"))
    assert r.status_code == 429, r.text
    assert r.json()["error"]["code"] == "rate_limited" and int(r.headers["retry-after"]) >= 1
    assert_offer_stands(base, game_id, anna_id)
    accepted_elsewhere(base, game_id, anna, "10.20.0.3")


async def test_accepting_over_the_socket_is_refused_with_an_error_frame(server):
    base = server.url
    anna_id, anna = new_guest(base, "Anna")
    game_id = offered_duel(base, anna, "10.21.0")
    spend_duels(base, "10.21.0.1")
    url = f"{ws_base(base)}/api/v1/games/{game_id}/ws"
    async with connect(url, additional_headers=api(anna, "10.21.0.1")) as ws:
        assert msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))["t"] == "snapshot"
        for _ in range(2):  # refused again: the socket stays open
            await ws.send(msgpack.packb({"t": "rematch"}))
            for _ in range(20):  # skip presence frames
                frame = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))
                if frame["t"] in ("error", "update"):
                    break
            assert frame["t"] == "error" and frame["code"] == "rate_limited", frame
            assert "too many new games" in frame["message"]
    assert_offer_stands(base, game_id, anna_id)
    accepted_elsewhere(base, game_id, anna, "10.21.0.3")


def test_accepting_on_the_page_is_refused_with_slow_down(server):
    base = server.url
    cookie, anna = form_guest(base, "Anna")
    game_id = offered_duel(base, anna, "10.22.0")
    anna_id = room_of(base, game_id)["players"][0]["id"]
    spend_duels(base, "10.22.0.1")
    r = httpx.post(f"{base}/g/{game_id}/rematch", cookies={COOKIE: cookie},
                   headers={"origin": base, **xff("10.22.0.1")}, follow_redirects=False)
    assert r.status_code == 429 and "location" not in r.headers
    assert "Slow down" in r.text and int(r.headers["retry-after"]) >= 1
    assert_offer_stands(base, game_id, anna_id)
    r = httpx.post(f"{base}/g/{game_id}/rematch", cookies={COOKIE: cookie},
                   headers={"origin": base, **xff("10.22.0.3")}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/g/{room_of(base, game_id)['rematch']}"


# ---------------------------------------------------------------------- the computer, the classic game


def test_rematches_against_the_computer_spend_the_duels(server):
    base = server.url
    _id, anna = new_guest(base, "Anna")
    r = httpx.post(base + "/api/v1/games", json={"seat": 0, "opponent": {"computer": 1}}, headers=api(anna, "10.23.0.1"))
    assert r.status_code == 201, r.text
    game_id, made = r.json()["id"], 1
    while True:
        assert httpx.post(f"{base}/api/v1/games/{game_id}/resign", json={}, headers=api(anna, "10.23.0.1")).status_code == 200
        r = httpx.post(f"{base}/api/v1/games/{game_id}/rematch", headers=api(anna, "10.23.0.1"))
        if r.status_code != 201:
            break
        game_id, made = r.json()["id"], made + 1
        assert made <= DUELS, "a rematch against the computer made a room beyond the address's budget"
    assert made == DUELS and r.status_code == 429 and r.json()["error"]["code"] == "rate_limited"
    assert room_of(base, game_id)["rematch"] is None
    solo = httpx.post(base + "/api/v1/solo", json={}, headers=api(anna, "10.23.0.1"))
    assert solo.status_code == 201  # classic games have their own budget


def test_restarting_classic_games_spends_their_own_larger_budget(server):
    """40 classic games in a row by every route that makes one (the API's, its rematch, the
    browser's Restart and Play again forms, the page's rematch) while the duels are spent; then
    the classic budget itself runs out, on every one of those routes."""
    base, ip = server.url, "10.24.0.1"
    spend_duels(base, ip)
    cookie, token = form_guest(base, "Speedy")
    form_headers = {"origin": base, **xff(ip)}
    game_id, made = None, 0

    def restart(way: int) -> httpx.Response:
        if way == 0:
            return httpx.post(base + "/api/v1/solo", json={"preset": "beginner"}, headers=api(token, ip))
        if way == 1:
            return httpx.post(base + "/solo", data={"preset": "beginner"}, cookies={COOKIE: cookie},
                              headers=form_headers, follow_redirects=False)
        resigned = httpx.post(f"{base}/api/v1/games/{game_id}/resign", json={}, headers=api(token, ip))
        assert resigned.status_code == 200 or resigned.json()["error"]["code"] == "game_over", resigned.text
        if way == 2:
            return httpx.post(f"{base}/api/v1/games/{game_id}/rematch", headers=api(token, ip))
        return httpx.post(f"{base}/g/{game_id}/rematch", cookies={COOKIE: cookie}, headers=form_headers,
                          follow_redirects=False)

    def made_id(r: httpx.Response) -> str:
        assert r.status_code in (201, 303), (r.status_code, r.text[:300])
        return r.json()["id"] if r.status_code == 201 else r.headers["location"].removeprefix("/g/")

    for n in range(40):
        game_id, made = made_id(restart(n % 4)), made + 1
    assert httpx.post(base + "/api/v1/games", json={}, headers=api(token, ip)).status_code == 429  # duels still spent
    while made < CLASSICS:
        game_id, made = made_id(restart(made % 2)), made + 1
    for way in range(4):
        r = restart(way)
        assert r.status_code == 429, (way, r.status_code)
        if way in (0, 2):
            assert r.json()["error"]["code"] == "rate_limited"
        else:
            assert "Slow down" in r.text
    assert room_of(base, game_id)["rematch"] is None  # the refused restarts made nothing
    other = httpx.post(base + "/api/v1/solo", json={}, headers=api(token, "10.24.0.2"))
    assert other.status_code == 201  # the budget is the address's

"""Cross-site requests: websocket hijacking (Origin checked before the upgrade), CSRF on every
state-changing form, no cookie auth on the JSON API, cookie flags. Real server, real sockets."""

from __future__ import annotations

import secrets
import warnings

import httpx
import msgpack
import pytest

from server.client import Api
from tests.names import unique

from .util import COOKIE, form_guest, ws_attempt, ws_base

EVIL = "http://evil.example"
SAME_SITE_OTHER_PORT = "http://127.0.0.1:1"
"""Another origin on the same site: the browser would even send our SameSite=Lax cookie."""


async def a_game(base: str) -> tuple[str, str, str, str]:
    """A running game: ``(id, anna's cookie, anna's token, ben's token)``; Anna made it in the
    browser (cookie), Ben joined through the API."""
    cookie, token = form_guest(base, "Anna")
    async with Api(base) as api:
        ben = await api.guest(unique("Ben"))
        game = await api.create_game(token, seat=0, seed=3)
        await api.join(ben.token, game["id"])
    return game["id"], cookie, token, ben.token


# ---------------------------------------------------------------------- websockets


async def test_websockets_refuse_foreign_origins_before_the_upgrade(live_server):
    game_id, cookie, token, _ben = await a_game(live_server.url)
    base = ws_base(live_server.url)
    sockets = {
        "api": (f"{base}/api/v1/games/{game_id}/ws", {"Authorization": f"Bearer {token}"}),
        "browser": (f"{base}/g/{game_id}/ws", {"Cookie": f"{COOKIE}={cookie}"}),
    }
    for kind, (url, credentials) in sockets.items():
        # a page of another site, with the victim's credentials riding along: refused with 403
        for origin in (EVIL, SAME_SITE_OTHER_PORT, "null", "https://127.0.0.1.evil.example"):
            status = await ws_attempt(url, additional_headers={**credentials, "Origin": origin})
            assert status == 403, (kind, origin, status)
        # our own pages, and programs that send no Origin at all, are served
        for headers in ({**credentials, "Origin": live_server.url}, credentials):
            ws = await ws_attempt(url, additional_headers=headers)
            assert not isinstance(ws, int), (kind, headers, ws)
            first = await ws.recv()
            if kind == "api":
                assert msgpack.unpackb(first)["t"] == "snapshot"
            else:
                assert first.startswith("<!--snapshot-->")
            await ws.close()


async def test_allowed_origins_setting_replaces_the_same_host_rule(make_server):
    server = make_server(MINEDUEL_ALLOWED_ORIGINS="https://mineduel.example, https://www.mineduel.example")
    async with Api(server.url) as api:
        anna = await api.guest(unique("Anna"))
        game = await api.create_game(anna.token, seat=0)
    base = ws_base(server.url)
    for url in (f"{base}/api/v1/games/{game['id']}/ws", f"{base}/g/{game['id']}/ws"):
        for origin in ("https://mineduel.example", "https://WWW.mineduel.example"):
            ws = await ws_attempt(url, additional_headers={"Origin": origin})
            assert not isinstance(ws, int), (url, origin, ws)
            await ws.close()
        for origin in (server.url, "http://mineduel.example", "https://mineduel.example.evil.example"):
            assert await ws_attempt(url, additional_headers={"Origin": origin}) == 403, (url, origin)
    ok = httpx.post(server.url + "/guest", data={"name": unique("Cy")}, headers={"origin": "https://mineduel.example"})
    assert ok.status_code == 303
    refused = httpx.post(server.url + "/guest", data={"name": unique("Cy")}, headers={"origin": server.url})
    assert refused.status_code == 403


# ---------------------------------------------------------------------- forms (CSRF)

CROSS_SITE = [
    {"origin": EVIL},
    {"origin": SAME_SITE_OTHER_PORT},
    {"origin": "null"},
    {"referer": EVIL + "/page"},  # no Origin (old browsers): the Referer decides
]


async def form_case(base: str, route: str) -> tuple[str, dict, dict | None, object]:
    """``(path, form, cookies, changed)`` for one form route; ``await changed()`` tells whether
    the post took effect."""
    name = "Csrf" + secrets.token_hex(4)
    cookie, token = form_guest(base, name)
    jar = {COOKIE: cookie}
    async with Api(base) as api:
        if route == "guest":
            return "/guest", {"name": unique("Eve"), "next": "/"}, None, None  # the effect is the cookie
        if route == "games":
            async def changed() -> bool:
                return name in httpx.get(base + "/").text  # the lobby lists games made from the page
            return "/games", {"ruleset": "brettspielnetz", "seat": "0", "clock": "none"}, jar, changed
        other = await api.guest(unique("Cy"))
        if route == "join":
            waiting = await api.create_game(other.token, seat=0)

            async def changed() -> bool:
                async with Api(base) as a:
                    return (await a.game(waiting["id"]))["room"]["status"] != "waiting"
            return f"/g/{waiting['id']}/join", {}, jar, changed
        over = await api.create_game(token, seat=0)
        await api.join(other.token, over["id"])
        await api.request("POST", f"/api/v1/games/{over['id']}/resign", other.token)

        async def changed() -> bool:
            async with Api(base) as a:
                room = (await a.game(over["id"]))["room"]
                return room["rematch"] is not None or room["rematch_offer"] is not None  # offered
        return f"/g/{over['id']}/rematch", {}, jar, changed


@pytest.mark.parametrize("route", ["guest", "games", "join", "rematch"])
async def test_every_state_changing_form_refuses_cross_site_posts(live_server, route):
    base = live_server.url
    path, form, cookies, changed = await form_case(base, route)
    for headers in CROSS_SITE:
        r = httpx.post(base + path, data=form, cookies=cookies, headers=headers, follow_redirects=False)
        assert r.status_code == 403, (path, headers, r.status_code)
        assert "set-cookie" not in r.headers and "location" not in r.headers, path
        assert "another site" in r.text
    if changed is not None:
        assert not await changed()  # nothing happened
    # the same post from our own pages works (so the 403s above are the origin check)
    r = httpx.post(base + path, data=form, cookies=cookies, headers={"origin": base}, follow_redirects=False)
    assert r.status_code == 303, (path, r.status_code)
    assert "set-cookie" in r.headers if route == "guest" else await changed()


async def test_the_json_api_never_takes_the_cookie(live_server):
    """CSRF-safe by construction: the API authenticates only with ``Authorization: Bearer``
    (or ``?token=``), which a browser never adds by itself to a cross-site request."""
    base = live_server.url
    game_id, cookie, _token, _ben = await a_game(base)
    jar = {COOKIE: cookie}
    for method, path in [("POST", "/api/v1/games"), ("POST", f"/api/v1/games/{game_id}/join"),
                         ("POST", f"/api/v1/games/{game_id}/resign"), ("POST", f"/api/v1/games/{game_id}/rematch")]:
        r = httpx.request(method, base + path, cookies=jar, headers={"origin": base}, json={})
        assert r.status_code == 401 and r.json()["error"]["code"] == "no_token", (path, r.status_code)
    seen = httpx.get(f"{base}/api/v1/games/{game_id}", cookies=jar).json()
    assert seen["you"] == 2  # the cookie's owner holds seat 0, but without a token it is a spectator
    # no CORS: other sites' scripts can neither read API answers nor send a token preflighted
    r = httpx.options(f"{base}/api/v1/games", headers={"origin": EVIL, "access-control-request-method": "POST",
                                                        "access-control-request-headers": "authorization"})
    assert r.status_code == 405 and "access-control-allow-origin" not in r.headers
    assert "access-control-allow-origin" not in httpx.get(f"{base}/api/v1/games/{game_id}",
                                                          headers={"origin": EVIL}).headers
    async with Api(base) as api:
        assert (await api.game(game_id))["room"]["status"] == "playing"


# ---------------------------------------------------------------------- cookie flags


def flags(set_cookie: str) -> set[str]:
    """``"c=v; HttpOnly; Path=/; SameSite=lax"`` → ``{"httponly", "path=/", "samesite=lax"}``."""
    return {part.strip().lower() for part in set_cookie.split(";")[1:]}


def test_guest_cookie_flags_plain_http(live_server):
    r = httpx.post(live_server.url + "/guest", data={"name": unique("Anna")}, headers={"origin": live_server.url,
                                                                                 "x-forwarded-proto": "https"})
    f = flags(r.headers["set-cookie"])
    assert {"httponly", "samesite=lax"} <= f
    assert "secure" not in f  # plain http, and the forwarded header is not trusted by default


def test_guest_cookie_is_secure_behind_a_trusted_tls_proxy(make_server):
    server = make_server(MINEDUEL_TRUSTED_PROXY="1")
    tls_page = server.url.replace("http://", "https://", 1)  # the proxy serves our pages over TLS
    r = httpx.post(server.url + "/guest", data={"name": unique("Anna")},
                   headers={"origin": tls_page, "x-forwarded-proto": "https"})
    assert {"httponly", "samesite=lax", "secure"} <= flags(r.headers["set-cookie"])
    r = httpx.post(server.url + "/guest", data={"name": unique("Anna")},
                   headers={"origin": server.url, "x-forwarded-proto": "https"})
    assert r.status_code == 403 and "set-cookie" not in r.headers  # a plain page of our host, on the TLS site
    r = httpx.post(server.url + "/guest", data={"name": unique("Anna")}, headers={"origin": server.url})
    assert "secure" not in flags(r.headers["set-cookie"])


def test_guest_cookie_is_secure_over_https(redis_url):
    from server.app import create_app
    from tests.conftest import app_settings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    app = create_app(app_settings(redis_url=redis_url, secret_key="tls-test"))
    with TestClient(app, base_url="https://mineduel.test", follow_redirects=False) as client:
        r = client.post("/guest", data={"name": unique("Anna")}, headers={"origin": "https://mineduel.test"})
    assert r.status_code == 303
    assert {"httponly", "samesite=lax", "secure"} <= flags(r.headers["set-cookie"])

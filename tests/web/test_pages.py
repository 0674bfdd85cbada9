"""HTTP side of the browser edge, in-process against a real Valkey: security headers, the
versioned assets, the guest cookie, forms and their origin check. No browser needed."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import AsyncMock

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's "use httpx2" notice: the same API for these tests
    from starlette.testclient import TestClient

from server.app import create_app
from server.core.room import Status
from server.edge.csp import CSP
from server.store.results import DEFAULT_PRESET
from tests.conftest import app_settings
from tests.names import unique

ROOT = Path(__file__).resolve().parents[2]
BASE = "http://testserver"


@pytest.fixture(scope="module")
def client(redis_url: str) -> Iterator[TestClient]:
    settings = app_settings(redis_url=redis_url, secret_key="pages-test", test_hooks=True)
    with TestClient(create_app(settings), base_url=BASE, follow_redirects=False) as test_client:
        yield test_client


def named(client: TestClient, name: str) -> dict[str, str]:
    """A new guest's cookie (as a dict), via the home page's name form."""
    client.cookies.clear()
    response = client.post("/guest", data={"name": unique(name), "next": "/"}, headers={"origin": BASE})
    assert response.status_code == 303
    client.cookies.clear()
    return {"mineduel_guest": response.cookies["mineduel_guest"]}


def as_(client: TestClient, jar: dict[str, str] | None) -> TestClient:
    """The client, now carrying ``jar``'s cookie (or none)."""
    client.cookies.clear()
    for key, value in (jar or {}).items():
        client.cookies.set(key, value)
    return client


def test_pages_carry_a_strict_csp_and_no_inline_code(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    headers = response.headers
    assert headers["content-security-policy"] == CSP
    assert "default-src 'self'" in CSP and "script-src 'self'" in CSP and "style-src 'self'" in CSP
    assert "unsafe" not in CSP
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    html = response.text
    assert re.findall(r"<script(?![^>]*\bsrc=)", html) == []  # every script is a file
    assert " style=" not in html and "<style" not in html
    assert 'name="htmx-config"' in html and '"includeIndicatorStyles": false' in html
    assert not re.findall(r'(?:src|href)="(?:https?:)?//', html)  # no CDN, nothing from elsewhere


def test_assets_are_versioned_and_cached_for_a_year(client: TestClient) -> None:
    html = client.get("/").text
    urls = re.findall(r'(?:src|href)="(/static/v/[0-9a-f]{12}/[^"]+)"', html)
    assert {u.rsplit("/", 1)[1] for u in urls} >= {"htmx.min.js", "ws.min.js", "idiomorph-ext.min.js", "app.css"}
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert response.headers["x-content-type-options"] == "nosniff"
    htmx = client.get(next(u for u in urls if u.endswith("htmx.min.js")))
    assert htmx.headers["content-type"].startswith(("application/javascript", "text/javascript"))
    assert htmx.content == (ROOT / "web/node_modules/htmx.org/dist/htmx.min.js").read_bytes()
    assert 'version:"2.0.' in htmx.text
    morph = client.get(next(u for u in urls if u.endswith("idiomorph-ext.min.js")))  # the frames' morph swap
    assert morph.content == (ROOT / "web/node_modules/idiomorph/dist/idiomorph-ext.min.js").read_bytes()
    css = next(u for u in urls if u.endswith("app.css"))
    assert client.get(css, headers={"accept-encoding": "gzip"}).headers.get("content-encoding") == "gzip"
    etag = client.get(css).headers["etag"]
    assert client.get(css, headers={"if-none-match": etag}).status_code == 304
    other = re.sub(r"/v/[0-9a-f]{12}/", "/v/000000000000/", css)
    assert client.get(other).headers["cache-control"] == "no-cache"  # an old page still works
    assert client.get(re.sub(r"app\.css$", "nope.css", css)).status_code == 404
    assert client.get(re.sub(r"app\.css$", "../../../pyproject.toml", css)).status_code == 404


def test_asset_revalidation_follows_rfc_9110(client: TestClient) -> None:
    """A browser or proxy revalidating app.css with any form of ``If-None-Match`` that names it
    (weakly compared, in a list, or ``*``) gets a bodiless 304, never the file again."""
    css = re.search(r'href="(/static/v/[0-9a-f]{12}/app\.css)"', client.get("/").text)[1]
    etag = client.get(css).headers["etag"]
    for header in (etag, f"W/{etag}", f'{etag}, "other"', f'"other",W/{etag}', "*", " * "):
        response = client.get(css, headers={"if-none-match": header})
        assert response.status_code == 304 and response.content == b"", header
        assert response.headers["etag"] == etag and response.headers["vary"] == "accept-encoding"
    for header in ('"other"', 'W/"other", "more"', etag[:-2] + '"', etag.strip('"')):
        assert client.get(css, headers={"if-none-match": header}).status_code == 200, header


def test_assets_are_gzipped_only_for_a_client_that_accepts_gzip(client: TestClient) -> None:
    """``Accept-Encoding`` is read as codings with q-values: ``gzip;q=0`` or ``nogzip`` must get
    the plain file, and ``*`` does not bring back a gzip the header refused by name."""
    css = re.search(r'href="(/static/v/[0-9a-f]{12}/app\.css)"', client.get("/").text)[1]
    plain = (ROOT / "web/static/app.css").read_bytes()
    takes = ("gzip", "GZip", "x-gzip", "br, gzip;q=0.5", "deflate ; q=1, gzip ;Q=0.1", "*", "br, *;q=0.2")
    refuses = ("gzip;q=0", "gzip; q=0.000", "nogzip", "gzipped", "x-gzip2", "identity", "", "br",
               "*;q=0", "gzip;q=0, *", "*, x-gzip;q=0, gzip;q=0", "gzip;q=oops")
    for header, zipped in [(h, True) for h in takes] + [(h, False) for h in refuses]:
        response = client.get(css, headers={"accept-encoding": header})
        assert response.status_code == 200 and response.content == plain, header
        assert (response.headers.get("content-encoding") == "gzip") is zipped, header
        assert response.headers["vary"] == "accept-encoding", header


def test_pinned_htmx_versions() -> None:
    package = json.loads((ROOT / "web/package.json").read_text())
    assert package["dependencies"]["htmx-ext-ws"] == "2.0.4"
    assert re.fullmatch(r"2\.0\.\d+", package["dependencies"]["htmx.org"])
    lock = json.loads((ROOT / "web/package-lock.json").read_text())
    assert lock["packages"]["node_modules/htmx-ext-ws"]["version"] == "2.0.4"
    assert lock["packages"]["node_modules/htmx.org"]["version"] == package["dependencies"]["htmx.org"]


def test_guest_cookie_is_signed_httponly_lax(client: TestClient) -> None:
    anna = unique("Anna")
    response = as_(client, None).post("/guest", data={"name": anna, "next": "/g/x"}, headers={"origin": BASE})
    assert response.status_code == 303 and response.headers["location"] == "/g/x"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie.replace("Lax", "lax") and "Path=/" in cookie
    jar = {"mineduel_guest": response.cookies["mineduel_guest"]}
    assert f"Playing as <strong>{anna}</strong>" in as_(client, jar).get("/").text
    forged = {"mineduel_guest": jar["mineduel_guest"][:-3] + "abc"}
    assert "Playing as" not in as_(client, forged).get("/").text


def test_forms_refuse_other_origins_and_open_redirects(client: TestClient) -> None:
    assert client.post("/guest", data={"name": "Eve"}, headers={"origin": "https://evil.example"}).status_code == 403
    response = client.post("/guest", data={"name": unique("Eve"), "next": "//evil.example/x"}, headers={"origin": BASE})
    assert response.headers["location"] == "/"
    jar = named(client, "Anna")
    assert as_(client, jar).post("/games", data={"seat": "0"},
                       headers={"origin": "https://evil.example"}).status_code == 403


def test_create_join_and_the_room_page(client: TestClient) -> None:
    anna, ben = named(client, "Anna"), named(client, "Ben")
    response = as_(client, anna).post("/games", data={"ruleset": "coan", "clock": "300+0", "seat": "0", "seed": "7"},
                                      headers={"origin": BASE})
    assert response.status_code == 303
    room_url = response.headers["location"]
    page = as_(client, anna).get(room_url).text
    assert 'ws-connect="' + room_url + '/ws?t=' in page and "ws-send" in page  # with its socket ticket
    assert 'id="invite-url"' in page and "Waiting for an opponent" in page
    assert "Coan rules" in page and 'id="clock-0"' in page
    home = as_(client, None).get("/").text  # the lobby lists it as an open challenge to accept
    room_id = room_url.rsplit("/", 1)[1]
    assert f'action="{room_url}/join"' in home and f'id="accept-{room_id}"' in home
    own = as_(client, anna).get("/").text  # its creator may only cancel it
    assert f'action="{room_url}/cancel"' in own and f'id="accept-{room_id}"' not in own
    stranger = as_(client, None).get(room_url).text
    assert 'id="join"' in stranger and 'id="invite-url"' not in stranger
    assert as_(client, ben).post(room_url + "/join", headers={"origin": BASE}).status_code == 303
    page = as_(client, ben).get(room_url).text
    assert re.search("Anna-\\w+ to move", page)
    assert page.count('type="submit" id="cell-') == 120  # every hidden cell is a button to press
    assert client.get(room_url + "/replay?at=0", headers={"hx-request": "true"}).status_code == 409
    home = as_(client, None).get("/").text  # in play now: a live game to watch, no longer a challenge
    assert f'id="watch-{room_id}"' in home and f'id="accept-{room_id}"' not in home
    assert client.get("/g/doesnotexist").status_code == 404
    assert client.get("/join", params={"code": "http://x/g/abc_DEF"}).headers["location"] == "/g/abc_DEF"


def test_a_join_that_lands_while_a_cancel_is_decided_wins(client: TestClient, monkeypatch) -> None:
    """Cancel and join at once: the cancel read the waiting room, the join committed before
    the cancel's abort. The joined game goes on; the cancel changes nothing."""
    anna, ben = named(client, "Anna"), named(client, "Ben")
    room_url = as_(client, anna).post("/games", data={"seat": "0", "seed": "7"}, headers={"origin": BASE}).headers["location"]
    room_id = room_url.rsplit("/", 1)[1]
    rooms = client.app.state.rooms  # type: ignore[attr-defined]
    waiting = client.portal.call(rooms.latest, room_id)  # type: ignore[union-attr]
    assert as_(client, ben).post(room_url + "/join", headers={"origin": BASE}).status_code == 303
    read_before_the_join = AsyncMock(return_value=waiting)
    monkeypatch.setattr(rooms, "latest", read_before_the_join)
    assert as_(client, anna).post(room_url + "/cancel", headers={"origin": BASE}).headers["location"] == "/"
    assert read_before_the_join.await_count == 1
    monkeypatch.undo()
    room = client.portal.call(rooms.latest, room_id)  # type: ignore[union-attr]
    assert room.status is Status.PLAYING and room.version == waiting.version + 1


def test_seed_is_a_test_hook_only(redis_url: str) -> None:
    """Without the test hooks a form's ``seed`` is refused (403), as the JSON API refuses it
    (``test_hooks_off``), and nothing is made: no page sends one."""
    settings = app_settings(redis_url=redis_url, secret_key="pages-test", test_hooks=False)
    with TestClient(create_app(settings), base_url=BASE, follow_redirects=False) as plain:
        jar = named(plain, "Anna")
        for path, form in (("/games", {"seat": "0", "seed": "7"}), ("/solo", {"preset": "beginner", "seed": "7"})):
            response = as_(plain, jar).post(path, data=form, headers={"origin": BASE})
            assert response.status_code == 403 and "location" not in response.headers, path
            assert "The seed is a test-only hook" in response.text
        assert as_(plain, jar).get("/me").text.count('class="game-row') == 0  # no game of hers
        assert as_(plain, jar).post("/games", data={"seat": "0"}, headers={"origin": BASE}).status_code == 303
        assert as_(plain, jar).get("/me").text.count('class="game-row') == 1  # (as "My games" would list one)


def test_the_turn_sound_is_a_preference_set_by_a_form_on_the_room_page(client: TestClient) -> None:
    anna = named(client, "Anna")
    room_url = as_(client, anna).post("/games", data={"seat": "0", "seed": "7"}, headers={"origin": BASE}).headers["location"]
    page = as_(client, anna).get(room_url).text
    assert 'id="sound-button" aria-pressed="false"' in page and 'name="sound" value="on"' in page
    assert "<audio" not in page
    assert as_(client, anna).post(room_url + "/sound", data={"sound": "on"},
                                  headers={"origin": "https://evil.example"}).status_code == 403
    response = as_(client, anna).post(room_url + "/sound", data={"sound": "on"}, headers={"origin": BASE})
    assert response.status_code == 303 and response.headers["location"] == room_url
    assert response.cookies["mineduel_sound"] == "on"
    page = as_(client, {**anna, "mineduel_sound": "on"}).get(room_url).text
    assert 'id="sound-button" aria-pressed="true"' in page and 'name="sound" value="off"' in page
    assert 'id="sound-button"' not in as_(client, None).get(room_url).text  # a spectator has no turn


def test_the_way_to_a_rematch(client: TestClient) -> None:
    """``GET /g/{id}/rematch``: what the link that takes the offering player's page to the rematch
    asks (htmx: ``HX-Redirect``, no body), and a plain redirect for anyone else; before the
    rematch is linked it goes nowhere, and it changes nothing."""
    client.cookies.clear()
    anna, ben = (client.post("/api/v1/guests", json={"name": unique(n)}).json()["token"] for n in ("Anna", "Ben"))
    bearer = [{"authorization": f"Bearer {token}"} for token in (anna, ben)]
    room_id = client.post("/api/v1/games", json={"seat": 0}, headers=bearer[0]).json()["id"]
    assert client.post(f"/api/v1/games/{room_id}/join", headers=bearer[1]).status_code == 200
    assert client.post(f"/api/v1/games/{room_id}/resign", headers=bearer[1]).status_code == 200
    htmx = {"hx-request": "true"}
    url = f"/g/{room_id}/rematch"
    nothing = client.get(url, headers=htmx)
    assert nothing.status_code == 204 and "hx-redirect" not in nothing.headers and nothing.content == b""
    assert client.get(url).headers["location"] == f"/g/{room_id}"
    assert client.post(f"/api/v1/games/{room_id}/rematch", headers=bearer[1]).status_code == 202
    assert client.get(url, headers=htmx).status_code == 204  # offered, not linked: still nowhere
    before = client.get(f"/api/v1/games/{room_id}").json()["v"]
    new_id = client.post(f"/api/v1/games/{room_id}/rematch", headers=bearer[0]).json()["id"]
    linked = client.get(url, headers=htmx)
    assert linked.status_code == 204 and linked.headers["hx-redirect"] == f"/g/{new_id}"
    assert linked.headers["cache-control"] == "no-store"
    plain = client.get(url)
    assert plain.status_code == 303 and plain.headers["location"] == f"/g/{new_id}"
    assert client.get(f"/api/v1/games/{room_id}").json()["v"] == before + 1  # the link only
    assert client.get("/g/doesnotexist/rematch", headers=htmx).status_code == 404


def test_an_address_no_route_serves_is_the_site_s_page_in_the_reader_s_language(client: TestClient) -> None:
    """The router's own 404 and 405 are the site's error page (German for a German reader, the
    security headers, the visitor's header; 405 keeps ``Allow``); the API's are its JSON."""
    cookie = named(client, "Lost")
    client.cookies.update(cookie)
    for method, path, status in (("GET", "/nope", 404), ("GET", "/g/abc/nope", 404), ("GET", "/guest", 405),
                                 ("POST", "/solo/leaderboard", 405)):
        page = client.request(method, path, headers={"accept-language": "de", "origin": BASE})
        assert page.status_code == status and page.headers["content-type"].startswith("text/html"), (path, page.text[:200])
        assert page.headers["content-security-policy"] == CSP and page.headers["x-content-type-options"] == "nosniff"
        assert '<html lang="de">' in page.text and "Du spielst als" in page.text, page.text[:600]
        assert ("Seite nicht gefunden" if status == 404 else "Nicht hier") in page.text
        assert status == 404 or "POST" in page.headers["allow"] or "GET" in page.headers["allow"]
    client.cookies.clear()
    english = client.get("/nope")
    assert "Page not found" in english.text and "There is no page at this address." in english.text
    for method, path, status, code in (("GET", "/api/v1/nope", 404, "not_found"),
                                       ("GET", "/api/v1/games", 405, "method_not_allowed")):
        answer = client.request(method, path)
        assert answer.status_code == status and answer.json()["error"]["code"] == code
    assert "POST" in client.get("/api/v1/games").headers["allow"]


def test_a_classic_game_has_replay_steps_but_no_odds(client: TestClient) -> None:
    """Its replay steps answer once it is over (409 before, as a duel's); its odds step answers
    404 in every state (no analysis; it answered 500 once). A game given up before its first
    click has one step, the giving up (tests/web/test_solo_replay.py plays a whole game)."""
    made = client.post("/api/v1/guests", json={"name": unique("Sol")}).json()
    auth = {"authorization": f"Bearer {made['token']}"}
    game = client.post("/api/v1/solo", json={"preset": "beginner"}, headers=auth).json()["id"]
    for ended in (False, True):
        if ended:
            assert client.post(f"/api/v1/games/{game}/resign", headers=auth).status_code == 200
        for headers in ({"hx-request": "true"}, {}):
            page = client.get(f"/g/{game}/odds?at=1", headers=headers)
            assert page.status_code == 404 and "Only duels have odds" in page.text, page.text[:300]
            if not ended:
                step = client.get(f"/g/{game}/replay?at=3&odds=1", headers=headers)
                assert step.status_code == 409 and "The replay opens when the game is over." in step.text
    step = client.get(f"/g/{game}/replay?at=3&odds=1", headers={"hx-request": "true"}).text
    assert '<span class="step">1/1</span>' in step and "gave up." in step and "odds" not in step
    assert client.get(f"/g/{game}/replay?at=0").headers["location"] == f"/g/{game}?at=0"
    page = client.get(f"/g/{game}").text
    assert 'id="replay"' in page and 'class="endgame solo-end"' in page  # the bar shows though no figures do


def test_room_pages_have_one_heading_that_names_the_game(client: TestClient) -> None:
    """A duel's page and a solo game's page each have an ``<h1>``, as every other page does: the
    terms of the duel (its clock named as the lobby names it), first in the page for a reader
    that goes by headings (shown beside the board, said once), the solo game's board."""
    anna = named(client, "Anna")
    duel = as_(client, anna).post("/games", data={"ruleset": "coan", "clock": "300+3", "seat": "0", "seed": "7"},
                                  headers={"origin": BASE}).headers["location"]
    solo = as_(client, anna).post("/solo", data={"preset": "beginner", "seed": "7"},
                                  headers={"origin": BASE}).headers["location"]
    duel_page, solo_page = (as_(client, anna).get(url).text for url in (duel, solo))
    for page in (duel_page, solo_page):
        assert len(re.findall(r"<h1[ >]", page)) == 1
    assert '<h1 class="visually-hidden">Coan rules \u00b7 5+3</h1>' in duel_page
    assert duel_page.index("<h1") < duel_page.index('id="status"') < duel_page.index('id="board"')
    assert '<p class="ruleset" aria-hidden="true">Coan rules \u00b7 5+3</p>' in duel_page
    assert 'id="kbd-hint"' in duel_page  # what the playable board describes itself with (test_render)
    for page, target in ((duel_page, "controls"), (solo_page, "after-board")):  # the way past the cells
        assert page.index(f'href="#{target}"') < page.index('id="board"') < page.index(f'id="{target}"')
    assert '<h1 class="solo-title hint">Beginner</h1>' in solo_page


def test_the_header_s_new_game_link_leads_to_what_starts_one(client: TestClient) -> None:
    """With a name: the home page's "New game" card; without one: the name card (the home page
    has no "New game" card then), whose name leads on to it."""
    home = as_(client, None).get("/").text
    assert 'id="nav-new"' in home and 'href="/#name-card"' in home and 'id="name-card"' in home
    assert 'id="new"' not in home
    named_home = as_(client, named(client, "Anna")).get("/").text
    assert 'href="/#new"' in named_home and 'id="new"' in named_home and 'id="name-card"' not in named_home


def test_the_leaderboard_page_shows_the_board_the_api_defaults_to(client: TestClient) -> None:
    """``/solo/leaderboard`` without ``?preset=`` is the Beginner board, as ``GET
    /api/v1/leaderboard`` answers without one; its heading reads as a sentence in German too."""
    client.cookies.clear()
    assert client.get("/api/v1/leaderboard").json()["preset"] == DEFAULT_PRESET == "beginner"
    board = client.get("/solo/leaderboard").text
    assert "<h1>Beginner leaderboard (classic, all time)</h1>" in board
    assert len(re.findall(r'aria-current="page"', board)) == 3  # the preset, mode and period shown
    german = client.get("/solo/leaderboard", params={"period": "all"}, headers={"accept-language": "de"}).text
    assert "<h1>Bestenliste Anfänger (klassisch, alle Zeiten)</h1>" in german
    assert ">alle Zeiten</a>" in german and "aller Zeiten" not in german


def test_a_classic_game_s_restart_is_the_player_s_until_the_end_screen(client: TestClient) -> None:
    """Restart beside the board is the player's only, and stays while there is no end screen
    (a game given up before its first click has none); the end screen's Play again replaces it
    (tests/web/test_solo_browser.py sees that in a won game)."""
    cookie = named(client, "Sol")
    client.cookies.update(cookie)
    made = client.post("/solo", data={"preset": "beginner"}, headers={"origin": BASE})
    room_url = made.headers["location"]
    page = client.get(room_url).text
    assert 'id="restart-area"' in page and 'id="restart"' in page and 'id="again"' not in page
    client.cookies.clear()
    watching = client.get(room_url).text
    assert 'id="restart-area"' in watching and 'id="restart"' not in watching
    client.cookies.update(cookie)
    token = client.app.state.web.token_of(SimpleNamespace(cookies=cookie))  # type: ignore[attr-defined]  # the page's guest
    assert client.post(f"/api/v1/games/{room_url.rsplit('/', 1)[1]}/resign",
                       headers={"authorization": f"Bearer {token}"}).status_code == 200
    given_up = client.get(room_url).text  # before the first click: no end screen, Restart stays
    assert 'id="restart"' in given_up and 'id="again"' not in given_up
    client.cookies.clear()

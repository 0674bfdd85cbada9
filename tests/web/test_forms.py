"""The browser's forms refuse what they cannot read or never offer, and change nothing then
(``server/web/forms.py``: ``form_of``, ``BadForm``; the form routes of ``home_pages``,
``solo_pages``, ``pair_pages``); error pages keep the visitor's header; a visitor keeps their
guest; the header shows the registered name. In-process against a real Valkey, no browser."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's "use httpx2" notice: the same API for these tests
    from starlette.testclient import TestClient

from server.app import create_app
from server.edge.csp import CSP
from server.web.site import COOKIE
from tests.conftest import app_settings
from tests.names import unique

BASE = "http://testserver"
SAME_SITE = {"origin": BASE}
URLENCODED = {**SAME_SITE, "content-type": "application/x-www-form-urlencoded"}


@pytest.fixture(scope="module")
def client(redis_url: str) -> Iterator[TestClient]:
    settings = app_settings(redis_url=redis_url, secret_key="forms-test", test_hooks=True,
                            max_body_bytes=65_536)  # above the forms' own limit, which then answers
    with TestClient(create_app(settings), base_url=BASE, follow_redirects=False) as test_client:
        yield test_client


class Guest:
    """A guest made through the API, with the cookie a browser of theirs would carry."""

    def __init__(self, client: TestClient, name: str) -> None:
        made = client.post("/api/v1/guests", json={"name": unique(name)}).json()
        self.client, self.id, self.name, self.token = client, made["id"], made["name"], made["token"]
        self.cookie = client.app.state.web.cookies.dumps(self.token)  # type: ignore[attr-defined]

    def post(self, path: str, data: Any = None, headers: dict[str, str] = SAME_SITE, **kwargs: Any) -> Any:
        self.client.cookies.clear()
        self.client.cookies.set(COOKIE, self.cookie)
        return self.client.post(path, data=data, headers=headers, **kwargs)

    def get(self, path: str, **kwargs: Any) -> Any:
        self.client.cookies.clear()
        self.client.cookies.set(COOKIE, self.cookie)
        return self.client.get(path, **kwargs)

    def games(self) -> list[dict[str, Any]]:
        """Their games being played or waiting (the API shows waiting ones to their own token)."""
        return self.client.get(f"/api/v1/players/{self.id}/games",
                               headers={"authorization": f"Bearer {self.token}"}).json()["games"]


def anonymous(client: TestClient) -> TestClient:
    client.cookies.clear()
    return client


def refused(response: Any, status: int, says: str) -> None:
    """An error page (with the security headers) saying why, and no cookie, no redirect."""
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert says in response.text, response.text[:600]
    assert "set-cookie" not in response.headers and "location" not in response.headers
    assert response.headers["content-security-policy"] == CSP


def shows_header_of(response: Any, name: str) -> bool:
    return f"Playing as <strong>{name}</strong>" in response.text and 'id="nav-my-games"' in response.text


# ---------------------------------------------------------------------- A: bodies that are no form


def test_a_body_that_is_not_a_small_urlencoded_form_creates_no_guest(client: TestClient) -> None:
    name = unique("Anna")
    bodies = [
        (b"name=\xff\xfe", URLENCODED, 400, "Its text is not valid UTF-8."),
        (b"name=%FF%FE", URLENCODED, 400, "Its text is not valid UTF-8."),  # percent-escaped, still not UTF-8
        (("&".join(f"f{i}=x" for i in range(40)) + f"&name={name}").encode(), URLENCODED, 400,
         "It has more than 32 fields."),
        (f"name={name}&pad={'x' * 5000}".encode(), URLENCODED, 413, "It is larger than 4096 bytes."),
        (f'{{"name": "{name}"}}'.encode(), {**SAME_SITE, "content-type": "application/json"}, 415, "URL-encoded"),
        (f'--x\r\nContent-Disposition: form-data; name="name"\r\n\r\n{name}\r\n--x--\r\n'.encode(),
         {**SAME_SITE, "content-type": "multipart/form-data; boundary=x"}, 415, "URL-encoded"),
        (f"name={name}".encode(), SAME_SITE, 415, "URL-encoded"),  # a body without a type
    ]
    for body, headers, status, says in bodies:
        response = anonymous(client).post("/guest", content=body, headers=headers)
        refused(response, status, "Cannot read that form")
        assert says in response.text, (body[:40], response.text[:400])
    assert client.post("/api/v1/guests", json={"name": name}).status_code == 201  # the name was never taken


def test_a_body_that_is_not_a_form_creates_no_game(client: TestClient) -> None:
    anna = Guest(client, "Anna")
    multipart = {**SAME_SITE, "content-type": "multipart/form-data; boundary=x"}
    refused(anna.post("/games", content=b'--x\r\nContent-Disposition: form-data; name="seat"\r\n\r\n0\r\n--x--\r\n',
                      headers=multipart), 415, "URL-encoded")
    refused(anna.post("/games", content=b"ruleset=coan&clock=\xff", headers=URLENCODED), 400, "not valid UTF-8")
    json_type = {**SAME_SITE, "content-type": "application/json"}
    refused(anna.post("/solo", content=b'{"preset": "beginner"}', headers=json_type), 415, "URL-encoded")
    refused(anna.post("/play/computer", content=b"level=\xff", headers=URLENCODED), 400, "not valid UTF-8")
    assert anna.games() == []


def test_every_form_reader_refuses_a_body_it_cannot_read(client: TestClient) -> None:
    """Forms whose routes do not answer a bad body themselves (the language switch, the sound
    toggle) get the same page from the app, security headers included, and change nothing."""
    anna = Guest(client, "Anna")
    room_url = anna.post("/games", data={"seat": "0"}).headers["location"]
    refused(anna.post(room_url + "/sound", content=b"sound=\xff", headers=URLENCODED), 400, "not valid UTF-8")
    refused(anna.post("/lang", content=b'{"lang": "de"}', headers={**SAME_SITE, "content-type": "application/json"}),
            415, "URL-encoded")


def test_a_room_s_buttons_refuse_a_body_that_is_no_form(client: TestClient) -> None:
    """Join, cancel, rematch and decline send no field: a body that is no form of ours is
    refused before anything happens (the second seat stays empty)."""
    anna, ben = Guest(client, "Anna"), Guest(client, "Ben")
    room_url = anna.post("/games", data={"seat": "0"}).headers["location"]
    json_type = {**SAME_SITE, "content-type": "application/json"}
    for action in ("join", "cancel", "rematch", "rematch/decline"):
        refused(ben.post(f"{room_url}/{action}", content=b"{}", headers=json_type), 415, "URL-encoded")
    assert ben.games() == [] and ben.post(f"{room_url}/join").status_code == 303
    assert [g["id"] for g in ben.games()] == [room_url.rsplit("/", 1)[1]]


def test_an_empty_body_is_still_an_empty_form(client: TestClient) -> None:
    """A form of one button sends nothing: such a post keeps every default."""
    anna = Guest(client, "Anna")
    response = anna.post("/games", content=b"", headers=URLENCODED)
    assert response.status_code == 303 and response.headers["location"].startswith("/g/")
    assert [g["id"] for g in anna.games()] == [response.headers["location"].rsplit("/", 1)[1]]


# ---------------------------------------------------------------------- B: values no page offers


def test_values_no_page_offers_are_refused_and_make_no_game(client: TestClient) -> None:
    anna = Guest(client, "Anna")
    cases = [
        ("/games", {"clock": "bogus"}, "There is no such clock."),
        ("/games", {"clock": "999999+0"}, "There is no such clock."),
        ("/games", {"rated": "on"}, "A rated game needs a clock."),
        ("/games", {"rated": "on", "clock": "none"}, "A rated game needs a clock."),
        ("/games", {"rated": "yes", "clock": "180+2"}, "“rated” is a box to tick"),
        ("/games", {"private": "1"}, "“private” is a box to tick"),
        ("/games", {"seat": "5"}, "There is no such seat."),
        ("/games", {"seat": "-1"}, "There is no such seat."),
        ("/games", {"ruleset": "bogus"}, "There are no such rules."),
        ("/games", {"seed": "x"}, "A seed is a whole number."),
        ("/play/computer", {"level": "1", "ruleset": "bogus"}, "There are no such rules."),
        ("/play/computer", {"level": "1", "clock": "bogus"}, "There is no such clock."),
        ("/play/computer", {"level": "0"}, "There is no such computer level."),
        ("/solo", {"preset": "bogus"}, "There is no such board."),
        ("/solo", {"preset": "beginner", "no_guess": "maybe"}, "“no_guess” is a box to tick"),
        ("/pair", {"pool": "bogus"}, "There is no such pool."),
        ("/pair", {"pool": "live-5+3/rated", "ruleset": "bogus"}, "There are no such rules."),
    ]
    for path, form, says in cases:
        refused(anna.post(path, data=form), 400, says)
    assert anna.games() == []


def test_a_refused_value_makes_no_guest_for_a_newcomer(client: TestClient) -> None:
    for path, form in (("/play/computer", {"level": "2", "clock": "bogus"}), ("/pair", {"pool": "bogus"}),
                       ("/guest", {"name": unique("Anna"), "join": "../x"})):
        response = anonymous(client).post(path, data=form, headers=SAME_SITE)
        assert response.status_code == 400 and "set-cookie" not in response.headers, (path, response.text[:300])


def test_the_refusal_speaks_the_reader_language(client: TestClient) -> None:
    anna = Guest(client, "Anna")
    response = anna.post("/games", data={"clock": "bogus"}, headers={**SAME_SITE, "accept-language": "de"})
    refused(response, 400, "Diese Bedenkzeit gibt es nicht.")
    response = anonymous(client).post("/guest", content=b"name=\xff", headers={**URLENCODED, "accept-language": "de"})
    refused(response, 400, "Sein Text ist kein gültiges UTF-8.")


def test_what_the_pages_send_still_works(client: TestClient) -> None:
    """Each form as its template sends it (web/templates): every field a page has, at its
    default or a choice it offers."""
    anna = Guest(client, "Anna")
    home = anna.get("/").text
    assert 'name="rated" id="rated"' in home and '<option value="none" selected>' in home
    sent = [
        ("/games", {"ruleset": "brettspielnetz", "clock": "none", "seat": "random"}),  # home: New game
        ("/games", {"ruleset": "coan", "clock": "300+3", "rated": "on", "seat": "1"}),
        ("/games", {"private": "on", "seat": "random", "ruleset": "coan", "clock": "180+2", "rated": "on"}),  # /p/{id}
        ("/play/computer", {"level": "3"}),
        ("/solo", {"preset": "beginner", "width": "20", "height": "12", "mines": "40"}),  # /solo
        ("/solo", {"preset": "custom", "width": "20", "height": "12", "mines": "40", "no_guess": "1"}),
        ("/solo", {"width": "9", "height": "9", "mines": "10", "no_guess": "0"}),  # a finished game's "Play again"
        ("/pair", {"ruleset": "coan", "pool": "corr-3d/casual"}),
    ]
    rated = []
    for path, form in sent:
        response = anna.post(path, data=form)
        assert response.status_code == 303, (path, form, response.text[:300])
        if path == "/games":
            room = client.get("/api/v1/games/" + response.headers["location"].rsplit("/", 1)[1]).json()["room"]
            rated.append(room["rated"])
    assert rated == [False, True, True]


# ---------------------------------------------------------------------- C: the header on error pages


def test_error_pages_keep_the_signed_in_header(client: TestClient) -> None:
    anna = Guest(client, "Anna")
    for response in (anna.post("/play/computer", data={"level": "0"}), anna.post("/pair", data={"pool": "bogus"}),
                     anna.post("/games", data={"clock": "bogus"}), anna.post("/solo", data={"preset": "bogus"}),
                     anna.post("/games", content=b"seat=\xff", headers=URLENCODED),
                     anna.get("/solo/leaderboard", params={"preset": "bogus"}), anna.get("/p/nobody"),
                     anna.get("/pair", params={"pool": "bogus"})):
        assert response.status_code >= 400 and shows_header_of(response, anna.name), response.text[:600]


def test_every_error_page_shows_the_registered_name(client: TestClient) -> None:
    """A cross-site form's 403, an unknown or malformed room's 404, a replay asked for too early:
    the header is the site's, under the name registered now (not the cookie's)."""
    anna = Guest(client, "Anna")
    renamed = unique("Hanna")
    auth = {"authorization": f"Bearer {anna.token}"}
    assert client.post("/api/v1/guests/me/name", json={"name": renamed}, headers=auth).status_code == 200
    room_url = anna.post("/games", data={"seat": "0"}).headers["location"]
    foreign = {"origin": "https://evil.example"}
    for response in (anna.post("/games", data={"seat": "0"}, headers=foreign),
                     anna.post(f"{room_url}/rematch", headers=foreign), anna.post("/lang", data={"lang": "de"}, headers=foreign),
                     anna.get("/g/no.such.id"), anna.get("/g/nosuchgame"), anna.post("/g/nosuchgame/join"),
                     anna.get(f"{room_url}/replay", params={"at": "1"})):
        assert response.status_code in (403, 404, 409) and shows_header_of(response, renamed), response.text[:600]


# ---------------------------------------------------------------------- E: one identity per browser


def test_a_visitor_who_has_a_guest_keeps_it(client: TestClient) -> None:
    """An old tab's name form: no new guest, the cookie stays, the form goes where it was going."""
    anna, other = Guest(client, "Anna"), unique("Other")
    response = anna.post("/guest", data={"name": other, "next": "/solo"})
    assert response.status_code == 303 and response.headers["location"] == "/solo"
    assert "set-cookie" not in response.headers
    assert client.post("/api/v1/guests", json={"name": other}).status_code == 201  # never registered
    ben = Guest(client, "Ben")
    room_id = ben.post("/games", data={"seat": "0"}).headers["location"].rsplit("/", 1)[1]
    response = anna.post("/guest", data={"name": unique("Other"), "join": room_id})  # the name form of /g/{id}/join
    assert response.status_code == 303 and response.headers["location"] == f"/g/{room_id}"
    assert "set-cookie" not in response.headers
    players = client.get(f"/api/v1/games/{room_id}").json()["room"]["players"]
    assert [p["name"] for p in players] == [ben.name, anna.name]  # joined as herself


# ---------------------------------------------------------------------- F: the registered name


def test_the_header_shows_the_registered_name_after_a_rename(client: TestClient) -> None:
    anna = Guest(client, "Anna")
    renamed = unique("Hanna")
    auth = {"authorization": f"Bearer {anna.token}"}
    assert client.post("/api/v1/guests/me/name", json={"name": renamed}, headers=auth).status_code == 200
    page = anna.get("/")
    assert shows_header_of(page, renamed) and anna.name not in page.text
    fresh = page.cookies[COOKIE]  # the cookie is issued again with the registered name
    state = client.app.state  # type: ignore[attr-defined]
    assert state.auth.resolve(state.web.cookies.loads(fresh)).name == renamed
    anna.cookie = fresh
    assert "set-cookie" not in anna.get("/").headers  # current now: nothing to issue
    for path in ("/solo", "/me", "/ratings", f"/p/{anna.id}"):
        assert shows_header_of(anna.get(path), renamed), path
    room_url = anna.post("/games", data={"seat": "0"}).headers["location"]
    assert re.search(f"Playing as <strong>{renamed}</strong>", anna.get(room_url).text)  # a page that reads the cookie


def test_a_room_page_shows_the_registered_name_at_once(client: TestClient) -> None:
    """The room page reads the registered name too (the first page after a rename through the
    API may be a game's: a reconnecting tab), and issues the cookie again with it."""
    anna = Guest(client, "Anna")
    room_url = anna.post("/games", data={"seat": "0"}).headers["location"]
    renamed = unique("Hanna")
    auth = {"authorization": f"Bearer {anna.token}"}
    assert client.post("/api/v1/guests/me/name", json={"name": renamed}, headers=auth).status_code == 200
    page = anna.get(room_url)
    assert f"Playing as <strong>{renamed}</strong>" in page.text  # (the game seats her old name: it began before)
    assert COOKIE in page.cookies


def test_the_sound_and_language_switches_refuse_a_value_their_buttons_never_send(client: TestClient) -> None:
    anna = Guest(client, "Anna")
    room_url = anna.post("/games", data={"seat": "0"}).headers["location"]
    refused(anna.post(room_url + "/sound", data={"sound": "loud"}), 400, "sound")
    for value in ("on", "off"):
        assert anna.post(room_url + "/sound", data={"sound": value}).status_code == 303
    refused(anna.post("/lang", data={"lang": "fr"}), 400, "There is no such language.")
    switched = anna.post("/lang", data={"lang": "de"}, headers={**SAME_SITE, "referer": BASE + "/solo"})
    assert switched.status_code == 303 and switched.cookies["lang"] == "de"


@pytest.mark.parametrize("ruleset,table", [("brettspielnetz", "+5, +3, +3, +4, +4, +4, +4, +5, +5, +5, +5, +6, +6, +6, +6"),
                                           ("coan", None)])
def test_how_to_play_gives_the_mark_table_and_the_auto_reveal_as_rules_md_does(client: TestClient, ruleset: str,
                                                                                table: str | None) -> None:
    """An outside probe read "+3 to +6, the table rises" and saw the first mine pay +5, and read
    that cells proven safe open by themselves while the opening 0's safe neighbours stayed
    hidden (a cell opens when its number is proven too)."""
    anna = Guest(client, "Anna")
    made = client.post("/api/v1/games", json={"seat": 0, "ruleset": ruleset},
                       headers={"authorization": f"Bearer {anna.token}"}).json()
    rules = anna.get(f"/g/{made['id']}").text.split('<details class="rules">')[1].split("</details>")[0]
    assert "proves its number too" in rules and "a 0 does not open its neighbours" in rules
    assert (table in rules) if table else ("<em>Gut!</em> +5." in rules and "+6" not in rules)


def test_a_challenge_called_off_has_no_game_page(client: TestClient) -> None:
    """An outside probe opened a called-off challenge's link: a "Game aborted" page with its
    layout, a replay bar, an odds table and the empty seat named three ways."""
    cora = Guest(client, "Cora")
    auth = {"authorization": f"Bearer {cora.token}"}
    made = client.post("/api/v1/games", json={"seat": 0}, headers=auth).json()
    assert client.post(f"/api/v1/games/{made['id']}/abort", json={}, headers=auth).status_code == 200
    page = client.get(f"/g/{made['id']}")
    assert page.status_code == 410 and "Challenge called off" in page.text
    assert f"{cora.name} called this challenge off before anybody took it." in page.text
    assert 'id="board"' not in page.text and 'id="odds"' not in page.text
    for step in ("replay", "odds"):  # nor its replay and odds steps (a typed address)
        assert client.get(f"/g/{made['id']}/{step}?at=0", headers={"hx-request": "true"}).status_code == 410


def test_a_game_aborted_before_any_move_shows_no_replay_and_no_odds(client: TestClient) -> None:
    """Nothing was played: no replay bar ("1/1 Game aborted"), no odds table of dashes."""
    anna, ben = Guest(client, "Anna"), Guest(client, "Ben")
    made = client.post("/api/v1/games", json={"seat": 0}, headers={"authorization": f"Bearer {anna.token}"}).json()
    assert client.post(f"/api/v1/games/{made['id']}/join", headers={"authorization": f"Bearer {ben.token}"}).status_code == 200
    assert client.post(f"/api/v1/games/{made['id']}/abort", json={},
                       headers={"authorization": f"Bearer {ben.token}"}).status_code == 200
    page = anna.get(f"/g/{made['id']}")
    assert page.status_code == 200 and 'id="endgame"' in page.text and 'id="rematch-area"' in page.text
    assert 'id="replay"' not in page.text and 'id="odds"' not in page.text


def test_a_name_is_changed_on_its_page(client: TestClient) -> None:
    """A visitor who played the computer before picking a name was "Guest-…" for good: only the
    API could rename (an outside probe). ``/name`` does; blank and taken names are refused and
    change nothing; a foreign form is 403."""
    anna, ben = Guest(client, "Anna"), Guest(client, "Ben")
    assert 'href="/name" id="change-name"' in anna.get("/me").text  # the way there: "My games"
    form = anna.get("/name")
    assert form.status_code == 200 and f'value="{anna.name}"' in form.text and 'action="/name"' in form.text
    client.cookies.clear()
    assert client.get("/name").headers["location"] == "/"
    for typed, status, said in (("   ", 400, "at least one letter"), (ben.name.upper(), 409, "already called")):
        answer = anna.post("/name", data={"name": typed})
        assert answer.status_code == status and said in answer.text and "set-cookie" not in answer.headers
    assert anna.post("/name", data={"name": unique("Hanna")}, headers={"origin": "https://evil.example"}).status_code == 403
    assert client.get(f"/api/v1/players/{anna.id}").json()["name"] == anna.name
    renamed = unique("Hanna")
    answer = anna.post("/name", data={"name": f"  {renamed} "})
    assert answer.status_code == 303 and answer.headers["location"] == "/me" and COOKIE in answer.cookies
    anna.cookie = answer.cookies[COOKIE]
    assert shows_header_of(anna.get("/me"), renamed)
    assert client.get(f"/api/v1/players/{anna.id}").json()["name"] == renamed


def test_the_name_form_refuses_a_blank_name(client: TestClient) -> None:
    """Spaces only made a "Guest-…" silently (an outside probe): the form asks for a name."""
    client.cookies.clear()
    answer = client.post("/guest", data={"name": "   ", "next": "/"}, headers=SAME_SITE)
    assert answer.status_code == 400 and "at least one letter" in answer.text and COOKIE not in answer.cookies


def test_joining_without_a_name_leads_to_a_form_a_reload_does_not_post_again(client: TestClient) -> None:
    """The name form was the POST's own answer: reloading it posted the join again (an outside
    probe). Now a 303 to ``GET /g/{id}/join``; a visitor with a guest goes to the game."""
    anna = Guest(client, "Anna")
    room_url = anna.post("/games", data={"seat": "0"}).headers["location"]
    client.cookies.clear()
    answer = client.post(f"{room_url}/join", headers=SAME_SITE)
    assert answer.status_code == 303 and answer.headers["location"] == f"{room_url}/join"
    form = client.get(f"{room_url}/join")
    assert form.status_code == 200 and "Pick a name to join" in form.text
    assert f'name="join" value="{room_url.rsplit("/", 1)[1]}"' in form.text
    assert anna.get(f"{room_url}/join").headers["location"] == room_url
    client.cookies.clear()  # no form for a game nobody can join (it would make a guest for nothing)
    assert client.get("/g/no.such/join").status_code == 404
    assert client.get("/g/AAAAAAAAAAAAAA/join").status_code == 404
    auth = {"authorization": f"Bearer {anna.token}"}
    gone = client.post("/api/v1/games", json={"seat": 0}, headers=auth).json()["id"]
    assert client.post(f"/api/v1/games/{gone}/abort", json={}, headers=auth).status_code == 200
    client.cookies.clear()
    assert client.get(f"/g/{gone}/join").headers["location"] == f"/g/{gone}"  # its page: called off (410)


def test_the_rules_page_gives_each_ruleset_s_points_from_the_ruleset(client: TestClient) -> None:
    """An outside probe found the rules only in a collapsed box of a game's page: ``/rules``,
    linked from the home page and every footer, its points read from engine/rules.py."""
    client.cookies.clear()
    assert 'href="/rules" id="home-rules"' in client.get("/").text
    page = client.get("/rules")
    assert page.status_code == 200 and "<h1>How to play</h1>" in page.text and 'id="foot-rules"' in page.text
    rows = re.findall(r"<tr><th scope=\"row\">(.*?)</th><td>(.*?)</td><td>(.*?)</td></tr>", page.text)
    assert rows == [("Explore a safe cell", "+1 per neighbouring mine not yet visible", "\u00b10"),
                    ("Explore a mine", "\u22125", "\u22125"),
                    ("Mark a mine", "+5, +3, +3, +4, +4, +4, +4, +5, +5, +5, +5, +6, +6, +6, +6", "+5"),
                    ("Mark a safe cell", "\u22123", "\u22122")]
    assert "11×11 board with 15 hidden mines" in page.text

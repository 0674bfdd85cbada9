"""A no-guess board's layout search must stay cheap: a custom no-guess board over the budget
(``engine.classic.most_mines``) is refused where it is made, over the API (``400 bad_field``)
and by the browser's form (its error page), with the same rule; every preset and an ordinary
custom board still play no-guess. In-process against a real Valkey."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's "use httpx2" notice: the same API for these tests
    from starlette.testclient import TestClient

from engine.classic import PRESETS, Classic, ClassicSetup, most_mines
from server.app import create_app
from server.core.decide import open_room
from server.core.room import Player
from server.edge import new_game
from server.web.site import COOKIE
from tests.conftest import app_settings
from tests.names import unique

BASE = "http://testserver"
SAME_SITE = {"origin": BASE}
PROBE = {"width": 60, "height": 40, "mines": 1600, "no_guess": True}
"""The outside probe's board: 1–3 s of search per first click."""


@pytest.fixture(scope="module")
def client(redis_url: str) -> Iterator[TestClient]:
    settings = app_settings(redis_url=redis_url, secret_key="budget-test")
    with TestClient(create_app(settings), base_url=BASE, follow_redirects=False) as test_client:
        yield test_client


def guest(client: TestClient) -> tuple[str, str]:
    """A new guest's token and the cookie a browser of theirs would carry."""
    token = client.post("/api/v1/guests", json={"name": unique("Sol")}).json()["token"]
    return token, client.app.state.web.cookies.dumps(token)  # type: ignore[attr-defined]


def test_the_api_refuses_a_no_guess_board_over_the_budget(client: TestClient) -> None:
    token, _ = guest(client)
    auth = {"authorization": f"Bearer {token}"}
    for body, most in ((PROBE, 480), ({**PROBE, "mines": 481}, 480), ({"width": 30, "height": 16, "mines": 313,
                                                                      "no_guess": True}, 312)):
        answer = client.post("/api/v1/solo", json=body, headers=auth)
        assert answer.status_code == 400, answer.text
        error = answer.json()["error"]
        w, h = body["width"], body["height"]
        assert error == {"code": "bad_field", "message": f"a no-guess {w}x{h} board takes 1..{most} mines"}
    made = [{"preset": name, "no_guess": True} for name in PRESETS] + [
        {**PROBE, "mines": 480}, {**PROBE, "no_guess": False}, {"width": 16, "height": 16, "mines": 247, "no_guess": True}]
    for body in made:
        answer = client.post("/api/v1/solo", json=body, headers=auth)
        assert answer.status_code == 201, (body, answer.text)


def test_the_form_refuses_a_no_guess_board_over_the_budget(client: TestClient) -> None:
    _, cookie = guest(client)
    client.cookies.clear()
    client.cookies.set(COOKIE, cookie)
    form = {"preset": "custom", "width": "60", "height": "40", "mines": "1600", "no_guess": "1"}
    answer = client.post("/solo", data=form, headers=SAME_SITE)
    assert answer.status_code == 400 and "location" not in answer.headers, answer.text[:300]
    assert "Cannot make that board" in answer.text
    assert "A no-guess board of 60 × 40 cells takes 1 to 480 mines." in answer.text
    for fine in ({**form, "mines": "480"}, {**form, "no_guess": "0"}, {"preset": "expert", "no_guess": "1"}):
        answer = client.post("/solo", data=fine, headers=SAME_SITE)
        assert answer.status_code == 303 and answer.headers["location"].startswith("/g/"), (fine, answer.text[:300])


def test_a_board_made_before_the_budget_restarts_within_it() -> None:
    """A no-guess game over today's budget (made before it) still plays; its restart keeps the
    board and mode with as many mines as the budget allows, not a server error."""
    legacy = Classic(ClassicSetup(60, 40, 1600, True, "ab" * 16))
    room = open_room("old", legacy, (Player("gA", "Anna"),), None, 0).room
    fresh = new_game.rematch_of(room)
    assert fresh.settings["width"] == 60 and fresh.settings["height"] == 40 and fresh.settings["no_guess"]  # type: ignore[attr-defined]
    assert fresh.settings["mines"] == most_mines(60, 40, no_guess=True) == 480  # type: ignore[attr-defined]
    ordinary = open_room("new", Classic(ClassicSetup(30, 16, 99, True, "cd" * 16)), (Player("gA", "Anna"),), None, 0).room
    assert new_game.rematch_of(ordinary).settings["mines"] == 99  # type: ignore[attr-defined]

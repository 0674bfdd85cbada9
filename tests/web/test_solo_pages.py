"""``/solo``'s "Fastest" box and the leaderboard page (``server.web.solo_pages``) over HTTP:
both modes of every board, and only wins at a person's pace."""

from __future__ import annotations

import asyncio
import re
import secrets
import warnings
from collections.abc import Iterator

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's "use httpx2" notice: the same API for these tests
    from starlette.testclient import TestClient

from server.app import create_app
from server.store.results import DAY_TTL_S, SoloResult
from server.store.store import Store
from server.web.site import COOKIE
from tests.conftest import app_settings

BASE = "http://testserver"


@pytest.fixture(scope="module")
def client(redis_url: str) -> Iterator[TestClient]:
    settings = app_settings(redis_url=redis_url, secret_key="solo-pages-test", test_hooks=True)
    with TestClient(create_app(settings), base_url=BASE, follow_redirects=False) as test_client:
        yield test_client


def put(redis_url: str, preset: str, mode: str, name: str, time_ms: int, three_bv: int, clicks: int) -> str:
    """A win on a real board, as ``Results.finished`` records one (the pace not checked: an entry
    made before the pace rule may be slower or faster than the rule allows)."""
    room = "solo-" + secrets.token_hex(5)
    result = SoloResult(room, "g" + secrets.token_hex(5), name, preset, mode, time_ms, three_bv, clicks,
                        1_795_000_000_000)

    async def record() -> None:
        store = Store(redis_url)
        try:
            await store.record_solo(preset, mode, "d20261118", result.player_id, result.to_json(), time_ms, 500,
                                    DAY_TTL_S)
        finally:
            await store.close()

    asyncio.run(record())
    return room


def section(html: str, element_id: str) -> str:
    found = re.search(rf'<div class="leader-mode" id="{element_id}">(.*?)</div>', html, re.DOTALL)
    assert found, element_id
    return found.group(1)


def test_the_fastest_box_shows_both_modes_of_every_board(client: TestClient, redis_url: str) -> None:
    """It showed the classic boards alone, unlabelled: "Intermediate: Nobody yet" while the
    Intermediate no-guess board had entries. Each list now names its mode and links its board."""
    name = "Nia" + secrets.token_hex(3)
    put(redis_url, "intermediate", "no-guess", name, 3_000, 30, 30)  # 10 clicks a second: a person's pace
    client.cookies.clear()
    page = client.get("/solo").text
    for preset in ("beginner", "intermediate", "expert"):
        for mode, label in (("classic", "classic"), ("no-guess", "no guessing")):
            box = section(page, f"leaders-{preset}-{mode}")
            assert f'<a href="/solo/leaderboard?preset={preset}&amp;mode={mode}">{label}</a>' in box
    assert name in section(page, "leaders-intermediate-no-guess")
    assert name not in section(page, "leaders-intermediate-classic")
    german = client.get("/solo", headers={"accept-language": "de"}).text
    assert ">ohne Raten</a>" in section(german, "leaders-expert-no-guess")


def test_a_win_no_person_could_play_is_shown_on_no_board(client: TestClient, redis_url: str) -> None:
    """The probe's program won an Expert no-guess in 0.467 s and went to #1 everywhere; an
    entry written before the pace rule is read past, and the person behind it still shows."""
    bot, person = "Bot" + secrets.token_hex(3), "Eve" + secrets.token_hex(3)
    put(redis_url, "expert", "no-guess", bot, 467, 146, 146)
    put(redis_url, "expert", "no-guess", person, 30_000, 146, 170)
    client.cookies.clear()
    board = client.get("/solo/leaderboard", params={"preset": "expert", "mode": "no-guess"}).text
    assert person in board and bot not in board
    assert bot not in client.get("/solo").text


def test_the_click_mode_is_remembered_for_the_next_page(client: TestClient) -> None:
    """The classic page's radio buttons post the mode when it changes; the page renders it."""
    client.cookies.clear()
    answer = client.post("/solo/click-mode", data={"mode": "flag"}, headers={"origin": BASE})
    assert answer.status_code == 204 and answer.cookies["mineduel_click"] == "flag"
    assert "httponly" in answer.headers["set-cookie"].lower() and "samesite=lax" in answer.headers["set-cookie"].lower()
    for bad in ({"mode": "chord"}, {}):
        refused = client.post("/solo/click-mode", data=bad, headers={"origin": BASE})
        assert refused.status_code == 400 and "set-cookie" not in refused.headers
    assert client.post("/solo/click-mode", data={"mode": "flag"},
                       headers={"origin": "https://evil.example"}).status_code == 403


def test_a_board_the_form_cannot_make_is_refused_above_the_form_as_typed(client: TestClient) -> None:
    """An outside probe's 5×5 with 30 mines went to an error page whose way back led to the
    duel's home, the values lost: now the classic page again, saying why, the form as typed."""
    made = client.post("/api/v1/guests", json={"name": "Sol" + secrets.token_hex(3)}).json()
    client.cookies.clear()
    client.cookies.set(COOKIE, client.app.state.web.cookies.dumps(made["token"]))  # type: ignore[attr-defined]
    answer = client.post("/solo", data={"preset": "custom", "width": "5", "height": "5", "mines": "30", "no_guess": "1"},
                         headers={"origin": BASE})
    page = answer.text
    assert answer.status_code == 400 and 'id="solo-form"' in page, page[:300]
    assert "Cannot make that board: A no-guess board of 5 × 5 cells takes 1 to" in page
    assert 'value="custom" checked' in page and 'value="5"' in page and 'value="30"' in page
    assert 'id="no-guess" checked' in page
    fresh = client.get("/solo").text
    assert 'value="beginner" checked' in fresh and 'value="40"' in fresh and 'id="no-guess" checked' not in fresh


def test_a_finished_classic_game_s_title_says_how_it_ended(client: TestClient) -> None:
    """As a duel's title does (an outside probe: "Sol · Beginner · MineDuel" after the end too);
    the frame that ends it sets the tab's title as well."""
    name = "Sol" + secrets.token_hex(3)
    made = client.post("/api/v1/guests", json={"name": name}).json()
    auth = {"authorization": f"Bearer {made['token']}"}
    game = client.post("/api/v1/solo", json={"preset": "beginner"}, headers=auth).json()["id"]
    client.cookies.clear()
    assert f"<title>{name} · Beginner · MineDuel</title>" in client.get(f"/g/{game}").text
    assert client.post(f"/api/v1/games/{game}/resign", headers=auth).status_code == 200
    assert f"<title>{name} gave up. · {name} · Beginner · MineDuel</title>" in client.get(f"/g/{game}").text
    room = client.portal.call(client.app.state.rooms.load, game)  # type: ignore[attr-defined,union-attr]
    frame = client.app.state.web.codec.snapshot(room, 0)  # type: ignore[attr-defined]
    assert f'<div id="title" hx-swap-oob="innerHTML:title" hidden>Given up. · {name} · Beginner · MineDuel</div>' in frame


def test_the_fastest_box_numbers_a_tie_as_the_boards_do(client: TestClient, redis_url: str) -> None:
    """Two players at the same time were "1." and "2." there, "1" and "1" on the board and the
    API (an outside probe)."""
    first, second = "Tia" + secrets.token_hex(3), "Tom" + secrets.token_hex(3)
    for name in (first, second):
        put(redis_url, "beginner", "classic", name, 650, 5, 6)  # faster than any test's real game
    client.cookies.clear()
    box = section(client.get("/solo").text, "leaders-beginner-classic")
    assert re.search(rf'<li value="1"><span class="lname">{first}</span>', box)
    assert re.search(rf'<li value="1"><span class="lname">{second}</span>', box)

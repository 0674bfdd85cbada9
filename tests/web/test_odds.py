"""The odds on a finished duel's page, in-process on the real Valkey: the move's figures and
the players' summary as the engine computes them, the overlay's tints and labels at a replay
step, the toggle and the steps keeping it, the element that loads itself until the analysis
is stored, and nothing of it while the game is on."""

from __future__ import annotations

import html
import re
import warnings
from collections.abc import Iterator

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from engine import cell_name
from engine.analysis import analyze_game
from server.app import create_app
from server.web.odds_view import chance_text, signed
from tests.conftest import app_settings
from tests.server.test_analysis import new_game, planned, play

SEED = 777
HX = {"hx-request": "true"}


@pytest.fixture(scope="module")
def client(redis_url: str) -> Iterator[TestClient]:
    settings = app_settings(redis_url=redis_url, secret_key="odds-test", test_hooks=True)
    with TestClient(create_app(settings), base_url="http://testserver", follow_redirects=False) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def game(client: TestClient):
    duel = planned(SEED)
    room_id, players = new_game(client, SEED)
    play(client, room_id, players, duel.log[:4])
    live = client.get(f"/g/{room_id}?odds=1").text
    assert 'id="odds' not in live and "odds-p" not in live
    play(client, room_id, players, duel.log[4:])
    return room_id, duel, analyze_game(duel.setup, duel.log)


def labels(text: str) -> dict[str, str]:
    return {m.group(1): html.unescape(m.group(2))
            for m in re.finditer(r'id="(cell-\d+-\d+)" class="[^"]*" aria-label="([^"]*)"', text)}


def test_the_move_at_each_step_and_the_summary(client: TestClient, game) -> None:
    room_id, duel, result = game
    guess = next(m for m in result.moves if not m.certain)  # a move with a real risk
    at = guess.step + 1
    page = client.get(f"/g/{room_id}?at={at}").text
    assert 'id="odds"' in page and 'class="odds-p"' not in page  # the overlay is off by default
    chance = re.search(r'id="odds-chance">([^<]*)<', page).group(1)
    assert chance == chance_text(guess.p_mine)
    best = re.search(r'id="odds-best">([^<]*)<', page).group(1)
    assert best == chance_text(guess.p_min if guess.explore else guess.p_max)
    verdict = html.unescape(re.search(r'id="odds-verdict">([^<]*)<', page).group(1))
    assert verdict == f"{guess.verdict.replace(' %', '%')}, {guess.fortune}"  # English writes 41%
    assert f"{cell_name(guess.cell)}:" in page
    for p in result.players:
        row = re.search(rf'id="odds-player-{p.seat}">(.*?)</tr>', page).group(1)
        cells = re.findall(r"<td>([^<]*)</td>", row)
        assert cells == [f"{round(float(p.safest_share) * 100)}%", f"{float(p.excess_risk) * 100:.1f}%",
                         signed(float(p.luck))]
    start = client.get(f"/g/{room_id}?at=0").text
    assert "The start: no move yet." in start


def test_the_overlay_at_a_step(client: TestClient, game) -> None:
    room_id, duel, result = game
    at = next(m for m in result.moves if not m.certain).step + 1
    answer = client.get(f"/g/{room_id}/replay?at={at}&odds=1", headers=HX)
    assert answer.status_code == 200
    text = answer.text
    for area, swap in (("board", "morph"), ("moves", "true"), ("replay", "morph"), ("mines-left", "morph"),
                       ("odds", "morph")):
        tag = re.search(rf'<[a-z]+ [^>]*\bid="{area}"[^>]*>', text)
        assert tag and f'hx-swap-oob="{swap}"' in tag.group(0), area  # out of band; #moves swapped whole
    step = result.steps[at]
    found = labels(text)
    shown = 0
    for (r, c), n in step.mine_layouts.items():
        label = found[f"cell-{r}-{c}"]
        p = step.probability((r, c))
        said = "proven safe" if p == 0 else "proven mine" if p == 1 else f"{chance_text(p)} mine"
        assert label.endswith(f", {said}"), label
        shown += 1
    assert shown == len(step.mine_layouts) == text.count('class="odds-p"')
    opened = [k for k, v in found.items() if "%" not in v and "proven" not in v]
    assert len(opened) == 121 - shown
    assert "Hide the odds on the board" in text and 'role="button"' not in text  # a link: Enter follows it
    assert f"/g/{room_id}/replay?at={at + 1}&amp;odds=1" in text  # the steps keep the overlay on
    assert f'href="/g/{room_id}?at={at}"' in text  # the toggle turns it off (plain link too)
    assert "had for the next move" in text if step.seat is not None else "what everybody knew" in text
    # without htmx: the page of that step, overlay on
    plain = client.get(f"/g/{room_id}/replay?at={at}&odds=1")
    assert plain.status_code == 303 and plain.headers["location"] == f"/g/{room_id}?at={at}&odds=1"
    page = client.get(plain.headers["location"]).text
    assert labels(page) == found


def test_the_element_loads_itself_until_the_analysis_is_there(client: TestClient, game) -> None:
    room_id, duel, _result = game
    room = client.portal.call(client.app.state.rooms.load, room_id)
    snapshot = client.app.state.web.codec.snapshot(room, 2)  # what the socket sends at the end
    pending = re.search(r'<section id="odds"[^>]*>', snapshot).group(0)
    assert 'hx-trigger="load"' in pending and f'hx-get="/g/{room_id}/odds?at={len(duel.log)}"' in pending
    filled = client.get(f"/g/{room_id}/odds?at={len(duel.log)}", headers=HX).text
    assert filled.startswith('<section id="odds"') and filled.count('id="odds"') == 1
    assert 'hx-swap-oob="morph"' in filled.split(">", 1)[0]  # out of band, morphed
    assert 'hx-trigger="load"' not in filled and 'id="odds-players"' in filled
    # the element alone says what the whole step says
    step = client.get(f"/g/{room_id}/replay?at={len(duel.log)}", headers=HX).text
    assert filled in step
    for at in (0, 1, 5):
        alone = client.get(f"/g/{room_id}/odds?at={at}", headers=HX).text
        assert alone in client.get(f"/g/{room_id}/replay?at={at}", headers=HX).text


def unticketed(page: str) -> str:
    """``page`` without its socket ticket (made at each render: server/web/socket_ticket.py)."""
    return re.sub(r"=[0-9a-f]{8,}\.[\w-]+", "=TICKET", page)


@pytest.mark.parametrize("odd", ["\u00b2", "\u2460", "\uff11", "-1", "1.0", "", "9" * 20])
def test_a_step_that_is_not_ascii_digits_is_no_step(client: TestClient, game, odd: str) -> None:
    """``?at=`` takes ASCII digits only: a superscript or circled digit (which ``str.isdigit``
    accepts and ``int`` refuses) once answered 500; now it is the end, as with no ``at``."""
    room_id, _duel, _result = game
    end = unticketed(client.get(f"/g/{room_id}").text)
    assert unticketed(client.get(f"/g/{room_id}", params={"at": odd}).text) == end
    for path in ("replay", "odds"):
        answer = client.get(f"/g/{room_id}/{path}", params={"at": odd}, headers=HX)
        assert answer.status_code == 200
        assert answer.text == client.get(f"/g/{room_id}/{path}", params={"at": "0"}, headers=HX).text

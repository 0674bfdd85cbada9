"""Quick pairing in real browsers: two people press the same pool and both land in one game
without touching anything else; a seeker who closes the tab is gone from the pool (a later
seeker waits for somebody else); Cancel ends the search; the computer is offered after a
while alone. Seeks are read from the server's pools in Redis (bounded polls)."""

from __future__ import annotations

import time
from urllib.parse import quote

import pytest
import redis
from playwright.sync_api import expect

from server.store.keys import pool_key
from tests.conftest import LiveServer

from .conftest import WAIT_MS, Person

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def pair_server(redis_url: str, tmp_path_factory: pytest.TempPathFactory):
    from tests.conftest import launch_server

    server = launch_server(redis_url, tmp_path_factory.mktemp("pair"), MINEDUEL_PAIRING_COMPUTER_AFTER_S="2")
    yield server
    server.stop()


@pytest.fixture
def seeks(redis_url: str):
    """``seeks(pool_id)``: how many seeks wait in that pool now."""
    client = redis.Redis.from_url(redis_url)
    yield lambda pool_id: client.zcard(pool_key(pool_id))
    client.close()


def until(check, what: str) -> None:
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.02)
    raise AssertionError(f"never: {what}")


def press(person: Person, button: str, ruleset: str = "brettspielnetz") -> None:
    """From the home page, choose the rules and press a pool's button; the search page opens
    (and may go on to a game at once, when somebody waits already)."""
    person.page.goto(person.base + "/")
    person.page.select_option("#quick-ruleset", ruleset)
    person.page.click(f"#quick-{button}")
    person.page.wait_for_url(lambda url: "/pair?pool=" in url or "/g/" in url)


def test_two_people_press_a_pool_and_land_in_one_game(browser, pair_server: LiveServer, seeks) -> None:
    anna, ben = Person.open(browser, pair_server.url, "Anna"), Person.open(browser, pair_server.url, "Ben")
    pool = "live-3+2/coan/casual"
    try:
        press(anna, "live-3-2-casual", "coan")
        expect(anna.page.locator("h1")).to_contain_text("Looking for an opponent")
        until(lambda: seeks(pool) == 1, "Anna's seek waits in the pool")
        press(ben, "live-3-2-casual", "coan")
        anna.page.wait_for_url("**/g/*")  # nobody clicks anything: both pages go to the game
        ben.page.wait_for_url("**/g/*")
        assert anna.page.url == ben.page.url
        for person in (anna, ben):
            expect(person.page.locator("#players")).to_contain_text(anna.name)
            expect(person.page.locator("#players")).to_contain_text(ben.name)
            expect(person.page.locator("#board button:enabled").first).to_be_visible()  # seated, not watching
            person.assert_clean()
        terms = anna.page.inner_text(".ruleset")
        assert "Coan rules" in terms and "3+2" in terms and "rated" not in terms
        assert seeks(pool) == 0
    finally:
        anna.close()
        ben.close()


def test_a_closed_tab_leaves_the_pool(browser, pair_server: LiveServer, seeks) -> None:
    base = pair_server.url
    anna, ben, cy = (Person.open(browser, base, name) for name in ("Anna", "Ben", "Cy"))
    pool = "live-1+1/brettspielnetz/rated"
    try:
        press(anna, "live-1-1-rated")
        until(lambda: seeks(pool) == 1, "Anna's seek waits in the pool")
        anna.close()  # the tab (and the whole context) goes: its socket closes
        until(lambda: seeks(pool) == 0, "Anna's seek is gone")
        press(ben, "live-1-1-rated")
        until(lambda: seeks(pool) == 1, "Ben's seek waits")  # alone: not paired with the one who left
        assert "/pair" in ben.page.url
        press(cy, "live-1-1-rated")
        ben.page.wait_for_url("**/g/*")
        cy.page.wait_for_url("**/g/*")
        assert ben.page.url == cy.page.url
        players = ben.page.inner_text("#players")
        assert ben.name in players and cy.name in players and anna.name not in players
    finally:
        for person in (ben, cy):
            person.close()


def test_cancel_ends_the_search(browser, pair_server: LiveServer, seeks) -> None:
    anna = Person.open(browser, pair_server.url, "Anna")
    pool = "corr-3d/brettspielnetz/casual"
    try:
        anna.page.goto(f"{anna.base}/pair?pool={quote(pool, safe='')}")  # (its button posts a challenge instead)
        until(lambda: seeks(pool) == 1, "Anna's seek waits")
        anna.page.click("#pair-cancel")
        expect(anna.page.locator("#pair-status")).to_contain_text("You stopped looking")
        expect(anna.page.locator("#pair-home")).to_be_visible()
        assert seeks(pool) == 0
    finally:
        anna.close()


def test_the_computer_is_offered_after_a_while_alone(browser, pair_server: LiveServer, seeks) -> None:
    anna = Person.open(browser, pair_server.url, "Anna")
    pool = "live-10+5/coan/rated"
    try:
        press(anna, "live-10-5-rated", "coan")
        anna.page.click("#pair-computer")  # appears after 2 s alone (this server's setting)
        anna.page.wait_for_url("**/g/*")
        expect(anna.page.locator("#players")).to_contain_text("Computer (medium)")
        terms = anna.page.inner_text(".ruleset")
        assert "Coan rules" in terms and "10+5" in terms and "rated" not in terms  # casual, the pool's clock
        assert seeks(pool) == 0
    finally:
        anna.close()

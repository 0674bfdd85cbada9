"""The lobby in real browsers: it updates without reloads; a third person finds a game in the
live list and watches it; a challenge leaves every lobby when its creator closes the tab; a
focused Accept button keeps the focus when another challenge comes; a newcomer plays the
computer with one click."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.conftest import LiveServer

from .conftest import Person
from .layout import page_overflow

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def lobby_server(redis_url: str, tmp_path_factory: pytest.TempPathFactory):
    from tests.conftest import launch_server

    server = launch_server(redis_url, tmp_path_factory.mktemp("lobby"), MINEDUEL_LOBBY_REFRESH_S="0.2")
    yield server
    server.stop()


def test_a_challenge_is_accepted_from_the_lobby_and_a_third_person_watches(browser, lobby_server: LiveServer) -> None:
    base = lobby_server.url
    anna, ben, cy = (Person.open(browser, base, name) for name in ("Anna", "Ben", "Cy"))
    try:
        cy.page.goto(base + "/")  # Cy's lobby is open before anything happens: it must update by itself
        ben.page.goto(base + "/")
        room_id = anna.create_game(seed=11)
        accept = ben.page.locator(f"#accept-{room_id}")
        expect(accept).to_be_visible()  # pushed into Ben's open lobby
        accept.click()
        ben.page.wait_for_url(f"**/g/{room_id}")
        expect(ben.page.locator("#status")).to_contain_text(re.compile("Your turn|to move"))
        watch = cy.page.locator(f"#watch-{room_id}")
        expect(watch).to_be_visible()  # the challenge became a live game in Cy's lobby, no reload
        expect(cy.page.locator(f"#challenge-{room_id}")).to_have_count(0)
        expect(cy.page.locator(f"#live-{room_id}")).to_contain_text(anna.name)
        watch.click()
        cy.page.wait_for_url(f"**/g/{room_id}")
        expect(cy.page.locator("#status")).to_contain_text("to move")
        expect(cy.page.locator('#board button:not([aria-disabled="true"])')).to_have_count(0)  # watching: nothing to press
        expect(anna.page.locator("#spectators")).to_contain_text("1")  # Anna sees her watcher
    finally:
        for person in (anna, ben, cy):
            person.close()


def test_a_challenge_leaves_the_lobby_when_its_creator_closes_the_tab(browser, lobby_server: LiveServer) -> None:
    base = lobby_server.url
    anna, ben = Person.open(browser, base, "Anna"), Person.open(browser, base, "Ben")
    try:
        ben.page.goto(base + "/")
        room_id = anna.create_game(seed=12)
        expect(ben.page.locator(f"#accept-{room_id}")).to_be_visible()
        anna.page.goto(base + "/")  # Anna's own lobby: her challenge offers Cancel, never Accept
        expect(anna.page.locator(f"#cancel-{room_id}")).to_be_visible()
        expect(anna.page.locator(f"#accept-{room_id}")).to_have_count(0)
        anna.close()  # the tab (and the whole browser context) goes
        expect(ben.page.locator(f"#challenge-{room_id}")).to_have_count(0, timeout=15_000)
    finally:
        ben.close()


def test_a_focused_accept_button_keeps_the_focus_when_another_challenge_comes(browser, lobby_server: LiveServer) -> None:
    """The lobby's frames morph its sections: the button and the live counts stay the same nodes
    while the list around them is rendered again."""
    base = lobby_server.url
    anna, ben, cy = (Person.open(browser, base, name) for name in ("Anna", "Ben", "Cy"))
    try:
        ben.page.goto(base + "/")
        first = anna.create_game(seed=13)
        accept = ben.page.locator(f"#accept-{first}")
        expect(accept).to_be_visible()
        accept.focus()
        ben.page.evaluate("""() => { window.__kept = [document.getElementById('lobby-counts'),
                                                       document.activeElement]; }""")
        second = cy.create_game(seed=14)
        expect(ben.page.locator(f"#accept-{second}")).to_be_visible()  # the list was sent again
        expect(accept).to_be_focused()
        assert ben.page.evaluate("""() => window.__kept[0] === document.getElementById('lobby-counts')
                                          && window.__kept[1] === document.activeElement""")
    finally:
        for person in (anna, ben, cy):
            person.close()


def test_a_newcomer_plays_the_computer_with_one_click(browser, lobby_server: LiveServer) -> None:
    newcomer = Person.open(browser, lobby_server.url, None)
    try:
        newcomer.page.goto(lobby_server.url + "/")
        newcomer.page.click("#computer-1")  # the first click; no name asked
        newcomer.page.wait_for_url("**/g/*")
        expect(newcomer.page.locator("#players")).to_contain_text("Computer (easy)")
        expect(newcomer.page.locator(".me")).to_contain_text("Guest-")
    finally:
        newcomer.close()


def test_a_name_of_32_letters_never_widens_the_lobby_on_a_phone(browser, lobby_server: LiveServer) -> None:
    """A name as long as names go and without a space wraps in its row (at 320 px it widened
    the home page by 240 px: the row's name column would not shrink below it)."""
    base = lobby_server.url
    anna = Person.open(browser, base, "W" * 22)  # (unique() adds "-" and a suffix of 6 to 9: at most 32)
    phone = Person.open(browser, base, None, viewport={"width": 320, "height": 700})
    try:
        assert 28 <= len(anna.name or "") <= 32 and " " not in (anna.name or "")
        room_id = anna.create_game(seed=13)
        phone.page.goto(base + "/")
        expect(phone.page.locator(f"#challenge-{room_id}")).to_contain_text(anna.name or "")
        assert page_overflow(phone) <= 0
    finally:
        anna.close()
        phone.close()

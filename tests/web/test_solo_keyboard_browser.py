"""The classic game by keyboard in Chromium: the cell just played keeps the focus (the frame
that shows the move swaps its button out; the page's own frame brings the focus back), so
Enter on a flagged cell takes the flag away again, and play goes on from where it was; the
"go to cell" field (Alt+G) reaches any cell of an Expert board in a few keys."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import Person
from .keyboard import access_key, tab_until
from .test_solo_browser import start_solo

pytestmark = pytest.mark.browser


def focused(person: Person) -> str:
    return person.page.evaluate("() => document.activeElement && document.activeElement.id") or ""


def press_and_wait(person: Person, key: str) -> None:
    """Press ``key`` on the focused cell and wait (bounded) for the frame that answers."""
    seen = len(person.frames)
    person.page.keyboard.press(key)
    for _ in range(600):
        if any('id="seen-v"' in f or 'id="notice"' in f for f in person.frames[seen:]):
            person.page.wait_for_timeout(100)  # the page's own focus frame follows the hub's
            return
        person.page.wait_for_timeout(25)
    raise AssertionError(f"no answer after pressing {key}")


def test_the_cell_just_played_keeps_the_keyboard_focus(browser, web_server):
    anna = Person.open(browser, web_server.url, "Anna")
    try:
        start_solo(anna, seed=31, no_guess=False)
        anna.page.focus("#cell-0-8")
        anna.page.check("input[name=mode][value=flag]")
        anna.page.focus("#cell-0-8")
        press_and_wait(anna, "Enter")
        assert "flag" in (anna.page.get_attribute("#cell-0-8", "class") or "")
        assert focused(anna) == "cell-0-8"
        press_and_wait(anna, "Enter")  # the same key again: the flag goes
        assert "flag" not in (anna.page.get_attribute("#cell-0-8", "class") or "")
        assert focused(anna) == "cell-0-8"
        anna.page.check("input[name=mode][value=reveal]")
        anna.page.focus("#cell-4-4")
        press_and_wait(anna, "Enter")  # the first reveal opens an area: the cell is open, still focused
        assert "open" in (anna.page.get_attribute("#cell-4-4", "class") or "")
        assert focused(anna) == "cell-4-4"
    finally:
        anna.close()


def test_the_go_to_field_reaches_any_cell_of_an_expert_board(browser, web_server):
    """Tabbing across 480 cells is no way to play: Alt+G, the cell's name, Enter; the field
    comes back empty for the next name, and a name off the board is said so."""
    anna = Person.open(browser, web_server.url, "Anna")
    try:
        start_solo(anna, seed=31, no_guess=False, preset="expert")
        page = anna.page
        access_key(page, "g")
        expect(page.locator("#goto-cell")).to_be_focused()
        page.keyboard.type("ad16")  # the far corner: column 30, row 16
        page.keyboard.press("Enter")
        expect(page.locator("#cell-15-29")).to_be_focused()
        expect(page.locator("#goto-cell")).to_have_value("")
        press_and_wait(anna, "Enter")  # and it is played from there
        assert "hidden" not in (page.get_attribute("#cell-15-29", "class") or "")
        assert focused(anna) == "cell-15-29"
        access_key(page, "g")
        page.keyboard.type("ae1")  # column 31: off the board
        page.keyboard.press("Enter")
        expect(page.locator("#notice")).to_contain_text("There is no cell ae1")
        expect(page.locator("#goto-cell")).to_have_value("")  # the next name is not appended to it
        expect(page.locator("#goto-cell")).to_be_focused()
        page.keyboard.type("a1")
        page.keyboard.press("Enter")
        expect(page.locator("#cell-0-0")).to_be_focused()
        expect(page.locator("#notice")).to_have_text("")  # the refusal of the earlier try goes
    finally:
        anna.close()


def test_skip_the_board_takes_the_keyboard_past_its_cells(browser, web_server):
    """An Expert board is 480 Tabs long: the link before it (shown when focused) lands after
    it, so the next Tab is Restart."""
    anna = Person.open(browser, web_server.url, "Anna")
    try:
        start_solo(anna, seed=31, no_guess=False, preset="expert")
        page = anna.page
        page.focus("#goto-cell")
        tab_until(page, "(e) => e.textContent === 'Skip the board'", 10, "the skip link")  # the modes, then it
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.closest('#restart-area') !== null")
    finally:
        anna.close()

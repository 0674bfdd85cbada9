"""The board by keyboard (issue 14), with no script of ours: a "go to cell" field reaches any
cell in a few keys (htmx cannot read arrow keys without eval: docs/ARCHITECTURE.md), Enter on
a cell cycles its selection, a key (Alt+C) confirms, Tab follows the reading order (no positive
tabindex), focus stays on the cell played, and focus leaving the board does not move the
buttons under the pointer. Every wait is bounded and waits for a condition."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.conftest import LiveServer

from .conftest import Person, same_place
from .keyboard import access_key, seed_where

pytestmark = pytest.mark.browser

K11, A1 = (10, 10), (0, 0)


FOCUS_RING = """(cell) => {
  const css = getComputedStyle(cell);
  const colour = (value) => { const probe = document.createElement('i'); probe.hidden = true;
    cell.after(probe); probe.style.setProperty('color', value); const c = getComputedStyle(probe).color; probe.remove(); return c; };
  const root = getComputedStyle(document.documentElement);
  return {focusVisible: cell.matches(':focus-visible'), outline: css.outlineColor, offset: css.outlineOffset,
          shadow: css.boxShadow, white: colour('#fff'), focus: colour(root.getPropertyValue('--focus').trim()),
          last: colour(root.getPropertyValue('--last').trim())};
}"""
"""A cell's focus ring as computed, with the colours it is compared to (resolved by the page)."""


def focused(page: object) -> str:
    return page.evaluate("document.activeElement ? document.activeElement.id : ''")


def test_the_keyboard_reaches_any_cell_selects_confirms_and_keeps_focus(browser, web_server: LiveServer) -> None:
    anna, ben = Person.open(browser, web_server.url, "Anna"), Person.open(browser, web_server.url, "Ben")
    try:
        room_id = anna.create_game(seed=seed_where(K11, A1))  # Anna moves first
        ben.goto_room(room_id)
        ben.page.click("#join")
        page = anna.page
        expect(page.locator("#status.your-turn")).to_be_visible()
        page.evaluate("document.activeElement.blur()")  # the top of the page, as after loading it

        # from the top of the page to k11: a few Tabs to the field (or Alt+G), its name, Enter
        keys = 0
        while focused(page) != "goto-cell":
            page.keyboard.press("Tab")
            keys += 1
            assert keys <= 10, "the go-to field is not near the top of the tab order"
        page.keyboard.type("k11")
        page.keyboard.press("Enter")
        keys += 4
        expect(page.locator("#cell-10-10")).to_be_focused()
        assert keys <= 14, keys  # today: about 120 Tabs
        expect(page.locator("#goto-cell")).to_have_value("")  # ready for the next name

        # Enter cycles the selection: explore, mark, none, explore; focus stays on the cell
        cell = page.locator("#cell-10-10")
        for expected in ("sel-explore", "sel-mark", None, "sel-explore"):
            page.keyboard.press("Enter")
            if expected is None:
                expect(cell).not_to_have_class(re.compile(r"sel-"))
            else:
                expect(cell).to_have_class(re.compile(rf"\b{expected}\b"))
            expect(cell).to_be_focused()
        expect(page.locator("#confirm")).to_have_text("Confirm: explore k11")

        # a key confirms (Confirm's access key); focus stays on the cell played, now open
        access_key(page, "c")
        anna.wait_move(1)
        expect(page.locator("#cell-10-10.open")).to_be_attached()
        expect(page.locator("#cell-10-10")).to_be_focused()
        assert page.evaluate("document.activeElement.getAttribute('aria-disabled')") == "true"
        # ... and shows the focus ring, not only the last move's orange outline (which came
        # later in the stylesheet and replaced it; an open cell's inset edge replaced its halo)
        expect(page.locator("#cell-10-10")).to_have_class(re.compile(r"\blast\b"))
        ring = page.locator("#cell-10-10").evaluate(FOCUS_RING)
        assert ring["focusVisible"], ring
        assert ring["outline"] == ring["white"] and ring["offset"] == "1px", ring  # white, around the cell
        assert ring["focus"] in ring["shadow"] and "0px 0px 0px 6px" in ring["shadow"], ring  # the blue halo
        assert ring["outline"] != ring["last"] and ring["last"] in ring["shadow"], ring  # last move: an inset

        # Ben: Alt+G, a1, Enter, Enter selects, Alt+C plays
        bp = ben.page
        expect(bp.locator("#status.your-turn")).to_be_visible()
        bp.evaluate("document.activeElement.blur()")
        access_key(bp, "g")
        expect(bp.locator("#goto-cell")).to_be_focused()
        bp.keyboard.type("a1")
        bp.keyboard.press("Enter")
        expect(bp.locator("#cell-0-0")).to_be_focused()
        bp.keyboard.press("Enter")
        expect(bp.locator("#cell-0-0")).to_have_class(re.compile(r"\bsel-explore\b"))
        # Tab order is the reading order (no positive tabindex): on to a later cell, and back
        # (Shift+Tab from the selected cell went out of the page when it had tabindex 1)
        bp.keyboard.press("Tab")
        after = focused(bp)
        assert after.startswith("cell-") and after != "cell-0-0", after
        bp.keyboard.press("Shift+Tab")
        expect(bp.locator("#cell-0-0")).to_be_focused()
        bp.keyboard.press("Shift+Tab")  # before the first cell: the way past the board
        expect(bp.locator("a.skip[href='#controls']")).to_be_focused()
        bp.keyboard.press("Shift+Tab")
        expect(bp.locator("#goto-cell")).to_be_focused()
        bp.keyboard.press("Tab")
        bp.keyboard.press("Tab")
        expect(bp.locator("#cell-0-0")).to_be_focused()
        assert bp.evaluate("() => [...document.querySelectorAll('[tabindex]')].filter((e) => e.tabIndex > 0).length") == 0
        access_key(bp, "c")
        ben.wait_move(2)
        expect(bp.locator("#cell-0-0")).to_be_focused()  # not the top of the page

        # a name that is no cell: a notice, focus and board unchanged
        access_key(bp, "g")
        bp.keyboard.type("z99")
        bp.keyboard.press("Enter")
        expect(bp.locator("#notice")).to_contain_text("no cell z99")
        for person in (anna, ben):
            person.assert_clean()
    finally:
        anna.close()
        ben.close()


def test_focus_leaving_the_board_does_not_move_confirm_under_the_pointer(browser, web_server: LiveServer) -> None:
    anna = Person.open(browser, web_server.url, "Anna", viewport={"width": 1280, "height": 760})
    ben = Person.open(browser, web_server.url, "Ben")
    try:
        room_id = anna.create_game(seed=seed_where(K11, A1))
        ben.goto_room(room_id)
        ben.page.click("#join")
        page = anna.page
        expect(page.locator("#status.your-turn")).to_be_visible()
        # a cell focused by keyboard (Tab into the board), selected with Enter
        for _ in range(200):
            page.keyboard.press("Tab")
            if focused(page).startswith("cell-"):
                break
        cell = focused(page)
        assert cell.startswith("cell-"), "Tab never reached the board"
        page.keyboard.press("Enter")
        expect(page.locator("#confirm")).to_be_enabled()
        expect(page.locator(".kbd-hint")).to_be_visible()
        # the page scrolled to its end (where a shorter page would pull everything down), then
        # Confirm clicked with the mouse
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        assert page.evaluate("window.scrollY") > 0, "the page scrolled"
        confirm = page.locator("#confirm")
        before = confirm.bounding_box()
        x, y = before["x"] + before["width"] / 2, before["y"] + before["height"] / 2
        assert 0 < y < 760, "Confirm is on screen"
        page.mouse.move(x, y)
        page.mouse.down()  # focus leaves the board: the keyboard hint goes
        during = confirm.bounding_box()
        page.mouse.up()
        assert same_place(before, during), (before, during)
        anna.wait_move(1)  # the click landed: the move was made
    finally:
        anna.close()
        ben.close()

"""Keyboard focus and the live regions survive the frames (docs/ARCHITECTURE.md, "Frames down"):
the websocket frames morph the elements already on the page (idiomorph's htmx extension), so a
player's focused cell stays focused when somebody else's move redraws it (the last-move
highlight moving off it, the opponent opening the cell this player had selected, the end of
the game), and ``#status``, ``#toast`` and ``#notice`` stay the very same DOM nodes while their
words change (a live region must exist before its content changes to be announced). Every wait
is bounded and waits for a condition."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from engine import cell_name
from tests.conftest import LiveServer

from .conftest import Person, start_duel
from .keyboard import access_key, seed_where
from .test_solo_browser import cell_class, click, layout, start_solo

pytestmark = pytest.mark.browser

A1, K11 = (0, 0), (10, 10)

KEEP = """(ids) => { window.__kept = Object.fromEntries(ids.map((id) => [id, document.getElementById(id)])); }"""
"""Remember the elements with these ids (page.evaluate with a function: the CSP allows no eval)."""
SAME = """() => Object.fromEntries(Object.entries(window.__kept).map(([id, node]) =>
  [id, node !== null && node === document.getElementById(id)]))"""
"""Whether each remembered element is still the one with its id in the page."""


def focused(page: object) -> str:
    return page.evaluate("() => document.activeElement ? document.activeElement.id : ''")


def keep(page: object, *ids: str) -> None:
    page.evaluate(KEEP, list(ids))


def kept(page: object) -> dict[str, bool]:
    return page.evaluate(SAME)


def select(page: object, at: tuple[int, int]) -> None:
    """Alt+G, the cell's name, Enter (the cell has the focus), Enter (selected to explore)."""
    access_key(page, "g")
    expect(page.locator("#goto-cell")).to_be_focused()
    page.keyboard.type(cell_name(at))
    page.keyboard.press("Enter")
    cell = page.locator(f"#cell-{at[0]}-{at[1]}")
    expect(cell).to_be_focused()
    page.keyboard.press("Enter")
    expect(cell).to_have_class(re.compile(r"\bsel-explore\b"))


def test_focus_and_live_regions_survive_the_opponents_moves_and_the_end(browser, web_server: LiveServer) -> None:
    anna, ben = Person.open(browser, web_server.url, "Anna"), Person.open(browser, web_server.url, "Ben")
    try:
        start_duel(anna, ben, seed_where(A1, K11))  # Anna moves first
        ap, bp = anna.page, ben.page
        expect(ap.locator("#status.your-turn")).to_be_visible()

        # Ben, waiting, has selected a1 (his focus is there); Anna explores it
        select(bp, A1)
        keep(bp, "status", "toast", "notice", "cell-0-0")
        select(ap, A1)
        access_key(ap, "c")
        ben.wait_move(1)
        expect(bp.locator("#cell-0-0.open")).to_be_attached()
        expect(bp.locator("#status")).to_contain_text("Your turn")
        expect(bp.locator("#toast")).to_contain_text("a1")
        assert kept(bp) == {"status": True, "toast": True, "notice": True, "cell-0-0": True}
        assert focused(bp) == "cell-0-0"  # on the cell, now open: not the top of the page
        expect(bp.locator("#confirm")).to_be_disabled()  # his selection went with the cell

        # Anna's focus is on the cell she played; Ben's move takes its last-move highlight away
        expect(ap.locator("#cell-0-0")).to_be_focused()
        keep(ap, "status", "toast", "notice")
        select(bp, K11)
        access_key(bp, "c")
        anna.wait_move(2)
        expect(ap.locator("#cell-0-0")).not_to_have_class(re.compile(r"\blast\b"))
        expect(ap.locator("#status")).to_contain_text("Your turn")
        expect(ap.locator("#toast")).to_contain_text("k11")
        assert kept(ap) == {"status": True, "toast": True, "notice": True}
        assert focused(ap) == "cell-0-0"
        # the move lines were prepended as lines (the morph extension leaves that swap alone)
        expect(ap.locator("#moves > li.mv")).to_have_count(2)
        expect(ap.locator("#moves > :not(li)")).to_have_count(0)

        # the end (Anna resigns): Ben's focus, on the cell he played, and his live regions stay
        expect(bp.locator("#cell-10-10")).to_be_focused()
        keep(bp, "status", "toast", "notice")
        ap.click("#resign")
        ap.click("#resign-yes")
        expect(bp.locator("#endgame")).not_to_have_class(re.compile(r"\boff\b"))
        expect(bp.locator("#status")).to_contain_text("resigned")
        assert focused(bp) == "cell-10-10"
        assert kept(bp) == {"status": True, "toast": True, "notice": True}
        for person in (anna, ben):
            person.assert_clean()
    finally:
        anna.close()
        ben.close()


def test_the_classic_games_focused_cell_keeps_the_focus_through_the_losing_click(browser, web_server) -> None:
    anna = Person.open(browser, web_server.url, "Anna")
    try:
        room_id = start_solo(anna, seed=31, no_guess=False)
        click(anna, (4, 4))  # the first click draws the layout
        mine = next(c for c in sorted(layout(web_server.url, room_id)) if "hidden" in cell_class(anna, c))
        cell = f"cell-{mine[0]}-{mine[1]}"
        page = anna.page
        page.focus(f"#{cell}")
        keep(page, "status", "notice", cell)
        page.keyboard.press("Enter")  # open a mine: the game ends, every cell turns inert
        expect(page.locator("#endgame")).not_to_have_class(re.compile(r"\boff\b"))
        assert focused(page) == cell
        assert kept(page) == {"status": True, "notice": True, cell: True}
        expect(page.locator(f"#{cell}")).to_have_attribute("aria-disabled", "true")
        anna.assert_clean()
    finally:
        anna.close()

"""The duel's board follows the window's height too (WCAG 1.4.10 at 200 % zoom, a phone held
sideways): at 812×375 and at 640×450 (a 1280×900 window at 200 %) the whole board, the status
line and, for the player to move with a cell selected, Confirm are on screen together without
scrolling, for both seats; on a 320×640 phone held upright the board still fits and its cells
stay at least 24 px a side (WCAG 2.5.8's target size). Viewport screenshots go to
``test-artifacts/web/``. Every wait is bounded."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import LiveServer

from .conftest import Person, start_duel
from .layout import off_screen

pytestmark = pytest.mark.browser

SEED = 20240611
SHORT = ((812, 375), (640, 450))
PHONE = (320, 640)
SMALLEST_CELL = 24

CELLS = """() => {
  const sides = [...document.querySelectorAll('#board .cell')].flatMap((e) => {
    const r = e.getBoundingClientRect();
    return [r.width, r.height];
  });
  return {count: sides.length / 2, smallest: Math.min(...sides)};
}"""


def test_status_board_and_confirm_fit_a_short_window_and_cells_stay_tappable(
        browser, web_server: LiveServer, artifacts: Path) -> None:
    anna = Person.open(browser, web_server.url, "Anna", viewport={"width": SHORT[0][0], "height": SHORT[0][1]})
    ben = Person.open(browser, web_server.url, "Ben", viewport={"width": SHORT[0][0], "height": SHORT[0][1]})
    try:
        start_duel(anna, ben, SEED)
        anna.page.wait_for_selector("#status.your-turn")
        ben.page.wait_for_selector("#status.their-turn")
        anna.page.click("#cell-0-0")  # a corner: the seed opens the centre
        anna.page.wait_for_selector("#clear")

        misses = []
        for person, wanted in ((anna, ("#status", "#board", "#confirm")), (ben, ("#status", "#board"))):
            for size in SHORT:
                misses += off_screen(person, wanted, size)
                person.shot(artifacts / f"room-short-{'mover' if person is anna else 'waiting'}-{size[0]}x{size[1]}.png",
                            full_page=False)
        assert misses == []

        misses = off_screen(anna, ("#status", "#board"), PHONE)
        anna.shot(artifacts / f"room-short-mover-{PHONE[0]}x{PHONE[1]}.png", full_page=False)
        assert misses == []
        cells = anna.page.evaluate(CELLS)
        assert cells["count"] == 121 and cells["smallest"] >= SMALLEST_CELL, cells
        anna.assert_clean()
        ben.assert_clean()
    finally:
        anna.close()
        ben.close()

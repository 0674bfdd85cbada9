"""The room page fits the window (issue 14): at 1280×800 and at 390×844 the status, the board,
the mode radios, the selection panel with Confirm and the players' cards are on screen without
scrolling, for both seats (a cell selected, so Confirm and Clear show) and a spectator, and at
the end the result and the board. Viewport screenshots of each go to ``test-artifacts/web/``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import LiveServer

from .conftest import Person, start_duel

pytestmark = pytest.mark.browser

SEED = 20240611
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
PLAYING = ("#status", "#board", "#players", ".modes", "#confirm", "#clear")
WATCHING = ("#status", "#board", "#players")
OVER = ("#status", "#board")


def fits(person: Person, selectors: tuple[str, ...], size: tuple[int, int]) -> list[str]:
    """The selectors whose boxes are not wholly inside the viewport at scroll 0 (with the boxes)."""
    page = person.page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_timeout(50)  # one layout after the resize
    assert page.evaluate("window.scrollY") == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= size[0]
    out = []
    for selector in selectors:
        box = page.locator(selector).bounding_box()
        if box is None or not (box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= size[0]
                               and box["y"] + box["height"] <= size[1]):
            out.append(f"{selector}: {box}")
    return out


def check(people: dict[str, Person], wanted: dict[str, tuple[str, ...]], state: str, artifacts: Path) -> None:
    misses = []
    for who, person in people.items():
        for label, size in SIZES.items():
            misses += [f"{who} {label} {state}: {m}" for m in fits(person, wanted[who], size)]
            person.shot(artifacts / f"room-{state}-{who}-{size[0]}x{size[1]}.png", full_page=False)
    assert misses == []


def test_board_controls_and_status_fit_both_windows(browser, web_server: LiveServer, artifacts: Path) -> None:
    anna = Person.open(browser, web_server.url, "Anna", viewport={"width": 1280, "height": 800})
    ben = Person.open(browser, web_server.url, "Ben", viewport={"width": 390, "height": 844})
    watcher = Person.open(browser, web_server.url, None, viewport={"width": 1280, "height": 800})
    people = {"mover": anna, "waiting": ben, "spectator": watcher}
    try:
        room_id = start_duel(anna, ben, SEED)
        ben.page.wait_for_selector("#status.their-turn")
        watcher.goto_room(room_id)
        anna.page.wait_for_selector("#status.your-turn")
        for person, cell in ((anna, "#cell-0-0"), (ben, "#cell-10-10")):  # Ben pre-selects
            person.page.click(cell)
            person.page.wait_for_selector("#clear")
            assert person.page.evaluate("window.scrollY") == 0  # nothing needed a scroll
        check(people, {"mover": PLAYING, "waiting": PLAYING, "spectator": WATCHING}, "playing", artifacts)

        anna.page.click("#confirm")
        ben.page.wait_for_selector("#status.your-turn")
        ben.page.click("#resign")
        ben.page.click("#resign-yes")
        for person in people.values():
            person.page.wait_for_selector("#fair.verified")
        check(people, {who: OVER for who in people}, "over", artifacts)
    finally:
        for person in people.values():
            person.close()

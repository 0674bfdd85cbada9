"""The classic game in Chromium, through clicks only: a no-guess Beginner board won with a
flag and a chord (its time then on the leaderboard), a loss by a chord on a wrong flag, a
reload in the middle, and a spectator watching."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from engine.classic import numbers_of
from engine.geometry import geometry

from .conftest import Person
from .layout import header_misses, lines, outside, page_overflow

pytestmark = pytest.mark.browser


def start_solo(person: Person, seed: int, no_guess: bool, preset: str = "beginner") -> str:
    response = person.context.request.post(
        person.base + "/solo", form={"preset": preset, "no_guess": "1" if no_guess else "0", "seed": str(seed)},
        headers={"origin": person.base})
    assert response.ok, response.status
    room_id = response.url.rsplit("/g/", 1)[1]
    person.goto_room(room_id)
    return room_id


def layout(base: str, room_id: str) -> set[tuple[int, int]]:
    return {tuple(m) for m in httpx.get(f"{base}/api/v1/games/{room_id}/layout").json()["mines"]}


def cell_class(person: Person, cell: tuple[int, int]) -> str:
    return person.page.get_attribute(f"#cell-{cell[0]}-{cell[1]}", "class") or ""


def click(person: Person, cell: tuple[int, int]) -> None:
    """Click ``cell`` and wait (bounded) for the frame that answers: an update or snapshot
    (they carry the version) or a notice."""
    seen = len(person.frames)
    person.page.click(f"#cell-{cell[0]}-{cell[1]}")
    for _ in range(600):
        if any('id="seen-v"' in f or 'id="notice"' in f for f in person.frames[seen:]):
            return
        person.page.wait_for_timeout(25)
    raise AssertionError(f"no answer after clicking {cell}")


def set_mode(person: Person, mode: str) -> None:
    person.page.check(f"input[name=mode][value={mode}]")


def remembered(person: Person, mode: str) -> None:
    """Wait (bounded) until the mode's change was posted and its cookie set."""
    for _ in range(200):
        if any(c["name"] == "mineduel_click" and c["value"] == mode for c in person.context.cookies()):
            return
        person.page.wait_for_timeout(25)
    raise AssertionError(f"the click mode {mode!r} was not remembered")


def test_a_no_guess_beginner_board_is_won_by_clicks_and_reaches_the_leaderboard(browser, web_server, artifacts):
    anna = Person.open(browser, web_server.url, "Anna")
    watcher = Person.open(browser, web_server.url, None)
    try:
        room_id = start_solo(anna, seed=31, no_guess=True)
        assert "Click any cell to start" in anna.text("#status")
        watcher.goto_room(room_id)
        click(anna, (4, 4))
        mines = layout(web_server.url, room_id)
        geo = geometry(9, 9)
        numbers = numbers_of(geo, frozenset(mines))
        # a flag on a mine next to an open number whose mines can all be flagged, then a chord
        open_cells = [c for c in geo.cells if "open" in cell_class(anna, c)]
        target = next((c for c in open_cells if numbers[c] and any(
            n not in mines and "hidden" in cell_class(anna, n) for n in geo.neighbours(c))), None)
        if target is not None:
            set_mode(anna, "flag")
            for n in geo.neighbours(target):
                if n in mines and "flag" not in cell_class(anna, n):
                    click(anna, n)
            flagged = sum(1 for n in geo.neighbours(target) if n in mines)  # the frame may be in, not yet swapped:
            expect(anna.page.locator("#counter strong")).to_have_text(str(10 - flagged))  # wait for the page
            set_mode(anna, "reveal")
            click(anna, target)  # the chord opens the target's other neighbours
            assert all("open" in cell_class(anna, n) for n in geo.neighbours(target) if n not in mines)
        for cell in geo.cells:
            if cell not in mines and "hidden" in cell_class(anna, cell) and "flag" not in cell_class(anna, cell):
                click(anna, cell)
            if "won" in (anna.page.get_attribute("#status", "class") or ""):
                break
        anna.page.wait_for_selector("#status.won")
        assert "you win" in anna.text("#status").lower()
        for stat in ("#stat-time", "#stat-3bv", "#stat-bvs", "#stat-eff", "#stat-clicks"):
            assert anna.text(stat).strip()
        time_text = anna.text("#stat-time")
        assert time_text.endswith(" s") and len(time_text.split(".")[1]) == 4  # "12.34 s": to the hundredth
        assert anna.page.query_selector("#again") is not None  # the end screen's Play again...
        assert anna.page.query_selector("#restart") is None  # ...took the Restart's place
        watcher.page.wait_for_selector("#status.won")  # the spectator saw it live
        anna.shot(artifacts / "solo-won-1280.png")
        anna.page.goto(f"{web_server.url}/solo/leaderboard?preset=beginner&mode=no-guess")
        row = anna.page.inner_text(f"#lb-{room_id}")
        assert "Anna" in row and time_text.split()[0] in row
        assert not anna.csp_errors and not anna.page_errors
    finally:
        anna.close()
        watcher.close()


def test_a_chord_on_a_wrong_flag_loses_and_shows_the_fatal_mine_and_the_crossed_flag(browser, web_server, artifacts):
    anna = Person.open(browser, web_server.url, "Ben")
    try:
        room_id = start_solo(anna, seed=12, no_guess=False)
        click(anna, (0, 0))
        mines = layout(web_server.url, room_id)
        geo = geometry(9, 9)
        numbers = numbers_of(geo, frozenset(mines))
        target = next(c for c in geo.cells if "open" in cell_class(anna, c) and numbers[c] == 1 and any(
            n not in mines and "hidden" in cell_class(anna, n) for n in geo.neighbours(c)))
        wrong = next(n for n in geo.neighbours(target) if n not in mines and "hidden" in cell_class(anna, n))
        mine = next(n for n in geo.neighbours(target) if n in mines)
        anna.reload()  # in the middle: the same game comes back
        assert "open" in cell_class(anna, target)
        set_mode(anna, "flag")
        click(anna, wrong)
        remembered(anna, "flag")
        anna.reload()  # a reload keeps the mode chosen: a click here would otherwise open a cell
        expect(anna.page.locator("input[name=mode][value=flag]")).to_be_checked()
        set_mode(anna, "reveal")
        remembered(anna, "reveal")
        click(anna, target)
        anna.page.wait_for_selector("#status.lost")
        assert "fatal" in cell_class(anna, mine) and "wrong-flag" in cell_class(anna, wrong)
        assert anna.page.is_visible("#stat-time") and not anna.page.is_visible("#stat-bvs")  # rates only for a win
        anna.shot(artifacts / "solo-lost-1280.png")
    finally:
        anna.close()


PHONES = (320, 375, 414)
CELL_WIDTHS = "() => [...document.querySelectorAll('#board .cell')].map((c) => c.getBoundingClientRect().width)"
SCROLLS = """() => { const box = document.querySelector('#board').parentElement;
  return ['auto', 'scroll'].includes(getComputedStyle(box).overflowX) && box.scrollWidth > box.clientWidth }"""
"""Whether the board scrolls sideways in the box around it."""


def test_big_boards_keep_fingertip_cells_and_scroll_in_their_box_on_a_phone(browser, web_server, artifacts):
    """Expert (30×16) and Intermediate (16×16) shrank to the window: 9.7 px and 19.9 px cells at
    375 px. Now the cells are 24 px at least and the board scrolls sideways in its own box; the
    page does not, and its counter, timer, modes, restart and header (its language switch
    too: the room pages' nav scrolled it out of sight) stay in the window, in both languages.
    The timer keeps its number and unit on one line ("1,37 s" left its "s" alone in German)."""
    for lang in ("en", "de"):
        person = Person.open(browser, web_server.url, "Cleo", viewport={"width": 375, "height": 667},
                             extra_http_headers={"accept-language": lang})
        try:
            for preset in ("expert", "intermediate"):
                room_id = start_solo(person, seed=12, no_guess=False, preset=preset)
                click(person, (0, 0))  # the clock runs
                misses = []
                for width in PHONES:
                    person.page.set_viewport_size({"width": width, "height": 667})
                    person.page.wait_for_timeout(50)
                    where = f"{lang} {preset} {width}"
                    narrowest = min(person.page.evaluate(CELL_WIDTHS))
                    if narrowest < 24:
                        misses.append(f"{where}: cells {narrowest:.1f} px wide")
                    if page_overflow(person) > 0:
                        misses.append(f"{where}: the page scrolls sideways by {page_overflow(person)} px")
                    if not person.page.evaluate(SCROLLS):
                        misses.append(f"{where}: the board does not scroll in its box")
                    misses += [f"{where}: {m}" for m in outside(person, "#status, #counter, #timer, #modes, #restart, #play")]
                    misses += [f"{where} header: {m}" for m in header_misses(person)]
                    if lines(person, "#timer") != 1:
                        misses.append(f"{where}: the timer takes {lines(person, '#timer')} lines")
                    person.shot(artifacts / f"solo-{preset}-{lang}-{width}.png", full_page=False)
                assert misses == [], misses
                if preset == "intermediate":  # the end: the time and its unit on one line
                    mine = min(layout(web_server.url, room_id))
                    person.page.set_viewport_size({"width": 375, "height": 667})
                    click(person, mine)
                    person.page.wait_for_selector("#status.lost")
                    for width in PHONES:
                        person.page.set_viewport_size({"width": width, "height": 667})
                        person.page.wait_for_timeout(50)
                        assert lines(person, "#stat-time") == 1 and lines(person, "#timer") == 1, (lang, width)
                        assert page_overflow(person) == 0, (lang, width)
                    person.shot(artifacts / f"solo-lost-{lang}-414.png")
            person.assert_clean()
        finally:
            person.close()

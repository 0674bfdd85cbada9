"""The header, the player's page and long names on a phone, in Chromium (an outside UX
probe's findings). At 320, 390 and 414 px, in English and German:

* the header took 3-4 rows (~140-160 px) on most pages and 1-2 on the game page: it now takes
  at most two of its own rows, the same height on the home page, "My games", a player's page,
  a game and the classic game's page, for a visitor, a player with a short name and one with a
  long name and the "My games N" count; every link and the language switch stay in the window
  and no page scrolls sideways;
* the player's page scrolled sideways (its ratings table was 399-409 px wide at 390): the page
  does not, the table fits or scrolls in its own box;
* the odds table split "Computer (mittel)" into "Comput / er / (mittel)": a name wraps at its
  spaces (and hyphens), never inside a word; the players' cards show names of up to 20
  letters whole on one line on a desktop, and on a phone on up to two lines (at 320 px a
  "Guest-…" name: the two players' names told apart by their ends).

Screenshots of the tops of the pages go to ``test-artifacts/web/``. Every wait is bounded."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from tests.conftest import LiveServer

from .conftest import Person, run, start_duel
from .layout import header_misses, page_overflow
from .test_room_layout_browser import finished_duel

pytestmark = pytest.mark.browser

SEED = 20240611
PHONES = (320, 390, 414)
LANGS = ("en", "de")

HEADER_ROWS = """() => {
  const header = document.querySelector('header.top');
  const boxes = [...header.querySelectorAll('a, button, .me')]
    .map((e) => e.getBoundingClientRect()).filter((b) => b.width > 0 && b.height > 0);
  const row = Math.max(...boxes.map((b) => b.height));
  const centres = boxes.map((b) => (b.top + b.bottom) / 2).sort((a, b) => a - b);
  const rows = centres.filter((c, i) => i === 0 || c - centres[i - 1] > row / 2).length;
  const box = header.getBoundingClientRect();
  const style = getComputedStyle(header);
  return {height: box.height, inner: box.height - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom),
          row: row, rows: rows};
}"""
"""The header's height, its height inside its padding, one row's height (its tallest item: a
link's target) and on how many rows its items lie."""

TABLE_FITS_OR_SCROLLS = """(selector) => [...document.querySelectorAll(selector)].flatMap((table) => {
  const box = table.parentElement;
  const scrolls = ['auto', 'scroll'].includes(getComputedStyle(box).overflowX);
  const right = table.getBoundingClientRect().right;
  return right <= window.innerWidth + 0.5 || scrolls ? [] : [`${table.id || table.className}: right edge ${Math.round(right)}`];
})"""
"""The tables of ``selector`` wider than the window that do not sit in a box that scrolls."""

WORDS_SPLIT = """(selector) => [...document.querySelectorAll(selector)].flatMap((cell) => {
  const out = [];
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const word of node.data.matchAll(/[^\\s-]+/g)) {
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
      if (tops.size > 1) out.push(`"${cell.textContent.trim()}": "${word[0]}" on ${tops.size} lines`);
    }
  }
  return out;
})"""
"""The words (runs of letters between spaces and hyphens) of ``selector``'s cells laid out on
more than one line: broken inside."""

CARD_NAMES = """() => [...document.querySelectorAll('#players .player')].map((card) => {
  const text = card.querySelector('.pname a, .pname-text');
  const range = document.createRange();
  range.selectNodeContents(text);
  const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
  return {name: text.textContent, lines: lines,
          cut: text.scrollHeight > text.clientHeight + 1 || text.scrollWidth > text.clientWidth + 1};
})"""
"""Each card's name: its text, on how many lines, and whether any of it is cut off."""


def header_rows(person: Person) -> dict[str, float]:
    return person.page.evaluate(HEADER_ROWS)


def player_page(person: Person) -> str:
    """The path of the person's own page, from the link on "My games"."""
    person.page.goto(person.base + "/me")
    href = person.page.get_attribute("main a[href^='/p/']", "href")
    assert href is not None
    return href


def test_the_header_keeps_two_rows_and_one_height_on_every_page(browser, web_server: LiveServer, artifacts: Path) -> None:
    base = web_server.url
    misses: list[str] = []
    for lang in LANGS:
        phone = {"viewport": {"width": 390, "height": 800}, "extra_http_headers": {"accept-language": lang}}
        visitor = Person.open(browser, base, None, **phone)
        # a long name (at most 32 letters with the suffix) and a game where it is her turn
        anna = Person.open(browser, base, "Maximiliane-Schwarzenb", **phone)
        ben = Person.open(browser, base, "Ben", **phone)
        try:
            room_id = start_duel(anna, ben, SEED)
            anna.page.wait_for_selector("#status.your-turn")
            anna_page = player_page(anna)
            pages = {"home": "/", "me": "/me", "player": anna_page, "game": f"/g/{room_id}", "solo": "/solo"}
            anna.page.goto(base + "/")
            assert anna.page.locator("#nav-turns").count() == 1  # "My games 1"
            for who, person in (("visitor", visitor), ("anna", anna), ("ben", ben)):
                heights: dict[int, dict[str, float]] = {width: {} for width in PHONES}
                for name, path in pages.items():
                    if who == "visitor" and name == "me":
                        continue  # (a visitor has no games: /me sends them home)
                    person.page.goto(base + path)
                    assert person.page.get_attribute("html", "lang") == lang
                    for width in PHONES:
                        person.page.set_viewport_size({"width": width, "height": 800})
                        person.page.evaluate("() => window.scrollTo(0, 0)")
                        person.page.wait_for_timeout(50)  # one layout after the resize
                        where = f"{lang} {who} {name} {width}"
                        m = header_rows(person)
                        heights[width][name] = m["height"]
                        if m["rows"] > 2 or m["inner"] > 2 * m["row"] + 4:
                            misses.append(f"{where}: the header is {m['height']:.0f} px on {m['rows']} rows of {m['row']:.0f} px")
                        if page_overflow(person) > 0:
                            misses.append(f"{where}: the page scrolls sideways by {page_overflow(person)} px")
                        misses += [f"{where} header: {h}" for h in header_misses(person)]
                        if name == "player":
                            misses += [f"{where}: {t}" for t in person.page.evaluate(TABLE_FITS_OR_SCROLLS, "table.lb")]
                        if width == 320 or name == "player":
                            person.page.screenshot(path=str(artifacts / f"phone-header-{lang}-{who}-{name}-{width}.png"),
                                                   clip={"x": 0, "y": 0, "width": width, "height": 240},
                                                   caret="initial", animations="allow")
                for width, by_page in heights.items():
                    if max(by_page.values()) - min(by_page.values()) > 1:
                        misses.append(f"{lang} {who} {width}: the header's height changes between pages: {by_page}")
            for person in (visitor, anna, ben):
                person.assert_clean()
        finally:
            for person in (visitor, anna, ben):
                person.close()
    assert misses == [], misses


def test_long_names_wrap_whole_in_the_odds_table_and_the_cards(browser, web_server: LiveServer, artifacts: Path) -> None:
    base = web_server.url
    # two names a computer's would be like: 20 letters with a space, and a guest's default
    names = (f"Rosamunde {secrets.token_hex(5)}", f"Guest-{secrets.token_hex(3)}")
    room_id = run(finished_duel(base, names))
    misses: list[str] = []
    for lang in LANGS:
        viewer = Person.open(browser, base, None, viewport={"width": 1366, "height": 768},
                             extra_http_headers={"accept-language": lang})
        try:
            viewer.goto_room(room_id)
            viewer.page.wait_for_selector("#odds-players")
            for width, height in ((1366, 768), (1280, 800)):  # a desktop: names whole, on one line
                viewer.page.set_viewport_size({"width": width, "height": height})
                viewer.page.wait_for_timeout(50)
                for card in viewer.page.evaluate(CARD_NAMES):
                    if card["cut"] or card["lines"] != 1:
                        misses.append(f"{lang} {width}: the card shows {card}")
                misses += [f"{lang} {width}: {s}" for s in viewer.page.evaluate(WORDS_SPLIT, "#odds-players th")]
            viewer.shot(artifacts / f"long-names-{lang}-1280.png", full_page=False)
            for width in PHONES:  # a phone: names whole (on two lines if need be), words whole
                viewer.page.set_viewport_size({"width": width, "height": 800})
                viewer.page.wait_for_timeout(50)
                where = f"{lang} {width}"
                for card in viewer.page.evaluate(CARD_NAMES):
                    # (a card is ~90 px wide for its name at 320 px: two lines hold "Guest-" and
                    # its six letters, not always 20 letters, whose end an ellipsis may take)
                    if card["cut"] and (width > 320 or card["name"] == names[1]):
                        misses.append(f"{where}: the card cuts the name: {card}")
                misses += [f"{where}: {s}" for s in viewer.page.evaluate(WORDS_SPLIT, "#odds-players th")]
                if page_overflow(viewer) > 0:
                    misses.append(f"{where}: the page scrolls sideways by {page_overflow(viewer)} px")
                viewer.page.locator("#odds").screenshot(path=str(artifacts / f"long-names-odds-{lang}-{width}.png"),
                                                        caret="initial", animations="allow")
                viewer.page.evaluate("() => window.scrollTo(0, 0)")
                viewer.shot(artifacts / f"long-names-{lang}-{width}.png", full_page=False)
            viewer.assert_clean()
        finally:
            viewer.close()
    assert misses == [], misses

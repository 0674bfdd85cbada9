"""Short button labels stay on one line on a phone, in both languages: the replay bar's steps
("‹ Zurück", "Letzter »": the arrow never wraps away from its word) and the home page's quick
pairing buttons (the time control over "gewertet", each part whole, in every button), with no
sideways scroll at 320-414 px. Every wait is bounded."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.conftest import LiveServer
from tests.server.test_analysis import planned

from .conftest import Person, run
from .layout import page_overflow
from .test_odds_browser import SEED, _play, _seated

pytestmark = pytest.mark.browser

LINES_EACH = """([selector, most]) => [...document.querySelectorAll(selector)].flatMap((e) => {
  const range = document.createRange();
  range.selectNodeContents(e);
  const tops = [...range.getClientRects()].filter((r) => r.width > 0).map((r) => r.top).sort((a, b) => a - b);
  const lines = tops.filter((t, i) => i === 0 || t - tops[i - 1] > 4).length;
  const box = e.getBoundingClientRect();
  return lines > most || e.scrollWidth > e.clientWidth + 1 || box.left < -0.5 || box.right > window.innerWidth + 0.5
    ? [`${e.id}: "${e.textContent.trim()}" on ${lines} lines, ${Math.round(box.left)}..${Math.round(box.right)}`] : [];
})"""


def broken(person: Person, selector: str, most: int = 1) -> list[str]:
    """The elements of ``selector`` whose text takes more than ``most`` lines, overflows them or
    leaves the window."""
    return person.page.evaluate(LINES_EACH, [selector, most])


@pytest.fixture(scope="module")
def finished(web_server: LiveServer) -> str:
    duel = planned(SEED)
    room_id, tokens = run(_seated(web_server.url))
    run(_play(web_server.url, room_id, tokens, duel.log))
    return room_id


@pytest.mark.parametrize("lang", ["de", "en"])
def test_short_buttons_keep_one_line_on_a_phone(browser, web_server: LiveServer, finished: str, lang: str) -> None:
    base = web_server.url
    for width in (320, 360, 375, 414):
        person = Person.open(browser, base, None, viewport={"width": width, "height": 700},
                             extra_http_headers={"accept-language": lang})
        try:
            page = person.page
            page.goto(f"{base}/g/{finished}?at=3")
            expect(page.locator("#replay-last")).to_be_visible()
            assert page.get_attribute("html", "lang") == lang
            assert broken(person, "#replay .replay-buttons .btn") == [], width
            assert page_overflow(person) <= 0, width
            page.goto(f"{base}/")
            expect(page.locator("#quick-form button").first).to_be_visible()
            assert broken(person, "#quick-form .pool-grid .btn", 2) == [], width
            assert broken(person, "#quick-form .pool-grid .btn > span") == [], width  # "1+1" over "gewertet"
            assert person.page.locator("#quick-form .pool-grid .btn > span").count() == 2 * person.page.locator(
                "#quick-form .pool-grid .btn").count()
            assert page_overflow(person) <= 0, width
        finally:
            person.context.close()

"""The leaderboard page on a phone, in Chromium: the table scrolls in its box, the page does
not (at 375 px the page was 470 px wide: ``table.lb`` pushed it)."""

from __future__ import annotations

import secrets

import pytest

from server.store.results import DAY_TTL_S, SoloResult
from server.store.store import Store

from .conftest import Person, run
from .layout import header_misses, page_overflow

pytestmark = pytest.mark.browser

SCROLLS = """() => { const box = document.querySelector('#leaderboard').parentElement;
  return ['auto', 'scroll'].includes(getComputedStyle(box).overflowX) && box.scrollWidth >= box.clientWidth }"""
"""Whether the table sits in a box that scrolls sideways."""


def put_a_row(redis_url: str) -> str:
    """A win on the Beginner board at a person's pace, under a long name (a wide row)."""
    name = "Maximiliane" + secrets.token_hex(4)
    result = SoloResult("solo-" + secrets.token_hex(5), "g" + secrets.token_hex(5), name, "beginner", "classic",
                        9_000, 12, 14, 1_795_000_000_000)

    async def record() -> None:
        store = Store(redis_url)
        try:
            await store.record_solo("beginner", "classic", "d20261118", result.player_id, result.to_json(), 9_000,
                                    500, DAY_TTL_S)
        finally:
            await store.close()

    run(record())
    return result.room


def test_the_leaderboard_table_scrolls_in_its_box_on_a_phone(browser, web_server, redis_url, artifacts):
    room = put_a_row(redis_url)
    misses = []
    for lang in ("en", "de"):
        person = Person.open(browser, web_server.url, None, viewport={"width": 375, "height": 667},
                             extra_http_headers={"accept-language": lang})
        try:
            for width in (320, 375, 414):
                person.page.set_viewport_size({"width": width, "height": 667})
                person.page.goto(f"{web_server.url}/solo/leaderboard?preset=beginner")
                person.page.wait_for_selector(f"#lb-{room}")
                where = f"{lang} {width}"
                if page_overflow(person) > 0:
                    misses.append(f"{where}: the page scrolls sideways by {page_overflow(person)} px")
                if not person.page.evaluate(SCROLLS):
                    misses.append(f"{where}: the table is not in a box that scrolls")
                misses += [f"{where} header: {m}" for m in header_misses(person)]
                person.shot(artifacts / f"leaderboard-{lang}-{width}.png", full_page=False)
            person.page.goto(f"{web_server.url}/solo")
            person.shot(artifacts / f"solo-home-{lang}-414.png", full_page=True)
            if page_overflow(person) > 0:  # the "Fastest" box, now with both modes of each board
                misses.append(f"{lang} /solo: the page scrolls sideways by {page_overflow(person)} px")
            assert not person.csp_errors and not person.page_errors
        finally:
            person.close()
    assert misses == [], misses

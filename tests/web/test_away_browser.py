"""Who has left, as the opponent's page says it (Chromium): the away note and the claim's
countdown come once a seat has had no connection for the away grace, so a joiner's page,
which reloads after its Join form (its socket closes, a new one opens), is never said to
have left; a player who closes the page is, after the grace. Every wait is bounded."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from server.core.decide import AWAY_GRACE_MS

from .conftest import Person

pytestmark = pytest.mark.browser


def test_a_joiner_s_reload_is_no_leaving_and_a_closed_page_is_after_the_grace(browser, web_server) -> None:
    anna, ben = Person.open(browser, web_server.url, "Anna"), Person.open(browser, web_server.url, "Ben")
    try:
        room_id = anna.create_game(seed=5)
        ben.goto_room(room_id)
        seen = len(anna.frames)
        ben.page.click("#join")  # Ben's watching socket closes with the page, his player's opens
        expect(anna.page.locator("#status")).to_contain_text("Your turn")
        anna.page.wait_for_timeout(AWAY_GRACE_MS + 1_500)  # the grace, and a heartbeat after it
        assert not [f for f in anna.frames[seen:] if "has left" in f]
        expect(anna.page.locator("#away")).to_have_text("")

        ben.page.close()  # Ben goes (said only after the grace: tests/web/test_render.py, with plain times)
        expect(anna.page.locator("#away")).to_contain_text("has left the game.", timeout=AWAY_GRACE_MS + 5_000)
        expect(anna.page.locator("#claim")).to_contain_text("does not come back, you can claim the game in")
        assert "has left" not in anna.text("#claim")  # said once, by the away note
        anna.reload()  # a page rendered now says it too, before any heartbeat
        assert "has left the game." in anna.text("#away")
        anna.assert_clean()
    finally:
        anna.close()
        ben.close()

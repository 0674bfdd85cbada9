"""The game in German in Chromium: a browser whose locale is de-DE gets the German room page and
German live updates; the header's switch to English sets the cookie and the page stays English
after a reload; a second browser with en-US is English all along."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import LiveServer
from tests.web.conftest import TURN, Person
from tests.web.test_i18n import assert_speaks, visible

pytestmark = pytest.mark.browser


def test_a_german_browser_plays_in_german_and_switches_to_english(browser: object, web_server: LiveServer,
                                                                   artifacts: Path) -> None:
    anna = Person.open(browser, web_server.url, "Anna", locale="de-DE")
    ben = Person.open(browser, web_server.url, "Ben", locale="en-US")
    try:
        assert anna.page.get_attribute("html", "lang") == "de"
        assert "Neues Spiel" in anna.text("#new")
        room = anna.create_game(seed=5)
        assert anna.page.get_attribute("html", "lang") == "de"
        assert "Warte auf einen Gegner" in anna.text("#status")
        ben.goto_room(room)
        ben.page.click("#join")
        ben.page.wait_for_selector("#status.your-turn, #status.their-turn")
        ben.wait_live(0)
        # the first move is Anna's: her page (German) and Ben's (English) at the same time
        anna.page.wait_for_selector("#status.your-turn")
        assert "Du bist am Zug" in anna.text("#status")
        assert TURN.search(ben.text("#status")) and "Zug" not in ben.text("#status")
        anna.page.click("label.quick-explore")
        anna.page.click("#board button[name=cell]:not([disabled])")
        anna.wait_move(1)
        ben.wait_move(1)
        assert "öffnet" in anna.text("#moves") and "explore" in ben.text("#moves")
        ben.page.wait_for_selector("#status.your-turn")
        assert "Your turn" in ben.text("#status")
        assert "ist am Zug" in anna.text("#status")
        update = [f for f in anna.frames if 'id="move-1"' in f and not f.startswith("<!--snapshot-->")]
        assert update and "öffnet" in visible(update[0])  # the live update itself is German
        assert_speaks(anna.page.content(), "de")
        assert_speaks(ben.page.content(), "en")
        anna.shot(artifacts / "i18n-room-de.png", full_page=False)
        # the switch: English, remembered by the cookie
        anna.page.click("#lang-switch")
        anna.page.wait_for_function("document.documentElement.lang === 'en'")
        assert anna.page.url.endswith(f"/g/{room}")
        cookies = {c["name"]: c["value"] for c in anna.context.cookies()}
        assert cookies.get("lang") == "en"
        anna.reload()
        assert anna.page.get_attribute("html", "lang") == "en"
        assert TURN.search(anna.text("#status")) and "Zug" not in anna.text("#status")
        assert_speaks(anna.page.content(), "en")
        assert ben.page.get_attribute("html", "lang") == "en"
        assert not anna.csp_errors and not anna.page_errors
    finally:
        anna.close()
        ben.close()

"""The players' pages in a real browser: Ben challenges Anna from her page to a rated game with
a small clock, both see the ratings beside the names, Anna resigns; her page then shows her new
rating and the finished game with a replay link that works; "My games" lists the game where it
is her turn first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from server.core.ratings import BULLET, DEFAULT, rate_game
from tests.conftest import LiveServer

from .conftest import TURN, Person

pytestmark = pytest.mark.browser

SEED = 61


def player_id_of(person: Person) -> str:
    """The person's id, from the link to their page on "My games"."""
    person.page.goto(person.base + "/me")
    href = person.page.get_attribute("main a[href^='/p/']", "href")
    assert href is not None
    return href.rsplit("/", 1)[1]


def test_a_rated_game_then_the_players_page_and_my_games(browser, web_server: LiveServer, artifacts: Path) -> None:
    base = web_server.url
    anna, ben = Person.open(browser, base, "Anna"), Person.open(browser, base, "Ben")
    try:
        anna_id = player_id_of(anna)

        # Ben challenges Anna from her page: rated, one minute a side
        ben.page.goto(f"{base}/p/{anna_id}")
        expect(ben.page.locator("#player-name")).to_have_text(anna.name)
        ben.page.select_option("#challenge-clock", "60+1")
        expect(ben.page.locator("#challenge-rated")).to_be_checked()
        seen = len(ben.frames)
        ben.page.click("#challenge-go")
        ben.page.wait_for_url(re.compile(r"/g/[^/]+$"))
        ben.wait_live(seen)
        link = ben.page.input_value("#invite-url")
        room_id = link.rsplit("/g/", 1)[1]
        assert ben.page.url == link

        # Anna follows the link and joins; both pages show the ratings beside the names
        anna.goto_room(room_id)
        anna.page.click("#join")
        expect(anna.page.locator("#status")).to_contain_text(TURN)
        for person in (anna, ben):  # Ben's page learns Anna's rating without a reload
            expect(person.page.locator("#players .pname .rating")).to_have_count(2)
            expect(person.page.locator("#players")).to_contain_text(f"({DEFAULT.display})")
        seat = 0 if anna.text("#name-0").startswith(anna.name) else 1
        expect(anna.page.locator(f"#name-{seat} a")).to_have_attribute("href", f"/p/{anna_id}")

        for number, person in enumerate((anna, ben) if seat == 0 else (ben, anna), start=1):  # rated once both moved
            person.page.wait_for_selector("#status.your-turn")
            person.page.click("label.quick-explore")
            person.page.locator('button[type="submit"][id^="cell-"]:not([aria-disabled="true"])').first.click()
            anna.wait_move(number)
        anna.page.click("#resign")
        anna.page.click("#resign-yes")
        for person in (anna, ben):
            expect(person.page.locator("#status")).to_contain_text("resigned")

        # her page (through her name in the room): the new rating, the game, its replay
        anna.page.click(f"#name-{seat} a")
        anna.page.wait_for_url(f"**/p/{anna_id}")
        lost, _won = rate_game(DEFAULT, DEFAULT, 0.0)
        expect(anna.page.locator(f"#rating-{BULLET} .r-value")).to_have_text(lost.display)
        expect(anna.page.locator(f"#history-{BULLET}")).to_contain_text(str(round(lost.rating)))
        row = anna.page.locator(f"#finished #game-{room_id}")
        expect(row).to_contain_text("Lost")
        expect(row).to_contain_text(ben.name)
        expect(row).to_contain_text("rated")
        anna.shot(artifacts / "player-page.png")
        seen = len(anna.frames)
        anna.page.click(f"#replay-{room_id}")
        anna.page.wait_for_url(f"**/g/{room_id}")
        anna.wait_live(seen)
        expect(anna.page.locator("#replay")).to_be_visible()

        # "My games": the game where it is Anna's turn comes first, however old
        mine = anna.create_game(SEED, seat="0")
        ben.goto_room(mine)
        ben.page.click("#join")
        expect(ben.page.locator("#status")).to_contain_text(TURN)
        theirs = ben.create_game(SEED + 1, seat="0")
        anna.goto_room(theirs)
        anna.page.click("#join")
        expect(anna.page.locator("#status")).to_contain_text(TURN)
        anna.page.click("#nav-my-games")
        anna.page.wait_for_url("**/me")
        rows = anna.page.locator("#ongoing > li")
        expect(rows).to_have_count(2)
        expect(rows.nth(0)).to_have_id(f"game-{mine}")
        expect(rows.nth(0)).to_contain_text("Your turn")
        expect(rows.nth(1)).to_have_id(f"game-{theirs}")
        expect(rows.nth(1)).to_contain_text("Their turn")
        expect(anna.page.locator(f"#finished #game-{room_id}")).to_contain_text("Lost")
        anna.shot(artifacts / "my-games.png")

        for person in (anna, ben):
            person.assert_clean()
    finally:
        anna.close()
        ben.close()

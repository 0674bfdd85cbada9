"""What a player notices in the first minute (issue 14, the parts done): a notice that no longer
holds goes with the next move, and the result line puts the reader's own score first."""

from __future__ import annotations

import random

from playwright.sync_api import expect

from engine import Duel, Explore
from tests.conftest import LiveServer

from .conftest import Person


def scoring_cell(seed: int) -> tuple[int, int]:
    """A safe cell whose exploring scores for the first mover of the seeded game."""
    for cell in Duel.new(random.Random(seed), "brettspielnetz", first=0).geo.cells:
        duel = Duel.new(random.Random(seed), "brettspielnetz", first=0)
        if duel.is_hidden(cell) and cell not in duel.setup.mines:
            duel.apply(0, Explore(cell))
            if duel.scores[0] > 0:
                return cell
    raise AssertionError("no scoring cell")


def test_a_wait_for_their_move_notice_goes_when_they_move(browser, web_server: LiveServer) -> None:
    anna, ben = Person.open(browser, web_server.url, "Anna"), Person.open(browser, web_server.url, "Ben")
    try:
        room_id = anna.create_game(seed=21)  # Anna moves first
        ben.goto_room(room_id)
        ben.page.click("#join")
        ben.page.wait_for_selector("#status.their-turn")
        ben.page.click("label.quick-explore")
        ben.page.click("#cell-0-0")  # not his turn
        expect(ben.page.locator("#notice")).to_contain_text("turn")
        anna.page.wait_for_selector("#status.your-turn")
        anna.page.click("label.quick-explore")
        anna.page.click(f"#cell-{scoring_cell(21)[0]}-{scoring_cell(21)[1]}")
        ben.page.wait_for_selector("#status.your-turn")
        expect(ben.page.locator("#notice")).to_have_text("")  # it held no longer: gone, and hidden
        expect(ben.page.locator("#notice")).to_be_hidden()
        # Ben resigns: each reads the result with the winner's score first
        ben.page.click("#resign")
        ben.page.click("#resign-yes")
        expect(anna.page.locator("#status")).to_contain_text("you win")
        expect(ben.page.locator("#status")).to_contain_text("You resigned")
        mine, theirs = ben.page.inner_text("#score-1").strip(), ben.page.inner_text("#score-0").strip()
        assert mine != theirs  # Anna scored with her move, Ben did not
        assert ben.page.inner_text("#status").endswith(f"wins, {theirs}\u00a0:\u00a0{mine}")  # Anna's first
    finally:
        anna.close()
        ben.close()

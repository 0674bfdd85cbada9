"""A finished classic game watched back in Chromium by its replay bar: First, Next through every
move (the board as the engine's position after each, the move in words, the step's URL pushed),
a reload that keeps the step against the socket's snapshot, Back, the keyboard (Enter on a
focused step link, the access keys) and Last, the final board again. No CSP violation. Every
wait is bounded and waits for a condition."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from engine import Classic, cell_name
from tests.conftest import LiveServer

from .conftest import Person, run
from .keyboard import access_key, next_is_bound
from .test_solo_replay import planned, play, shown_open

pytestmark = pytest.mark.browser


def live(person: Person) -> None:
    """Wait (bounded) until the page's socket has sent its snapshot and the presence frame after
    it (the page counts its own watcher), so whatever the snapshot swaps has been swapped."""
    expect(person.page.locator("#spectators strong")).not_to_have_text("0")


def shows_step(person: Person, game: Classic, at: int) -> None:
    """The page shows step ``at``, and its "Next" link is bound to the step after."""
    page = person.page
    expect(page.locator("#replay .step")).to_have_text(f"{at}/{len(game.log)}")
    expect(page.locator("#board .cell.open")).to_have_count(len(shown_open(game, at)))
    next_is_bound(page)


def test_a_finished_classic_game_is_watched_back_step_by_step(browser, web_server: LiveServer, artifacts) -> None:
    game, moves = planned()
    total = len(game.log)
    base = web_server.url
    room = run(play(base, moves))
    flag = game.log[1][1].cell  # type: ignore[union-attr]
    watcher = Person.open(browser, base, None)
    page = watcher.page
    try:
        page.goto(f"{base}/g/{room}")
        live(watcher)
        shows_step(watcher, game, total)
        expect(page.locator("#board .cell.fatal")).to_have_count(1)  # the final board, as before
        expect(page.locator("nav#replay")).to_have_attribute("aria-label", "Replay")

        page.click("#replay-first")
        expect(page).to_have_url(f"{base}/g/{room}?at=0")
        shows_step(watcher, game, 0)
        expect(page.locator("#replay-first")).to_have_attribute("aria-disabled", "true")
        expect(page.locator("#replay-where")).to_contain_text("The start")
        for at in range(1, 5):
            page.click("#replay-next")
            expect(page).to_have_url(f"{base}/g/{room}?at={at}")
            shows_step(watcher, game, at)
        expect(page.locator("#replay-where")).to_contain_text(f"4. flag {cell_name(flag)}")
        expect(page.locator(f"#cell-{flag[0]}-{flag[1]}")).to_have_class("cell hidden flag last")
        expect(page.locator("#counter strong")).to_have_text("9")
        watcher.shot(artifacts / "solo-replay-step-1280.png")

        page.reload()  # the step's page, and its socket's snapshot keeps the step
        live(watcher)
        shows_step(watcher, game, 4)
        page.go_back()  # htmx restores the step before from the server
        expect(page).to_have_url(f"{base}/g/{room}?at=3")
        shows_step(watcher, game, 3)
        expect(page.locator("#replay-where")).to_contain_text("3. unflag")
        expect(page.locator("#counter strong")).to_have_text("10")

        page.focus("#replay-next")  # the keyboard: Enter steps again and again, focus stays
        page.keyboard.press("Enter")
        shows_step(watcher, game, 4)
        assert page.evaluate("document.activeElement.id") == "replay-next"
        page.keyboard.press("Enter")
        shows_step(watcher, game, 5)
        expect(page.locator("#replay-where")).to_contain_text("5. chord")
        access_key(page, ",")
        shows_step(watcher, game, 4)
        access_key(page, ".")
        shows_step(watcher, game, 5)

        page.click("#replay-last")
        expect(page).to_have_url(f"{base}/g/{room}?at={total}")
        shows_step(watcher, game, total)
        expect(page.locator("#board .cell.fatal")).to_have_count(1)
        expect(page.locator("#replay-next")).to_have_attribute("tabindex", "-1")
        watcher.assert_clean()
    finally:
        watcher.close()

"""Replay positions are links (issue 14): a finished game's step has its URL, the socket's
snapshot does not take the page back to the final position, htmx pushes each step's URL (Back
and Forward walk the steps, a reload keeps one), the odds overlay keeps its step, and the
keyboard steps without a script of ours (a focused step link keeps focus; Prev and Next have
access keys). Every wait is bounded and waits for a condition."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.conftest import LiveServer
from tests.server.test_analysis import planned

from .conftest import Person, run
from .keyboard import access_key, next_is_bound
from .test_odds_browser import SEED, _play, _seated

pytestmark = pytest.mark.browser


def open_cells(duel, at: int) -> int:
    """How many cells step ``at`` of the replay shows open."""
    return sum(ch.isdigit() for row in duel.position(at).rows for ch in row)


def live(person: Person) -> None:
    """Wait (bounded) until the page's socket has sent its snapshot and the presence frame
    after it (the page counts its own watcher), so whatever the snapshot swaps has been swapped."""
    expect(person.page.locator("#spectators strong")).not_to_have_text("0")


def shows_step(person: Person, duel, at: int) -> None:
    total = len(duel.log)
    page = person.page
    expect(page.locator("#replay .step")).to_have_text(f"{at}/{total}")
    expect(page.locator("#board .cell.open")).to_have_count(open_cells(duel, at))
    expect(page.locator("#moves .mv.current")).to_have_count(1)
    next_is_bound(page)


def test_each_replay_step_has_its_url(browser, web_server: LiveServer) -> None:
    duel = planned(SEED)
    total = len(duel.log)
    assert total > 8
    base = web_server.url
    room_id, tokens = run(_seated(base))
    run(_play(base, room_id, tokens, duel.log))
    watcher = Person.open(browser, base, None)
    page = watcher.page
    try:
        page.goto(f"{base}/g/{room_id}?at=3")
        live(watcher)  # the snapshot arrived: it kept step 3
        shows_step(watcher, duel, 3)
        expect(page.locator("#move-3")).to_have_class(re.compile(r"\bcurrent\b"))

        page.click("#replay-next")
        expect(page).to_have_url(f"{base}/g/{room_id}?at=4")
        shows_step(watcher, duel, 4)
        page.reload()
        live(watcher)
        shows_step(watcher, duel, 4)
        page.go_back()  # htmx restores the step from the server (no history cache)
        expect(page).to_have_url(f"{base}/g/{room_id}?at=3")
        shows_step(watcher, duel, 3)
        live(watcher)
        shows_step(watcher, duel, 3)
        page.go_forward()
        expect(page).to_have_url(f"{base}/g/{room_id}?at=4")
        shows_step(watcher, duel, 4)

        # the odds overlay keeps the step, and the step keeps the overlay
        page.wait_for_selector("#odds-players")
        page.click("#odds-toggle")
        expect(page).to_have_url(f"{base}/g/{room_id}?at=4&odds=1")
        expect(page.locator("#odds-toggle")).to_have_text("Hide the odds on the board")
        expect(page.locator("#board .cell.odds").first).to_be_attached()
        page.click("#replay-next")
        expect(page).to_have_url(f"{base}/g/{room_id}?at=5&odds=1")
        shows_step(watcher, duel, 5)
        expect(page.locator("#board .cell.odds").first).to_be_attached()
        page.reload()
        live(watcher)
        shows_step(watcher, duel, 5)
        expect(page.locator("#odds-toggle")).to_have_text("Hide the odds on the board")

        # the keyboard: Enter on a focused step link steps again and again (focus stays on it);
        # Prev and Next have access keys
        page.focus("#replay-next")
        page.keyboard.press("Enter")
        shows_step(watcher, duel, 6)
        assert page.evaluate("document.activeElement.id") == "replay-next"
        page.keyboard.press("Enter")
        shows_step(watcher, duel, 7)
        access_key(page, ",")
        shows_step(watcher, duel, 6)
        access_key(page, ".")
        shows_step(watcher, duel, 7)
        expect(page).to_have_url(f"{base}/g/{room_id}?at=7&odds=1")
        watcher.assert_clean()
    finally:
        watcher.close()

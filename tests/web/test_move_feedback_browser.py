"""What a move tells everybody at once (issue 14): a toast over the board for a moment (what the
move list says to that viewer: somebody else's wrong mark keeps its cell secret), the tab's
title following the status, and the "your turn" sound for a page that turned it on (and for no
other page)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from playwright.sync_api import expect

from engine import Duel, Explore, Mark, cell_name
from tests.conftest import LiveServer

from .conftest import Person, same_place, start_duel

pytestmark = pytest.mark.browser

SEED = 1
TURN = "\u25cf Your turn"


def plan(seed: int) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int], Duel]:
    """Anna explores a cell that opens others by deduction, Ben marks a safe cell (Blubb!),
    Anna explores another safe cell; the engine's game after the three moves."""
    duel = Duel.new(random.Random(seed), "brettspielnetz", first=0)
    safe = [c for c in duel.geo.cells if c not in duel.setup.mines]
    for cell in safe:
        trial = Duel.new(random.Random(seed), "brettspielnetz", first=0)
        if trial.is_hidden(cell) and trial.apply(0, Explore(cell)) and trial.lines[-1].auto_revealed:
            first = cell
            break
    else:
        raise AssertionError("no explore of this layout opens cells by deduction")
    duel.apply(0, Explore(first))
    wrong = next(c for c in reversed(safe) if duel.is_hidden(c))
    duel.apply(1, Mark(wrong))
    third = next(c for c in safe if duel.is_hidden(c) and c != wrong)
    duel.apply(0, Explore(third))
    return first, wrong, third, duel


def quick(person: Person, mode: str, cell: tuple[int, int]) -> None:
    person.page.click(f"label.quick-{mode}")
    person.page.click(f"#cell-{cell[0]}-{cell[1]}")


def toast_of(duel: Duel, number: int, names: tuple[str, str], viewer: int) -> str:
    line = duel.lines[number - 1]
    secret = line.verdict.value == "Blubb!" and viewer != line.seat
    pts = f"+{line.points}" if line.points > 0 else (f"\u2212{-line.points}" if line.points < 0 else "\u00b10")
    text = f"{names[line.seat]}: {line.action.value} {'?' if secret else cell_name(line.cell)} {line.verdict.value} {pts}"
    if line.auto_revealed:
        n = line.auto_revealed
        text += f" \u00b7 {n} cell{' opened by itself' if n == 1 else 's opened by themselves'}"
    return text


def test_toast_title_and_sound_after_each_move(browser, web_server: LiveServer, artifacts: Path) -> None:
    first, wrong, third, duel = plan(SEED)
    anna, ben = Person.open(browser, web_server.url, "Anna"), Person.open(browser, web_server.url, "Ben")
    watcher = Person.open(browser, web_server.url, None, viewport={"width": 390, "height": 844})
    names = (anna.name, ben.name)
    people = (anna, ben, watcher)
    try:
        room_id = start_duel(anna, ben, SEED)
        ben.page.wait_for_selector("#status.their-turn")
        # Ben turns the sound on (a form: the page comes back with it on); Anna leaves it off
        expect(ben.page.locator("#sound-button")).to_have_attribute("aria-pressed", "false")
        seen = len(ben.frames)
        ben.page.click("#sound-button")
        ben.wait_live(seen)
        expect(ben.page.locator("#sound-button")).to_have_attribute("aria-pressed", "true")
        watcher.goto_room(room_id)
        anna.page.wait_for_selector("#status.your-turn")
        expect(anna.page).to_have_title(f"{TURN} \u00b7 {names[0]} vs {names[1]} \u00b7 MineDuel")
        expect(ben.page).to_have_title(f"{names[0]} to move \u00b7 {names[0]} vs {names[1]} \u00b7 MineDuel")
        for person in people:
            expect(person.page.locator("#toast")).to_be_hidden()  # nothing has happened yet
        board = watcher.page.locator("#board").bounding_box()

        # 1. Anna explores: everybody reads what it did, and what opened by itself
        before = len(ben.frames)
        quick(anna, "explore", first)
        for viewer, person in enumerate(people):
            expect(person.page.locator("#toast")).to_have_text(toast_of(duel, 1, names, viewer))
            expect(person.page.locator("#toast .toast-pill")).to_be_visible()
        assert "by themselves" in ben.text("#toast") or "by itself" in ben.text("#toast")
        assert same_place(board, watcher.page.locator("#board").bounding_box())  # the toast shifts nothing
        watcher.shot(artifacts / "move-toast-390x844.png", full_page=False)
        anna.shot(artifacts / "move-toast-1280.png", full_page=False)
        expect(ben.page).to_have_title(f"{TURN} \u00b7 {names[0]} vs {names[1]} \u00b7 MineDuel")
        expect(anna.page).to_have_title(f"{names[1]} to move \u00b7 {names[0]} vs {names[1]} \u00b7 MineDuel")
        expect(ben.page.locator("#sound audio[autoplay]")).to_have_count(1)  # his turn, sound on
        turn_frame = next(f for f in ben.frames[before:] if 'class="status your-turn' in f)
        assert "<audio autoplay" in turn_frame

        # 2. Ben's wrong mark: only he reads where it is
        quick(ben, "mark", wrong)
        for viewer, person in enumerate(people):
            expect(person.page.locator("#toast")).to_have_text(toast_of(duel, 2, names, viewer))
        assert cell_name(wrong) in ben.text("#toast")
        for person in (anna, watcher):
            assert cell_name(wrong) not in person.text("#toast")
            assert person.text("#toast") == person.text("#move-2").split(" ", 1)[1].replace(" mark", ": mark", 1)
        anna.page.wait_for_selector("#status.your-turn")
        expect(anna.page).to_have_title(f"{TURN} \u00b7 {names[0]} vs {names[1]} \u00b7 MineDuel")
        assert all("<audio" not in f for f in anna.frames + watcher.frames)  # sound off: never sent
        expect(anna.page.locator("#sound audio")).to_have_count(0)

        # 3. the toast was for a moment only; a new move replaces it and shows it again
        expect(anna.page.locator("#toast .toast-pill")).to_be_hidden(timeout=10_000)
        quick(anna, "explore", third)
        for viewer, person in enumerate(people):
            expect(person.page.locator("#toast")).to_have_text(toast_of(duel, 3, names, viewer))
            expect(person.page.locator("#toast .toast-pill")).to_be_visible()  # a new pill: its fade starts again

        # 4. the end: the result in every title, read from each side
        ben.page.wait_for_selector("#status.your-turn")
        ben.page.click("#resign")
        ben.page.click("#resign-yes")
        for person in people:
            person.page.wait_for_selector("#fair.verified")
        expect(anna.page).to_have_title(f"{anna.text('#status')} \u00b7 {names[0]} vs {names[1]} \u00b7 MineDuel")
        assert "you win" in anna.page.title()
        assert ben.page.title().startswith("You resigned")
        assert watcher.page.title().startswith(f"{names[1]} resigned")
        for person in people:
            person.assert_clean()
    finally:
        for person in people:
            person.close()

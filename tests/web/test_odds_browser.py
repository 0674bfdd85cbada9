"""The odds of a finished duel in Chromium: a spectator watches a seeded game end, the odds
load by themselves, the replay steps to a guess whose odds the engine knows, and the overlay
(a plain link / htmx GET, no script of ours) tints the board with each hidden cell's chance,
in its label and on hover or focus. Every wait is bounded and waits for a condition."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from engine import Explore, cell_name
from engine.analysis import analyze_game
from server.client import Api, GameSocket
from server.web.odds_view import chance_text
from tests.conftest import LiveServer
from tests.names import unique
from tests.server.test_analysis import planned

from .conftest import Person, run

pytestmark = pytest.mark.browser

SEED = 31337


async def _play(base: str, room_id: str, tokens: list[str], moves: list) -> None:
    sockets = [await GameSocket.connect(base, room_id, t) for t in tokens]
    try:
        for sock in sockets:
            await sock.until(lambda f: f.get("t") == "snapshot")
        v = sockets[0].v
        for seat, move in moves:
            await sockets[seat].until_version(v)
            await sockets[seat].move("explore" if isinstance(move, Explore) else "mark", move.cell, v)
            v += 1
            for sock in sockets:
                await sock.until_version(v)
    finally:
        for sock in sockets:
            await sock.close()


async def _seated(base: str) -> tuple[str, list[str]]:
    async with Api(base) as api:
        anna, ben = await api.guest(unique("Anna")), await api.guest(unique("Ben"))
        game = await api.create_game(anna.token, seat=0, seed=SEED)
        await api.join(ben.token, game["id"])
        return game["id"], [anna.token, ben.token]


def test_the_odds_of_a_finished_game_step_by_step(browser, web_server: LiveServer, artifacts: Path) -> None:
    duel = planned(SEED)
    result = analyze_game(duel.setup, duel.log)
    guess = next(m for m in result.moves if not m.certain and m.step >= 2)  # a real risk, a few moves in
    at = guess.step + 1
    step = result.steps[at]
    cell = next((c for c, n in sorted(step.mine_layouts.items()) if 0 < n < step.layouts), None)
    assert cell is not None, "the step has a cell with a real chance"
    chance = chance_text(step.probability(cell))

    base = web_server.url
    room_id, tokens = run(_seated(base))
    run(_play(base, room_id, tokens, duel.log[:-1]))
    watcher = Person.open(browser, base, None)
    try:
        watcher.goto_room(room_id)
        page = watcher.page
        expect(page.locator("#odds")).to_have_count(0)  # nothing while the game is on
        run(_play(base, room_id, tokens, duel.log[-1:]))
        # the end's snapshot brings the odds element, which loads itself (htmx, hx-trigger load)
        page.wait_for_selector("#odds-players")
        total = len(duel.log)
        page.click("#replay-first")
        page.wait_for_selector(f"#replay .step:text('0/{total}')")
        expect(page.locator("#odds-move")).to_have_text("The start: no move yet.")
        for n in range(1, at + 1):
            page.click("#replay-next")
            page.wait_for_selector(f"#replay .step:text('{n}/{total}')")
        expect(page.locator("#odds-chance")).to_have_text(chance_text(guess.p_mine))
        expect(page.locator("#odds-verdict")).to_have_text(f"{guess.verdict.replace(' %', '%')}, {guess.fortune}")
        assert f"{guess.action.value} {cell_name(guess.cell)}" in watcher.text("#odds-move")
        expect(page.locator("#board .cell.odds")).to_have_count(0)

        page.click("#odds-toggle")
        expect(page.locator("#odds-toggle")).to_have_text("Hide the odds on the board")  # a link, no toggle button
        expect(page.locator("#board .cell.odds")).to_have_count(len(step.mine_layouts))
        target = page.locator(f"#cell-{cell[0]}-{cell[1]}")
        expect(target).to_have_attribute("aria-label", re.compile(rf"^{cell_name(cell)}, .*, {re.escape(chance)} mine$"))
        tip = target.locator(".odds-p")
        expect(tip).to_be_hidden()
        target.hover()
        expect(tip).to_be_visible()
        expect(tip).to_have_text(chance)
        page.mouse.move(0, 0)
        expect(tip).to_be_hidden()
        target.focus()  # keyboard: the tinted cells take focus
        expect(tip).to_be_visible()
        safe = [c for c, n in step.mine_layouts.items() if n == 0]
        expect(page.locator("#board .cell.odds-safe")).to_have_count(len(safe))
        watcher.shot(artifacts / "replay-odds.png")

        page.click("#replay-next")  # the steps keep the overlay on
        page.wait_for_selector(f"#replay .step:text('{at + 1}/{total}')")
        expect(page.locator("#board .cell.odds")).to_have_count(len(result.steps[at + 1].mine_layouts))
        page.click("#odds-toggle")
        expect(page.locator("#odds-toggle")).to_have_text("Show the odds on the board")
        expect(page.locator("#board .cell.odds")).to_have_count(0)
        watcher.assert_clean()
    finally:
        watcher.close()

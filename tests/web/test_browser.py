"""Two players and a spectator in three Chromium contexts, against a live server on a real Valkey.

The game is seeded (the test-only ``seed`` hook), so the test knows the layout: it plans the
moves with the engine itself and checks every page against the engine's own results. Nothing
here asserts on wall-clock time; every wait is bounded and waits for a condition.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from engine import Duel, Explore, Mark, cell_name
from engine.events import ALL_MINES
from server.web.view_model import score_text
from tests.conftest import LiveServer

from .conftest import Person, relaunch, start_duel
from .keyboard import access_key, tab_until

pytestmark = pytest.mark.browser

SEED = 20240611


@dataclass(frozen=True)
class Step:
    seat: int
    action: str  # "explore" | "mark"
    cell: tuple[int, int]
    how: str  # "select" (click, maybe twice, then Confirm) | "quick" (quick-mode toggle, one click)


def plan(seed: int) -> tuple[list[Step], Duel]:
    """A whole game for the seeded layout: a safe explore, a wrong mark ("Blubb!") by seat 1,
    a mine explored ("Autsch!") by seat 0, then marks until every mine is visible. Returns the
    steps and the engine's game after them (the expected result)."""
    duel = Duel.new(random.Random(seed), "brettspielnetz", first=0)
    mines = sorted(duel.setup.mines)
    centre = duel.geo.centre
    steps: list[Step] = []

    def play(step: Step) -> None:
        assert duel.is_hidden(step.cell), step
        duel.apply(step.seat, Explore(step.cell) if step.action == "explore" else Mark(step.cell))
        steps.append(step)

    play(Step(0, "explore", (centre[0] - 1, centre[1] - 1), "select"))
    wrong = next(c for c in [(0, 0), (0, 10), (10, 0), (10, 10), (0, 5), (10, 5)]
                 if c not in duel.setup.mines and duel.is_hidden(c))
    play(Step(1, "mark", wrong, "select"))
    play(Step(0, "explore", mines[0], "quick"))
    seat = 1
    for i, mine in enumerate(m for m in mines[1:]):
        if not duel.is_hidden(mine):
            continue
        play(Step(seat, "mark", mine, "select" if i < 2 else "quick"))
        seat = 1 - seat
    assert duel.outcome is not None and duel.outcome.termination == ALL_MINES
    return steps, duel


def expected_line(duel: Duel, number: int, names: tuple[str, str], viewer: int) -> str:
    line = duel.lines[number - 1]
    secret = line.verdict.value == "Blubb!" and duel.outcome is None and viewer != line.seat
    where = "?" if secret else cell_name(line.cell)
    pts = f"+{line.points}" if line.points > 0 else (f"\u2212{-line.points}" if line.points < 0 else "\u00b10")
    text = f"{number}. {names[line.seat]} {line.action.value} {where} {line.verdict.value} {pts}"
    return text + (f" \u00b7 {line.auto_revealed} revealed" if line.auto_revealed else "")


def do_step(person: Person, step: Step, quick_mode: list[str]) -> None:
    """Make one move through clicks, the way a person would."""
    page = person.page
    cell = f"#cell-{step.cell[0]}-{step.cell[1]}"
    wanted = "select" if step.how == "select" else step.action
    if quick_mode[0] != wanted:
        page.click({"select": "label.mode:not(.quick-explore):not(.quick-mark)",
                    "explore": "label.quick-explore", "mark": "label.quick-mark"}[wanted])
        quick_mode[0] = wanted
    if step.how == "quick":
        page.click(cell)
        return
    page.click(cell)
    page.wait_for_selector(f"{cell}.sel-explore")
    if step.action == "mark":
        page.click(cell)
        page.wait_for_selector(f"{cell}.sel-mark")
    page.wait_for_selector(f"#confirm.{step.action}:not([disabled])")
    assert person.text("#confirm") == f"Confirm: {step.action} {cell_name(step.cell)}"
    page.click("#confirm")


def board_state(person: Person) -> str:
    return person.page.eval_on_selector_all(
        "#board .cell", "els => els.map(e => e.id + ':' + e.className + ':' + e.getAttribute('aria-label')).join('\\n')"
    )


def test_full_game_two_players_and_a_spectator(browser, web_server: LiveServer, artifacts: Path) -> None:
    steps, final = plan(SEED)
    anna = Person.open(browser, web_server.url, "Anna")
    ben = Person.open(browser, web_server.url, "Ben")
    names = (anna.name, ben.name)
    watcher = Person.open(browser, web_server.url, None, viewport={"width": 360, "height": 740})
    people = (anna, ben, watcher)
    try:
        room_id = anna.create_game(SEED)
        assert "Waiting for an opponent" in anna.text("#status")
        assert anna.page.input_value("#invite-url").endswith(f"/g/{room_id}")

        # Ben opens the link and joins with the Join button; the spectator just opens it
        ben.goto_room(room_id)
        ben.page.click("#join")
        ben.page.wait_for_selector("#status.their-turn")
        watcher.goto_room(room_id)
        anna.page.wait_for_selector("#status.your-turn")
        assert ben.name in anna.text("#name-1")
        watcher.page.wait_for_selector("#spectators strong:text('1')")
        anna.page.wait_for_selector("#spectators strong:text('1')")

        # the spectator has no controls: no playable cell, no selection panel
        expect(watcher.page.locator('#board .cell:not([aria-disabled="true"])')).to_have_count(0)
        assert not watcher.page.is_visible("#selection")
        assert not watcher.page.is_visible(".modes")

        modes = {0: ["select"], 1: ["select"]}
        wrong_cell = next(s.cell for s in steps if s.seat == 1 and s.action == "mark" and s.cell not in final.setup.mines)
        wrong_id = f"cell-{wrong_cell[0]}-{wrong_cell[1]}"
        before_end = 0
        replay_check = False
        for number, step in enumerate(steps, start=1):
            mover = (anna, ben)[step.seat]
            if number == len(steps):
                before_end = len(anna.frames), len(watcher.frames)
            do_step(mover, step, modes[step.seat])
            for person in people:
                person.wait_move(number)

            if number == 2:  # Ben's wrong mark: his secret alone
                line_ben = ben.text("#move-2")
                assert line_ben == expected_line(final, 2, names, 1)
                assert f"mark {cell_name(wrong_cell)} Blubb!" in line_ben
                for person in (anna, watcher):
                    assert person.text("#move-2") == f"2. {ben.name} mark ? Blubb! \u22123"
                    expect(person.page.locator(f"#{wrong_id}")).to_have_class("cell hidden")
                expect(ben.page.locator(f"#{wrong_id}")).to_have_class(re.compile(r"\bwrong-own\b"))
                assert "your wrong mark" in ben.page.get_attribute(f"#{wrong_id}", "aria-label")

            if number == 4 and not replay_check:
                replay_check = True
                anna.page.wait_for_selector("#status.your-turn" if steps[4].seat == 0 else "#status.their-turn")
                anna.shot(artifacts / "room-player.png")
                watcher.shot(artifacts / "room-spectator-360.png")
                ben.shot(artifacts / "room-opponent.png")
                # a reload restores exactly the same view
                board, moves, players = board_state(ben), ben.html("#moves"), ben.html("#players")
                ben.reload()
                assert board_state(ben) == board
                assert ben.html("#moves") == moves
                assert ben.html("#players") == players

        # ---- the end: everyone sees everything, the same scores, lines and result
        a, b = final.scores
        for viewer, person in enumerate(people):
            person.page.wait_for_selector("#fair.verified")
            assert person.text("#score-0") == score_text(a)
            assert person.text("#score-1") == score_text(b)
            lines = person.page.locator("#moves li.mv").all_inner_texts()
            assert lines == [expected_line(final, n, names, viewer) for n in range(len(steps), 0, -1)]
            assert "All mines found" in person.text("#status")
            # both wrong marks (here: Ben's) are shown to all, with their author
            assert f"wrong mark by {ben.name}" in person.page.get_attribute(f"#{wrong_id}", "aria-label")
            expect(person.page.locator("#board .cell.mine")).to_have_count(15)
        winner = final.outcome.winner
        assert f"{names[winner]} wins" in watcher.text("#status")
        assert "you win" in (anna, ben)[winner].text("#status")
        assert (anna, ben)[1 - winner].page.is_visible("#status.lost")

        # ---- nothing secret was ever SENT to the opponent or the spectator before the end
        for person, upto in ((anna, before_end[0]), (watcher, before_end[1])):
            sent = "".join(person.frames[:upto])
            assert "wrong-own" not in sent and "wrong mark" not in sent
            assert f'<span class="at">{cell_name(wrong_cell)}</span> <span class="verdict">Blubb!' not in sent
            assert '<span class="at">?</span> <span class="verdict">Blubb!' in sent
        assert "wrong-own" in "".join(ben.frames)

        anna.shot(artifacts / "finished-player.png")
        watcher.shot(artifacts / "finished-spectator-360.png")

        # ---- the replay steps through the game (htmx GETs, finished games only)
        total = len(final.log)
        page = watcher.page
        page.click("#replay-first")
        page.wait_for_selector(f"#replay .step:text('0/{total}')")
        # Class counts right after a swap retry: htmx applies the new elements' classes when it
        # settles (~20 ms after the swap), so a read in between still sees the old ones.
        expect(page.locator("#board .cell.open")).to_have_count(1)  # only the centre
        expect(page.locator("#board .cell.ghost-mine")).to_have_count(15)
        page.click("#replay-next")
        page.wait_for_selector(f"#replay .step:text('1/{total}')")
        assert f"1. {anna.name} explore" in watcher.text("#replay-where")
        assert page.locator("#moves li.current").inner_text().startswith("1. ")
        page.click("#replay-next")
        page.wait_for_selector(f"#replay .step:text('2/{total}')")
        assert f"wrong mark by {ben.name}" in page.get_attribute(f"#{wrong_id}", "aria-label")
        watcher.shot(artifacts / "replay-spectator-360.png")
        page.click("#replay-last")
        page.wait_for_selector(f"#replay .step:text('{total}/{total}')")
        expect(page.locator("#board .cell.mine")).to_have_count(15)

        # ---- a rematch is an offer: declined, no game is made; offered again and accepted
        ben.page.click("#rematch")
        ben.page.wait_for_selector("#rematch-waiting")
        anna.page.wait_for_selector("#rematch-offered")
        assert ben.name in anna.text("#rematch-offered")
        anna.page.click("#rematch-decline")
        ben.page.wait_for_selector("#rematch-declined")
        assert anna.name in ben.text("#rematch-declined") and "declined" in ben.text("#rematch-declined")
        assert ben.page.url.endswith(f"/g/{room_id}") and anna.page.url.endswith(f"/g/{room_id}")
        assert ben.page.locator("#rematch-link").count() == 0
        ben.page.click("#rematch")
        anna.page.wait_for_selector("#rematch-accept")
        anna.page.click("#rematch-accept")  # accepting makes the game and takes Anna there
        anna.page.wait_for_url(re.compile(r"/g/(?!" + re.escape(room_id) + r")[^/]+$"))
        new_url = anna.page.url
        ben.page.wait_for_url(new_url)  # Ben offered it: his page goes there by itself
        watcher.page.wait_for_selector("#rematch-link")  # a spectator gets the link and stays
        assert urlparse(watcher.page.url).path == f"/g/{room_id}"
        assert watcher.page.get_attribute("#rematch-link", "href") == urlparse(new_url).path
        anna.page.wait_for_selector("#status.their-turn")  # seats swapped: Ben moves first
        assert anna.text("#name-1").startswith(anna.name)
        ben.page.wait_for_selector("#status.your-turn")

        for person in people:
            person.assert_clean()
    finally:
        for person in people:
            person.close()


@pytest.mark.parametrize("width, phone", [(360, True), (640, False)], ids=["phone-360px", "desktop-at-200pct"])
def test_the_whole_board_fits(browser, web_server: LiveServer, width: int, phone: bool) -> None:
    """On a 360 px wide phone, and on a 1280 px window zoomed to 200% (640 CSS px), the whole
    board is visible without scrolling sideways, and nothing else overflows either."""
    extra = {"is_mobile": True, "has_touch": True} if phone else {}
    anna = Person.open(browser, web_server.url, "Anna", viewport={"width": width, "height": 740},
                       device_scale_factor=2, **extra)
    try:
        anna.create_game(SEED)
        page = anna.page
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        box = page.locator("#board").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
        for r, c in ((0, 0), (0, 10), (10, 0), (10, 10)):
            cell = page.locator(f"#cell-{r}-{c}").bounding_box()
            assert cell is not None and cell["x"] >= 0 and cell["x"] + cell["width"] <= width
            assert cell["width"] >= 24  # still a tappable size
            assert abs(cell["width"] - cell["height"]) < 1  # square cells, every row alike
    finally:
        anna.close()


def test_keyboard_move_stale_notice_and_restart(browser, redis_url: str, start_server) -> None:
    """One move made with the keyboard only; a stale move is refused politely with the fresh
    board; after the server is killed and restarted on the same port the page reconnects by
    itself (no reload) and play goes on."""
    server = start_server()
    anna = Person.open(browser, server.url, "Anna")
    ben = Person.open(browser, server.url, "Ben")
    again = None
    try:
        start_duel(anna, ben, SEED)
        anna.page.wait_for_selector("#status.your-turn")
        page = anna.page

        # keyboard only: Tab to the first hidden cell, Enter selects, Enter again = mark,
        # Enter a third time clears, Enter selects again, Alt+C confirms
        tab_until(page, "(e) => e && e.id === 'cell-0-0'", 60, "the board")
        page.keyboard.press("Enter")
        page.wait_for_selector("#cell-0-0.sel-explore")
        assert page.evaluate("document.activeElement.id") == "cell-0-0"  # focus stays on the cell
        page.keyboard.press("Enter")
        page.wait_for_selector("#cell-0-0.sel-mark")
        page.keyboard.press("Enter")
        page.wait_for_selector("#cell-0-0:not(.sel-mark):not(.sel-explore)")
        assert page.locator("#confirm[disabled]").count() == 1
        page.keyboard.press("Enter")
        page.wait_for_selector("#cell-0-0.sel-explore")
        page.wait_for_selector("#confirm:not([disabled])")
        access_key(page, "c")
        anna.wait_move(1)
        ben.wait_move(1)
        assert anna.text("#move-1").startswith(f"1. {anna.name} explore a1 ")

        # a stale move (as after a reconnect replays a queued click): refused, fresh board
        ben.page.wait_for_selector("#status.your-turn")
        ben.page.eval_on_selector("#seen-v", "e => e.value = '1'")
        ben.page.click("label.quick-explore")
        ben.page.click("#cell-10-10")
        ben.page.wait_for_selector("#notice:has-text('not played')")
        assert ben.page.locator("#move-2").count() == 0
        assert ben.page.input_value("#seen-v") == anna.page.input_value("#seen-v")

        # the server dies (SIGKILL: no goodbye) and comes back on the same port
        anna.page.evaluate("window.__still_the_same_page = true")
        server.kill()
        anna.page.wait_for_selector(".hb .lost", state="visible")  # the pure-CSS notice
        again = relaunch(server, redis_url)
        # heartbeats are back (htmx retries with a jittered backoff of up to 2^n seconds)
        anna.page.wait_for_selector(".hb .lost", state="hidden", timeout=60_000)
        ben.page.wait_for_selector(".hb .lost", state="hidden", timeout=60_000)
        assert anna.page.evaluate("window.__still_the_same_page === true")
        ben.page.click("#cell-10-10")  # quick mode is still on: one click moves
        anna.wait_move(2)
        ben.wait_move(2)
        assert anna.page.evaluate("window.__still_the_same_page === true")
    finally:
        anna.close()
        ben.close()
        if again is not None:
            again.kill()

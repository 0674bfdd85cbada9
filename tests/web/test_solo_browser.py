"""The classic game in Chromium, through clicks only: a no-guess Beginner board won with a
flag and a chord (its time then on the leaderboard), a loss by a chord on a wrong flag, a
reload in the middle, and a spectator watching."""

from __future__ import annotations

import httpx
import pytest

from engine.classic import numbers_of
from engine.geometry import geometry

from .conftest import Person

pytestmark = pytest.mark.browser


def start_solo(person: Person, seed: int, no_guess: bool, preset: str = "beginner") -> str:
    response = person.context.request.post(
        person.base + "/solo", form={"preset": preset, "no_guess": "1" if no_guess else "0", "seed": str(seed)},
        headers={"origin": person.base})
    assert response.ok, response.status
    room_id = response.url.rsplit("/g/", 1)[1]
    person.goto_room(room_id)
    return room_id


def layout(base: str, room_id: str) -> set[tuple[int, int]]:
    return {tuple(m) for m in httpx.get(f"{base}/api/v1/games/{room_id}/layout").json()["mines"]}


def cell_class(person: Person, cell: tuple[int, int]) -> str:
    return person.page.get_attribute(f"#cell-{cell[0]}-{cell[1]}", "class") or ""


def click(person: Person, cell: tuple[int, int]) -> None:
    """Click ``cell`` and wait (bounded) for the frame that answers: an update or snapshot
    (they carry the version) or a notice."""
    seen = len(person.frames)
    person.page.click(f"#cell-{cell[0]}-{cell[1]}")
    for _ in range(600):
        if any('id="seen-v"' in f or 'id="notice"' in f for f in person.frames[seen:]):
            return
        person.page.wait_for_timeout(25)
    raise AssertionError(f"no answer after clicking {cell}")


def set_mode(person: Person, mode: str) -> None:
    person.page.check(f"input[name=mode][value={mode}]")


def test_a_no_guess_beginner_board_is_won_by_clicks_and_reaches_the_leaderboard(browser, web_server, artifacts):
    anna = Person.open(browser, web_server.url, "Anna")
    watcher = Person.open(browser, web_server.url, None)
    try:
        room_id = start_solo(anna, seed=31, no_guess=True)
        assert "Click any cell to start" in anna.text("#status")
        watcher.goto_room(room_id)
        click(anna, (4, 4))
        mines = layout(web_server.url, room_id)
        geo = geometry(9, 9)
        numbers = numbers_of(geo, frozenset(mines))
        # a flag on a mine next to an open number whose mines can all be flagged, then a chord
        open_cells = [c for c in geo.cells if "open" in cell_class(anna, c)]
        target = next((c for c in open_cells if numbers[c] and any(
            n not in mines and "hidden" in cell_class(anna, n) for n in geo.neighbours(c))), None)
        if target is not None:
            set_mode(anna, "flag")
            for n in geo.neighbours(target):
                if n in mines and "flag" not in cell_class(anna, n):
                    click(anna, n)
            assert int(anna.text("#counter")) == 10 - sum(1 for n in geo.neighbours(target) if n in mines)
            set_mode(anna, "reveal")
            click(anna, target)  # the chord opens the target's other neighbours
            assert all("open" in cell_class(anna, n) for n in geo.neighbours(target) if n not in mines)
        for cell in geo.cells:
            if cell not in mines and "hidden" in cell_class(anna, cell) and "flag" not in cell_class(anna, cell):
                click(anna, cell)
            if "won" in (anna.page.get_attribute("#status", "class") or ""):
                break
        anna.page.wait_for_selector("#status.won")
        assert "you win" in anna.text("#status").lower()
        for stat in ("#stat-time", "#stat-3bv", "#stat-bvs", "#stat-eff", "#stat-clicks"):
            assert anna.text(stat).strip()
        time_text = anna.text("#stat-time")
        assert time_text.endswith(" s") and len(time_text.split(".")[1]) == 4  # "12.34 s": two decimals
        watcher.page.wait_for_selector("#status.won")  # the spectator saw it live
        anna.shot(artifacts / "solo-won-1280.png")
        anna.page.goto(f"{web_server.url}/solo/leaderboard?preset=beginner&mode=no-guess")
        row = anna.page.inner_text(f"#lb-{room_id}")
        assert "Anna" in row and time_text.split()[0] in row
        assert not anna.csp_errors and not anna.page_errors
    finally:
        anna.close()
        watcher.close()


def test_a_chord_on_a_wrong_flag_loses_and_shows_the_fatal_mine_and_the_crossed_flag(browser, web_server, artifacts):
    anna = Person.open(browser, web_server.url, "Ben")
    try:
        room_id = start_solo(anna, seed=12, no_guess=False)
        click(anna, (0, 0))
        mines = layout(web_server.url, room_id)
        geo = geometry(9, 9)
        numbers = numbers_of(geo, frozenset(mines))
        target = next(c for c in geo.cells if "open" in cell_class(anna, c) and numbers[c] == 1 and any(
            n not in mines and "hidden" in cell_class(anna, n) for n in geo.neighbours(c)))
        wrong = next(n for n in geo.neighbours(target) if n not in mines and "hidden" in cell_class(anna, n))
        mine = next(n for n in geo.neighbours(target) if n in mines)
        anna.reload()  # in the middle: the same game comes back
        assert "open" in cell_class(anna, target)
        set_mode(anna, "flag")
        click(anna, wrong)
        set_mode(anna, "reveal")
        click(anna, target)
        anna.page.wait_for_selector("#status.lost")
        assert "fatal" in cell_class(anna, mine) and "wrong-flag" in cell_class(anna, wrong)
        assert anna.page.is_visible("#stat-time") and not anna.page.is_visible("#stat-bvs")  # rates only for a win
        anna.shot(artifacts / "solo-lost-1280.png")
    finally:
        anna.close()

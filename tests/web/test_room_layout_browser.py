"""The room page fits the window (issue 14): at 1280×800 and at 390×844 the status, the board,
the mode radios, the selection panel with Confirm and the players' cards are on screen without
scrolling, for both seats (a cell selected, so Confirm and Clear show) and a spectator, and at
the end the result and the board. Viewport screenshots of each go to ``test-artifacts/web/``."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from playwright.sync_api import expect

from engine import Explore
from server.client import Api
from tests.conftest import LiveServer

from .conftest import Person, run, start_duel
from .layout import header_misses, off_screen, outside, page_overflow
from .test_odds_browser import _play

pytestmark = pytest.mark.browser

SEED = 20240611
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
PLAYING = ("#status", "#board", "#players", ".modes", "#confirm", "#clear")
WATCHING = ("#status", "#board", "#players")
OVER = ("#status", "#board")


def check(people: dict[str, Person], wanted: dict[str, tuple[str, ...]], state: str, artifacts: Path) -> None:
    misses = []
    for who, person in people.items():
        for label, size in SIZES.items():
            misses += [f"{who} {label} {state}: {m}" for m in off_screen(person, wanted[who], size)]
            person.shot(artifacts / f"room-{state}-{who}-{size[0]}x{size[1]}.png", full_page=False)
    assert misses == []


def test_board_controls_and_status_fit_both_windows(browser, web_server: LiveServer, artifacts: Path) -> None:
    anna = Person.open(browser, web_server.url, "Anna", viewport={"width": 1280, "height": 800})
    ben = Person.open(browser, web_server.url, "Ben", viewport={"width": 390, "height": 844})
    watcher = Person.open(browser, web_server.url, None, viewport={"width": 1280, "height": 800})
    people = {"mover": anna, "waiting": ben, "spectator": watcher}
    try:
        room_id = start_duel(anna, ben, SEED)
        ben.page.wait_for_selector("#status.their-turn")
        watcher.goto_room(room_id)
        anna.page.wait_for_selector("#status.your-turn")
        for person, cell in ((anna, "#cell-0-0"), (ben, "#cell-10-10")):  # Ben pre-selects
            person.page.click(cell)
            person.page.wait_for_selector("#clear")
            assert person.page.evaluate("window.scrollY") == 0  # nothing needed a scroll
        check(people, {"mover": PLAYING, "waiting": PLAYING, "spectator": WATCHING}, "playing", artifacts)
        for person in (anna, ben):  # "(you)" always seen; a short name whole on a desktop (on a
            for label, size in SIZES.items():  # phone a 12-character one may be cut: its title says it)
                person.page.set_viewport_size({"width": size[0], "height": size[1]})
                person.page.wait_for_timeout(50)
                seat = 0 if person is anna else 1
                card = person.page.locator(f"#players .player.p{seat}").evaluate(CARD)
                whole = not card["truncated"] if label == "desktop" else card["title"] == card["name"]
                assert card["nameSeen"] and whole and card["you"], (person.name, label, card)

        anna.page.click("#confirm")
        ben.page.wait_for_selector("#status.your-turn")
        ben.page.click("#resign")
        ben.page.click("#resign-yes")
        for person in people.values():
            person.page.wait_for_selector("#fair.verified")
        check(people, {who: OVER for who in people}, "over", artifacts)
    finally:
        for person in people.values():
            person.close()


# ---------------------------------------------------------------- phones, long names, German

PHONES = (320, 375, 414)
NAME_LENGTH = 32
"""The longest name a guest may take (server/edge/auth.py MAX_NAME)."""


def long_name(stem: str) -> str:
    """A unique name of :data:`NAME_LENGTH` characters without a space or a hyphen to break at."""
    return (stem + secrets.token_hex(NAME_LENGTH))[:NAME_LENGTH]


def signed_in(browser, base: str, name: str, **context: object) -> Person:
    """A person at a browser who took ``name`` (exactly: no suffix) through the home page's form."""
    person = Person.open(browser, base, None, **context)
    person.name = name
    person.page.goto(base + "/")
    person.page.fill("#guest-name", name)
    person.page.click("#guest-go")
    person.page.wait_for_selector("#create-form")
    return person


async def finished_duel(base: str, names: tuple[str, str]) -> str:
    """Through the JSON API and the websocket: ``names`` play two moves, then the first resigns."""
    async with Api(base) as api:
        anna, ben = await api.guest(names[0]), await api.guest(names[1])
        game = await api.create_game(anna.token, seat=0, seed=SEED)
        await api.join(ben.token, game["id"])
        await _play(base, game["id"], [anna.token, ben.token], [(0, Explore((0, 0))), (1, Explore((10, 10)))])
        await api.resign(anna.token, game["id"])
        return game["id"]


def test_the_end_of_a_duel_fits_a_phone_in_english_and_german(browser, web_server: LiveServer, artifacts: Path) -> None:
    """The odds table's German headers and unbreakable 32-letter names widened the arena past
    the window (a 375 px page 417-498 px wide: the board's right columns and the winner's card
    cut off). At 320-414 px, in both languages: no sideways scroll, the board, both cards, the
    status and the end's panels inside the window, and every item of the header too (the
    language switch was cut off: the room pages' nav scrolled sideways)."""
    room_id = run(finished_duel(web_server.url, (long_name("AnnelieseMarieSophie"), long_name("BartholomaeusMaxim"))))
    for lang in ("en", "de"):
        viewer = signed_in(browser, web_server.url, long_name("Cleo"), viewport={"width": 320, "height": 640},
                           extra_http_headers={"accept-language": lang})
        try:
            viewer.goto_room(room_id)
            viewer.page.wait_for_selector("#odds-players")
            assert viewer.page.get_attribute("html", "lang") == lang
            misses = []
            for width in PHONES:
                viewer.page.set_viewport_size({"width": width, "height": 640})
                viewer.page.wait_for_timeout(50)  # one layout after the resize
                if page_overflow(viewer) > 0:
                    misses.append(f"{lang} {width}: the page scrolls sideways by {page_overflow(viewer)} px")
                misses += [f"{lang} {width}: {m}" for m in outside(viewer, "#status, #board, #players .player, #endgame, #replay, #odds")]
                misses += [f"{lang} {width} header: {m}" for m in header_misses(viewer)]
                viewer.shot(artifacts / f"room-over-{lang}-{width}.png")
            assert misses == []
            viewer.assert_clean()
        finally:
            viewer.close()


CARD = """(card) => {
  const box = card.getBoundingClientRect();
  const name = card.querySelector('.pname');
  const text = name.querySelector('a, .pname-text');
  const seen = (e) => {
    if (!e) return null;
    const r = e.getBoundingClientRect();
    const inside = (o) => r.left >= o.left - 0.5 && r.right <= o.right + 0.5 && r.top >= o.top - 0.5 && r.bottom <= o.bottom + 0.5;
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return inside(box) && inside(name.getBoundingClientRect()) && r.width > 0 && !!hit && e.contains(hit);
  };
  return {title: name.title, name: text.textContent, truncated: text.scrollWidth > text.clientWidth,
          nameSeen: seen(text), rating: seen(name.querySelector('.rating')), you: seen(name.querySelector('.you'))};
}"""


def test_a_long_name_keeps_the_rating_and_you_in_view(browser, web_server: LiveServer, artifacts: Path) -> None:
    """A 32-letter name in a rated game: the name box was ~133 px even at 1280 px with one
    ellipsis over it all, so neither the rating nor "(you)" showed. Now only the name itself
    truncates (the full name in the box's title); the rating and "(you)" stay in view."""
    base = web_server.url
    anna = signed_in(browser, base, long_name("Anneliese-Marie"), viewport={"width": 1280, "height": 800})
    ben = signed_in(browser, base, long_name("BartholomaeusMaxim"), viewport={"width": 375, "height": 667})
    try:
        response = anna.context.request.post(base + "/games", headers={"origin": base}, form={
            "ruleset": "brettspielnetz", "clock": "180+2", "rated": "on", "seat": "0", "seed": str(SEED)})
        assert response.ok, response.status
        room_id = response.url.rsplit("/g/", 1)[1]
        anna.goto_room(room_id)
        ben.goto_room(room_id)
        ben.page.click("#join")
        misses = []
        for person, me in ((anna, 0), (ben, 1)):
            expect(person.page.locator("#players .pname .rating")).to_have_count(2)
            for width, height in ((1280, 800), (375, 667), (320, 640)):
                person.page.set_viewport_size({"width": width, "height": height})
                person.page.wait_for_timeout(50)
                for seat in (0, 1):
                    card = person.page.locator(f"#players .player.p{seat}").evaluate(CARD)
                    name = (anna, ben)[seat].name
                    where = f"{person.name[:4]} {width} seat {seat}"
                    if card["title"] != name or card["name"] != name:
                        misses.append(f"{where}: name {card['name']!r}, title {card['title']!r}")
                    if not card["rating"]:
                        misses.append(f"{where}: the rating is hidden or clipped")
                    if (seat == me) != bool(card["you"]):
                        misses.append(f"{where}: (you) {card['you']}")
                    if not card["nameSeen"] and width >= 375:
                        misses.append(f"{where}: no part of the name shows")
                if page_overflow(person) > 0:
                    misses.append(f"{person.name[:4]} {width}: the page scrolls sideways")
                person.shot(artifacts / f"room-long-names-{person.name[:4]}-{width}.png", full_page=False)
        assert misses == []
    finally:
        anna.close()
        ben.close()

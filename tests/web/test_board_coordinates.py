"""The duel board's coordinates: column letters over the board and row numbers beside it, as
the move list, "Go to cell" and the selection panel name the cells (``f6``: column f, row 6, row
1 at the top; engine/geometry.py). They stand outside ``#board`` (which every move morphs), in
room.html's ``.board-wrap``, and must sit on the cells' columns and rows at every width the
board is drawn at: a desktop, a phone upright (390 and 320 px), a phone held sideways and a
desktop at 200 % zoom, in a live game (after a move has morphed the board) and on a replay step
(after htmx swapped it). The page never scrolls sideways, the labels are for the eye only
(aria-hidden), the cells stay 24 px a side at least and the page logs no CSP error.
Screenshots go to ``test-artifacts/web/``."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from engine.geometry import cell_name
from tests.conftest import LiveServer
from tests.server.test_analysis import planned

from .conftest import Person, run, start_duel
from .layout import outside, page_overflow
from .test_odds_browser import SEED as REPLAY_SEED
from .test_odds_browser import _play, _seated

pytestmark = pytest.mark.browser

SEED = 20240611
SIZE = 11
SIZES = {
    "desktop": (1280, 800),
    "phone": (390, 844),
    "phone-320": (320, 640),
    "sideways": (812, 375),
    "zoom-200": (640, 450),
}
SMALLEST_CELL = 24
"""WCAG 2.5.8's target size, as tests/web/test_layout_short_browser.py asks of the cells."""
TOLERANCE = 2.0
"""How far (px) a label's centre may be from its cells' centre line."""

GEOMETRY = """() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return {l: r.left, r: r.right, t: r.top, b: r.bottom}; };
  const q = (s) => document.querySelector(s);
  return {
    board: box(q('#board')),
    files: [...document.querySelectorAll('.coords-files > span')].map((e) => ({text: e.textContent, ...box(e)})),
    ranks: [...document.querySelectorAll('.coords-ranks > span')].map((e) => ({text: e.textContent, ...box(e)})),
    cols: [...Array(11).keys()].map((c) => box(q(`#cell-0-${c}`))),
    rows: [...Array(11).keys()].map((r) => box(q(`#cell-${r}-0`))),
    lastCol: [...Array(11).keys()].map((c) => box(q(`#cell-10-${c}`))),
    lastRow: [...Array(11).keys()].map((r) => box(q(`#cell-${r}-10`))),
    hidden: [...document.querySelectorAll('.coords')].map((e) => e.getAttribute('aria-hidden')),
    inBoard: document.querySelectorAll('#board .coords').length,
    smallest: Math.min(...[...document.querySelectorAll('#board .cell')].flatMap((e) => {
      const r = e.getBoundingClientRect(); return [r.width, r.height];
    })),
  };
}"""


def misaligned(person: Person, where: str) -> list[str]:
    """What is wrong with the coordinates on ``person``'s page as it is laid out now."""
    g = person.page.evaluate(GEOMETRY)
    board = g["board"]
    wrong = []
    if g["hidden"] != ["true", "true"] or g["inBoard"]:
        wrong.append(f"{where}: labels not aria-hidden or inside #board: {g['hidden']} {g['inBoard']}")
    letters = [cell_name((0, c))[:-1] for c in range(SIZE)]
    numbers = [cell_name((r, 0))[1:] for r in range(SIZE)]
    if [f["text"] for f in g["files"]] != letters or [r["text"] for r in g["ranks"]] != numbers:
        wrong.append(f"{where}: labels {[f['text'] for f in g['files']]} {[r['text'] for r in g['ranks']]}")
        return wrong
    if g["smallest"] < SMALLEST_CELL:  # the labels' gutter leaves the cells a tappable size
        wrong.append(f"{where}: a cell only {g['smallest']:.2f} px a side")
    for c, (label, top, bottom) in enumerate(zip(g["files"], g["cols"], g["lastCol"])):
        mid = (label["l"] + label["r"]) / 2
        if abs(mid - (top["l"] + top["r"]) / 2) > TOLERANCE or abs(mid - (bottom["l"] + bottom["r"]) / 2) > TOLERANCE:
            wrong.append(f"{where}: column {label['text']} at {mid:.1f}, its cells at {top['l']:.1f}..{top['r']:.1f}")
        if not (label["b"] <= board["t"] + 0.5 and board["t"] - label["b"] < 24 and label["r"] - label["l"] > 0):
            wrong.append(f"{where}: column {label['text']} not just over the board: {label} board {board}")
    for r, (label, left, right) in enumerate(zip(g["ranks"], g["rows"], g["lastRow"])):
        mid = (label["t"] + label["b"]) / 2
        if abs(mid - (left["t"] + left["b"]) / 2) > TOLERANCE or abs(mid - (right["t"] + right["b"]) / 2) > TOLERANCE:
            wrong.append(f"{where}: row {label['text']} at {mid:.1f}, its cells at {left['t']:.1f}..{left['b']:.1f}")
        if not (label["r"] <= board["l"] + 0.5 and board["l"] - label["r"] < 24 and label["b"] - label["t"] > 0):
            wrong.append(f"{where}: row {label['text']} not just left of the board: {label} board {board}")
    # each label's text whole on the page and off the cells (a wide "11" may run into the page's margin)
    spill = person.page.evaluate("""() => {
      const b = document.querySelector('#board').getBoundingClientRect();
      return [...document.querySelectorAll('.coords > span')].flatMap((e) => {
        const range = document.createRange(); range.selectNodeContents(e);
        const t = range.getBoundingClientRect();
        return t.left >= 0 && (t.right <= b.left + 0.5 || t.bottom <= b.top + 0.5) ? []
          : [`${e.textContent}: ${t.left.toFixed(1)}..${t.right.toFixed(1)} (board from ${b.left.toFixed(1)})`];
      });
    }""")
    if spill:
        wrong.append(f"{where}: labels over the board or off the page: {spill}")
    if page_overflow(person) > 0:
        wrong.append(f"{where}: the page scrolls sideways by {page_overflow(person)} px")
    wrong += [f"{where}: {m}" for m in outside(person, "#board, .coords > span")]
    return wrong


def check_sizes(person: Person, state: str, artifacts: Path) -> list[str]:
    wrong = []
    for label, (width, height) in SIZES.items():
        person.page.set_viewport_size({"width": width, "height": height})
        person.page.wait_for_timeout(50)  # one layout after the resize
        wrong += misaligned(person, f"{state} {label} {width}×{height}")
        person.shot(artifacts / f"coords-{state}-{width}x{height}.png", full_page=False)
    return wrong


def test_coordinates_sit_on_the_cells_in_a_live_game(browser, web_server: LiveServer, artifacts: Path) -> None:
    anna = Person.open(browser, web_server.url, "Anna", viewport={"width": 1280, "height": 800})
    ben = Person.open(browser, web_server.url, "Ben", viewport={"width": 390, "height": 844})
    try:
        start_duel(anna, ben, SEED)
        anna.page.wait_for_selector("#status.your-turn")
        # the labels name a cell as the selection panel does: column d, row 3 is d3
        anna.page.click("#cell-2-3")
        files = anna.page.locator(".coords-files > span").all_inner_texts()
        ranks = anna.page.locator(".coords-ranks > span").all_inner_texts()
        expect(anna.page.locator("#selection .sel-cell")).to_have_text(files[3] + ranks[2])
        anna.page.click("#confirm")  # a move: the board is morphed, the labels stay
        ben.page.wait_for_selector("#status.your-turn")
        anna.page.wait_for_selector("#status.their-turn")
        assert check_sizes(anna, "live", artifacts) + check_sizes(ben, "live-waiting", artifacts) == []
        anna.assert_clean()
        ben.assert_clean()
    finally:
        anna.close()
        ben.close()


def test_coordinates_sit_on_the_cells_on_a_replay_step(browser, web_server: LiveServer, artifacts: Path) -> None:
    duel = planned(REPLAY_SEED)
    base = web_server.url
    room_id, tokens = run(_seated(base))
    run(_play(base, room_id, tokens, duel.log))
    watcher = Person.open(browser, base, None, viewport={"width": 390, "height": 844})
    page = watcher.page
    try:
        page.goto(f"{base}/g/{room_id}?at=3")
        expect(page.locator("#spectators strong")).not_to_have_text("0")  # the snapshot is in
        page.click("#replay-next")  # a step swapped by htmx
        expect(page).to_have_url(f"{base}/g/{room_id}?at=4")
        expect(page.locator("#replay .step")).to_have_text(f"4/{len(duel.log)}")
        assert check_sizes(watcher, "replay", artifacts) == []
        watcher.assert_clean()
    finally:
        watcher.close()

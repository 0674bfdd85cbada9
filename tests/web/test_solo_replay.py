"""A finished classic game's step replay over the real server (HTTP, no browser): each step's
board is the engine's position after that many moves (cells opened then and not before, the
layout shown faintly), the replay bar's words and links, clamping, the page of a step (and its
socket keeping it), 409 before the end with nothing of the layout shown, no odds, German."""

from __future__ import annotations

import re

import httpx
import pytest

from engine import Classic, cell_name
from engine.moves import Chord, Flag, Move, Reveal, move_to_data
from server.client import Api, GameSocket
from server.edge import new_game
from tests.conftest import LiveServer
from tests.names import unique
from tests.web.conftest import run
from tests.web.markup import section
from tests.web.test_i18n import assert_speaks

SEED = 5
HX = {"hx-request": "true"}
CELL = re.compile(r'<button type="(?:button|submit)" id="cell-(\d+)-(\d+)" class="([^"]*)"')


def planned(seed: int = SEED) -> tuple[Classic, list[Move]]:
    """The game the server makes from ``seed`` (Beginner), played by the engine: a reveal in
    the middle, a flag on a mine beside an open 1 taken away and put back, a chord on that 1
    (it opens the 1's other neighbours), then a reveal on another mine (the loss)."""
    game = new_game.classic(9, 9, 10, False, seed)
    moves: list[Move] = [Reveal((4, 4))]
    game.apply(0, moves[0])
    mines = game.mines or frozenset()
    one = next(c for c in sorted(game.opened) if game.numbers[c] == 1 and any(
        n not in mines and n not in game.opened for n in game.geo.neighbours(c)))
    mine = next(n for n in game.geo.neighbours(one) if n in mines)
    moves += [Flag(mine), Flag(mine), Flag(mine), Chord(one)]
    for move in moves[1:]:
        game.apply(0, move)
    moves.append(Reveal(next(m for m in sorted(mines) if m not in game.flags)))
    game.apply(0, moves[-1])
    assert game.outcome is not None
    return game, moves


async def play(base: str, moves: list[Move], seed: int = SEED) -> str:
    """A new Beginner game of ``seed`` played with ``moves`` over the msgpack socket; its id."""
    async with Api(base) as api:
        anna = await api.guest(unique("Anna"))
        game = await api.solo(anna.token, seed=seed)
        async with await GameSocket.connect(base, game["id"], anna.token) as sock:
            await sock.until(lambda f: f["t"] == "snapshot")
            for move in moves:
                v = sock.v
                action, *cell = move_to_data(move)
                await sock.move(action, tuple(cell))
                await sock.until_version(v + 1)
        return game["id"]


@pytest.fixture(scope="module")
def finished(web_server: LiveServer) -> tuple[str, Classic]:
    """A finished classic game on the server, and the engine's own copy of it."""
    game, moves = planned()
    return run(play(web_server.url, moves)), game


def get(server: LiveServer, path: str, htmx: bool = False, lang: str = "en") -> httpx.Response:
    return httpx.get(server.url + path, headers={"accept-language": lang, **(HX if htmx else {})},
                     follow_redirects=False, timeout=10)


def cells(html: str) -> dict[tuple[int, int], str]:
    """Every board cell's class, by cell."""
    return {(int(r), int(c)): css for r, c, css in CELL.findall(html)}


def opened(html: str) -> set[tuple[int, int]]:
    return {cell for cell, css in cells(html).items() if " open " in f" {css} "}


def shown_open(game: Classic, at: int) -> set[tuple[int, int]]:
    """The cells the engine's replay step ``at`` shows open."""
    rows = game.position(at).rows
    return {(r, c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch.isdigit()}


# ---------------------------------------------------------------------- the steps


def test_each_step_shows_the_board_after_that_many_moves(web_server: LiveServer, finished) -> None:
    room, game = finished
    total = len(game.log)
    mines = game.mines or frozenset()
    before: set[tuple[int, int]] = set()
    for at in range(total + 1):
        answer = get(web_server, f"/g/{room}/replay?at={at}", htmx=True)
        assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
        html = answer.text
        for area in ("board", "replay", "counter"):
            tag = re.search(rf'<\w+ [^>]*\bid="{area}"[^>]*>', html)
            assert tag and 'hx-swap-oob="morph"' in tag.group(0), area  # swapped out of band, morphed
        now = opened(html)
        assert now == shown_open(game, at), at
        assert before <= now  # nothing closes again
        if at in (1, 5):  # the first reveal and the chord open cells that were hidden a step before
            assert now - before
        before = now
        assert f'<span class="step">{at}/{total}</span>' in section(html, "replay")
        if 0 < at < total:
            looks = cells(html)
            ghosts = {cell for cell, css in looks.items() if "ghost-mine" in css}
            flagged = {cell for cell, css in looks.items() if "flag" in css.split()}
            assert ghosts == mines - flagged  # the layout, public now, shown faintly
            assert "fatal" not in html
    final = get(web_server, f"/g/{room}/replay?at={total}", htmx=True).text
    assert "cell mine fatal" in final and "ghost-mine" not in final  # the last step is the final board
    assert get(web_server, f"/g/{room}", lang="en").text.count("cell mine fatal") == 1


def test_the_bar_words_each_move_and_links_its_neighbours(web_server: LiveServer, finished) -> None:
    room, game = finished
    total = len(game.log)
    flag, chord, fatal = (move.cell for _seat, move in (game.log[1], game.log[4], game.log[5]))
    words = ["The start", "1. reveal e5", f"2. flag {cell_name(flag)}", f"3. unflag {cell_name(flag)}",
             f"4. flag {cell_name(flag)}", f"5. chord {cell_name(chord)}", f"6. reveal {cell_name(fatal)}"]
    for at, said in enumerate(words):
        html = get(web_server, f"/g/{room}/replay?at={at}", htmx=True).text
        bar = section(html, "replay")
        assert bar.startswith('<nav id="replay" class="replay" aria-label="Replay" hx-swap-oob="morph">')
        assert f"</span> {said}</p>" in bar, (at, bar)
        assert "replay-score" not in bar  # a classic game has no score
        for key, target, keys in (("first", 0, ""), ("prev", at - 1, ","), ("next", at + 1, "."),
                                  ("last", total, "")):
            off = target == at or not 0 <= target <= total
            link = re.search(rf'<(a|span) class="btn step-{key}[^"]*" id="replay-{key}"[^>]*>', bar)
            assert link, (key, bar)
            if off:
                assert link.group(1) == "span" and 'aria-disabled="true" tabindex="-1"' in link.group(0)
            else:
                assert f'href="/g/{room}?at={target}"' in link.group(0)
                assert f'hx-get="/g/{room}/replay?at={target}"' in link.group(0)
                assert f'hx-push-url="/g/{room}?at={target}"' in link.group(0) and 'hx-swap="none"' in link.group(0)
                assert (f'accesskey="{keys}"' in link.group(0)) == bool(keys)
        moved = {1: game.log[0][1].cell, 2: flag, 5: chord}.get(at)
        if moved is not None:
            r, c = moved
            assert "last" in cells(html)[moved].split() and f'aria-label="{cell_name(moved)}, ' in html
            assert re.search(rf'id="cell-{r}-{c}" class="[^"]*" aria-label="[^"]*, last move"', html)
    counters = [re.search(r'id="counter"[^>]*><span[^>]*></span><strong[^>]*>(-?\d+)</strong>',
                          get(web_server, f"/g/{room}/replay?at={at}", htmx=True).text).group(1)
                for at in range(5)]
    assert counters == ["10", "10", "9", "10", "9"]  # mines minus flags, as they stood


def test_a_step_is_a_page_and_its_socket_keeps_it(web_server: LiveServer, finished) -> None:
    room, game = finished
    page = get(web_server, f"/g/{room}?at=2")
    assert page.status_code == 200
    html = page.text
    assert opened(html) == shown_open(game, 2)
    assert "2/6</span>" in section(html, "endgame") and 'id="again"' not in html  # a spectator: no Play again
    assert re.search(rf'ws-connect="/g/{room}/ws\?t=[^"&]+&amp;end=1"', html)  # snapshots keep the step
    plain = get(web_server, f"/g/{room}/replay?at=3")  # no htmx: the step's page
    assert plain.status_code == 303 and plain.headers["location"] == f"/g/{room}?at=3"


def test_steps_out_of_the_game_are_clamped(web_server: LiveServer, finished) -> None:
    room, game = finished
    total = len(game.log)
    past = get(web_server, f"/g/{room}/replay?at=999", htmx=True).text
    assert f'<span class="step">{total}/{total}</span>' in past and opened(past) == shown_open(game, total)
    assert f"{total}/{total}</span>" in get(web_server, f"/g/{room}?at=999").text
    start = get(web_server, f"/g/{room}/replay?at=-3", htmx=True).text  # no step: the start
    assert f'<span class="step">0/{total}</span>' in start and opened(start) == set()


def test_a_classic_game_has_no_odds(web_server: LiveServer, finished) -> None:
    room, _game = finished
    for htmx in (True, False):
        answer = get(web_server, f"/g/{room}/odds?at=1", htmx=htmx)
        assert answer.status_code == 404 and "Only duels have odds" in answer.text
    step = get(web_server, f"/g/{room}/replay?at=1&odds=1", htmx=True).text
    assert 'id="odds"' not in step and "odds=1" not in step  # asked for, no overlay and no link keeps it


def test_nothing_of_the_replay_before_the_end(web_server: LiveServer) -> None:
    game, moves = planned()
    room = run(play(web_server.url, moves[:2]))  # a reveal and a flag: still playing
    for path in (f"/g/{room}/replay?at=1", f"/g/{room}/replay?at=0"):
        for htmx in (True, False):
            answer = get(web_server, path, htmx=htmx)
            assert answer.status_code == 409 and "The replay opens when the game is over." in answer.text
    page = get(web_server, f"/g/{room}?at=1").text
    assert 'id="replay"' not in page and "ghost-mine" not in page and "end=1" not in page
    assert opened(page) == shown_open(game, 2)  # the live board, as it stands


def test_the_replay_speaks_german(web_server: LiveServer, finished) -> None:
    room, game = finished
    flag = cell_name(game.log[1][1].cell)
    for path, htmx in ((f"/g/{room}?at=3", False), (f"/g/{room}/replay?at=3", True)):
        html = get(web_server, path, htmx=htmx, lang="de").text
        assert_speaks(html, "de", shows=f"3. Fahne von {flag} entfernt")
        assert 'aria-label="Wiederholung"' in section(html, "replay") and "«\u00a0Erster" in html
    chord = get(web_server, f"/g/{room}/replay?at=5", htmx=True, lang="de").text
    assert f"5. Akkord auf {cell_name(game.log[4][1].cell)}" in chord
    assert "1. e5 aufgedeckt" in get(web_server, f"/g/{room}/replay?at=1", htmx=True, lang="de").text
    odds = get(web_server, f"/g/{room}/odds?at=1", lang="de")
    assert odds.status_code == 404 and "Nur Duelle haben Wahrscheinlichkeiten" in odds.text

"""Pages come back within 2 s of a restarted server answering (issue 14), duel and solo alike.

The htmx ws extension alone reopens a lost socket with full-jitter backoff that grows with
every failed attempt (up to 64 s): after ~10 s away it took 22–32 s. The room pages' hidden
``#reconnect`` element (``server/web/reconnect.py``) fetches the page's ``#room`` again as
soon as the server answers, and the new ``#room`` opens its socket at once.
"""

from __future__ import annotations

import time

import pytest

from .conftest import WAIT_MS, Person, relaunch, start_duel
from .test_solo_browser import start_solo

pytestmark = pytest.mark.browser

SEED = 1
AWAY_S = 10.0
"""How long the server stays dead: long enough for the extension's own backoff to have grown
(after ~10 s its next attempt is up to 16–32 s away)."""
BACK_BOUND_S = 2.0 + 0.5
"""The issue's 2 s, measured from the moment the test saw ``/healthz`` answer 200 to the
moment the page had received its snapshot on the new socket, plus 0.5 s for what the
measurement adds that a player would not see: ``/healthz`` is polled every 50 ms, Playwright
hands the page's frames to the test between its 25 ms waits, and two shared cores run other
engineers' browser tests meanwhile."""


TOUCH_STYLES = """() => { for (const el of document.querySelectorAll('[id]')) {
  el.style.caretColor = 'red'; el.style.caretColor = ''; } }"""
"""What a browser extension (a password manager's autofill) or a screenshot tool does to a page:
inline style set and cleared through the CSSOM (allowed), which leaves ``style=""`` on the
elements. htmx's settle step copied it onto the new ``#room``'s elements with
``setAttribute``, which the CSP refuses: a console error on every reconnect."""


def snapshots(person: Person, since: int) -> int:
    return sum(1 for f in person.frames[since:] if f.startswith("<!--snapshot-->"))


def open_sockets(person: Person, since: int) -> list[object]:
    """The page's websockets opened after the first ``since`` that are open now."""
    return [ws for ws in person.sockets[since:] if not ws.is_closed()]


def sockets_settle(person: Person, since: int) -> int:
    """How many of the page's new sockets are open once they settle (a bounded wait for one).

    The old ``#room``'s own backoff timer, set when the server died, may still fire after the
    swap and open a socket for the detached element, which nothing on the page can close
    (bigskysoftware/htmx-extensions#161); that socket carries the old render's ticket, so the
    server closes it (4001, ``server/web/socket_ticket.py``). Before the tickets, about one
    reconnect in two left it open beside the new ``#room``'s socket, both fed by the hub."""
    deadline = time.monotonic() + 5
    while len(open_sockets(person, since)) != 1 and time.monotonic() < deadline:
        person.page.wait_for_timeout(50)
    return len(open_sockets(person, since))


def test_pages_reconnect_within_2_s_of_a_restarted_server(browser, redis_url: str, start_server) -> None:
    server = start_server()
    anna = Person.open(browser, server.url, "Anna")
    ben = Person.open(browser, server.url, "Ben")
    solo = Person.open(browser, server.url, "Sol")
    people = (anna, ben, solo)
    for person in people:
        person.sockets = []
        person.page.on("websocket", lambda ws, person=person: person.sockets.append(ws))
    again = None
    try:
        start_duel(anna, ben, SEED)
        anna.page.wait_for_selector("#status.your-turn")
        anna.page.click("label.quick-explore")  # quick mode is page state: it must survive
        start_solo(solo, seed=5, no_guess=False)
        solo.page.click("label.quick-flag")
        for person in people:
            person.page.evaluate("window.__same_page = true")
            person.page.evaluate(TOUCH_STYLES)

        server.kill()  # a crash: the sockets end without a close frame (1006)
        for person in people:
            person.page.wait_for_selector(".hb .lost", state="visible")
        seen = {person.name: len(person.frames) for person in people}
        dead = {person.name: len(person.sockets) for person in people}
        anna.page.wait_for_timeout(AWAY_S * 1000)

        again = relaunch(server, redis_url)
        back = time.monotonic()
        took: dict[str, float] = {}
        while len(took) < len(people) and time.monotonic() - back < WAIT_MS / 1000:
            for person in people:
                if person.name not in took and snapshots(person, seen[person.name]):
                    took[person.name] = time.monotonic() - back
            anna.page.wait_for_timeout(25)
        assert len(took) == len(people), f"pages without a snapshot after {WAIT_MS} ms: {took}"
        assert max(took.values()) <= BACK_BOUND_S, took

        for person in people:
            person.page.wait_for_selector(".hb .lost", state="hidden")
            assert person.page.evaluate("window.__same_page === true")  # no reload: the same page
            assert sockets_settle(person, dead[person.name]) == 1  # the new #room's socket alone
        assert anna.page.is_checked("input[name=mode][value=explore]")
        assert solo.page.is_checked("input[name=mode][value=flag]")

        # play goes on: Anna's quick click moves, Ben sees it
        anna.page.click("#cell-0-0")
        ben.wait_move(1)
        anna.wait_move(1)
        solo.page.click("#cell-0-0")  # quick flag
        solo.page.wait_for_selector("#cell-0-0.flag", state="attached")
        for person in people:
            assert not person.csp_errors
    finally:
        for person in people:
            person.close()
        if again is not None:
            again.kill()

"""What an outside accessibility probe (Playwright, Chromium) found, checked in Chromium: the
focus stays where a player left it when the game or the search ends under it (no script: the
frames morph elements that keep their ids), live regions are on the page before their words
change (and only where words should be heard), and links and hints say what they are.
Every wait is bounded and waits for a condition."""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import expect

from server.client import Api, GameSocket
from tests.conftest import LiveServer

from .conftest import TURN, Person, run, same_place, start_duel
from .keyboard import access_key, seed_where
from .test_focus_browser import focused, keep, kept, select
from .test_solo_browser import layout, start_solo

pytestmark = pytest.mark.browser

A1, K11 = (0, 0), (10, 10)
SEED = seed_where(A1, K11)


def quick(person: Person, mode: str) -> None:
    """Choose the duel's click mode (``select``, ``explore``, ``mark``) with its radio."""
    person.page.check(f'#modes input[value="{mode}"]')


# ---------------------------------------------------------------------- 1. the end keeps the focus


def test_confirming_the_move_that_ends_the_game_keeps_the_focus_on_confirm(browser, web_server: LiveServer) -> None:
    """Anna ends the game with the keyboard (select the last mine, Alt+C): Confirm, which the end
    takes off, stays as an inert button saying the game is over, with the focus; Ben, whose focus
    is on a cell, keeps it there (nothing takes it away from him)."""
    anna, ben = Person.open(browser, web_server.url, "Anna"), Person.open(browser, web_server.url, "Ben")
    try:
        room_id = start_duel(anna, ben, SEED)  # Anna moves first
        ap, bp = anna.page, ben.page
        mines = sorted(layout(web_server.url, room_id))
        assert len(mines) % 2 == 1  # the last one is Anna's to find
        for person in (anna, ben):
            expect(person.page.locator("#status")).to_contain_text(TURN)
            quick(person, "mark")
        for number, (r, c) in enumerate(mines[:-1], start=1):  # all but one marked, turn by turn
            mover = anna if number % 2 else ben
            expect(mover.page.locator("#status.your-turn")).to_be_visible()
            mover.page.click(f"#cell-{r}-{c}")
            anna.wait_move(number)
            ben.wait_move(number)
        last = mines[-1]
        quick(anna, "select")
        bp.focus("#cell-10-10" if last != K11 else "#cell-0-10")
        ben_cell = focused(bp)
        select(ap, last)
        access_key(ap, "c")  # Confirm: explore the last mine, the game ends
        expect(ap.locator("#confirm")).to_be_focused()
        keep(ap, "confirm")
        expect(ap.locator("#endgame")).not_to_have_class(re.compile(r"\boff\b"))
        expect(bp.locator("#endgame")).not_to_have_class(re.compile(r"\boff\b"))
        ap.wait_for_timeout(300)  # the connection's own redraw of the panel follows the end's frame
        assert focused(ap) == "confirm" and kept(ap) == {"confirm": True}
        confirm = ap.locator("#confirm")
        expect(confirm).to_be_visible()
        expect(confirm).to_have_text("The game is over")
        expect(confirm).to_have_attribute("aria-disabled", "true")
        expect(ap.locator("#resign-yes")).to_be_hidden()  # only the focused one shows
        assert focused(bp) == ben_cell  # the end stole nobody's focus
        expect(bp.locator("#confirm")).to_have_text("The game is over")
        box = confirm.bounding_box()
        ap.keyboard.press("Tab")  # away: nothing moves
        assert focused(ap) != "confirm"
        assert same_place(box, confirm.bounding_box())
        for person in (anna, ben):
            person.assert_clean()
    finally:
        anna.close()
        ben.close()


def test_yes_resign_keeps_the_focus(browser, web_server: LiveServer) -> None:
    anna, ben = Person.open(browser, web_server.url, "Anna"), Person.open(browser, web_server.url, "Ben")
    try:
        room_id = start_duel(anna, ben, SEED)
        ap = anna.page
        expect(ap.locator("#status.your-turn")).to_be_visible()
        ap.focus("#resign")
        ap.keyboard.press("Enter")
        expect(ap.locator("#resign-yes")).to_be_visible()
        ap.focus("#resign-yes")
        keep(ap, "resign-yes")
        ap.keyboard.press("Enter")
        expect(ap.locator("#status")).to_contain_text("resigned")
        expect(ap.locator("#endgame")).not_to_have_class(re.compile(r"\boff\b"))
        ap.wait_for_timeout(300)
        assert focused(ap) == "resign-yes" and kept(ap) == {"resign-yes": True}
        yes = ap.locator("#resign-yes")
        expect(yes).to_be_visible()
        expect(yes).to_have_text("The game is over")
        expect(yes).to_have_attribute("aria-disabled", "true")
        expect(ap.locator("#confirm")).to_be_hidden()  # it shares the place
        box = ap.locator("#selection").bounding_box()
        ap.keyboard.press("Tab")  # away: Confirm's words show in the same place, nothing moves
        expect(yes).to_be_hidden()
        expect(ap.locator("#confirm")).to_be_visible()
        assert same_place(box, ap.locator("#selection").bounding_box())
        # a spectator sees no panel at the end
        cleo = Person.open(browser, web_server.url, "Cleo")
        try:
            cleo.goto_room(room_id)
            expect(cleo.page.locator("#endgame")).not_to_have_class(re.compile(r"\boff\b"))
            expect(cleo.page.locator("#selection")).to_be_hidden()
        finally:
            cleo.close()
        anna.assert_clean()
    finally:
        anna.close()
        ben.close()


def test_the_opponents_end_of_the_game_takes_nobodys_focus(browser, web_server: LiveServer) -> None:
    """Ben is asked whether to resign (the focus on "Keep playing") when Anna resigns: the end
    frame keeps that button, inert and out of sight, and his focus on it (a regression probe saw
    it fall to <body>)."""
    anna, ben = Person.open(browser, web_server.url, "Anna"), Person.open(browser, web_server.url, "Ben")
    try:
        start_duel(anna, ben, SEED)
        bp = ben.page
        expect(bp.locator("#status.their-turn")).to_be_visible()
        bp.focus("#resign")
        bp.keyboard.press("Enter")
        expect(bp.locator("#resign-no")).to_be_focused()
        keep(bp, "resign-no")
        anna.page.click("#resign")
        anna.page.click("#resign-yes")
        expect(bp.locator("#status")).to_contain_text("resigned")
        bp.wait_for_timeout(300)
        assert focused(bp) == "resign-no" and kept(bp) == {"resign-no": True}
        expect(bp.locator("#resign-no")).to_have_attribute("aria-disabled", "true")
        ben.assert_clean()
    finally:
        anna.close()
        ben.close()


def test_abort_keeps_the_focus_and_says_it_is_unavailable(browser, web_server: LiveServer) -> None:
    """Abort ends the game and leaves its place: the button stays, inert and out of sight, so
    the focus on it stays (a removed one fell to <body>); nothing of it shows."""
    anna, ben = Person.open(browser, web_server.url, "Anna"), Person.open(browser, web_server.url, "Ben")
    try:
        start_duel(anna, ben, SEED)
        ap = anna.page
        expect(ap.locator("#status.your-turn")).to_be_visible()
        ap.focus("#abort-game")
        keep(ap, "abort-game")
        ap.keyboard.press("Enter")
        expect(ap.locator("#status")).to_contain_text("aborted")
        ap.wait_for_timeout(300)
        assert focused(ap) == "abort-game" and kept(ap) == {"abort-game": True}
        gone = ap.locator("#abort-game")
        expect(gone).to_have_attribute("aria-disabled", "true")
        box = ap.locator("#abort").bounding_box()
        assert box is not None and box["width"] <= 1 and box["height"] <= 1  # out of sight (clipped to a pixel)
        ap.keyboard.press("Enter")  # inert: nothing is sent, nothing changes
        ap.wait_for_timeout(300)
        expect(ap.locator("#notice")).to_have_text("")
        anna.assert_clean()
    finally:
        anna.close()
        ben.close()


# ---------------------------------------------------------------------- 2. a low clock


def test_a_low_clock_says_so_and_its_players_live_region_changes_once(browser, web_server: LiveServer) -> None:
    """32 s a side (a clock made over the API: the form's shortest is a minute): once both have
    moved, Anna's clock runs below 30 s within a few seconds. Her clock says "low time" in
    words, and her page's #low-time-0, there and empty from the start, gets its words once and
    keeps them; Ben's page does not voice Anna's low time (hidden), a spectator's neither."""
    anna, ben = Person.open(browser, web_server.url, "Anna"), Person.open(browser, web_server.url, "Ben")
    try:
        made = httpx.post(f"{web_server.url}/api/v1/games", headers={"authorization": f"Bearer {anna.token}"},
                          json={"seat": 0, "seed": SEED, "clock": {"initial": 32, "increment": 0}})
        assert made.status_code == 201, made.text
        room_id = made.json()["id"]
        anna.goto_room(room_id)
        ben.goto_room(room_id)
        ben.page.click("#join")
        ap, bp = anna.page, ben.page
        for person in (anna, ben):
            expect(person.page.locator("#status")).to_contain_text(TURN)
            quick(person, "explore")
        keep(ap, "low-time-0", "clock-0")
        expect(ap.locator("#low-time-0")).to_have_text("")
        expect(ap.locator("#low-time-0")).to_have_attribute("aria-live", "polite")
        ap.click("#cell-0-0")
        ben.wait_move(1)
        bp.click("#cell-10-10")
        anna.wait_move(2)  # Anna's clock runs
        ap.evaluate("""() => { window.__said = [];
          new MutationObserver(() => window.__said.push(document.getElementById('low-time-0').textContent))
            .observe(document.getElementById('low-time-0'), {childList: true, characterData: true, subtree: true}); }""")
        ap.wait_for_selector("#clock-0.low", timeout=30_000)  # (a bound: about 2 s)
        expect(ap.locator("#low-time-0")).to_have_text("Your time is running low: less than 30 seconds left.")
        expect(ap.locator("#clock-0")).to_contain_text("low time")
        assert re.fullmatch(r"time left 0:\d\d(\.\d)?, low time", ap.get_attribute("#clock-0", "aria-label") or "")
        ap.wait_for_timeout(2500)  # two more heartbeats
        assert kept(ap) == {"low-time-0": True, "clock-0": True}
        assert ap.evaluate("() => window.__said") == ["Your time is running low: less than 30 seconds left."]
        assert ap.evaluate("() => getComputedStyle(document.getElementById('low-time-0')).display") != "none"
        expect(bp.locator("#clock-0.low")).to_be_attached()
        assert bp.evaluate("() => getComputedStyle(document.getElementById('low-time-0')).display") == "none"
        expect(bp.locator("#low-time-1")).to_have_text("")
    finally:
        anna.close()
        ben.close()


# ---------------------------------------------------------------------- 3. the rematch's news


def test_the_rematch_offer_changes_the_words_of_a_region_already_there(browser, web_server: LiveServer) -> None:
    anna, ben = Person.open(browser, web_server.url, "Anna"), Person.open(browser, web_server.url, "Ben")
    try:
        start_duel(anna, ben, SEED)
        expect(anna.page.locator("#status.your-turn")).to_be_visible()
        anna.page.click("#resign")
        anna.page.click("#resign-yes")
        for person in (anna, ben):
            expect(person.page.locator("#rematch")).to_be_visible()
            expect(person.page.locator("#rematch-news")).to_have_text("")
            expect(person.page.locator("#rematch-news")).to_have_attribute("role", "status")
        keep(anna.page, "rematch-news")
        seen = len(ben.frames)
        ben.page.click("#rematch")  # a form: his page comes again, live
        ben.wait_live(seen)
        expect(anna.page.locator("#rematch-news")).to_contain_text("offers a rematch")
        assert kept(anna.page) == {"rematch-news": True}  # the region stayed; its words changed
        assert anna.page.locator('#rematch-area [role="status"]').count() == 1
        expect(ben.page.locator("#rematch-news")).to_contain_text("waiting for")
        keep(ben.page, "rematch-news")
        anna.page.click("#rematch-decline")
        expect(ben.page.locator("#rematch-news")).to_contain_text("declined the rematch")
        assert kept(ben.page) == {"rematch-news": True}
        for person in (anna, ben):
            person.assert_clean()
    finally:
        anna.close()
        ben.close()


# ---------------------------------------------------------------------- 4. quick pairing


@pytest.fixture(scope="module")
def pair_server(redis_url: str, tmp_path_factory: pytest.TempPathFactory):
    from tests.conftest import launch_server

    server = launch_server(redis_url, tmp_path_factory.mktemp("a11y-pair"), MINEDUEL_PAIRING_COMPUTER_AFTER_S="2")
    yield server
    server.stop()


def seek(person: Person, pool: str) -> None:
    """The search page of ``pool`` (a correspondence pool: no other test seeks there; its home
    page button goes to a game instead, but the page seeks any pool it names)."""
    person.page.goto(f"{person.base}/pair?pool={quote(pool, safe='')}")
    person.page.wait_for_selector("#pair-cancel")


def test_the_pairing_page_keeps_the_focus_and_says_what_changed(browser, pair_server: LiveServer) -> None:
    """A focused Cancel stays focused when the computer is offered (which a live region there
    from the start says) and when the search ends; the heading then says it has ended."""
    anna = Person.open(browser, pair_server.url, "Anna")
    try:
        seek(anna, "corr-7d/coan/casual")
        page = anna.page
        expect(page.locator("#pair-offer")).to_have_text("")
        page.focus("#pair-cancel")
        keep(page, "pair-cancel", "pair-offer", "pair-status")
        expect(page.locator("#pair-computer")).to_be_visible()  # after 2 s alone (this server)
        expect(page.locator("#pair-offer")).to_contain_text("play the computer instead")
        assert focused(page) == "pair-cancel"
        assert kept(page) == {"pair-cancel": True, "pair-offer": True, "pair-status": True}
        page.keyboard.press("Enter")  # Cancel
        expect(page.locator("#pair-status")).to_contain_text("You stopped looking")
        expect(page.locator("#pair-cancel")).to_have_attribute("aria-disabled", "true")
        expect(page.locator("#pair-cancel")).to_have_text("The search has ended")
        expect(page.locator("h1")).to_have_text("No longer looking for an opponent")
        expect(page).to_have_title(re.compile("^No longer looking for an opponent"))
        assert focused(page) == "pair-cancel"
        assert kept(page) == {"pair-cancel": True, "pair-offer": True, "pair-status": True}
        expect(page.locator("#pair-computer")).to_have_count(0)
        expect(page.locator("#pair-home")).to_be_visible()
        anna.assert_clean()
    finally:
        anna.close()


def test_the_computers_offer_still_lands_in_a_game(browser, pair_server: LiveServer) -> None:
    anna = Person.open(browser, pair_server.url, "Anna")
    try:
        seek(anna, "corr-1d/brettspielnetz/rated")
        anna.page.click("#pair-computer")
        anna.page.wait_for_url("**/g/*")
        expect(anna.page.locator("#players")).to_contain_text("Computer")
        anna.assert_clean()
    finally:
        anna.close()


# ---------------------------------------------------------------------- 5. the lobby's counts


def test_the_lobbys_counts_are_no_live_region(browser, web_server: LiveServer) -> None:
    anna = Person.open(browser, web_server.url, "Anna")
    try:
        counts = anna.page.locator("#lobby-counts")
        expect(counts).to_be_visible()
        assert anna.page.locator("#lobby-counts[aria-live], #lobby-counts [aria-live]").count() == 0
        assert anna.page.locator('#lobby-counts[role="status"], #lobby-counts[role="log"]').count() == 0
    finally:
        anna.close()


# ---------------------------------------------------------------------- 6. the replay bar


async def resigned_duel(base: str) -> str:
    """A duel of one move (a game without one has no replay), then a resignation."""
    async with Api(base) as api:
        a, b = await api.guest(), await api.guest()
        game = await api.create_game(a.token, seat=0, seed=SEED)
        await api.join(b.token, game["id"])
        async with await GameSocket.connect(base, game["id"], a.token) as sock:
            snapshot = await sock.until(lambda f: f["t"] == "snapshot")
            await sock.move("explore", (0, 0), v=snapshot["v"])
            await sock.until(lambda f: f["t"] == "update")
        await api.resign(a.token, game["id"])
        return game["id"]


def test_the_replay_bars_missing_step_is_an_unavailable_link(browser, web_server: LiveServer) -> None:
    room_id = run(resigned_duel(web_server.url))
    cleo = Person.open(browser, web_server.url, "Cleo")
    try:
        cleo.goto_room(room_id)
        page = cleo.page
        expect(page.locator("#replay-next")).to_have_attribute("role", "link")  # the last step: no next
        expect(page.get_by_role("link", name="Next ›")).to_be_disabled()
        expect(page.get_by_role("link", name="‹ Prev")).to_be_enabled()
        keep(page, "replay-where")
        where = page.locator("#replay-where")
        expect(where).to_have_attribute("aria-atomic", "true")
        page.click("#replay-first")
        expect(where).to_contain_text("0/")
        expect(page.get_by_role("link", name="« First")).to_be_disabled()
        expect(page.locator("#replay-first")).to_have_attribute("aria-disabled", "true")
        assert kept(page) == {"replay-where": True}  # the same live region, its words changed
        cleo.assert_clean()
    finally:
        cleo.close()


# ---------------------------------------------------------------------- 7. the classic board's keys


def test_the_classic_board_is_described_by_its_keyboard_hint(browser, web_server: LiveServer) -> None:
    anna = Person.open(browser, web_server.url, "Anna")
    try:
        start_solo(anna, seed=31, no_guess=False)
        board = anna.page.locator("#board")
        expect(board).to_have_attribute("aria-describedby", "kbd-hint")
        expect(board).to_have_accessible_description(re.compile(r"Enter.*opens it.*flag.*number"))
        access_key(anna.page, "g")  # the go-to field: the hint shows
        expect(anna.page.locator("#goto-cell")).to_be_focused()
        expect(anna.page.locator("#kbd-hint")).to_be_visible()
        anna.assert_clean()
    finally:
        anna.close()


# ---------------------------------------------------------------------- 8. names with their context


async def two_finished_games(base: str) -> tuple[str, str, str]:
    """Anna resigns one game against Ben and one against Cy: her id and the two names."""
    async with Api(base) as api:
        anna, ben, cy = await api.guest(), await api.guest(), await api.guest()
        for other in (ben, cy):
            game = await api.create_game(anna.token, seat=0, seed=SEED)
            await api.join(other.token, game["id"])
            await api.resign(anna.token, game["id"])
        return anna.id, ben.name, cy.name


def test_the_game_lists_links_name_their_game(browser, web_server: LiveServer) -> None:
    anna_id, ben, cy = run(two_finished_games(web_server.url))
    viewer = Person.open(browser, web_server.url, None)
    try:
        viewer.page.goto(f"{web_server.url}/p/{anna_id}")
        links = viewer.page.locator("#finished a.btn[id^='replay-']")
        expect(links).to_have_count(2)
        names = [links.nth(i).evaluate("(a) => a.textContent.replace(/\\s+/g, ' ').trim()") for i in range(2)]
        assert len(set(names)) == 2, names
        assert sorted(n.split("(vs ", 1)[1].split(",", 1)[0] for n in names) == sorted([ben, cy]), names
        expect(viewer.page.get_by_role("link", name=re.compile(rf"^Replay \(vs {re.escape(ben)}, "))).to_have_count(1)
        expect(links.first).to_have_text(re.compile(r"^Replay"))  # what shows is unchanged
        assert links.first.inner_text().startswith("Replay")
    finally:
        viewer.close()


def test_the_leaderboards_rank_is_a_row_header(browser, web_server: LiveServer, redis_url: str) -> None:
    from .test_leaderboard_browser import put_a_row

    room = put_a_row(redis_url)
    viewer = Person.open(browser, web_server.url, None)
    try:
        viewer.page.goto(f"{web_server.url}/solo/leaderboard?preset=beginner")
        rank = viewer.page.locator(f"#lb-{room} > :first-child")
        expect(rank).to_have_attribute("scope", "row")
        assert rank.evaluate("(e) => e.tagName") == "TH"
        expect(viewer.page.get_by_role("rowheader").first).to_be_visible()
    finally:
        viewer.close()


# ---------------------------------------------------------------------- 9. reduced motion


def test_under_reduced_motion_a_notice_is_not_hidden_on_a_timer(browser, web_server: LiveServer) -> None:
    """The fade's duration went to 0 s but its delay stayed: the words vanished at once after
    it. Read from the animations the rules give (no waiting for a timer). The last move's pill
    still goes after its moment, without a fade: it covers the board's last rows on a short
    screen (a regression probe), and the move list keeps what it says."""
    anna = Person.open(browser, web_server.url, "Anna", reduced_motion="reduce")
    ben = Person.open(browser, web_server.url, "Ben", reduced_motion="reduce")
    try:
        start_duel(anna, ben, SEED)
        expect(ben.page.locator("#status.their-turn")).to_be_visible()
        quick(ben, "explore")
        ben.page.click("#cell-10-10")  # not his turn: a notice
        note = ben.page.locator("#notice .notice.info")
        expect(note).to_be_visible()
        assert note.evaluate("(e) => getComputedStyle(e).animationName") == "none"
        quick(anna, "explore")
        anna.page.click("#cell-0-0")
        pill = ben.page.locator("#toast .toast-pill")
        expect(pill).to_be_attached()
        assert pill.evaluate("(e) => getComputedStyle(e).animationName") != "none"  # it goes (at once: 0 s)
        for person in (anna, ben):
            person.assert_clean()
    finally:
        anna.close()
        ben.close()

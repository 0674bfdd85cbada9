"""Hostile pages and hostile names, in a real Chromium.

- Cross-site websocket hijacking: a page of another origin on the same site (127.0.0.1 on
  another port, so the browser even attaches our SameSite=Lax cookie) opens our websockets
  while the victim is signed in. The server refuses the upgrade (403), so the page never sees
  a frame of the victim's view (which holds her secret wrong mark).
- XSS: players named with payloads play a game; the pages (room, live updates, home lobby)
  show the names as text, no foreign element or handler exists in the DOM, no dialog opens
  and no CSP violation is reported.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import msgpack
import pytest
from websockets.sync.client import connect

from engine import Duel
from server.embedded_redis import free_port

from .conftest import WAIT_MS, Person

pytestmark = pytest.mark.browser

EVIL_PAGE = """<!doctype html><title>cute cats</title><script>
const report = {};
let pending = 2;
for (const [name, url] of Object.entries(%s)) {
  const seen = report[name] = [];
  const ws = new WebSocket(url);
  ws.onopen = () => seen.push("open");
  ws.onmessage = (e) => { seen.push("message " + String(e.data).slice(0, 300)); ws.close(); };
  ws.onclose = (e) => { seen.push("close " + e.code); if (--pending === 0) document.title = "done"; };
}
window.report = report;
</script>"""


@pytest.fixture
def evil_site() -> Iterator[tuple[str, dict[str, str]]]:
    """A tiny site on another port of 127.0.0.1 serving :data:`EVIL_PAGE` (its targets are set per test)."""
    targets: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's naming
            import json

            body = (EVIL_PAGE % json.dumps(targets)).encode()
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", targets
    finally:
        server.shutdown()
        server.server_close()


def play(base: str, game_id: str, token: str, action: str, cell: tuple[int, int]) -> None:
    ws_url = base.replace("http://", "ws://") + f"/api/v1/games/{game_id}/ws"
    with connect(ws_url, additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=10) as ws:
        v = msgpack.unpackb(ws.recv(10))["v"]
        ws.send(msgpack.packb({"t": "move", "v": v, "action": action, "cell": list(cell)}))
        for _ in range(50):
            frame = msgpack.unpackb(ws.recv(10))
            assert frame["t"] != "error", frame
            if frame["t"] == "update":
                return


def test_a_page_of_another_origin_cannot_open_our_websockets_with_the_victims_cookie(browser, web_server, evil_site):
    base = web_server.url
    evil, targets = evil_site
    anna = Person.open(browser, base, "Anna")
    try:
        seed = 4242
        game_id = anna.create_game(seed)
        ben = httpx.post(base + "/api/v1/guests", json={"name": "Ben"}).json()["token"]
        httpx.post(f"{base}/api/v1/games/{game_id}/join", headers={"Authorization": f"Bearer {ben}"})
        duel = Duel.new(random.Random(seed), first=0)
        secret = next(c for c in duel.geo.cells if duel.is_hidden(c) and c not in duel.setup.mines)
        play(base, game_id, anna.token, "mark", secret)  # Anna's secret wrong mark
        wsb = base.replace("http://", "ws://")
        targets.update({"browser": f"{wsb}/g/{game_id}/ws", "api": f"{wsb}/api/v1/games/{game_id}/ws"})
        page = anna.context.new_page()  # the victim, signed in, visits the other site
        page.goto(evil + "/")
        page.wait_for_function("document.title === 'done'", timeout=WAIT_MS)
        report = page.evaluate("window.report")
        for name, seen in report.items():
            assert seen == ["close 1006"], (name, seen)  # the upgrade failed: no open, no frame
        # the control: her own page's websocket carries that secret to her (so a hijacked socket would have)
        anna.page.wait_for_selector(f"#cell-{secret[0]}-{secret[1]}.wrong-own", state="attached", timeout=WAIT_MS)
    finally:
        anna.close()


PAYLOADS = ['"><img src=x onerror=alert(1)>', "<script>alert(1)</script>", "'><svg onload=alert(1)>",
            "{{7*7}}<b>bold</b>"]
FOREIGN = ("script:not([src]), img, svg, iframe, object, embed, math, style, b, textarea, "
           "[onerror], [onload], [onmouseover], [onfocus], a[href^='javascript']")


def assert_clean(person: Person, names: list[str], where: str) -> None:
    page = person.page
    assert page.evaluate(f"document.querySelectorAll({FOREIGN!r}).length") == 0, where
    assert person.page_errors == [] and person.csp_errors == [], (where, person.page_errors, person.csp_errors)
    text = page.inner_text("body")
    for name in names:
        assert name in text, (where, name)


def test_payload_names_render_as_text_in_the_browser(browser, web_server):
    base = web_server.url
    names = PAYLOADS[:2]
    people = [Person.open(browser, base, name) for name in names]
    spectator = Person.open(browser, base, None)
    dialogs: list[str] = []
    for person in people + [spectator]:
        person.page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        anna, ben = people
        seed = 4343
        game_id = anna.create_game(seed)
        ben.goto_room(game_id)
        seen = len(ben.frames)
        ben.page.click("#join")
        ben.wait_live(seen)
        spectator.goto_room(game_id)
        anna.page.wait_for_selector("#status.your-turn", timeout=WAIT_MS)
        duel = Duel.new(random.Random(seed), first=0)
        mines = sorted(duel.setup.mines)
        safe = next(c for c in duel.geo.cells if duel.is_hidden(c) and c not in duel.setup.mines)
        moves = [(anna, "mark", mines[0]), (ben, "mark", safe), (anna, "explore", mines[1])]
        for n, (who, action, cell) in enumerate(moves, start=1):
            play(base, game_id, who.token, action, cell)
            for person in people + [spectator]:
                person.wait_move(n)  # the live update reached every page
        for person in people + [spectator]:
            assert_clean(person, names, f"room of {person.name}")
            assert person.page.inner_text("#name-0").startswith(names[0])
            assert person.page.inner_text("#name-1").startswith(names[1])
            assert names[0] in person.page.get_attribute(f"#cell-{mines[0][0]}-{mines[0][1]}", "aria-label")
        spectator.page.goto(base + "/")
        assert_clean(spectator, names, "home lobby")
        assert dialogs == []
    finally:
        for person in people + [spectator]:
            person.close()

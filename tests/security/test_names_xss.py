"""User text is escaped everywhere, and names are validated when a guest is made.

An XSS payload corpus (script tags, attribute breakouts, ``javascript:`` URLs, SVG onload,
template injection, unicode tricks) is used as guest names; whole games are played with them
and every page and fragment where names appear is checked: the room (players, status, move
list, claimed-mine labels), the home page's lobby, websocket frames, the finished game, the
replay steps, error pages. A name must appear escaped (``markupsafe.escape``) and nothing may
parse as markup it brought along. Names that are too long or carry control, invisible or
bidi characters are refused at guest creation with a clear message.
"""

from __future__ import annotations

import asyncio
import random
import unicodedata
from html.parser import HTMLParser

import httpx
import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import escape
from websockets.asyncio.client import connect

from engine import Duel, Explore, Mark
from server.edge.auth import MAX_NAME, BadName, validate_name

from .test_secrets_codecs import write_figures
from .util import COOKIE, form_guest, ws_base

PAYLOADS = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "'><svg onload=alert(1)>",
    '" onmouseover="alert(1)" x="',
    "' autofocus onfocus='alert(1)",
    "javascript:alert(1)",
    "<a href=javascript:alert(1)>x",
    "{{7*7}} ${7*7} {% if 1 %}x",
    "</textarea></title><b>bold",
    "<!-- x --><iframe src=//e>",
    "&lt;b&gt;&amp;&#60;",
    "\uff1cscript\uff1ealert(1)",  # full-width angle brackets
    "Z\u0301\u0327 \u05e9\u05dc\u05d5\u05dd \U0001f4a3",  # combining marks, Hebrew (RTL), emoji
    "<math><mi xlink:href=x>",
    "<style>*{display:none}</style>",
    "\\u003cscript\\u003e`${x}`",
]
REJECTED = [
    ("x" * (MAX_NAME + 1), "at most 32"),
    ("<script>alert(1)</script>" * 3, "at most 32"),
    ("line\nbreak", "control or invisible"),
    ("tab\there", "control or invisible"),
    ("nul\x00", "control or invisible"),
    ("esc\x1b[31m", "control or invisible"),
    ("\u202eevil", "control or invisible"),  # right-to-left override
    ("zero\u200bwidth", "control or invisible"),
    ("line\u2028sep", "control or invisible"),
    ("private\ue000use", "control or invisible"),
    ("Z" + "\u0301" * 6, "combining marks"),
    ("\u0410nna Lena", "mix Latin, Greek and Cyrillic"),  # a Cyrillic А: it passes for "Anna Lena"
    ("P\u03b1ul", "mix Latin, Greek and Cyrillic"),  # a Greek alpha
]
FIGURES: dict[str, int] = {"payloads": len(PAYLOADS), "rejected_names": len(REJECTED), "documents_checked": 0}


class Markup(HTMLParser):
    """Every start tag with its attributes, as a browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))


FOREIGN_TAGS = {"img", "svg", "iframe", "object", "embed", "textarea", "math", "b", "style", "mi", "x", "frame"}


def injected(text: str) -> list[str]:
    """Markup that our templates never produce: it could only have come from user text."""
    parser = Markup()
    parser.feed(text)
    found = []
    for tag, attrs in parser.tags:
        a = dict(attrs)
        if tag in FOREIGN_TAGS:
            found.append(tag)
        if tag == "script" and not (a.get("src") or "").startswith("/static/"):
            found.append("inline script")
        if tag == "a" and (a.get("href") or "").startswith("javascript"):
            found.append("javascript link")
        for name, value in attrs:
            if name.startswith("on") or name in ("xlink:href", "srcdoc"):
                found.append(f"{tag}[{name}]")
            if name in ("href", "src", "action", "formaction") and "javascript:" in (value or "").lower():
                found.append(f"{tag}[{name}=javascript]")
    return found


def check_document(text: str, names: list[str], where: str, shown: bool = True) -> None:
    FIGURES["documents_checked"] += 1
    assert injected(text) == [], (where, injected(text))
    for name in names:
        escaped = str(escape(name))
        if escaped != name:
            assert name not in text, (where, name)  # never verbatim when escaping changes it
        if shown:
            assert escaped in text, (where, name)


# ---------------------------------------------------------------------- validation


def test_names_are_validated_at_guest_creation(start_server, own_redis):
    base = start_server(REDIS_URL=own_redis.url).url  # a registry of names of its own: it takes the payloads
    for name, reason in REJECTED:
        r = httpx.post(base + "/api/v1/guests", json={"name": name})
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_field", (name, r.text)
        assert reason in r.json()["error"]["message"], (name, r.text)
        page = httpx.post(base + "/guest", data={"name": name}, headers={"origin": base})
        assert page.status_code == 400 and "set-cookie" not in page.headers, name
        assert reason in page.text and "won\u2019t do" in page.text, name
        check_document(page.text, [], "name error page", shown=False)
    for name in PAYLOADS + ["  Anna   Lena  ", "x" * MAX_NAME, "Ren\u00e9e", "\u0418\u0432\u0430\u043d 2",
                            "\u03a3\u03c9\u03ba\u03c1\u03ac\u03c4\u03b7\u03c2", "Anna \u674e"]:  # one script each: fine
        r = httpx.post(base + "/api/v1/guests", json={"name": name})
        assert r.status_code == 201, (name, r.text)
        assert r.json()["name"] == " ".join(unicodedata.normalize("NFC", name).split())
    for taken in ("anna lena", "ANNA LENA", "\uff21nna Lena", "ren\u00e9e"):  # any case or width: one name
        r = httpx.post(base + "/api/v1/guests", json={"name": taken})
        assert r.status_code == 409 and r.json()["error"]["code"] == "name_taken", (taken, r.text)
        page = httpx.post(base + "/guest", data={"name": taken}, headers={"origin": base})
        assert page.status_code == 409 and "set-cookie" not in page.headers and "already called" in page.text
    assert httpx.post(base + "/api/v1/guests", json={"name": 42}).status_code == 400
    assert httpx.post(base + "/api/v1/guests", json={"name": ""}).json()["name"].startswith("Guest-")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_validated_names_are_short_printable_and_stable(name):
    try:
        clean = validate_name(name)
    except BadName:
        return
    if clean is None:
        assert not name.strip()
        return
    assert 0 < len(clean) <= MAX_NAME and clean == clean.strip() and "  " not in clean
    assert all(unicodedata.category(ch)[0] != "C" and unicodedata.category(ch) not in ("Zl", "Zp") for ch in clean)
    assert validate_name(clean) == clean


# ---------------------------------------------------------------------- escaping


async def collect(ws, frames: list[str]) -> None:
    try:
        async for message in ws:
            frames.append(message)
    except Exception:
        pass


async def play(base: str, game_id: str, tokens: dict[int, str], seat: int, frame: dict) -> None:
    async with connect(f"{ws_base(base)}/api/v1/games/{game_id}/ws",
                       additional_headers={"Authorization": f"Bearer {tokens[seat]}"}) as ws:
        v = msgpack.unpackb(await ws.recv())["v"]
        await ws.send(msgpack.packb({**frame, "v": v}))
        for _ in range(50):
            data = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 30))  # a bound, not an expectation
            assert data["t"] != "error", data
            if data["t"] == "update":
                return


@pytest.mark.parametrize("pair", range(0, len(PAYLOADS), 2))
async def test_payload_names_are_escaped_in_every_page_and_fragment(live_server, pair):
    base = live_server.url
    names = [validate_name(PAYLOADS[pair]), validate_name(PAYLOADS[(pair + 1) % len(PAYLOADS)])]  # as stored
    (a_cookie, a_token), (b_cookie, b_token) = [form_guest(base, n, exact=True) for n in names]
    jar = {0: {"Cookie": f"{COOKIE}={a_cookie}"}, 1: {"Cookie": f"{COOKIE}={b_cookie}"}, 2: {}}
    seed = 700 + pair
    async with httpx.AsyncClient(base_url=base) as http:
        # Anna creates the game from the home page (so the lobby lists it), Ben joins by the form
        r = await http.post("/games", data={"seat": "0", "seed": str(seed), "clock": "300+0"},
                            headers={"origin": base, **jar[0]})
        game_id = r.headers["location"].rsplit("/", 1)[1]
        check_document((await http.get("/")).text, names[:1], "home lobby")
        check_document((await http.get(f"/g/{game_id}", headers=jar[0])).text, names[:1], "waiting room")
        check_document((await http.get(f"/g/{game_id}")).text, names[:1], "waiting room, stranger")
        assert (await http.post(f"/g/{game_id}/join", headers={"origin": base, **jar[1]})).status_code == 303
        frames: list[str] = []
        sockets = [await connect(f"{ws_base(base)}/g/{game_id}/ws", origin=base, additional_headers=jar[v])
                   for v in (0, 1, 2)]
        readers = [asyncio.create_task(collect(ws, frames)) for ws in sockets]
        # a mark (a label naming Anna), a wrong mark (a move line), a hit (Ben), then Ben resigns
        duel = Duel.new(random.Random(seed), first=0)
        mine = sorted(duel.setup.mines)
        safe = next(c for c in duel.geo.cells if duel.is_hidden(c) and c not in duel.setup.mines)
        tokens = {0: a_token, 1: b_token}
        for seat, move in ((0, Mark(mine[0])), (1, Mark(safe)), (0, Explore(mine[1])), (1, Explore(mine[2]))):
            action = "mark" if isinstance(move, Mark) else "explore"
            await play(base, game_id, tokens, seat, {"t": "move", "action": action, "cell": list(move.cell)})
        for viewer in (0, 1, 2):
            check_document((await http.get(f"/g/{game_id}", headers=jar[viewer])).text, names, f"room {viewer}")
        check_document((await http.get("/")).text, names, "home lobby, playing")
        await play(base, game_id, tokens, 1, {"t": "resign"})
        for viewer in (0, 1, 2):
            check_document((await http.get(f"/g/{game_id}", headers=jar[viewer])).text, names, f"finished {viewer}")
        for at in range(0, 6):
            check_document((await http.get(f"/g/{game_id}?at={at}")).text, names, f"replay page {at}")
            step = await http.get(f"/g/{game_id}/replay?at={at}", headers={"hx-request": "true"})
            check_document(step.text, names, f"replay step {at}")
        rematch = await http.post(f"/g/{game_id}/rematch", headers={"origin": base, **jar[0]})
        check_document((await http.get(rematch.headers["location"], headers=jar[1])).text, names, "rematch room")
        for ws in sockets:
            await ws.close()
        await asyncio.gather(*readers)
    assert len(frames) >= 3 * 6
    for n, frame in enumerate(frames):
        check_document(frame, names, f"frame {n}", shown=False)
    for name in names:  # the live frames named both players (players card, move list, labels)
        assert any(str(escape(name)) in f for f in frames), name
    FIGURES["games"] = FIGURES.get("games", 0) + 1
    FIGURES["frames_checked"] = FIGURES.get("frames_checked", 0) + len(frames)
    write_figures("names_xss", FIGURES)

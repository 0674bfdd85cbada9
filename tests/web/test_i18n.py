"""The site in English and German: the catalogs are complete and current, every page speaks the
reader's language (``Accept-Language``, or the ``lang`` cookie set by the header's switch) with
no English string of the catalog left in the German render and no German in the English one,
and websocket frames are German for a German socket and English for an English one at the same
time (never shared across languages). Against a live server on the real Valkey; no browser
(``test_i18n_browser.py`` drives Chromium)."""

from __future__ import annotations

import asyncio
import html
import json
import re
import time
from html.parser import HTMLParser

import httpx
import pytest
from babel.messages.pofile import read_po
from websockets.asyncio.client import connect

from server.web import catalogs, i18n
from tests.conftest import LiveServer
from tests.security.util import COOKIE, form_guest, ws_base
from tests.web.conftest import WAIT_MS

PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%%|<[^>]+>")
WAIT_S = WAIT_MS / 1000


# ---------------------------------------------------------------------- the catalog's strings


def _pieces(text: str) -> list[str]:
    """The literal runs of a catalog string between its placeholders and tags, trimmed."""
    return [p.strip(" .,:;!?()—–-…“”„’'\u00a0·") for p in PLACEHOLDER.split(text)]


def _forms(value: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


def _telltales() -> tuple[set[str], set[str]]:
    """(English, German) runs that show a string of the catalog untranslated in the other
    language: every run of at least four characters of an msgid that its German never contains
    (the verdicts "Gut!", "Autsch!", "Blubb!", "Brettspielnetz", "Blitz" stay out), and the same
    the other way round."""
    with catalogs.po_path("de").open("rb") as f:
        catalog = read_po(f, locale="de")
    english, german = set(), set()
    for message in catalog:
        if not message.id:
            continue
        en, de = " ".join(_forms(message.id)), " ".join(_forms(message.string))
        english |= {p for p in _pieces(en) if len(p) >= 4 and p.lower() not in de.lower()}
        german |= {p for p in _pieces(de) if len(p) >= 4 and p.lower() not in en.lower()}
    return english, german


ENGLISH, GERMAN = _telltales()


class _Visible(HTMLParser):
    """What a reader sees or hears of a page: text (not inside ``<code>``: fingerprints, the
    hash formula) and the ``aria-label``, ``title`` and ``placeholder`` attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._code += tag == "code"
        self.parts += [v for k, v in attrs if k in ("aria-label", "title", "placeholder") and v]

    def handle_endtag(self, tag: str) -> None:
        self._code -= tag == "code" and self._code > 0

    def handle_data(self, data: str) -> None:
        if not self._code:
            self.parts.append(data)


def visible(page: str) -> str:
    parser = _Visible()
    parser.feed(page)
    return " ".join(" ".join(parser.parts).split())


def leaks(page: str, telltales: set[str]) -> list[str]:
    text = visible(html.unescape(page)) if "<" in page else page
    return sorted(t for t in telltales if re.search(rf"(?<!\w){re.escape(t)}(?!\w)", text))


def assert_speaks(page: str, lang: str, *, shows: str | None = None) -> None:
    """``page`` (HTML) is in ``lang``: no telltale of the other language but some of its own
    (the detector sees the catalog's strings on this page), ``<html lang>`` set, and ``shows``
    (a string of this page, in ``lang``) is there."""
    own, other = (GERMAN, ENGLISH) if lang == "de" else (ENGLISH, GERMAN)
    assert not leaks(page, other), f"not translated into {lang}: {leaks(page, other)}"
    assert leaks(page, own), f"no string of the catalog in {lang} on this page: {visible(page)[:300]}"
    if "<html" in page:
        assert f'<html lang="{lang}">' in page
    if shows is not None:
        assert shows in visible(page), (shows, visible(page)[:800])


# ---------------------------------------------------------------------- the catalogs


def test_the_catalogs_are_complete_and_current() -> None:
    """The .pot holds exactly the marked strings of the sources (re-extracted now), and the
    German catalog translates every one of them, none empty or fuzzy: a new English string
    without a translation fails here (fix: python -m server.web.catalogs update, translate)."""
    assert catalogs.problems() == []
    with i18n.using("de"):
        assert i18n.gettext("Your turn") == "Du bist am Zug"
        assert i18n.pgettext("move list", "mark") == "markiert"
    assert i18n.gettext("Your turn") == "Your turn"  # outside a German render: English
    assert {"Gut!", "Autsch!", "Blubb!"} & GERMAN == set()


def test_the_reader_language_comes_from_the_cookie_then_accept_language() -> None:
    assert i18n.negotiate(None, "de-DE,de;q=0.9,en;q=0.8") == "de"
    assert i18n.negotiate(None, "fr-CH, fr;q=0.9, de;q=0.7, *;q=0.5") == "de"
    assert i18n.negotiate(None, "en-US,en;q=0.9,de;q=0.8") == "en"
    assert i18n.negotiate(None, "de;q=0, en") == "en"
    assert i18n.negotiate(None, "fr") == "en" and i18n.negotiate(None, None) == "en"
    assert i18n.negotiate("en", "de-DE") == "en" and i18n.negotiate("de", "en") == "de"
    assert i18n.negotiate("xx", "de-AT") == "de"


def test_language_tags_match_in_any_case() -> None:
    """Language tags are case-insensitive (BCP 47, RFC 4647): ``DE-AT`` is ``de-AT``, and its
    ``q=0`` still refuses it."""
    for header in ("DE", "De", "dE", "DE-AT", "DE-DE", "de-at", "fr, DE-CH;q=0.8", "EN;q=0.1, De-at"):
        assert i18n.negotiate(None, header) == "de", header
    for header in ("EN-us, DE;q=0.5", "DE;q=0, en", "DE-AT;q=0", "de;Q=0, en", "FR"):
        assert i18n.negotiate(None, header) == "en", header


# ---------------------------------------------------------------------- every page, both languages


def get(server: LiveServer, path: str, lang: str, cookie: str | None = None, status: int = 200,
        htmx: bool = False) -> str:
    cookies = {COOKIE: cookie} if cookie else {}
    headers = {"accept-language": lang, **({"hx-request": "true"} if htmx else {})}
    r = httpx.get(server.url + path, cookies=cookies, headers=headers, timeout=WAIT_S)
    assert r.status_code == status, (path, r.status_code, r.text[:300])
    return r.text


def post(server: LiveServer, path: str, cookie: str | None, **data: str) -> httpx.Response:
    cookies = {COOKIE: cookie} if cookie else {}
    return httpx.post(server.url + path, data=data, cookies=cookies, headers={"origin": server.url},
                      follow_redirects=False, timeout=WAIT_S)


def room_of(response: httpx.Response) -> str:
    assert response.status_code == 303, (response.status_code, response.text[:300])
    return response.headers["location"].rsplit("/g/", 1)[1]


class Sock:
    """A browser-like room socket (bounded reads), in a language."""

    def __init__(self, ws: object) -> None:
        self.ws = ws
        self.frames: list[str] = []

    @classmethod
    async def open(cls, server: LiveServer, room_id: str, lang: str, cookie: str | None = None) -> "Sock":
        headers = {"Accept-Language": lang, **({"Cookie": f"{COOKIE}={cookie}"} if cookie else {})}
        ws = await connect(f"{ws_base(server.url)}/g/{room_id}/ws", origin=server.url, additional_headers=headers,
                           open_timeout=WAIT_S)
        sock = cls(ws)
        await sock.until(lambda f: f.startswith("<!--snapshot-->"))
        return sock

    async def until(self, pred: object) -> str:
        deadline = time.monotonic() + WAIT_S
        while True:
            for frame in self.frames:
                if pred(frame):  # type: ignore[operator]
                    return frame
            left = deadline - time.monotonic()
            try:
                self.frames.append(await asyncio.wait_for(self.ws.recv(), max(left, 0.01)))
            except asyncio.TimeoutError:
                shown = [f[:300] for f in self.frames if not f.startswith('<div id="hb"')][-4:]
                raise AssertionError(f"no such frame among {len(self.frames)}: {shown}") from None

    def hidden_cell(self, last: bool = False) -> str:
        """A cell this seat may play (``r-c``), from the snapshot."""
        cells = re.findall(r'name="cell" value="(\d+-\d+)"', self.frames[0])
        return cells[-1 if last else 0]

    def version(self) -> int:
        return int(re.findall(r'id="seen-v" name="v" value="(\d+)"', "".join(self.frames))[-1])

    async def send(self, **data: str) -> None:
        await self.ws.send(json.dumps({**data, "HEADERS": {"HX-Request": "true"}}))


@pytest.fixture(scope="module")
def people(web_server: LiveServer) -> dict[str, str]:
    """Two guests' cookies (made through the home page's form)."""
    return {who: form_guest(web_server.url, who)[0] for who in ("Anna", "Ben")}


@pytest.mark.parametrize("lang", ["en", "de"])
def test_refused_forms_say_why_in_the_reader_language(web_server: LiveServer, people: dict[str, str],
                                                        lang: str) -> None:
    """A custom board out of bounds and a name that won't do: the reason, not only the page's
    heading, is in the reader's language (the engine and the name check say it in English,
    which the JSON API keeps)."""
    s, anna = web_server, people["Anna"]
    de = lang == "de"
    headers = {"origin": s.url, "accept-language": lang}

    def refused(path: str, cookie: str | None, **data: str) -> str:
        r = httpx.post(s.url + path, data=data, cookies={COOKIE: cookie} if cookie else {}, headers=headers,
                       follow_redirects=False, timeout=WAIT_S)
        assert r.status_code == 400, (path, r.status_code, r.text[:300])
        return r.text

    assert_speaks(refused("/solo", anna, width="100", height="9", mines="10"), lang,
                  shows="Ein Spielfeld ist 5 bis 60 Felder breit und 5 bis 40 Felder hoch." if de
                  else "A board is 5 to 60 cells wide and 5 to 40 high.")
    assert_speaks(refused("/solo", anna, width="9", height="9", mines="80"), lang,
                  shows="Ein Spielfeld mit 9 × 9 Feldern fasst 1 bis 72 Minen." if de
                  else "A board of 9 × 9 cells takes 1 to 72 mines.")
    assert_speaks(refused("/guest", None, name="x" * 40), lang,
                  shows="Dieser Name geht nicht: Namen haben höchstens 32 Zeichen." if de
                  else "That name won’t do: names are at most 32 characters.")


@pytest.mark.parametrize("lang", ["en", "de"])
def test_site_pages_speak_the_reader_language(web_server: LiveServer, people: dict[str, str], lang: str) -> None:
    s, anna = web_server, people["Anna"]
    de = lang == "de"
    pages = [
        ("/", None, "Quick pairing", "Schnelle Partie"),
        ("/", anna, "Create challenge", "Herausforderung anlegen"),
        ("/solo", anna, "Classic Minesweeper", "Klassisches Minesweeper"),
        ("/solo", None, "Classic Minesweeper", "Klassisches Minesweeper"),
        ("/solo/leaderboard?preset=beginner", None, "Beginner", "Anfänger"),
        ("/ratings", None, "Bullet", "Fernspiel"),
        ("/me", anna, "My games", "Meine Spiele"),
        ("/rules", None, "Two sets of rules", "Zwei Regelwerke"),
        ("/name", anna, "Change my name", "Namen ändern"),
        ("/pair?pool=live-3%2B2%2Fbrettspielnetz%2Frated", anna, "Looking for an opponent", "Suche nach einem Gegner"),
    ]
    for path, cookie, en_text, de_text in pages:
        assert_speaks(get(s, path, lang, cookie), lang, shows=de_text if de else en_text)
    anna_id = re.search(r'href="/p/([^"]+)"', get(s, "/me", lang, anna)).group(1)
    assert_speaks(get(s, f"/p/{anna_id}", lang, anna), lang, shows="Wertungen" if de else "Ratings")
    assert_speaks(get(s, f"/p/{anna_id}", lang, people["Ben"]), lang,
                  shows="Zu einem Spiel herausfordern" if de else "Challenge this player")
    # error pages: HTML in the reader's language (the JSON API stays English)
    assert_speaks(get(s, "/g/nosuchgame", lang, status=404), lang, shows="Kein solches Spiel" if de else "No such game")
    assert_speaks(get(s, "/p/nosuchplayer", lang, status=404), lang)
    assert_speaks(get(s, "/solo/leaderboard?preset=huge", lang, status=404), lang)
    api = httpx.get(s.url + "/api/v1/games/nosuchgame", headers={"accept-language": lang}, timeout=WAIT_S)
    assert api.status_code == 404 and not leaks(api.text, GERMAN)
    # the name page (joining without a name)
    room = room_of(post(s, "/games", anna, seat="0"))
    name_page = httpx.post(s.url + f"/g/{room}/join", headers={"origin": s.url, "accept-language": lang},
                           timeout=WAIT_S, follow_redirects=True)  # a 303 to the form (reloading it posts nothing)
    assert name_page.url.path == f"/g/{room}/join" and name_page.history[0].status_code == 303
    assert_speaks(name_page.text, lang, shows="Wähle einen Namen, um beizutreten" if de else "Pick a name to join")


@pytest.mark.parametrize("lang", ["en", "de"])
async def test_a_duel_speaks_the_reader_language_in_every_state_and_seat(
        web_server: LiveServer, people: dict[str, str], lang: str) -> None:
    s, anna, ben = web_server, people["Anna"], people["Ben"]
    de = lang == "de"
    room = room_of(post(s, "/games", anna, seat="0", seed="7", clock="180+2"))
    # waiting: its creator, a spectator
    assert_speaks(get(s, f"/g/{room}", lang, anna), lang, shows="Einladungslink" if de else "Invite link")
    assert_speaks(get(s, f"/g/{room}", lang), lang, shows="Diesem Spiel beitreten" if de else "Join this game")
    assert post(s, f"/g/{room}/join", ben).status_code == 303
    # playing: after a move each, both seats and a spectator
    first = await Sock.open(s, room, lang, anna)
    second = await Sock.open(s, room, lang, ben)
    try:
        await first.send(cell=first.hidden_cell(), mode="explore", v=str(first.version()))
        await second.until(lambda f: 'id="move-1"' in f)
        await second.send(cell=second.hidden_cell(last=True), mode="mark", v=str(second.version()))
        await first.until(lambda f: 'id="move-2"' in f)
        for frames in (first.frames, second.frames):
            assert_speaks(" ".join(visible(f) for f in frames), lang)
        turn = "Du bist am Zug" if de else "Your turn"
        assert_speaks(get(s, f"/g/{room}", lang, anna), lang, shows=turn)
        assert_speaks(get(s, f"/g/{room}", lang, ben), lang, shows="Bestätigen" if de else "Confirm")
        assert_speaks(get(s, f"/g/{room}", lang), lang, shows="So wird gespielt" if de else "How to play")
        # over: a resignation; both seats and a spectator, a replay step, its odds
        await first.send(a="resign-yes", v=str(first.version()))
        await second.until(lambda f: 'id="rematch"' in f)
        for frames in (first.frames, second.frames):
            assert_speaks(" ".join(visible(f) for f in frames), lang)
    finally:
        await first.ws.close()
        await second.ws.close()
    over = "Anna" in get(s, f"/g/{room}", lang, anna)
    assert over
    assert_speaks(get(s, f"/g/{room}", lang, anna), lang, shows="Du hast aufgegeben" if de else "You resigned")
    assert_speaks(get(s, f"/g/{room}", lang, ben), lang, shows="Revanche anbieten" if de else "Offer a rematch")
    assert_speaks(get(s, f"/g/{room}?at=1&odds=1", lang), lang, shows="Wahrscheinlichkeiten" if de else "Odds")
    assert_speaks(get(s, f"/g/{room}/replay?at=1&odds=1", lang, htmx=True), lang)
    assert_speaks(get(s, f"/g/{room}/odds?at=2", lang, htmx=True), lang)
    # rematch offered: the opponent's page
    assert post(s, f"/g/{room}/rematch", anna).status_code == 303
    assert_speaks(get(s, f"/g/{room}", lang, ben), lang, shows="bietet eine Revanche an" if de else "offers a rematch")


@pytest.mark.parametrize("lang", ["en", "de"])
async def test_a_solo_game_speaks_the_reader_language(web_server: LiveServer, people: dict[str, str],
                                                      lang: str) -> None:
    s, anna = web_server, people["Anna"]
    de = lang == "de"
    room = room_of(post(s, "/solo", anna, preset="beginner", seed="3"))
    assert_speaks(get(s, f"/g/{room}", lang, anna), lang, shows="Anfänger" if de else "Beginner")
    player = await Sock.open(s, room, lang, anna)
    try:
        await player.send(cell="4-4", mode="reveal", v=str(player.version()))
        await player.until(lambda f: 'id="timer"' in f and not f.startswith("<!--snapshot-->"))
        assert_speaks(" ".join(visible(f) for f in player.frames), lang)
    finally:
        await player.ws.close()
    assert_speaks(get(s, f"/g/{room}", lang), lang)


# ---------------------------------------------------------------------- frames per language


async def test_frames_for_german_and_english_sockets_of_one_room_are_not_shared(
        web_server: LiveServer, people: dict[str, str]) -> None:
    """The same viewer class in two languages at the same time: each socket gets its own
    language, for the snapshot and for the update the hub fans out once per (codec, class)."""
    s, anna, ben = web_server, people["Anna"], people["Ben"]
    room = room_of(post(s, "/games", anna, seat="0", seed="11"))
    assert post(s, f"/g/{room}/join", ben).status_code == 303
    mover = await Sock.open(s, room, "en", anna)
    german_seat = await Sock.open(s, room, "de-DE,de;q=0.9", ben)
    watchers = {"en": await Sock.open(s, room, "en-US"), "de": await Sock.open(s, room, "de")}
    try:
        assert re.search(r"Anna-\w+ ist am Zug", visible(watchers["de"].frames[0]))
        assert re.search(r"Anna-\w+ to move", visible(watchers["en"].frames[0]))
        cell = mover.hidden_cell()
        await mover.send(cell=cell, mode="explore", v=str(mover.version()))
        update = {lang: await w.until(lambda f: 'id="move-1"' in f) for lang, w in watchers.items()}
        assert update["de"] != update["en"]
        assert re.search(r"Ben-\w+ ist am Zug", visible(update["de"])) and "öffnet" in visible(update["de"])
        assert re.search(r"Ben-\w+ to move", visible(update["en"])) and "explore" in visible(update["en"])
        assert_speaks(update["de"], "de")
        assert_speaks(update["en"], "en")
        mine = await german_seat.until(lambda f: 'id="move-1"' in f)
        assert "Du bist am Zug" in visible(mine)
        assert_speaks(await mover.until(lambda f: 'id="move-1"' in f), "en")
        # a socket's own frames (a notice) speak its language too
        await german_seat.send(cell=cell, mode="select", v=str(german_seat.version()))
        notice = await german_seat.until(lambda f: f.startswith('<p id="notice"') and 'polite"></p>' not in f)
        assert "Dieses Feld ist schon aufgedeckt." in visible(notice)
    finally:
        for sock in (mover, german_seat, *watchers.values()):
            await sock.ws.close()


async def test_the_lobby_socket_speaks_the_reader_language(web_server: LiveServer, people: dict[str, str]) -> None:
    s = web_server
    room_of(post(s, "/games", people["Anna"], seat="0"))
    for lang, words in (("de", "Offene Herausforderungen"), ("en", "Open challenges")):
        page = get(s, "/", lang)
        assert_speaks(page, lang, shows=words)
        async with connect(f"{ws_base(s.url)}/lobby/ws", origin=s.url, additional_headers={"Accept-Language": lang},
                           open_timeout=WAIT_S) as ws:
            frame = await asyncio.wait_for(ws.recv(), WAIT_S)
        assert "lobby-counts" in frame
        assert_speaks(frame, lang, shows="online")


# ---------------------------------------------------------------------- the switch


def test_the_switch_sets_the_cookie_and_goes_back(web_server: LiveServer, people: dict[str, str]) -> None:
    s = web_server
    back = f"{s.url}/ratings"
    switched = httpx.post(s.url + "/lang", data={"lang": "de"}, headers={"origin": s.url, "referer": back},
                          follow_redirects=False, timeout=WAIT_S)
    assert switched.status_code == 303 and switched.headers["location"] == "/ratings"
    assert switched.cookies["lang"] == "de"
    cookie = switched.headers["set-cookie"].lower()
    assert "samesite=lax" in cookie and "httponly" in cookie
    page = httpx.get(back, cookies={"lang": "de"}, headers={"accept-language": "en"}, timeout=WAIT_S).text
    assert_speaks(page, "de", shows="Wertungen")
    assert 'name="lang" value="en"' in page  # the way back
    refused = httpx.post(s.url + "/lang", data={"lang": "de"}, headers={"origin": "https://evil.example"},
                         follow_redirects=False, timeout=WAIT_S)
    assert refused.status_code == 403 and "lang" not in refused.cookies
    odd = httpx.post(s.url + "/lang", data={"lang": "en"}, headers={"origin": s.url, "referer": "https://evil.example/x"},
                     follow_redirects=False, timeout=WAIT_S)
    assert odd.headers["location"] == "/x" and odd.cookies["lang"] == "en"  # only local paths
    unknown = httpx.post(s.url + "/lang", data={"lang": "xx"}, headers={"origin": s.url}, follow_redirects=False,
                         timeout=WAIT_S)
    assert unknown.status_code == 400 and "lang" not in unknown.cookies  # only known languages

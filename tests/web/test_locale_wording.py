"""Small language defects an outside probe found, each held here: a refused limit says one whole
sentence per language (``site.limited_text``; German "neuen Spielen" was a fragment spliced into
a frame), percentages follow the reader's language (``i18n.percent``: "75%", German "75 %" with
a no-break space), the German replay steps keep their arrow with their word, and the German
catalog says "Spielfeld" for the board, one unit for seconds ("s") and days ("Tg."). The pages
in-process against a real Valkey, no browser (the wrapping itself: test_button_wrap_browser)."""

from __future__ import annotations

import html
import re
import warnings
from collections.abc import Iterator

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from babel.messages.pofile import read_po

from server.app import create_app
from server.edge.limits import Limited
from server.store.analyses import StoredAnalysis
from server.web import catalogs, i18n
from server.web.odds_view import chance_text, code_text
from server.web.odds_view import player_looks as odds_players
from server.web.site import COOKIE, limited_text
from server.web.solo_view import solo_stats
from server.web.status_view import duration_text
from tests.conftest import app_settings
from tests.names import unique

from .test_locale_text import won_solo

BASE = "http://testserver"
NBSP = "\u00a0"
DE = {"accept-language": "de"}


def text_of(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


# ---------------------------------------------------------------------- a refused limit


@pytest.fixture(scope="module")
def client(redis_url: str) -> Iterator[TestClient]:
    settings = app_settings(redis_url=redis_url, secret_key="wording-test", trusted_proxy=True,
                            ip_guest_rate=(2.0, 600.0), ip_game_rate=(1.0, 600.0))
    with TestClient(create_app(settings), base_url=BASE, follow_redirects=False) as test_client:
        yield test_client


def post(client: TestClient, path: str, ip: str, lang: str, cookie: str | None = None, **data: str):
    client.cookies.clear()
    if cookie is not None:
        client.cookies.set(COOKIE, cookie)
    return client.post(path, data=data, headers={"origin": BASE, "x-forwarded-for": ip, "accept-language": lang})


@pytest.mark.parametrize("lang,games,guests", [
    ("de", "Zu viele neue Spiele von deiner Adresse; versuch es in {} s noch einmal.",
     "Zu viele neue Gäste von deiner Adresse; versuch es in {} s noch einmal."),
    ("en", "Too many new games from your address; try again in {} s.",
     "Too many new guests from your address; try again in {} s."),
])
def test_a_refused_limit_says_one_whole_sentence(client: TestClient, lang: str, games: str, guests: str) -> None:
    """Before: "zu viele neuen Spielen von deiner Adresse; versuch es in 10 s wieder." (a
    spliced fragment in the wrong case, lowercase in both languages)."""
    ip = f"10.9.{len(lang)}.{ord(lang[0])}"
    made = client.post("/api/v1/guests", json={"name": unique("Anna")}, headers={"x-forwarded-for": ip}).json()
    cookie = client.app.state.web.cookies.dumps(made["token"])  # type: ignore[attr-defined]
    assert post(client, "/games", ip, lang, cookie, seat="0").status_code == 303
    refused = post(client, "/games", ip, lang, cookie, seat="0")
    assert refused.status_code == 429
    seconds = refused.headers["retry-after"]
    assert games.format(seconds).replace(" s", NBSP + "s") in text_of(refused.text)

    assert post(client, "/guest", ip, lang, name=unique("Ben")).status_code == 303  # the address's second guest
    refused = post(client, "/guest", ip, lang, name=unique("Cleo"))
    assert refused.status_code == 429
    assert guests.format(refused.headers["retry-after"]).replace(" s", NBSP + "s") in text_of(refused.text)


def test_every_limit_has_its_own_sentence() -> None:
    with i18n.using("de"):
        assert limited_text(Limited("new games", 1)) == f"Zu viele neue Spiele von deiner Adresse; versuch es in 1{NBSP}s noch einmal."
        assert limited_text(Limited("new guests", 42)).startswith("Zu viele neue Gäste von deiner Adresse; ")
        assert limited_text(Limited("sockets", 3)).startswith("Zu viele Anfragen")  # never a spliced word
    with i18n.using("en"):
        assert limited_text(Limited("new games", 10)) == f"Too many new games from your address; try again in 10{NBSP}s."


# ---------------------------------------------------------------------- a name already taken


@pytest.mark.parametrize("n,typed", list(enumerate(["Computer (mittel)", "Computer (medium)", "computer (MITTEL)"])))
def test_a_taken_name_is_echoed_as_typed(client: TestClient, n: int, typed: str) -> None:
    """The computers' names are reserved in every language; the refusal repeats what the
    person typed (their language's form included), not the English reserved form."""
    refused = post(client, "/guest", f"10.9.3.{n}", "de", name=typed)
    assert refused.status_code == 409
    assert f"Jemand heißt schon {typed}. Bitte wähle einen anderen Namen." in text_of(refused.text)


# ---------------------------------------------------------------------- percentages


@pytest.mark.parametrize("lang,pct", [("en", "{}%"), ("de", "{}" + NBSP + "%")])
def test_percentages_are_written_as_the_reader_writes_them(lang: str, pct: str) -> None:
    """Before: "75 %" in English and German alike, with a space a line could break at."""
    sep = "," if lang == "de" else "."
    with i18n.using(lang):
        assert i18n.percent(0.75) == pct.format("75")
        assert i18n.percent(0.234, 1) == pct.format(f"23{sep}4")
        assert i18n.percent(1) == pct.format("100") and i18n.percent(0) == pct.format("0")
        analysis = StoredAnalysis([], [{"seat": 0, "moves": 3, "safest_share": 0.5, "excess_risk": 0.234, "luck": 0.7},
                                       {"seat": 1, "moves": 0, "safest_share": None, "excess_risk": None, "luck": 0.0}],
                                  [])
        anna, ben = odds_players(analysis, ("Anna", "Ben"))
        assert (anna.safest, anna.excess, ben.safest, ben.excess) == (pct.format("50"), pct.format(f"23{sep}4"),
                                                                        "\u2013", "\u2013")
        stats = solo_stats(won_solo([2_000, 4_200]))  # 3BV 1 in 2 clicks
        assert stats is not None and stats.efficiency == pct.format("50")
        assert [chance_text(p) for p in (0, 1, 0.41, 0.001, 0.999)] == [
            pct.format("0"), pct.format("100"), pct.format("41"), "<" + pct.format("1"), ">" + pct.format("99")]
        assert code_text(7) == pct.format("7")


# ---------------------------------------------------------------------- the German catalog


def german() -> dict[str, str]:
    """Every German translation by its msgid (a plural's: each form, joined by " | ")."""
    with catalogs.po_path("de").open("rb") as f:
        catalog = read_po(f, locale="de")
    return {(m.id if isinstance(m.id, str) else m.id[0]): " | ".join(m.string) if isinstance(m.string, tuple)
            else m.string for m in catalog if m.id}


def test_the_german_replay_steps_keep_their_arrow_with_their_word() -> None:
    """Before: "‹ Zurück" broke into "‹" over "Zurück" on a 375 px phone."""
    with i18n.using("de"):
        steps = [i18n.gettext(label) for label in ("« First", "‹ Prev", "Next ›", "Last »")]
    assert steps == [f"«{NBSP}Erster", f"‹{NBSP}Zurück", f"Weiter{NBSP}›", f"Letzter{NBSP}»"]


def test_german_says_spielfeld_for_the_board() -> None:
    """"Feld" is a cell everywhere; the whole board is the "Spielfeld"."""
    de = german()
    for msgid, text in de.items():
        if re.search(r"\bboards?\b", msgid) and "cell" not in msgid:  # says nothing of a cell
            assert not re.search(r"\bFeld(es)?\b", text), (msgid, text)
    assert de["%(name)s cleared the board."] == "%(name)s hat das Spielfeld geräumt."
    assert "ein Spielfeld, das sich allein mit Logik räumen lässt" in de["<strong>No guessing</strong> — a board that logic alone clears"]
    assert "11×11-Spielfeld" in next(t for m, t in de.items() if m.startswith("Take turns on one 11×11 board"))
    assert "Räum das Spielfeld allein" in next(t for m, t in de.items() if m.startswith("The warm-up between duels"))


def test_german_units_and_words_are_used_one_way() -> None:
    de = german()
    assert [m for m, t in de.items() if "Sek." in t or "Verpflichtung" in t or re.search(r"\)d T\b", t)] == []
    assert de["sha256 commitment"] == "sha256-Commitment"
    assert de["Live games"] == de["Being played"] == "Laufende Spiele"
    assert de["It is %(name)s\u2019s turn \u2014 wait for their move."] == \
        "%(name)s ist am Zug \u2014 warte, bis %(name)s gezogen hat."
    with i18n.using("de"):
        assert [duration_text(ms) for ms in (40_000, 12 * 60_000, 2 * 86_400_000, (2 * 86_400 + 3 * 3600) * 1000)] == [
            "40 s", "12 Min.", "2 Tg.", "2 Tg. 3 Std."]

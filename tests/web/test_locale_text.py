"""How pages write numbers, dates, plurals, scores, clocks and names in the reader's language:
one rule each (``server.web.i18n.number`` / ``date_text``, ``view_model.score_pair_text`` /
``score_text`` / ``display_name``, ``status_view.time_control_text``), used by every element
that shows one. Pure: view models and macros rendered inside ``i18n.using``, no server."""

from __future__ import annotations

import datetime
import random
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from engine import SPECTATOR, Chord, Duel, Flag, Mark, Outcome, Resign, Reveal
from engine.classic import Classic, ClassicSetup, numbers_of, three_bv
from engine.clock import Clock
from engine.events import ABORTED
from server.core.commands import Commit, Play
from server.core.computer import NAMES, computer
from server.core.decide import decide, open_room
from server.core.ratings import DEFAULT
from server.core.room import Player, Room
from server.core.summary import for_player, summary_of
from server.store.analyses import StoredAnalysis
from server.store.players import RatingPoint
from server.web import i18n
from server.web.end_view import FairLook
from server.web.html_codec import HtmlCodec
from server.web.lobby import Lobby, _live_row
from server.web.odds_view import player_looks as odds_players
from server.web.odds_view import signed
from server.web.player_view import game_row, rating_looks
from server.web.solo_codec import Restart, restart_of
from server.web.solo_view import solo_stats, solo_status, timer_text
from server.web.status_view import (
    clock_text,
    outcome_text,
    status_look,
    tab_title,
    terms_text,
    time_control_text,
)
from server.web.template_env import make_env
from server.web.view_model import (
    COMPUTER_NAMES,
    display_name,
    score_pair_text,
    score_text,
)

ANNA, BEN = Player("gA", "Anna"), Player("gB", "Ben")
NBSP, MINUS = "\u00a0", "\u2212"
ENV = make_env()


def render(template: str, macro: str, *args: Any) -> str:
    return str(getattr(ENV.get_template(template).module, macro)(*args))


def play(room: Room, actor: Player, move: object, now: int) -> Room:
    decision = decide(room, actor, Play(move), None, now)  # type: ignore[arg-type]
    assert isinstance(decision, Commit), decision
    return decision.room


def duel_room(players: tuple[Player, Player] = (ANNA, BEN), clock: Clock | None = None, rated: bool = False) -> Room:
    return open_room("r1", Duel.new(random.Random(5), first=0), players, clock, 0, rated=rated).room


def blubb(room: Room) -> Room:
    """Anna marks a safe cell: her score goes below zero (a wrong mark's points)."""
    safe = next(c for c in ((0, 0), (0, 10), (10, 0), (10, 10)) if c not in room.game.setup.mines)  # type: ignore[attr-defined]
    return play(room, ANNA, Mark(safe), 1_000)


def won_solo(clicks_ms: list[int]) -> Room:
    """A Beginner game won by a click beside its mines, then one far from them."""
    game = Classic(ClassicSetup(9, 9, 10, False, "ab" * 16))
    game.mines = frozenset({(0, c) for c in range(9)} | {(1, 0)})
    game.numbers = numbers_of(game.geo, game.mines)
    room = open_room("s1", game, (ANNA,), None, 1_000).room
    for cell, at in zip([(1, 1), (8, 8)], clicks_ms, strict=True):
        room = play(room, ANNA, Reveal(cell), at)
    assert room.game.outcome is not None
    return room


# ---------------------------------------------------------------------- numbers with a fraction


@pytest.mark.parametrize("lang,sep", [("en", "."), ("de", ",")])
def test_every_number_with_a_fraction_has_the_reader_decimal_sign(lang: str, sep: str) -> None:
    with i18n.using(lang):
        assert timer_text(2_200, True) == f"2{sep}20" and timer_text(25, True) == f"0{sep}02" and timer_text(2_200, False) == "2"
        assert timer_text(2_209, True) == f"2{sep}20"  # cut, as a stopwatch shows it (RULES.md: two decimals)
        assert clock_text(9_500) == f"0:09{sep}5" and clock_text(61_001) == "1:02"
        assert time_control_text(Clock.new(90_000, 0)) == f"1{sep}5+0"
        assert time_control_text(Clock.new(90_000, 500)) == f"1{sep}5+0{sep}5"
        assert time_control_text(Clock.new(180_000, 2_000)) == "3+2"
        assert time_control_text(Clock.new(30_000, 0)) == "30s+0"
        assert [signed(x) for x in (0.7, -3.0, 0.0, -0.01)] == [f"+0{sep}7", f"{MINUS}3{sep}0", f"\u00b10{sep}0",
                                                                   f"\u00b10{sep}0"]
        assert i18n.number(-1.26, 1) == f"{MINUS}1{sep}3" and i18n.number(5.0, 2, trim=True) == "5"
        stats = solo_stats(won_solo([2_000, 4_200]))
        assert stats is not None and (stats.time, stats.bv_per_s) == (f"2{sep}20", f"0{sep}45")  # 3BV 1 in 2.2 s
        end = render("_solo.html", "timer", stats.time, False)
        assert f"<strong>2{sep}20</strong> s" in end and f"2{sep}20" in end.split('aria-label="')[1].split('"')[0]
        analysis = StoredAnalysis([], [{"seat": 0, "moves": 3, "safest_share": 0.5, "excess_risk": 0.234, "luck": 0.7},
                                       {"seat": 1, "moves": 0, "safest_share": None, "excess_risk": None, "luck": 0.0}],
                                  [])
        anna, ben = odds_players(analysis, ("Anna", "Ben"))
        assert (anna.excess, anna.luck, ben.luck) == (f"23{sep}4{'' if lang == 'en' else NBSP}%", f"+0{sep}7",
                                                      f"\u00b10{sep}0")


@pytest.mark.parametrize("lang,sep", [("en", "."), ("de", ",")])
def test_the_solo_leaderboard_rows_use_the_reader_decimal_sign(lang: str, sep: str) -> None:
    row = SimpleNamespace(room="s1", player_id="gA", name="Anna", time_ms=2_200, three_bv=12, bv_per_s=5.4545,
                          efficiency=0.8)
    with i18n.using(lang):
        page = ENV.get_template("leaderboard.html").render(
            me=None, rows=[(1, row), (1, row)], preset="beginner", mode="classic", period="all",
            presets=("beginner",), modes=("classic",), periods={"all": "all time"},
            seconds=lambda ms: timer_text(ms, True))
    assert f"<td>2{sep}20 s</td><td>12</td><td>5{sep}45</td><td>80{'' if lang == 'en' else NBSP}%</td>" in page
    assert page.count('<th scope="row">1</th><td><a href="/p/gA" id="lb-who-s1">Anna</a></td>') == 2  # a tie shares its rank; the name links


def test_dates_are_written_as_the_reader_writes_them() -> None:
    day = int(datetime.datetime(2026, 11, 29, 15, tzinfo=datetime.UTC).timestamp() * 1000)
    with i18n.using("de"):
        assert i18n.date_text(day) == "29.11.2026" and i18n.date_text(None) == ""
        history = rating_looks({c: DEFAULT for c in ("bullet", "blitz", "rapid", "correspondence")},
                               {"blitz": [RatingPoint(day, 1500.0, "g1")]})
        assert [p.date for look in history for p in look.history] == ["29.11.2026"]
        waiting = game_row(for_player(summary_of(duel_room((ANNA, None))), "gA"), day)  # type: ignore[arg-type]
        assert waiting.when.endswith("01.01.1970")  # made at 0 ms
    with i18n.using("en"):
        assert i18n.date_text(day) == "Nov 29, 2026"


# ---------------------------------------------------------------------- plurals


@pytest.mark.parametrize("lang,one,many,over", [("en", "1 mine left", "2 mines left", "3 flags more than mines"),
                                                ("de", "noch 1 Mine (", "noch 2 Minen (", "3 Fahnen mehr als Minen")])
def test_the_solo_counter_and_the_chords_say_one_in_the_singular(lang: str, one: str, many: str, over: str) -> None:
    with i18n.using(lang):
        assert one in render("_solo.html", "counter", 1) and many in render("_solo.html", "counter", 2)
        assert over in render("_solo.html", "counter", -3)  # more flags than mines: not "-3 mines left"
        assert '<strong aria-hidden="true">&minus;3</strong>' in render("_solo.html", "counter", -3)  # a real minus
        room = won_solo([2_000, 4_200])
        for clicks, said in (((3, 4, 1), ("(3 reveals, 4 flags, 1 chord)", "(3 Aufdeckungen, 4 Fahnen, 1 Akkord)")),
                             ((1, 1, 2), ("(1 reveal, 1 flag, 2 chords)", "(1 Aufdeckung, 1 Fahne, 2 Akkorde)"))):
            stats = replace(solo_stats(room), clicks=clicks)  # type: ignore[type-var]  # each count its own number
            assert said[lang == "de"] in render("_solo.html", "endgame", stats, room.id, restart_of(room), True)


# ---------------------------------------------------------------------- scores


def test_a_score_is_written_one_way_everywhere() -> None:
    assert score_pair_text(1, -6) == f"1{NBSP}:{NBSP}{MINUS}6" and score_text(-3) == f"{MINUS}3"
    room = blubb(duel_room())
    a, b = room.view(SPECTATOR).scores
    assert a < 0
    pair = score_pair_text(a, b)
    assert _live_row(room, {}, 0).score == pair  # the lobby
    cards = HtmlCodec().players(room, 0)
    assert f'aria-hidden="true">{score_text(a)}</span><span class="visually-hidden">{score_text(a)} points</span>' in cards
    assert ">-" not in cards
    with i18n.using("de"):
        assert f'<span class="visually-hidden">{score_text(a)} Punkte</span>' in HtmlCodec().players(room, 0)
    resigned = play(room, ANNA, Resign(), 3_000)
    row = game_row(for_player(summary_of(resigned), "gB"), 0)
    assert row.score == score_pair_text(b, a)  # a player's list: their own score first
    # the result line: the winner's (Ben's) first
    assert score_pair_text(b, a) in outcome_text(resigned.game.outcome, resigned.view(SPECTATOR).scores,
                                                 ("Anna", "Ben"), SPECTATOR)
    replay = str(HtmlCodec().replay(resigned, 1)["replay"])
    assert f"Anna {score_pair_text(*resigned.game.position(1).scores)} Ben" in replay


# ---------------------------------------------------------------------- the room's terms


@pytest.mark.parametrize("clock,en,de", [
    (Clock.new(30_000, 0), "30s+0", "30s+0"),
    (Clock.new(90_000, 500), "1.5+0.5", "1,5+0,5"),
    (Clock.new(180_000, 2_000), "3+2", "3+2"),
    (Clock.correspondence(3), "3 days", "3 Tage"),
])
def test_the_room_page_names_its_clock_as_the_lobby_does(clock: Clock, en: str, de: str) -> None:
    room = duel_room(clock=clock, rated=True)
    assert terms_text(room) == f"Brettspielnetz rules \u00b7 {en} \u00b7 rated"
    with i18n.using("de"):
        assert terms_text(room) == f"Brettspielnetz-Regeln \u00b7 {de} \u00b7 gewertet"
        assert time_control_text(clock) == de  # the lobby's words for it
    assert terms_text(duel_room()) == "Brettspielnetz rules"


# ---------------------------------------------------------------------- computers' names


def test_a_computer_is_named_in_the_reader_language_wherever_names_are_shown() -> None:
    assert {int(level): name for level, name in NAMES.items()} == COMPUTER_NAMES  # the English is the stored name
    bot = computer(2)
    room = blubb(duel_room((ANNA, bot)))
    with i18n.using("de"):
        assert display_name("Computer (medium)") == "Computer (mittel)" and display_name("Anna") == "Anna"
        assert status_look(room, SPECTATOR).text == "Computer (mittel) ist am Zug"
        assert "Anna gegen Computer (mittel)" in tab_title(room, 0)
        frames = HtmlCodec().snapshot(room, 0) + HtmlCodec().snapshot(room, SPECTATOR)
        assert "Computer (mittel)" in frames and "Computer (medium)" not in frames
        lobby = render("_lobby.html", "live", Lobby(live=(_live_row(room, {}, 0),)))
        assert "Computer (mittel)" in lobby and "Computer (medium)" not in lobby
        assert game_row(for_player(summary_of(room), "gA"), 0).opponent == "Computer (mittel)"
    assert _live_row(room, {}, 0).names[1] == "Computer (medium)"  # the row keeps the stored name
    with i18n.using("en"):
        assert "Computer (medium)" in render("_lobby.html", "live", Lobby(live=(_live_row(room, {}, 0),)))


# ---------------------------------------------------------------------- the solo end screen


def test_a_custom_board_has_no_leaderboard_link() -> None:
    room = won_solo([2_000, 4_200])
    stats = solo_stats(room)
    beginner = render("_solo.html", "endgame", stats, room.id, restart_of(room), True)
    assert 'href="/solo/leaderboard?preset=beginner&amp;mode=classic"' in beginner
    custom = render("_solo.html", "endgame", stats, room.id, Restart(10, 9, 12, False, "custom"), True)
    assert "/solo/leaderboard" not in custom and 'id="again"' in custom


def test_a_lost_game_shows_the_3bv_it_had_done_of_the_whole() -> None:
    game = Classic(ClassicSetup(9, 9, 10, False, "ab" * 16))
    game.mines = frozenset({(0, 0), (0, 2), (2, 0), (2, 2), (4, 4), (4, 6), (6, 4), (6, 6), (8, 8), (8, 0)})
    game.numbers = numbers_of(game.geo, game.mines)
    room = open_room("s2", game, (ANNA,), None, 1_000).room
    room = play(room, ANNA, Reveal((0, 5)), 2_000)  # a 0: its region opens (one 3BV)
    room = play(room, ANNA, Reveal((1, 1)), 2_500)  # a number no 0 touches (one more)
    room = play(room, ANNA, Reveal((0, 0)), 3_000)  # a mine
    stats = solo_stats(room)
    assert stats is not None and not stats.won and stats.solved_bv == 2
    assert stats.three_bv == three_bv(9, 9, room.game.mines) > 1  # type: ignore[attr-defined]
    end = render("_solo.html", "endgame", stats, room.id, restart_of(room), True)
    assert f'<dd id="stat-3bv">2 of {stats.three_bv}</dd>' in end
    assert solo_stats(won_solo([2_000, 4_200])).solved_bv == solo_stats(won_solo([2_000, 4_200])).three_bv  # type: ignore[union-attr]


def test_a_classic_game_its_first_click_won_has_no_rate() -> None:
    """It took no time: its 3BV/s is a dash, not 1000.00 (a division by a millisecond)."""
    game = Classic(ClassicSetup(9, 9, 10, False, "ab" * 16))
    game.mines = frozenset({(0, c) for c in range(9)} | {(1, 0)})
    game.numbers = numbers_of(game.geo, game.mines)
    room = play(open_room("s2", game, (ANNA,), None, 1_000).room, ANNA, Reveal((8, 8)), 2_000)
    stats = solo_stats(room)
    assert stats is not None and stats.won and (stats.time, stats.bv_per_s) == ("0.00", "\u2013")


# ---------------------------------------------------------------------- German words


def test_german_words_that_read_wrong_before() -> None:
    with i18n.using("de"):
        rule = i18n.gettext("Players take turns. Every move ends your turn.")
        assert "Zug beendet deinen Zug" not in rule and "abwechselnd" in rule
        aborted = outcome_text(Outcome(ABORTED, None), (0, 0), ("Anna", "Ben"), SPECTATOR)
        assert "ohne Ergebnis" in aborted and "Wertung" not in aborted
        assert "Wertung" not in i18n.gettext("No result: possible until both players have moved")
        assert i18n.gettext("all time") == "alle Zeiten"
        fair = render("_room.html", "fair", FairLook("c0ffee", "5a1t", True, "a1 b2"))
        assert "&lt;Minen&gt;:&lt;Salt&gt;" in fair and "&lt;mines&gt;" not in fair
    assert "&lt;mines&gt;:&lt;salt&gt;" in render("_room.html", "fair", FairLook("c0ffee", "5a1t", True, "a1 b2"))


def test_the_challenges_hint_fits_a_visitor_without_a_name() -> None:
    with i18n.using("de"):
        hint = render("_lobby.html", "challenges", Lobby(), None)
    assert "Neues Spiel" in hint and "Namen" in hint


@pytest.mark.parametrize("lang,said,seen", [("en", "Boom — 2 mines went off.", "Anna hit 2 mines."),
                                            ("de", "Bumm — 2 Minen sind hochgegangen.", "Anna hat 2 Minen getroffen.")])
def test_a_chord_that_opened_two_mines_says_two_went_off(lang: str, said: str, seen: str) -> None:
    """An outside probe's chord opened two mines and the status said "a mine went off"."""
    game = Classic(ClassicSetup(5, 5, 4, False, "ab" * 16))
    game.mines = frozenset({(2, 2), (2, 4), (3, 0), (4, 0)})
    game.numbers = numbers_of(game.geo, game.mines)
    room = open_room("s3", game, (ANNA,), None, 1_000).room
    for at, move in enumerate((Reveal((0, 0)), Flag((3, 1)), Flag((3, 2)), Chord((2, 1))), start=2):
        room = play(room, ANNA, move, at * 1_000)
    with i18n.using(lang):
        assert solo_status(room, 0, "Anna").text == said and solo_status(room, 2, "Anna").text == seen

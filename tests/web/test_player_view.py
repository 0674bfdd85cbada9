"""The players' pages' view model and the rating labels of rated rooms: pure, no server."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from engine import ClaimAbandoned, Duel, Explore, Resign
from engine.clock import DAY_MS, Clock
from server.core.commands import Commit, Join, Play
from server.core.computer import computer
from server.core.decide import decide, open_room
from server.core.ratings import BLITZ, DEFAULT, Rating
from server.core.room import Player, Room
from server.core.summary import for_player, summary_of
from server.store.players import RatingPoint
from server.web.html_codec import HtmlCodec
from server.web.player_view import (
    duration_text,
    game_row,
    leader_rows,
    rating_looks,
    terms_text,
)
from server.web.rating_labels import RatingLabels
from server.web.status_view import player_looks

ANNA, BEN = Player("gA", "Anna"), Player("gB", "Ben")
T0 = 1_700_000_000_000
BLITZ_CLOCK = Clock.new(180_000, 2_000)


def duel(seed: int = 3) -> Duel:
    return Duel.new(random.Random(seed), first=0)


def step(room: Room, actor: Player, command: object, now: int) -> Room:
    decision = decide(room, actor, command, None, now)  # type: ignore[arg-type]
    assert isinstance(decision, Commit)
    return decision.room


def rated_room(players: tuple[Player | None, Player | None] = (ANNA, BEN), clock: Clock = BLITZ_CLOCK) -> Room:
    return open_room("r1", duel(), players, clock, T0, rated=True).room


# ---------------------------------------------------------------------- game rows


def test_a_game_row_says_whose_turn_and_how_long_they_have() -> None:
    room = step(rated_room((ANNA, None), Clock.correspondence(3)), BEN, Join(), T0)
    mine, theirs = for_player(summary_of(room), "gA"), for_player(summary_of(room), "gB")
    row = game_row(mine, T0 + DAY_MS)
    assert row.your_turn and row.result_text == "Your turn" and row.when == "move within 2 d"
    assert row.opponent == "Ben" and row.opponent_href == "/p/gB" and row.href == "/g/r1"
    assert row.terms == "3 days" and row.rated and row.score == ""
    other = game_row(theirs, T0 + DAY_MS + 3_600_000)
    assert not other.your_turn and other.result_text == "Their turn" and other.when == "they have 1 d 23 h"


def test_a_row_on_somebody_else_s_page_names_whose_turn_it_is() -> None:
    """A visitor of Anna's page is not Anna: no "Your turn", no "Play", the mover by name."""
    room = step(rated_room((ANNA, None), Clock.correspondence(3)), BEN, Join(), T0)
    mine, theirs = for_player(summary_of(room), "gA"), for_player(summary_of(room), "gB")
    seen = game_row(mine, T0 + DAY_MS, owner="Anna")
    assert not seen.your_turn and seen.result_text == "Anna to move" and seen.when == "2 d left for the move"
    assert seen.opponent == "Ben"
    on_bens = game_row(theirs, T0 + DAY_MS, owner="Ben")
    assert not on_bens.your_turn and on_bens.result_text == "Anna to move"


def test_a_finished_row_has_the_result_the_score_first_and_how_it_ended() -> None:
    room = step(rated_room(), ANNA, Play(Explore((0, 0))), T0 + 1000)
    over = step(room, BEN, Play(Resign()), T0 + 2000)
    ben = game_row(for_player(summary_of(over), "gB"), T0)
    anna = game_row(for_player(summary_of(over), "gA"), T0)
    a, b = over.game.scores  # type: ignore[attr-defined]
    assert anna.result == "won" and anna.result_text == "Won" and ben.result_text == "Lost"
    assert anna.score.startswith(str(a).replace("-", "\u2212")) and ben.score.startswith(str(b).replace("-", "\u2212"))
    assert anna.when.endswith("resignation") and anna.terms == "3+2"


def test_a_game_left_says_who_left_on_each_side() -> None:
    room = step(rated_room(), ANNA, Play(Explore((0, 0))), T0 + 1000)
    game = room.game.copy()
    game.apply(0, ClaimAbandoned(False))  # Ben left, Anna claimed the win
    over = room.evolve(version=room.version + 1, game=game)
    anna = game_row(for_player(summary_of(over), "gA"), T0)
    ben = game_row(for_player(summary_of(over), "gB"), T0)
    assert anna.result_text == "Won" and anna.when.endswith("opponent left")
    assert ben.result_text == "Lost" and ben.when.endswith("left the game")
    drawn_game = room.game.copy()
    drawn_game.apply(0, ClaimAbandoned(True))  # Ben left, Anna called it a draw
    drawn = room.evolve(version=room.version + 1, game=drawn_game)
    for player in ("gA", "gB"):
        row = game_row(for_player(summary_of(drawn), player), T0)
        assert row.result_text == "Drawn" and row.when.endswith("a player left")  # true for both of them


def test_a_waiting_row_and_a_computer_opponent() -> None:
    waiting = game_row(for_player(summary_of(rated_room((ANNA, None))), "gA"), T0)
    assert waiting.opponent == "(open seat)" and waiting.opponent_href is None and "waiting since" in waiting.when
    bot = open_room("r2", duel(), (ANNA, computer(2)), None, T0).room
    row = game_row(for_player(summary_of(bot), "gA"), T0)
    assert row.opponent == "Computer (medium)" and row.opponent_href is None and row.terms == "untimed"


@given(st.integers(0, 40 * DAY_MS))
def test_durations_read_as_the_largest_two_units(ms: int) -> None:
    text = duration_text(ms)
    assert 1 <= len(text.split()) <= 4 and text.split()[1] in ("d", "h", "min", "s")


def test_terms() -> None:
    assert terms_text(None) == "untimed" and terms_text({"days": 1}) == "1 day"
    assert terms_text({"initial_ms": 60_000, "increment_ms": 1_000}) == "1+1"


# ---------------------------------------------------------------------- ratings


def test_rating_looks_show_the_newest_points_first_with_their_change() -> None:
    points = [RatingPoint(T0 + i, 1500.0 + 10 * i * (-1) ** i, f"g{i}") for i in range(12)]
    ratings = {c: DEFAULT for c in ("bullet", "blitz", "rapid", "correspondence")}
    ratings[BLITZ] = Rating(1612.4, 80.0, 0.06, 30)
    looks = {look.category: look for look in rating_looks(ratings, {BLITZ: points}, shown=10)}
    blitz = looks[BLITZ]
    assert blitz.display == "1612" and not blitz.provisional and blitz.games == 30 and blitz.deviation == 80
    assert [p.game for p in blitz.history] == [f"g{i}" for i in range(11, 1, -1)]
    assert blitz.history[0].change == "\u2212210" and blitz.history[1].change == "+190"  # 1390 after 1600...
    assert looks["bullet"].display == "1500?" and looks["bullet"].history == []


def test_the_first_rated_game_shows_its_change_from_the_start() -> None:
    ratings = {c: DEFAULT for c in ("bullet", "blitz", "rapid", "correspondence")}
    points = [RatingPoint(T0, 1662.3, "g0"), RatingPoint(T0 + 1, 1640.0, "g1")]
    blitz = {look.category: look for look in rating_looks(ratings, {BLITZ: points}, shown=10)}[BLITZ]
    assert [p.change for p in blitz.history] == ["\u221222", "+162"]
    longer = [RatingPoint(T0 + i, 1500.0 + i, f"g{i}") for i in range(3)]
    tail = {look.category: look for look in rating_looks(ratings, {BLITZ: longer}, shown=2)}[BLITZ]
    assert [p.change for p in tail.history] == ["+1", "+1"]  # the extra point only gives the oldest its change


def test_leader_rows_skip_players_without_a_name() -> None:
    board = [("gA", Rating(1800, 60)), ("gX", Rating(1700, 60)), ("gB", Rating(1650, 70))]
    rows = leader_rows(board, {"gA": "Anna", "gB": "Ben"})
    assert [(r.rank, r.name, r.rating, r.href) for r in rows] == [(1, "Anna", "1800", "/p/gA"), (2, "Ben", "1650", "/p/gB")]


# ---------------------------------------------------------------------- labels beside names


def test_labels_come_from_memory_per_category_and_only_for_rated_rooms() -> None:
    labels = RatingLabels(capacity=3)
    room = rated_room()
    assert labels.of(room) == (None, None) and labels.missing(room) == ["gA", "gB"]
    labels.remember(BLITZ, {"gA": Rating(1523.4, 90.0), "gB": DEFAULT})
    assert labels.of(room) == ("1523", "1500?") and labels.missing(room) == []
    rapid = rated_room(clock=Clock.new(900_000, 0))
    assert labels.of(rapid) == (None, None)  # another category: not known
    casual = open_room("r3", duel(), (ANNA, BEN), BLITZ_CLOCK, T0).room
    assert labels.of(casual) == (None, None) and labels.missing(casual) == []
    bot = open_room("r4", duel(), (ANNA, computer(1)), BLITZ_CLOCK, T0, rated=True).room
    assert labels.missing(bot) == []  # never rated: nothing to read
    labels.remember(BLITZ, {"gC": DEFAULT, "gD": DEFAULT})  # over capacity: the oldest go
    assert labels.of(room) == (None, "1500?")


class CountingRatings:
    def __init__(self) -> None:
        self.reads: list[list[str]] = []

    async def ratings_many(self, ids: list[str]) -> dict[str, dict[str, Rating]]:
        self.reads.append(list(ids))
        return {pid: {BLITZ: Rating(1600 + i, 80.0)} for i, pid in enumerate(ids)}


async def test_labels_are_read_once_in_one_round_trip() -> None:
    labels, ratings = RatingLabels(), CountingRatings()
    room = rated_room((ANNA, None))
    await labels.load(ratings, room, fresh=False)
    assert ratings.reads == [["gA"]] and labels.of(room) == ("1600", None)
    joined = step(room, BEN, Join(), T0 + 1)
    await labels.load(ratings, joined, fresh=False)
    await labels.load(ratings, joined, fresh=False)  # known: no read
    assert ratings.reads == [["gA"], ["gB"]]
    await labels.load(ratings, joined)  # a page reads both afresh
    assert ratings.reads[-1] == ["gA", "gB"]


def test_the_cards_show_the_labels_and_link_people_only() -> None:
    room = rated_room()
    looks = player_looks(room, 0, T0, ("1523", None))
    assert [(p.rating, p.href) for p in looks] == [("1523", "/p/gA"), (None, "/p/gB")]
    bot = open_room("r5", duel(), (ANNA, computer(3)), None, T0).room
    assert [p.href for p in player_looks(bot, 0, T0)] == ["/p/gA", None]


def test_every_frame_renders_the_labels_from_memory() -> None:
    codec = HtmlCodec()
    room = rated_room()
    codec.labels.remember(BLITZ, {"gA": Rating(1523.4, 90.0), "gB": DEFAULT})
    snapshot = codec.snapshot(room, 0)
    assert '<span class="rating">(1523)</span>' in snapshot and '<span class="rating">(1500?)</span>' in snapshot
    moved = step(room, ANNA, Play(Explore((0, 0))), T0 + 500)
    update = codec.update(room, moved, 1, [])
    assert '<span class="rating">(1523)</span>' in update and 'href="/p/gA"' in update
    assert codec.players(moved, 2).startswith('<div id="players"')

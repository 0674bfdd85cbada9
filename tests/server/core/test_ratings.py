"""Ratings without Redis: categories, provisional display, and one game's update, which must be
exactly the ``glicko2`` library's (so the store keeps what the library says)."""

from __future__ import annotations

import dataclasses

import glicko2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.clock import Clock
from engine.events import ABANDONED, ABORTED, ALL_MINES, RESIGNATION, Outcome
from server.core.ratings import (
    BLITZ,
    BULLET,
    CATEGORIES,
    CORRESPONDENCE,
    DEFAULT,
    IDLE_PERIOD_MS,
    RAPID,
    SCORES,
    Rating,
    category_of,
    clock_category,
    rate_game,
    rated_category,
    score_of,
)

ratings = st.builds(
    Rating,
    st.floats(500, 3000),
    st.floats(30, 350),
    st.floats(0.03, 0.1),
    st.integers(0, 10_000),
    st.one_of(st.none(), st.integers(0, 2**41)),
    st.tuples(st.integers(0, 3_000), st.integers(0, 3_000), st.integers(0, 3_000)),
)
scores = st.sampled_from(SCORES)


def library_update(me: Rating, opponent: Rating, score: float) -> tuple[float, float, float]:
    """The library's own answer, computed here the way its README shows it."""
    player = glicko2.Player(me.rating, me.deviation, me.volatility)
    player.update_player([opponent.rating], [opponent.deviation], [score])
    return player.rating, player.rd, player.vol


# ---------------------------------------------------------------------- categories


@pytest.mark.parametrize(("initial_s", "increment_s", "category"), [
    (15, 0, BULLET), (60, 0, BULLET), (60, 2, BULLET), (179, 0, BULLET),
    (180, 0, BLITZ), (120, 2, BLITZ), (180, 2, BLITZ), (300, 0, BLITZ), (479, 0, BLITZ),
    (480, 0, RAPID), (300, 5, RAPID), (600, 0, RAPID), (900, 10, RAPID), (5400, 30, RAPID),
])
def test_the_category_is_the_estimated_length(initial_s: float, increment_s: float, category: str) -> None:
    """lichess's rule: initial + 40 × increment; < 3 min bullet, < 8 min blitz, else rapid."""
    assert category_of(initial_s, increment_s) == category
    assert clock_category(Clock.new(int(initial_s * 1000), int(increment_s * 1000))) == category


def test_correspondence_and_untimed_games() -> None:
    assert category_of(None, days=1) == category_of(300, 5, days=3) == CORRESPONDENCE
    assert category_of(None) is None and clock_category(None) is None  # untimed live game: casual only
    for bad in ({"initial_s": 0}, {"initial_s": 60, "increment_s": -1}, {"initial_s": None, "days": 0}):
        with pytest.raises(ValueError):
            category_of(**bad)
    assert CATEGORIES == (BULLET, BLITZ, RAPID, CORRESPONDENCE)


def test_rated_and_casual_games() -> None:
    """Only a rated duel with a clock has a category; casual (and bot) games, the classic game
    and untimed games are never rated."""
    blitz = Clock.new(180_000, 2_000)
    assert rated_category("duel", True, blitz) == BLITZ
    assert rated_category("duel", False, blitz) is None
    assert rated_category("classic", True, blitz) is None
    assert rated_category("duel", True, None) is None


def test_seat_zeros_score() -> None:
    assert score_of(Outcome(ALL_MINES, 0)) == 1.0
    assert score_of(Outcome(RESIGNATION, 1)) == 0.0
    assert score_of(Outcome(ALL_MINES, None)) == 0.5
    assert score_of(Outcome(ABANDONED, None)) == 0.5  # a claimed draw
    assert score_of(Outcome(ABORTED, None)) is None  # no result: nothing to rate


# ---------------------------------------------------------------------- the value


def test_provisional_ratings_show_a_question_mark() -> None:
    assert DEFAULT == Rating(1500.0, 350.0, 0.06, 0)
    assert DEFAULT.provisional and DEFAULT.display == "1500?"
    assert Rating(1734.4, 60.0).display == "1734" and not Rating(1734.4, 60.0).provisional
    assert Rating(1612.6, 110.0).display == "1613?"  # lichess: provisional from 110 on
    assert Rating(1612.6, 109.99).display == "1613"


@given(ratings)
def test_the_stored_form_round_trips(rating: Rating) -> None:
    assert Rating.from_data(rating.to_data()) == rating
    with pytest.raises(ValueError):
        Rating.from_data([1500, 350])
    with pytest.raises(ValueError):
        Rating.from_data([1500, 350, 0.06, 1, 5, 6])
    assert Rating.from_data([1500, 350, 0.06, 1]).last_ms is None  # stored before the end was kept
    old = Rating.from_data([1500, 350, 0.06, 3, 5])  # stored before the record was counted
    assert old.record == (0, 0, 0) and not old.full_record


# ---------------------------------------------------------------------- one game


def test_the_library_is_the_one_we_documented() -> None:
    """Pins the dependency: tau 0.5 and Glickman's worked example (a 1500 ± 200 player against
    1400, 1550 and 1700 in one period), as the module docstring says."""
    assert glicko2.Player._tau == 0.5
    player = glicko2.Player(1500, 200, 0.06)
    player.update_player([1400, 1550, 1700], [30, 100, 300], [1, 0, 0])
    assert (round(player.rating, 1), round(player.rd, 1), round(player.vol, 4)) == (1464.1, 151.5, 0.06)


@settings(max_examples=300, deadline=None)
@given(ratings, ratings, scores)
def test_rate_game_is_the_librarys_update(a: Rating, b: Rating, score: float) -> None:
    new_a, new_b = rate_game(a, b, score)
    assert (new_a.rating, new_a.deviation, new_a.volatility) == library_update(a, b, score)
    assert (new_b.rating, new_b.deviation, new_b.volatility) == library_update(b, a, 1 - score)
    assert (new_a.games, new_b.games) == (a.games + 1, b.games + 1)
    won = {1.0: (1, 0, 0), 0.5: (0, 1, 0), 0.0: (0, 0, 1)}
    assert new_a.record == tuple(n + d for n, d in zip(a.record, won[score], strict=True))
    assert new_b.record == tuple(n + d for n, d in zip(b.record, won[1 - score], strict=True))
    assert rate_game(DEFAULT, DEFAULT, score)[0].full_record  # counted from the first game


@settings(max_examples=300, deadline=None)
@given(ratings, ratings, scores)
def test_rate_game_is_symmetric(a: Rating, b: Rating, score: float) -> None:
    new_a, new_b = rate_game(a, b, score)
    assert rate_game(b, a, 1 - score) == (new_b, new_a)


@settings(max_examples=300, deadline=None)
@given(ratings, ratings)
def test_the_winner_goes_up_and_the_loser_down(a: Rating, b: Rating) -> None:
    new_a, new_b = rate_game(a, b, 1.0)
    assert new_a.rating > a.rating and new_b.rating < b.rating


@settings(max_examples=300, deadline=None)
@given(ratings, st.floats(0.03, 0.1))
def test_a_draw_between_equals_moves_only_the_deviation(a: Rating, volatility: float) -> None:
    """Same rating and deviation (the volatility may differ): the expected score is ½ each, so
    a draw leaves both ratings where they were; only certainty (and volatility) moves."""
    b = Rating(a.rating, a.deviation, volatility, 7)
    new_a, new_b = rate_game(a, b, 0.5)
    assert new_a.rating == pytest.approx(a.rating, abs=1e-9) and new_b.rating == pytest.approx(b.rating, abs=1e-9)
    assert new_a.deviation != a.deviation and new_b.deviation != b.deviation


def test_a_score_is_a_loss_a_draw_or_a_win() -> None:
    for bad in (0.25, 2, -1):
        with pytest.raises(ValueError):
            rate_game(DEFAULT, DEFAULT, bad)


# ---------------------------------------------------------------------- an idle rating


@settings(max_examples=200, deadline=None)
@given(ratings, st.integers(0, 40))
def test_an_idle_rating_grows_uncertain_as_the_library_says_for_whole_periods(rating: Rating, periods: int) -> None:
    """Glickman's step 6 for a player who does not compete, ``periods`` times (the library's
    ``did_not_compete``), is what ``aged`` gives after that many idle periods; capped at 350."""
    rating = Rating(rating.rating, rating.deviation, rating.volatility, rating.games, 10**12)
    idle = glicko2.Player(rating.rating, rating.deviation, rating.volatility)
    for _ in range(periods):
        idle.did_not_compete()
    aged = rating.aged(10**12 + periods * IDLE_PERIOD_MS)
    assert aged.deviation == pytest.approx(min(350.0, idle.rd), rel=1e-9)
    assert (aged.rating, aged.volatility, aged.games, aged.last_ms) == (rating.rating, rating.volatility,
                                                                          rating.games, rating.last_ms)


def test_an_established_rating_not_played_for_a_year_is_provisional_again() -> None:
    day = 86_400_000
    established = Rating(1900.0, 60.0, 0.06, 40, 0)
    assert not established.aged(30 * day).provisional and established.aged(30 * day).deviation > 60
    assert established.aged(400 * day).provisional and established.aged(400 * day).display == "1900?"
    assert established.aged(100 * 365 * day).deviation == 350.0
    assert established.aged(-5) == established and Rating(1900.0, 60.0).aged(10**13) == Rating(1900.0, 60.0)


def test_a_game_ages_both_ratings_to_its_end_before_it_counts() -> None:
    day = 86_400_000
    idle, active = Rating(1700.0, 60.0, 0.06, 40, 0), Rating(1700.0, 60.0, 0.06, 40, 200 * day)
    after_idle, _ = rate_game(idle, active, 1.0, 200 * day)
    after_active, _ = rate_game(active, active, 1.0, 200 * day)
    assert after_idle.rating > after_active.rating  # the more uncertain rating moves more
    assert after_idle.last_ms == after_active.last_ms == 200 * day
    by_hand = rate_game(idle.aged(200 * day), active, 1.0)[0]  # aged first, then the game
    assert after_idle == dataclasses.replace(by_hand, last_ms=200 * day)


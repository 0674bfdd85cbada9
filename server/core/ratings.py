"""Ratings, pure: the categories, the :class:`Rating` value and one game's update.

The arithmetic is the ``glicko2`` package's (PyPI ``glicko2`` 2.1.0, Ryan Kirkman's Glicko-2 as
kept by Alexander Nordlund); nothing here re-derives Glickman's formulas, so what the store
keeps is exactly what the library says. Choices made around it:

- **One game is one rating period** (as on lichess): both players are updated right after each
  rated game, each from the other's rating *before* that game.
- **An idle rating grows uncertain** (:meth:`Rating.aged`): between games, Glickman's step 6
  for a player who does not compete, ``φ' = √(φ² + σ²·t)``, over ``t`` idle periods of
  :data:`IDLE_PERIOD_MS` (lichess's 0.21436 periods a day: about 4.7 days), up to the start's
  350; continuous in time as on lichess (the library's ``did_not_compete`` is the same step for
  one whole period, and the tests hold the two equal). A rating is aged to the game's end
  before a game updates it, and to now wherever it is shown: an established 1900 ± 60 not
  played for about a year is provisional again.
- **tau** is the library's class default, 0.5 (Glickman suggests 0.3 to 1.2,
  lichess uses 0.75). A new player starts at 1500 ± 350 with volatility 0.06.
- The library's volatility step uses the rating (mu) where Glickman's step 5 has the deviation
  (phi) in its function ``f``; measured against an independent implementation of the paper,
  the difference is below 0.002 rating points and 0.0001 volatility per game. We keep the
  library's numbers (a patched copy would be hand-written math) and say so here.
- **Categories** follow lichess's estimate of a game's length, ``initial + 40 × increment``
  seconds: bullet below 3 minutes, blitz below 8, rapid above (lichess's classical is part of
  rapid here); a clock of days per move is correspondence. A live game without a clock has
  no category: it is casual only (its length says nothing about the pace it was played at).
- **Provisional**: a deviation of 110 or more (lichess's ``provisionalDeviation``); such a
  rating is shown with a question mark and kept off the leaderboards.

>>> category_of(180, 2)
'blitz'
>>> Rating().display
'1500?'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import glicko2

from engine.clock import Clock
from engine.duel import Duel
from engine.events import ABORTED, Outcome

BULLET = "bullet"
BLITZ = "blitz"
RAPID = "rapid"
CORRESPONDENCE = "correspondence"
CATEGORIES = (BULLET, BLITZ, RAPID, CORRESPONDENCE)

MOVES_ESTIMATE = 40
"""Moves per player assumed by the length estimate (lichess's number for chess; measured duel
lengths may suggest another)."""
BULLET_BELOW_S = 180
BLITZ_BELOW_S = 480

START_RATING = 1500.0
START_DEVIATION = 350.0
START_VOLATILITY = 0.06
PROVISIONAL_DEVIATION = 110.0
IDLE_PERIOD_MS = round(86_400_000 / 0.21436)
"""One rating period of an idle player (lichess's ``ratingPeriodsPerDay`` = 0.21436)."""
GLICKO2_SCALE = 173.7178
"""Glickman's factor between the Glicko scale (rating, RD) and Glicko-2's (μ, φ)."""

SCORES = (0.0, 0.5, 1.0)
"""A game's score for one side: loss, draw, win."""


# ---------------------------------------------------------------------- categories


def category_of(initial_s: float | None, increment_s: float = 0.0, *, days: int | None = None) -> str | None:
    """The rating category of a game's time control, or ``None`` for an untimed live game.

    ``initial_s`` and ``increment_s``: a live clock in seconds; ``days``: a correspondence
    clock (days per move), which wins over the others. Plain values, so the category does not
    depend on how a clock is represented.

    >>> [category_of(60), category_of(120, 2), category_of(300, 5), category_of(600), category_of(None)]
    ['bullet', 'blitz', 'rapid', 'rapid', None]
    >>> category_of(None, days=3)
    'correspondence'
    """
    if days is not None:
        if days <= 0:
            raise ValueError(f"a correspondence clock needs days > 0, not {days!r}")
        return CORRESPONDENCE
    if initial_s is None:
        return None
    if initial_s <= 0 or increment_s < 0:
        raise ValueError(f"not a clock: {initial_s!r} + {increment_s!r}")
    estimate = initial_s + MOVES_ESTIMATE * increment_s
    if estimate < BULLET_BELOW_S:
        return BULLET
    if estimate < BLITZ_BELOW_S:
        return BLITZ
    return RAPID


def clock_category(clock: Clock | None) -> str | None:
    """:func:`category_of` for a room's live clock (``None``: untimed, no category)."""
    if clock is None:
        return None
    if clock.per_move:
        return category_of(None, days=clock.days)
    return category_of(clock.initial_ms / 1000, clock.increment_ms / 1000)


def rated_category(kind: str, rated: bool, clock: Clock | None) -> str | None:
    """The category a finished game counts in, or ``None`` when it is not rated: a casual game
    (``rated`` False: the players chose so, or a seat is a bot; a room does not know which
    player is a bot, so its creator decides), a game that is not a duel (the classic game has
    one player), or a live game without a clock."""
    if not rated or kind != Duel.kind:
        return None
    return clock_category(clock)


def score_of(outcome: Outcome) -> float | None:
    """Seat 0's score in a finished two-seat game: 1 for its win, 0 for its loss, ½ for a draw;
    ``None`` for a game aborted before both had moved (no result: it changes no rating)."""
    if outcome.termination == ABORTED:
        return None
    if outcome.winner is None:
        return 0.5
    return 1.0 if outcome.winner == 0 else 0.0


# ---------------------------------------------------------------------- ratings


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's Glicko-2 rating in one category, after ``games`` rated games."""

    rating: float = START_RATING
    deviation: float = START_DEVIATION
    volatility: float = START_VOLATILITY
    games: int = 0
    last_ms: int | None = None
    """When its last rated game ended (``None``: none yet, or rated before this was kept)."""
    record: tuple[int, int, int] = (0, 0, 0)
    """Won, drawn and lost of its rated games (counted since 2026-11-29: a rating kept before
    counts fewer than ``games``, :attr:`full_record` says whether they add up)."""

    @property
    def full_record(self) -> bool:
        """The record counts every rated game (a rating kept before it was counted does not)."""
        return sum(self.record) == self.games

    def aged(self, now_ms: int) -> Rating:
        """This rating at ``now_ms``: its deviation grown by the idle periods since its last game
        (Glickman's step 6 over ``t`` periods, up to :data:`START_DEVIATION`); the rating and
        the volatility do not change while nobody plays."""
        if self.last_ms is None or now_ms <= self.last_ms:
            return self
        periods = (now_ms - self.last_ms) / IDLE_PERIOD_MS
        phi = math.hypot(self.deviation / GLICKO2_SCALE, self.volatility * math.sqrt(periods))
        return replace(self, deviation=min(START_DEVIATION, phi * GLICKO2_SCALE))

    @property
    def provisional(self) -> bool:
        """Too uncertain to rank (lichess: deviation ≥ 110)."""
        return self.deviation >= PROVISIONAL_DEVIATION

    @property
    def display(self) -> str:
        """The rating as people see it: ``"1734"``, or ``"1500?"`` while provisional."""
        return f"{round(self.rating)}{'?' if self.provisional else ''}"

    def to_data(self) -> list[float | int | None]:
        data: list[float | int | None] = [self.rating, self.deviation, self.volatility, self.games]
        if self.record != (0, 0, 0):
            return [*data, self.last_ms, *self.record]
        return data if self.last_ms is None else [*data, self.last_ms]

    @classmethod
    def from_data(cls, data: list[float | int | None]) -> Rating:
        """Inverse of :meth:`to_data` (four fields: a rating stored before ``last_ms`` was
        kept, which ages from its next game on; five: before its record was counted); raises
        ``ValueError`` on malformed data."""
        try:
            rating, deviation, volatility, games, *rest = data
            if len(rest) not in (0, 1, 4):
                raise ValueError("a rating has 4, 5 or 8 fields")
            last = rest[0] if rest else None
            record = (int(rest[1]), int(rest[2]), int(rest[3])) if len(rest) == 4 else (0, 0, 0)  # type: ignore[arg-type]
            return cls(float(rating), float(deviation), float(volatility), int(games),  # type: ignore[arg-type]
                       None if last is None else int(last), record)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"malformed rating: {data!r}") from exc


DEFAULT = Rating()
"""Everybody's rating in a category before their first rated game there."""


def rate_game(a: Rating, b: Rating, score_a: float, ended_ms: int | None = None) -> tuple[Rating, Rating]:
    """Both ratings after one game between ``a`` and ``b`` in which ``a`` scored ``score_a``
    (1 win, 0.5 draw, 0 loss): each aged to the game's end (``ended_ms``; ``None``: not aged,
    and no end kept), then the library's update of each from the other's rating before the
    game (one game = one rating period), each with one more game counted."""
    if score_a not in SCORES:
        raise ValueError(f"a score is 0, 0.5 or 1, not {score_a!r}")
    if ended_ms is not None:
        a, b = a.aged(ended_ms), b.aged(ended_ms)
    return _after(a, b, score_a, ended_ms), _after(b, a, 1.0 - score_a, ended_ms)


def _after(player: Rating, opponent: Rating, score: float, ended_ms: int | None) -> Rating:
    updated = glicko2.Player(player.rating, player.deviation, player.volatility)
    updated.update_player([opponent.rating], [opponent.deviation], [score])
    won, drawn, lost = player.record
    record = (won + 1, drawn, lost) if score == 1.0 else (won, drawn + 1, lost) if score == 0.5 else (won, drawn, lost + 1)
    return Rating(updated.rating, updated.rd, updated.vol, player.games + 1, ended_ms, record)

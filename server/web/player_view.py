"""What the players' pages say, as plain values: a player's ratings with their recent history,
their games as list rows, a leaderboard's rows. Pure: no I/O; the time comes in as ``now_ms``.

The pages (:mod:`server.web.player_pages`) read the data; the templates (``player.html``,
``my_games.html``, ``ratings.html`` and the ``_games.html`` macros) decide the markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.clock import Clock

from ..core.ratings import CATEGORIES, DEFAULT, Rating
from ..core.summary import ABORTED_RESULT, DRAWN, LOST, WON
from ..store.players import RatingPoint
from .i18n import N_, _, date_text
from .status_view import duration_text, time_control_text
from .view_model import display_name, points_text, score_pair_text

RESULT_TEXT = {WON: N_("Won"), LOST: N_("Lost"), DRAWN: N_("Drawn"), ABORTED_RESULT: N_("Aborted")}
TERMINATION_TEXT = {"all_mines": N_("all mines found"), "resignation": N_("resignation"), "timeout": N_("on time"),
                    "aborted": N_("no moves"), "abandoned": N_("opponent left")}
LEFT_TEXT = N_("left the game")
"""How a game the player lost by leaving it ended (``abandoned`` names the opponent's leaving)."""
LEFT_DRAWN_TEXT = N_("a player left")
"""How a game called a draw after one player left ended: the list does not keep which one."""
CATEGORY_TEXT = {"bullet": N_("Bullet"), "blitz": N_("Blitz"), "rapid": N_("Rapid"),
                 "correspondence": N_("Correspondence")}
"""English labels (marked for the catalogs), translated where a row or a page is made."""


def category_text(category: str) -> str:
    """A rating category's name in the reader's language."""
    return _(CATEGORY_TEXT[category]) if category in CATEGORY_TEXT else category.title()


def terms_text(clock: dict[str, int] | None) -> str:
    """A summary's clock terms (``server.core.summary.clock_terms``) as players write them."""
    if clock is None:
        return time_control_text(None)
    if "days" in clock:
        return time_control_text(Clock.correspondence(clock["days"]))
    return time_control_text(Clock.new(clock["initial_ms"], clock["increment_ms"]))


@dataclass(frozen=True, slots=True)
class GameRow:
    """One game of a player's list."""

    id: str
    opponent: str
    opponent_href: str | None
    status: str
    your_turn: bool
    result: str | None
    """``won``/``lost``/``drawn``/``aborted`` (the CSS class too), ``None`` before the end."""
    result_text: str
    score: str
    """The player's score first: ``12 : −7`` (finished games; :func:`score_pair_text`)."""
    terms: str
    rated: bool
    when: str
    """Finished: the date (and how it ended); ongoing: how long the mover has, or since when it waits."""

    @property
    def href(self) -> str:
        return f"/g/{self.id}"


def game_row(entry: dict[str, Any], now_ms: int, owner: str | None = None) -> GameRow:
    """A :func:`server.core.summary.for_player` entry as a list row, for its player (``owner``
    ``None``: "Your turn", "Play") or for somebody else looking at ``owner``'s page: whose turn
    by name, and no "Play" (an outside probe saw "Your turn · Play" on another player's page)."""
    opponent = entry.get("opponent")
    seat = entry.get("seat")
    scores = entry.get("scores")
    score = ""
    if scores is not None and seat in (0, 1):
        score = score_pair_text(scores[seat], scores[1 - seat])
    status = entry["status"]
    result = entry.get("result")
    if status == "over":
        termination = (entry.get("outcome") or [""])[0]
        how = TERMINATION_TEXT.get(termination, "")
        if termination == "abandoned" and result != WON:
            how = LEFT_TEXT if result == LOST else LEFT_DRAWN_TEXT
        how = _(how) if how else ""
        when = date_text(entry.get("ended_ms")) + (f" \u00b7 {how}" if how and result != ABORTED_RESULT else "")
        text = _(RESULT_TEXT[result]) if result in RESULT_TEXT else ""
    elif status == "waiting":
        when = _("waiting since %(date)s") % {"date": date_text(entry.get("created_ms"))}
        text = _("Waiting for an opponent")
    else:
        due = entry.get("due_ms")
        span = {"span": duration_text(due - now_ms)} if due is not None else None
        if owner is not None:
            mover = display_name(owner) if entry.get("your_turn") else display_name(opponent["name"]) if opponent else ""
            text = _("%(name)s to move") % {"name": mover}
            when = _("%(span)s left for the move") % span if span else ""
        elif entry.get("your_turn"):
            text = _("Your turn")
            when = _("move within %(span)s") % span if span else ""
        else:
            text = _("Their turn")
            when = _("they have %(span)s") % span if span else ""
    return GameRow(
        id=entry["id"],
        opponent=display_name(opponent["name"]) if opponent else _("(open seat)"),
        opponent_href=f"/p/{opponent['id']}" if opponent and not opponent["id"].startswith("@") else None,
        status=status,
        your_turn=owner is None and bool(entry.get("your_turn")),
        result=result,
        result_text=text,
        score=score,
        terms=terms_text(entry.get("clock")),
        rated=bool(entry.get("rated")),
        when=when,
    )


@dataclass(frozen=True, slots=True)
class PointLook:
    date: str
    rating: str
    change: str
    """Against the point before (``+12``, ``−8``; empty for the first shown)."""
    game: str


@dataclass(frozen=True, slots=True)
class RatingLook:
    category: str
    label: str
    display: str
    """``1523`` or ``1500?`` (provisional)."""
    provisional: bool
    games: int
    deviation: int
    history: list[PointLook]
    """The newest first."""
    record: str = ""
    """Won / drawn / lost (``3 / 1 / 2``), or empty: no games, or a record counted since fewer games."""


def rating_looks(ratings: dict[str, Rating], histories: dict[str, Sequence[RatingPoint]],
                 shown: int = 10) -> list[RatingLook]:
    """Per category (in :data:`~server.core.ratings.CATEGORIES` order), the rating and its last
    ``shown`` points (``histories``: oldest first, as stored; one more than ``shown`` gives the
    oldest shown its change too; ``shown`` or fewer are the whole history, whose first point
    changed the starting rating)."""
    looks = []
    for category in CATEGORIES:
        rating = ratings[category]
        points = list(histories.get(category, ()))
        shown_points = []
        for i, point in enumerate(points):
            before = points[i - 1].rating if i > 0 else DEFAULT.rating if len(points) <= shown else None
            change = points_text(round(point.rating) - round(before)) if before is not None else ""
            shown_points.append(PointLook(date_text(point.ended_ms), str(round(point.rating)), change, point.game_id))
        record = " / ".join(str(n) for n in rating.record) if rating.games and rating.full_record else ""
        looks.append(RatingLook(category, category_text(category), rating.display,
                                rating.provisional, rating.games, round(rating.deviation),
                                list(reversed(shown_points[-shown:])), record))
    return looks


@dataclass(frozen=True, slots=True)
class LeaderRow:
    rank: int
    player_id: str
    name: str
    rating: str
    games: int

    @property
    def href(self) -> str:
        return f"/p/{self.player_id}"


def leader_rows(board: Sequence[tuple[str, Rating]], names: dict[str, str]) -> list[LeaderRow]:
    """A category's leaderboard (best first) with the players' names (a player without one is
    left out: gone)."""
    rows = []
    for player_id, rating in board:
        if player_id in names:
            rows.append(LeaderRow(len(rows) + 1, player_id, display_name(names[player_id]), rating.display,
                                  rating.games))
    return rows

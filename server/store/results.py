"""What finished games leave behind: ratings, the classic game's leaderboards and personal bests.

The room service hands every room whose commit ended the game to :meth:`Results.finished`;
when the committing process dies before it is done, another process's sweeper hands it again
(``server.store.sweeper``), so everything here is idempotent:

- a **rated** duel (:func:`rated_result`: rated, with a clock, and not aborted) moves both
  players' ratings in its category by :meth:`server.store.players.Ratings.apply_result`,
  exactly once per game whoever calls it how often (the script's game mark);
- a won classic game on a preset board is put on the all-time and the day's leaderboard of its
  preset and mode (``classic`` or ``no-guess``), ranked by time (equal times: the earlier win
  first, the same rank), and becomes the player's best if it is one: one script, idempotent (a
  result is unique per game), all keys in the ``{solo}`` slot. Custom boards are not ranked, nor
  is a game its first click won (nothing was played: the flood opened the whole board, 0 ms),
  nor a game played faster than a person can (:func:`humanly_possible`: a program's win);
- a game that is on an all-time board is **kept**: its room's keys (state and log: the replay
  and the fairness proof its row links to) lose their expiry; one on the day's board only lives
  at least as long as that board (:meth:`~.store.Store.record_solo`); a best alone keeps nothing
  (guests are free: every guest's first win is a best). Kept games are not let go again when a
  faster one pushes them off (see ``record_solo``).

A failure is logged and counted (``mineduel_settle_failures``), never raised: the game is
committed either way, and :meth:`Results.finished` says whether to try again.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from engine.classic import PRESETS
from engine.events import CLEARED

from ..core.computer import level_of
from ..core.ratings import rated_category, score_of
from ..core.room import Room
from ..logs import event
from ..metrics import Metrics
from ..outage import redis_down
from .players import Players, Ratings
from .store import Store

log = logging.getLogger("mineduel.results")

MODES = ("classic", "no-guess")
DEFAULT_PRESET = "beginner"
"""The leaderboard shown when none is named (the page and ``GET /api/v1/leaderboard``): the
board most people play."""
KEEP = 500
DAY_TTL_S = 3 * 86_400

MAX_CLICKS_PER_S = 15
"""The fastest average click rate a ranked win may have, counted after the first click (which
starts the timer at 0): more than a top player ever sustains over a game. People top out around
10 to 15 clicks a second in bursts, and a whole Expert game at world-record pace (about 27 s) is
about 7 to 8 clicks a second; every click also waits for the board to answer and be read. A
program playing over the API clicked at 300 a second (a no-guess Expert in 0.467 s), and one
at 18.5 a second took first place at 2.5 times the world record's pace (an outside probe)."""
MAX_BV_PER_S = {"beginner": 20, "intermediate": 12, "expert": 10}
"""The fastest 3BV a second a ranked win may have on each preset (the 3BV left after the first
click, which opens one area at 0 s): chords and flags let a person clear more than one 3BV per
click, yet the best Expert games reach about 7 to 8 3BV/s and the best Intermediate ones about
9; on Beginner a few clicks decide the figure (a board of 3BV 2 cleared in about half a
second), so its bound is loose. Generous on purpose: a person must never be kept off; what is
kept off is what no person can do. A program playing at a person's pace is not told apart by
its pace."""


@dataclass(frozen=True, slots=True)
class SoloResult:
    room: str
    player_id: str
    name: str
    preset: str
    mode: str
    time_ms: int
    three_bv: int
    clicks: int
    ended_ms: int

    @property
    def bv_per_s(self) -> float:
        return self.three_bv / max(self.time_ms, 1) * 1000

    @property
    def humanly_possible(self) -> bool:
        return humanly_possible(self.time_ms, self.three_bv, self.clicks, self.preset)

    @property
    def efficiency(self) -> float:
        """3BV per click made (1.0 = no click wasted)."""
        return self.three_bv / max(self.clicks, 1)

    def to_json(self) -> str:
        """The leaderboard's member: ``ended_ms`` first, so that equal times (equal scores) are
        ordered by the member's text as the earlier win first (13 digits until the year 2286);
        the rest sorted. Results written before had ``clicks`` first: they sort before these,
        and they are the older ones."""
        fields = asdict(self)
        ordered = {"ended_ms": fields.pop("ended_ms"), **dict(sorted(fields.items()))}
        return json.dumps(ordered, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "SoloResult":
        return cls(**json.loads(text))


def day_of(ms: int) -> str:
    """``d<yyyymmdd>`` of a UTC time in ms (the period key of a day's leaderboard)."""
    return "d" + time.strftime("%Y%m%d", time.gmtime(ms / 1000))


def humanly_possible(time_ms: int, three_bv: int, clicks: int, preset: str) -> bool:
    """Whether a win of ``clicks`` clicks (all kinds: reveals, flags, chords) over a ``preset``
    board of ``three_bv`` took long enough for a person: the clicks after the first at most
    :data:`MAX_CLICKS_PER_S`, and the 3BV after the first click's at most the preset's
    :data:`MAX_BV_PER_S` (a board of no preset: the loosest), on average over the ``time_ms``
    from the first click to the last. The one place the leaderboards' pace rule lives:
    :func:`solo_result` applies it when a game is recorded, and :class:`Results` again when
    boards and bests are read (entries made before the rule, or before it was made tighter).

    >>> humanly_possible(30_000, 146, 160, "expert")  # an Expert at world-record pace
    True
    >>> humanly_possible(467, 146, 146, "expert")  # a program's Expert: 312 clicks a second
    False
    >>> humanly_possible(20, 3, 3, "beginner")  # a Beginner in 0.02 s
    False
    """
    bound = MAX_BV_PER_S.get(preset, max(MAX_BV_PER_S.values()))
    return (max(clicks - 1, 0) * 1000 <= MAX_CLICKS_PER_S * time_ms
            and max(three_bv - 1, 0) * 1000 <= bound * time_ms)


def best_per_player(rows: Sequence[SoloResult], count: int) -> list[SoloResult]:
    """The first ``count`` of a board's ``rows`` (fastest first) at a person's pace, each
    player's best alone: a board ranks players, so one player's many fast games (a strong
    player's, or a program's under one guest) do not push everybody else off it."""
    seen: set[str] = set()
    out: list[SoloResult] = []
    for row in rows:
        if row.player_id in seen or not row.humanly_possible:
            continue
        seen.add(row.player_id)
        out.append(row)
        if len(out) == count:
            break
    return out


def solo_result(room: Room) -> SoloResult | None:
    """The leaderboard entry of a finished classic room: a win on a preset board at a person's
    pace (:func:`humanly_possible`), else ``None``. The game's own record and replay are the
    same either way."""
    game: Any = room.game
    outcome = game.outcome
    if room.kind != "classic" or outcome is None or outcome.termination != CLEARED or room.players[0] is None:
        return None
    settings = game.settings
    if settings["preset"] not in PRESETS or room.started_ms is None or room.ended_ms is None:
        return None
    view = game.view(0)
    if sum(view.clicks) <= 1:  # won by its first click: nothing was played
        return None
    result = SoloResult(room.id, room.players[0].id, room.players[0].name, settings["preset"],
                        "no-guess" if settings["no_guess"] else "classic", room.ended_ms - room.started_ms,
                        view.three_bv, sum(view.clicks), room.ended_ms)
    return result if result.humanly_possible else None


def rated_result(room: Room) -> tuple[str, tuple[str, str], float] | None:
    """What a finished room does to ratings: ``(category, (seat 0's id, seat 1's id), seat 0's
    score)``, or ``None`` when it is not rated (casual, untimed, against the computer, not a
    duel) or has no result (aborted, not over), or ended before both seats had made a move: a
    resignation (or a left game claimed) without a game played would be a rated win for nothing,
    and a player with a second guest could farm rating with it (the abort's own rule, which
    lichess applies too: no game, no rating)."""
    outcome = room.game.outcome
    category = rated_category(room.kind, room.rated, room.clock)
    if category is None or outcome is None or room.ended_ms is None or len(room.players) != 2:
        return None
    if not room.game.every_seat_moved:  # type: ignore[attr-defined]  (rated games are duels)
        return None
    first, second = room.players
    if first is None or second is None or level_of(first) is not None or level_of(second) is not None:
        return None
    score = score_of(outcome)
    if score is None:
        return None
    return category, (first.id, second.id), score


def ranks(results: Sequence[SoloResult]) -> list[int]:
    """Each result's rank on a leaderboard ordered by time: times equal to the hundredth of a
    second (as they are shown: RULES.md) share the rank of the first of them, and the next
    time's rank counts them all (1, 2, 2, 4)."""
    out: list[int] = []
    for i, result in enumerate(results):
        tied = i and result.time_ms // 10 == results[i - 1].time_ms // 10
        out.append(out[-1] if tied else i + 1)
    return out


class Results:
    def __init__(self, store: Store, metrics: Metrics, ratings: Ratings | None = None,
                 players: Players | None = None) -> None:
        self.store = store
        self.metrics = metrics
        self.ratings = ratings
        """Where rated games are applied (``None``: this service rates nothing)."""
        self.players = players
        """Where the leaderboards read the names registered now (``None``: the names played under)."""

    async def finished(self, room: Room) -> bool:
        """``room``'s game is over: record what it leaves behind. True when all of it is
        recorded (now or before); False when something failed (logged and counted, never
        raised: the caller tries again later, which is safe)."""
        rated = await self._rate(room)
        result = solo_result(room)
        if result is None:
            return rated
        try:
            stored = (await self.store.solo_bests(result.player_id)).get(f"{result.preset}:{result.mode}")
            await self.store.record_solo(result.preset, result.mode, day_of(result.ended_ms), result.player_id,
                                         result.to_json(), result.time_ms, KEEP, DAY_TTL_S, room_id=room.id,
                                         day_until_ms=result.ended_ms + 86_400_000 + DAY_TTL_S * 1000,
                                         replace_best=stored is not None and not SoloResult.from_json(stored).humanly_possible)
        except Exception as exc:
            redis_down(self.metrics, "results", exc, room=room.id)
            self.metrics.settle_failures.labels("solo").inc()
            return False
        return rated

    async def _rate(self, room: Room) -> bool:
        rated = rated_result(room)
        if rated is None or self.ratings is None:
            return True
        category, players, score = rated
        assert room.ended_ms is not None  # rated_result checked
        try:
            applied = await self.ratings.apply_result(room.id, category, players, score, room.ended_ms)
        except ValueError:  # not a game that can be rated: nothing to try again
            log.exception("game %s cannot be rated", room.id)
            return True
        except Exception as exc:  # Redis away, or the players' ratings kept changing (RatingBusy)
            self.metrics.settle_failures.labels("rating").inc()
            event(log, "rating_failed", level=logging.WARNING, room=room.id, category=category,
                  error=type(exc).__name__)
            return False
        if applied:
            event(log, "rating_applied", room=room.id, category=category, score=score)
        return True

    async def leaderboard(self, preset: str, mode: str, period: str, count: int = 50) -> list[SoloResult]:
        """``period``: ``all``, ``today`` or ``d<yyyymmdd>``. Each player once, with their best
        (:func:`best_per_player`; the board keeps the best :data:`KEEP` results), under the name
        registered now (:func:`ranks` gives the ranks)."""
        if period == "today":
            period = day_of(time.time_ns() // 1_000_000)
        found = [SoloResult.from_json(text) for text in await self.store.solo_board(preset, mode, period, count)]
        rows = best_per_player(found, count)
        if len(rows) < count == len(found):  # a player's slower games, or entries the pace rule keeps off
            found = [SoloResult.from_json(text) for text in await self.store.solo_board(preset, mode, period, KEEP)]
            rows = best_per_player(found, count)
        return await self._named(rows)

    async def _named(self, rows: list[SoloResult]) -> list[SoloResult]:
        if self.players is None or not rows:
            return rows
        names = await self.players.names_of(sorted({r.player_id for r in rows}))
        return [replace(r, name=names.get(r.player_id, r.name)) for r in rows]

    async def bests(self, player_id: str) -> dict[tuple[str, str], SoloResult]:
        """The player's best result per ``(preset, mode)`` (none where the best was made before the
        pace rule at a pace no person has: :func:`humanly_possible`)."""
        found = await self.store.solo_bests(player_id)
        bests = {tuple(key.split(":", 1)): SoloResult.from_json(text) for key, text in found.items()}
        return {key: r for key, r in bests.items() if r.humanly_possible}  # type: ignore[misc]

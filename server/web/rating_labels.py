"""The ratings a rated room shows beside its players' names ("Anna (1523)", "Ben (1500?)").

A room's player cards are rendered for every frame of the room (once per viewer class per
version, by the hub's fan-out), and a frame must not cost a Redis read. So each process keeps
the labels it last read, per (player, category), in a bounded map (:class:`RatingLabels`, one
per app, held by the HTML codec): the room page reads the room's players' ratings in one round
trip (``Ratings.ratings_many``) and remembers them before rendering, a browser socket does the
same when it connects or when its room gets a player the map does not know yet, and every
frame then renders from memory (:meth:`RatingLabels.of`, plain strings handed to the view
model). A label is the rating as last read. A finished rated game's cards show what it did
("1512, +12"): read once per process and game (:meth:`RatingLabels.load_change`: by the page of a
finished game, and by a browser socket's heartbeat in the seconds after the end, until the
result is applied), then from memory (an outside probe saw "(1500?)" stay until a reload, and
no change ever).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ..core.computer import level_of
from ..core.ratings import Rating, rated_category
from ..core.room import Room, Status
from ..store.results import rated_result
from .view_model import points_text

CAPACITY = 50_000
"""Labels kept per process (the least recently read go first)."""

CHANGES_KEPT = 4_096
"""Finished games whose cards' changes are kept per process (the oldest go first)."""

CHANGE_ASK_S = 1.0
"""How often a process asks again for a finished game's change not applied yet."""

CHANGE_WAIT_MS = 60_000
"""How long after a game's end its sockets ask for its change (the result is applied right
after the end; later, only a page load asks)."""


class RatingLabels:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._known: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._changed: OrderedDict[str, tuple[str | None, ...]] = OrderedDict()
        """Per finished rated room: per seat, the label with the game's change."""
        self._asked: dict[str, float] = {}
        """When this process last asked for a room's change (monotonic s), until it is known."""

    @staticmethod
    def people(room: Room) -> tuple[str | None, list[str]]:
        """The room's rating category (``None``: not rated) and the ids of its seated people."""
        category = rated_category(room.kind, room.rated, room.clock)
        if category is None:
            return None, []
        return category, [p.id for p in room.players if p is not None and level_of(p) is None]

    def remember(self, category: str, ratings: dict[str, Rating]) -> None:
        for player_id, rating in ratings.items():
            key = (player_id, category)
            self._known[key] = rating.display
            self._known.move_to_end(key)
        while len(self._known) > self.capacity:
            self._known.popitem(last=False)

    def missing(self, room: Room) -> list[str]:
        """The seated people of a rated ``room`` whose label is not known here."""
        category, ids = self.people(room)
        return [pid for pid in ids if (pid, category) not in self._known]

    def of(self, room: Room) -> tuple[str | None, ...]:
        """Per seat, the label to show beside the name (``None``: none: a casual game, an open
        seat, a computer, or a rating not read yet); a finished game's with its change once
        known. Memory only."""
        if room.status is Status.OVER:
            changed = self._changed.get(room.id)
            if changed is not None:
                return changed
        category, _ids = self.people(room)
        if category is None:
            return tuple(None for _ in room.players)
        return tuple(None if p is None else self._known.get((p.id, category)) for p in room.players)

    async def load(self, ratings: Any, room: Room, *, fresh: bool = True) -> None:
        """Read the ratings of ``room``'s people in one round trip (``ratings``: the app's
        :class:`~server.store.players.Ratings`) and remember them; only the unknown ones
        unless ``fresh``. Nothing to read for a casual room."""
        category, ids = self.people(room)
        wanted = ids if fresh else self.missing(room)
        if category is None or not wanted:
            return
        found = await ratings.ratings_many(wanted)
        self.remember(category, {pid: by_category[category] for pid, by_category in found.items()})

    def change_wanted(self, room: Room, now_ms: int, now_s: float) -> bool:
        """Whether a socket's heartbeat should ask for ``room``'s change now: a rated game over
        less than :data:`CHANGE_WAIT_MS` ago whose change is not known, not asked for in the last
        :data:`CHANGE_ASK_S` by this process."""
        if room.status is not Status.OVER or room.id in self._changed or room.ended_ms is None:
            return False
        if now_ms - room.ended_ms > CHANGE_WAIT_MS or now_s - self._asked.get(room.id, -CHANGE_ASK_S) < CHANGE_ASK_S:
            return False
        return self.people(room)[0] is not None and rated_result(room) is not None

    async def load_change(self, ratings: Any, room: Room, now_s: float) -> bool:
        """Read what finished ``room``'s rated game did to its players' ratings and remember it
        (their new ratings too); False while the result is not applied (or the game is not
        rated: an aborted one)."""
        if room.id in self._changed:
            return True
        category, ids = self.people(room)
        if category is None or not ids or rated_result(room) is None:
            return False
        self._asked[room.id] = now_s
        found = await ratings.changes(room.id, category, ids)
        if found is None:
            return False
        self.remember(category, {pid: rating for pid, (rating, _delta) in found.items()})
        self._changed[room.id] = tuple(
            None if p is None or p.id not in found else f"{found[p.id][0].display}, {points_text(round(found[p.id][1]))}"
            for p in room.players)
        self._asked.pop(room.id, None)
        while len(self._changed) > CHANGES_KEPT:
            self._changed.popitem(last=False)
        while len(self._asked) > CHANGES_KEPT:
            self._asked.pop(next(iter(self._asked)))
        return True

"""The ratings a rated room shows beside its players' names ("Anna (1523)", "Ben (1500?)").

A room's player cards are rendered for every frame of the room (once per viewer class per
version, by the hub's fan-out), and a frame must not cost a Redis read. So each process keeps
the labels it last read, per (player, category), in a bounded map (:class:`RatingLabels`, one
per app, held by the HTML codec): the room page reads the room's players' ratings in one round
trip (``Ratings.ratings_many``) and remembers them before rendering, a browser socket does the
same when it connects or when its room gets a player the map does not know yet, and every
frame then renders from memory (:meth:`RatingLabels.of`, plain strings handed to the view
model). A label is the rating as last read: after a game it shows the new rating from the next
read on (a page load, a reconnect).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ..core.computer import level_of
from ..core.ratings import Rating, rated_category
from ..core.room import Room

CAPACITY = 50_000
"""Labels kept per process (the least recently read go first)."""


class RatingLabels:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._known: OrderedDict[tuple[str, str], str] = OrderedDict()

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
        seat, a computer, or a rating not read yet). Memory only."""
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

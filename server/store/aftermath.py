"""What a committed change leaves behind outside its room: the players' game lists, the end's
settling, the lobby's list — and, for a rematch room whose link lost its race, its removal.

After a commit: the players' game lists (:mod:`~.player_games`) when the status or the seats
changed (a move writes nothing there), and what an end leaves behind (:meth:`Aftermath.settle`:
ratings, leaderboards, the finished lists). The commit that ends a game leaves the room in its
due index (``clocks:{<tag>}``), due :data:`SETTLE_GRACE_MS` later (the same atomic write as the
commit: nothing more on the move path); settling drops that entry, so an end whose process dies
or fails before it is settled is settled by any process's sweeper (everything settled is
idempotent). The finished room's later commits (a rematch offered, declined or linked) leave
that entry as it is and settle nothing: an end not settled yet stays due, a settled one is not
settled again. Failures here are logged and counted, never raised: the commit stands.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..core.room import Room, Status
from ..core.summary import index_changed
from ..logs import event
from ..metrics import Metrics
from ..outage import redis_down
from .player_games import PlayerGames
from .results import Results
from .store import Store

log = logging.getLogger("mineduel.rooms")

SETTLE_GRACE_MS = 10_000
"""A finished room's end is left to the sweeper this long after its commit (the committing
process settles it at once and drops the entry; a sweeper finds it only if that failed)."""


class Aftermath:
    def __init__(self, store: Store, metrics: Metrics, results: Results, games: PlayerGames,
                 now_ms: Callable[[], int]) -> None:
        self.store = store
        self.now_ms = now_ms
        self.metrics = metrics
        self.results = results
        """Told of every commit that ends a game (ratings, leaderboards)."""
        self.games = games
        """The players' game lists, written after every commit that changes what they keep."""

    async def after(self, old: Room | None, new: Room, settle_at: int | None) -> None:
        """What a successful commit leaves behind: the game lists (when they change) and, for the
        commit that ended the game, :meth:`settle`. Never raises: the commit stands whatever
        fails here."""
        try:
            if settle_at is not None:
                await self.settle(new, settle_at)
            elif index_changed(old, new):
                await self.games.record(new)
        except Exception as exc:  # Redis away after the commit: the sweeper settles an end later
            self.metrics.redis_errors.labels("settle").inc()
            event(log, "settle_failed", level=logging.WARNING, room=new.id, v=new.version, error=type(exc).__name__)

    async def settle(self, room: Room, due_ms: int | None = None) -> bool:
        """Everything the end of ``room``'s game leaves behind: ratings and leaderboards
        (:meth:`Results.finished`) and the players' finished lists. Idempotent, so any process
        may do it again (the sweeper does, for a finished room still in its due index at
        ``due_ms``). True when all of it is done; then the due entry is dropped (if it is still
        ``due_ms``: a later commit's stays)."""
        done = await self.results.finished(room)
        done = await self.games.record(room) and done
        if done and due_ms is not None:
            await self.store.drop_clock(room.id, due_ms)
        return done

    async def list(self, room: Room, *, again: bool = False) -> None:
        """``room`` on the lobby's list: every rematch, however it was accepted (a page's form,
        the API, a socket's frame), and a game's first room when whoever asked for it says so,
        unless the room is not ``listed`` (a private challenge, and its rematches). A game of one
        seat (a classic game's restart) is nobody's challenge or match, and a finished game is
        nobody's either: never listed. ``again``: one of its players is connected to it again
        (:meth:`~.hub.Hub.attach`), so a room the lobby's read took off the list because its
        people had left goes back on it (only if it is off: ``Store.relist_room``), as listed
        now: by its creation time, a game older than the list's 7 days (a correspondence game)
        was put back on each connection and trimmed by the next listing. A
        convenience: the game exists either way, so a failure is counted and logged, never
        raised (but a bug's)."""
        if len(room.players) < 2 or not room.listed or room.status is Status.OVER:
            return
        try:
            if again:
                await self.store.relist_room(room.id, self.now_ms())
            else:
                await self.store.list_room(room.id, room.created_ms)
        except Exception as exc:
            if not redis_down(self.metrics, "list", exc, room=room.id):
                raise

    async def discard(self, room: Room) -> None:
        """Delete a rematch room that was never linked. Redis away: it stays unlisted until its
        first move's window aborts it (or it expires)."""
        try:
            await self.store.discard_room(room.id)
        except Exception as exc:
            if not redis_down(self.metrics, "discard", exc, room=room.id):
                raise

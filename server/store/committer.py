"""One decision made durable: the room's stored form, the compare-and-set commit (which
publishes), and its accounting. What the room service does with a :class:`~server.core.commands.Commit`
once the core has decided it, in one place.

A commit succeeds only if the stored version is still the one the change was decided on; the
committing process names itself (a nonce in the commit message, its link channel) so that a
commit nobody else listens for is handed straight to this process's connections
(:meth:`~.room_feed.RoomFeed.committed_here`) instead of coming back over pub/sub.

Retention: every commit renews the expiry of the room's keys — ``finished_ttl_s`` once the
game is over, ``idle_ttl_s`` before; 0 keeps them forever. A finished classic game's later
commits leave it as it is (a leaderboard may have kept the game: ``Retention.ttl_s``).

Operations: each commit is counted and logged as one ``event=<kind>_committed`` line (room,
version, seat, player id, action), each lost compare-and-set as ``event=commit_conflict``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from ..core.commands import Commit
from ..core.due import next_due
from ..core.room import Room, Status
from ..logs import event
from ..metrics import Metrics
from .cache import RoomCache
from .keys import pack
from .messages import commit_message
from .outage_log import OutageLog
from .room_feed import RoomFeed
from .store import KEEP_DUE, Store
from .stored_form import StoredForm

log = logging.getLogger("mineduel.rooms")

DAY_S = 86_400


@dataclass(frozen=True, slots=True)
class Retention:
    """How long a room's keys live after its last change (0 = forever)."""

    finished_ttl_s: int = 30 * DAY_S
    idle_ttl_s: int = 7 * DAY_S

    def ttl_s(self, room: Room, after_end: bool = False) -> int | None:
        """The expiry a commit of ``room`` gives its keys (``None``: leave it as it is).
        ``after_end``, a later commit of a finished game: a classic game's (the link to its
        restart) leaves it, since its end set it and its result may have kept the game since
        (on a leaderboard or its player's bests: ``Store.record_solo``), which a renewal would undo."""
        if after_end and room.kind == "classic":
            return None
        ttl = self.finished_ttl_s if room.status is Status.OVER else self.idle_ttl_s
        return ttl or None


class Committer:
    def __init__(self, store: Store, cache: RoomCache, metrics: Metrics, retention: Retention, outages: OutageLog,
                 feed: RoomFeed | None) -> None:
        self.store = store
        self.cache = cache
        self.metrics = metrics
        self.retention = retention
        self.outages = outages
        self.feed = feed
        """Where a commit nobody else heard of goes (this process's connections to the room);
        ``None``: every commit is published to whoever listens, this process included."""
        self.stored = StoredForm()
        self.conflicts = 0
        """Compare-and-sets lost (for the stats)."""
        self._committed: dict[str, Any] = {}  # commit kind -> its moves_committed counter

    async def commit(self, expected: int | None, commit: Commit, started: float | None = None,
                     settle_at: int | None = None, after_end: bool = False) -> bool:
        """Commit ``commit`` if the stored version is still ``expected``. The room's place in
        due index: when something falls due (``next_due``); for the commit that ends the game
        ``settle_at``, when a sweeper settles its end unless this process has; ``after_end``
        (a later commit of the finished room): as it is, so an end not settled yet stays due
        and a settled one is not settled again."""
        new = commit.room
        data = self.stored.pack(new)
        nonce = self.cache.announce(new, commit.events, started)
        message = commit_message(new.version, data, commit.events, nonce)
        ok = published = False
        feed = self.feed
        try:
            ok, found, published = await self.outages.reaching(self.store.commit(
                new.id, expected, new.version, data, pack([new.version, commit.kind, list(commit.detail)]), message,
                KEEP_DUE if after_end else settle_at if settle_at is not None else next_due(new),
                self.retention.ttl_s(new, after_end), self.cache.own_channel(new.id) if feed is not None else "",
            ))
        finally:
            if not published:
                self.cache.withdraw(nonce)
        if ok and not published and feed is not None:
            feed.committed_here(new, commit.events, started)
        if ok:
            self._count(commit)
        else:
            self._conflict(commit, expected, found)
        return ok

    def _count(self, commit: Commit) -> None:
        new, seat = commit.room, commit.seat
        counter = self._committed.get(commit.kind)
        if counter is None:  # labels() locks and builds a key: look each child up once
            counter = self._committed[commit.kind] = self.metrics.moves_committed.labels(commit.kind)
        counter.inc()
        if log.isEnabledFor(logging.INFO):  # (the arguments alone cost ~5k instructions a move)
            event(log, f"{commit.kind}_committed", room=new.id, v=new.version, kind=commit.kind, seat=seat,
                  player=_player_id(commit),
                  action=commit.detail[1] if commit.kind == "move" and len(commit.detail) > 1 else None,
                  status=new.status.value)
        if commit.given_ms:  # to the seat whose clock ran: the mover's (before the move pressed it), or a Tick's
            given_to = commit.seat if commit.seat is not None else new.clock.running if new.clock else None
            event(log, "clock_given_back", room=new.id, v=new.version, seat=given_to, given_ms=commit.given_ms)

    def _conflict(self, commit: Commit, expected: int | None, found: int | None) -> None:
        self.conflicts += 1
        self.metrics.commit_conflicts.inc()
        event(log, "commit_conflict", room=commit.room.id, v=commit.room.version, expected=expected, found=found,
              kind=commit.kind, seat=commit.seat, player=_player_id(commit))


def _player_id(commit: Commit) -> str | None:
    """The id of the player in the commit's seat, if it names one."""
    seat, players = commit.seat, commit.room.players
    player = players[seat] if seat is not None and 0 <= seat < len(players) else None
    return player.id if player is not None else None

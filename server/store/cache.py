"""The latest room per watched room id, and the commits this process has in flight.

One :class:`RoomCache` per process, owned by the app's lifespan and handed at construction
to both sides that use it:

- the **hub** keeps it current: it watches the rooms that have local connections, marks a
  room live while its pub/sub subscription is confirmed (so every later version reaches it),
  offers each version it learns, and claims a local commit when its pub/sub message comes
  back (that Room need not be decoded again);
- the **room service** reads :meth:`latest` instead of loading from Redis, and announces each
  commit it is about to make (:meth:`announce`), withdrawing it if the compare-and-set lost
  or nobody else heard of it (then it hands the new version to the room feed itself); it names
  :attr:`link` to the commit script for a live room (:meth:`own_channel`).

Only an optimisation: the commit's compare-and-set catches a cache that is behind.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass

from engine import Event

from ..core.room import Room
from .keys import link_channel

PENDING_LIMIT = 1024


@dataclass(frozen=True, slots=True)
class LocalCommit:
    """A commit of this process, kept until its pub/sub message comes back."""

    room: Room
    events: tuple[Event, ...]
    started: float | None
    """``time.perf_counter()`` when the move arrived (for the move-to-push latency), if timed."""


class RoomCache:
    def __init__(self, pending_limit: int = PENDING_LIMIT) -> None:
        self._rooms: dict[str, Room | None] = {}  # watched room id -> latest known Room
        self._live: set[str] = set()
        self._pending: OrderedDict[bytes, LocalCommit] = OrderedDict()
        self._pending_limit = pending_limit
        self._prefix = secrets.token_bytes(6)  # this process's nonces, unlike any other's
        self._count = 0
        self.link = link_channel(self._prefix.hex())
        """The channel this process's pub/sub link subscribes to beside its rooms' (its
        liveness, for the commit script: :func:`~.keys.link_channel`)."""

    # ------------------------------------------------------------------ the hub's side

    def watch(self, room_id: str) -> None:
        """Start keeping ``room_id`` (not live until its subscription is confirmed)."""
        self._rooms.setdefault(room_id, None)

    def unwatch(self, room_id: str) -> None:
        self._rooms.pop(room_id, None)
        self._live.discard(room_id)

    def set_live(self, room_id: str, live: bool) -> None:
        """Every version of ``room_id`` reaches the hub (True), or may not (the link dropped)."""
        if live and room_id in self._rooms:
            self._live.add(room_id)
        else:
            self._live.discard(room_id)

    def set_all_stale(self) -> None:
        self._live.clear()

    def held(self, room_id: str) -> Room | None:
        """The newest Room known for a watched room, live or not."""
        return self._rooms.get(room_id)

    def offer(self, room: Room) -> Room:
        """Keep ``room`` if it is newer than the one held (for a watched room); returns the held one."""
        held = self._rooms.get(room.id)
        if room.id in self._rooms and (held is None or held.version < room.version):
            self._rooms[room.id] = held = room
        return held if held is not None else room

    def claim(self, nonce: bytes) -> LocalCommit | None:
        """This process's commit behind ``nonce``, if it announced one (once)."""
        return self._pending.pop(nonce, None)

    # ------------------------------------------------------------------ the room service's side

    def latest(self, room_id: str) -> Room | None:
        """The latest Room of ``room_id`` known without asking Redis, while it is live."""
        return self._rooms.get(room_id) if room_id in self._live else None

    def own_channel(self, room_id: str) -> str:
        """What the commit script is told of this process's subscription to ``room_id``'s
        channel: :attr:`link` while the room is live (its subscription confirmed on the link and
        no unsubscribe sent since), else ``''`` (not counted: the message is published to
        anyone subscribed, this process included)."""
        return self.link if room_id in self._live else ""

    def announce(self, room: Room, events: tuple[Event, ...], started: float | None) -> bytes:
        """A fresh nonce for the commit of ``room``, remembered (if the room is watched: only
        then does its message come back) until :meth:`claim` or :meth:`withdraw`."""
        self._count += 1
        nonce = self._prefix + self._count.to_bytes(8, "big")
        if room.id in self._rooms:
            self._pending[nonce] = LocalCommit(room, events, started)
            while len(self._pending) > self._pending_limit:
                self._pending.popitem(last=False)
        return nonce

    def withdraw(self, nonce: bytes) -> None:
        """The commit behind ``nonce`` lost its compare-and-set: nothing will come back."""
        self._pending.pop(nonce, None)

    # ------------------------------------------------------------------ for metrics

    def pending(self) -> int:
        return len(self._pending)

    def rooms_held(self) -> int:
        return sum(room is not None for room in self._rooms.values())

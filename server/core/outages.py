"""Clock time given back after a store outage: the rule, pure.

While the server cannot reach its store no move can be committed, yet a running clock's time
is counted from :attr:`engine.clock.Clock.since_ms` in wall-clock time, so it ran on (10:00 →
9:24 during an outage) and a flag could even fall "during" it. The rule (docs/PROTOCOL.md,
"Clock time during an outage"):

    The time of the running seat's clock that lies inside an outage is given back: its time
    runs again from the outage's end with what it had left at the outage's start (or at its
    last move, if that came later). Time before the clock's last start is never given back,
    so each instant is given back at most once, however many processes saw the outage; a
    flag that fell before the outage stays fallen; the waiting seat's time never changes.

An :class:`Outage` is what a server process observed (``server.store.outage_log``): from the
making of its first failed store call (not before the store last answered) to its first
successful one again. The shell passes those it knows
to :func:`~server.core.decide.decide`, which gives the time back (:func:`resumed`) before it
decides anything else, so the first commit on a room after an outage — a move, a timeout
check, or a ``Tick`` the hub sends each watched room when the store is back — carries the
refund, and no timeout is declared for time inside the outage. The refund moves
``since_ms``, which the commit's compare-and-set protects: a second process deciding on the
committed room finds nothing more to give back.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .room import Room, Status


@dataclass(frozen=True, slots=True, order=True)
class Outage:
    """A span of wall-clock time (ms) during which the store could not be reached."""

    start_ms: int
    end_ms: int

    def __post_init__(self) -> None:
        if self.end_ms < self.start_ms:
            raise ValueError(f"an outage ends after it starts: {self.start_ms} > {self.end_ms}")


def resumed(room: Room, outages: Iterable[Outage], now_ms: int) -> tuple[Room, int]:
    """``room`` with its running clock's time inside ``outages`` (up to ``now_ms``) given back,
    and how much was given back (ms by which the running seat's flag moved; 0: ``room`` itself).

    >>> from engine.clock import Clock
    >>> from engine import Duel
    >>> import random
    >>> from server.core.room import Player
    >>> players = (Player("a", "Anna"), Player("b", "Ben"))
    >>> room = Room("r", 5, Duel.new(random.Random(1)), players, Clock.new(600_000).start(0, 0), 0)
    >>> after, given = resumed(room, [Outage(100_000, 136_000)], now_ms=200_000)
    >>> given, after.clock.remaining(0, 200_000)
    (36000, 436000)
    >>> resumed(after, [Outage(100_000, 136_000)], now_ms=200_000)[1]
    0
    """
    clock = room.clock
    if clock is None or clock.running is None or room.status is not Status.PLAYING:
        return room, 0
    paused = clock
    for outage in sorted(outages):
        paused = paused.pause(outage.start_ms, min(outage.end_ms, now_ms))
    if paused == clock:
        return room, 0
    return room.evolve(clock=paused), (paused.deadline_ms() or 0) - (clock.deadline_ms() or 0)

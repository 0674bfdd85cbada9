"""How a quick-pairing seek ends, and how a waiting seek is woken (:mod:`.matchmaker`'s vocabulary).

:meth:`~.matchmaker.Pairing.seek` answers :class:`Paired` (the game, the seat, and the pair it
came from, which waits in Redis until the edge says the player was told) or :class:`Unpaired`;
:class:`AlreadySeeking` refuses a second seek of one player. A seek waiting in this process is a
:class:`Waiter`, woken once (:func:`wake`) with its pair, with :data:`CLOSING`, or with ``None``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from enum import StrEnum

from ..core.pools import Pool
from ..core.room import Player
from .pairing import Pair, Ticket


@dataclass(frozen=True, slots=True)
class Paired:
    """A seek's happy end: the game to play and the seat in it. Its pair waits for the player
    until :meth:`Pairing.told` (``pair``: which one)."""

    room_id: str
    seat: int
    opponent: Player
    pool: Pool
    pair: Pair | None = field(default=None, compare=False, repr=False)


class Unpaired(StrEnum):
    """A seek's end without a game."""

    TIMED_OUT = "timed_out"
    """Nobody came within ``wait_s`` (a caller may then offer the computer)."""
    CANCELLED = "cancelled"
    """Ended by :meth:`Pairing.cancel` (from any process), or the service closed."""


class AlreadySeeking(Exception):
    """The player seeks already (in this pool or another, on any process); nothing changed."""

    code = "already_seeking"


class Closing:
    """What a waiter is told when the service shuts down: end as after a timeout."""


CLOSING = Closing()
Woken = tuple[Pair, bool] | Closing | None
"""A waiter's wake-up: its pair and whether its room is known to be open; closing; or ``None``
(cancelled elsewhere, or gone)."""


@dataclass(eq=False)
class Waiter:
    ticket: Ticket
    woken: asyncio.Future[Woken]
    stored: bool = False
    """Its seek waits in Redis (so the ticks keep it alive)."""


def wake(waiter: Waiter, woken: Woken) -> None:
    if not waiter.woken.done():
        waiter.woken.set_result(woken)


def paired_for(pair: Pair, player: Player) -> Paired:
    seat = pair.seat_of(player.id)
    assert seat is not None, "a pair handed to a player not in it"
    return Paired(pair.room, seat, pair.players[1 - seat], pair.pool, pair)

"""What a played room expects, and when the server acts on it by itself.

Three things fall due without anybody sending a thing, each at a time that depends only on
the room (so every process agrees, and the sweeper of any process may act: the commit's
compare-and-set makes it happen once):

- a **first move** that does not come: until every seat has moved, the seat to move has
  :data:`FIRST_MOVE_MS` (or its initial time if that is shorter; a correspondence game: its
  days per move) from when its turn began
  (the last seat taken, or the previous move); then the game is aborted, without a result.
  Untimed games wait (they are invitations between friends, dropped when they expire).
- a **flag** that falls: the game clock's deadline; the seat to move loses on time.
- a **computer's answer** (:mod:`server.core.computer`): a short pause after the last change.

:func:`next_due` is the earliest of them (the room's place in its due index, a sorted set);
:func:`server.core.decide.decide` of a ``Tick`` does whatever is due.
"""

from __future__ import annotations

from .computer import pause_ms, to_answer
from .room import Room, Status

FIRST_MOVE_MS = 30_000
"""A live game's first moves are due within this (lichess gives 30 s too)."""


def clock_due(room: Room) -> int | None:
    """When the running flag falls in a game being played."""
    if room.clock is None or room.status is not Status.PLAYING:
        return None
    return room.clock.deadline_ms()


def first_move_due(room: Room) -> int | None:
    """When the game is aborted unless the seat to move makes its first move."""
    clock = room.clock
    if clock is None or room.status is not Status.PLAYING or room.game.every_seat_moved:
        return None
    if to_answer(room) is not None:
        return None  # a computer always moves
    window = clock.initial_ms if clock.per_move else min(FIRST_MOVE_MS, clock.initial_ms)
    began = clock.since_ms if clock.running is not None else room.seated_ms
    return (began if began is not None else room.created_ms) + window


def answer_due(room: Room) -> int | None:
    """When the computer to move answers."""
    if room.status is not Status.PLAYING or to_answer(room) is None:
        return None
    last = room.moved_ms or room.seated_ms or room.created_ms
    return last + pause_ms(room)


def next_due(room: Room) -> int | None:
    """The earliest of the three, or ``None`` when nothing will fall due by itself."""
    times = [t for t in (clock_due(room), first_move_due(room), answer_due(room)) if t is not None]
    return min(times) if times else None

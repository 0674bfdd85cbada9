"""What may be asked of a room and what deciding it answers: the room core's vocabulary.

Commands (:data:`Command`) come from the edges (a player's join, move, claim, rematch) and
from the server itself (:class:`Tick`, what has fallen due); :func:`server.core.decide.decide`
answers each with a :data:`Decision`, a plain value: a :class:`Commit` for the shell to
write, a :class:`Refusal` whose :class:`Refused` code each edge maps to its own status or
frame, or :class:`Unchanged`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from engine import Move
from engine.events import Event

from .room import Room


class Refused(StrEnum):
    """Why a command changed nothing (machine-readable; the edges map these)."""

    STALE = "stale"
    """The sender saw another version than the current one."""
    NOT_SEATED = "not_seated"
    """Only a player seated in the room may do that."""
    NOT_PLAYING = "not_playing"
    """A seat is still empty."""
    ROOM_FULL = "room_full"
    NOT_OVER = "not_over"
    """That needs a finished game (a rematch)."""
    TIME_OUT = "time_out"
    """The mover's flag had fallen: the timeout was committed instead."""
    OPPONENT_PRESENT = "opponent_present"
    """A claim needs the opponent gone for the grace period (live games only)."""
    NO_OFFER = "no_offer"
    """There is no rematch offer of the opponent's to accept or decline."""
    # the rules' refusals (engine.IllegalCode), by the same names
    GAME_OVER = "game_over"
    NOT_YOUR_TURN = "not_your_turn"
    NOT_A_SEAT = "not_a_seat"
    OUT_OF_RANGE = "out_of_range"
    CELL_NOT_HIDDEN = "cell_not_hidden"
    NOT_A_MOVE = "not_a_move"
    CELL_FLAGGED = "cell_flagged"
    CHORD_NOT_SATISFIED = "chord_not_satisfied"
    TOO_LATE_TO_ABORT = "too_late_to_abort"
    # only the shell says these (there is no room to decide on, it lost every race, or the
    # worker that makes boards is taken)
    UNKNOWN_ROOM = "unknown_room"
    BUSY = "busy"
    """Too many concurrent changes, or too many boards waiting to be made; try again."""
    BOARD_PENDING = "board_pending"
    """A board of the actor's is still being made (a no-guess layout, at a first click): one at a
    time per player. Click again once it is there."""


# ---------------------------------------------------------------------- commands


@dataclass(frozen=True, slots=True)
class Join:
    """The actor takes the first empty seat."""


@dataclass(frozen=True, slots=True)
class Play:
    """The actor's seat plays ``move`` (a resignation is the engine move ``Resign()``)."""

    move: Move


@dataclass(frozen=True, slots=True)
class Tick:
    """The server (the sweeper of any process) does what has fallen due (:mod:`server.core.due`):
    aborts a game whose first move did not come, ends one whose flag fell, plays a computer's
    answer. Nothing due: :class:`Unchanged`.

    ``answer``: the computer's answer (:func:`~server.core.computer.reply`) already worked out
    by the shell for this very room, else it is worked out here. Why: the strong computer thinks
    off the loop, and its move must be decided at the time it is ready, so that its thinking
    (and any wait for the worker) is on its own clock and never on the opponent's."""

    answer: Move | None = None


@dataclass(frozen=True, slots=True)
class Claim:
    """The actor claims the game (a win, or a draw when ``draw``) because the opponent left:
    the shell passes when the opponent's last connection closed (``gone_since_ms``, ``None``
    while connected), which must be :data:`~server.core.decide.LEAVE_GRACE_MS` ago, counted from no earlier than both
    seats were taken (:func:`~server.core.computer.seat_away_since`)."""

    draw: bool
    gone_since_ms: int | None


@dataclass(frozen=True, slots=True)
class OfferRematch:
    """After the end, the actor offers the same opponent a new game."""


@dataclass(frozen=True, slots=True)
class DeclineRematch:
    """The opponent's offer is declined (or the actor's own withdrawn)."""


@dataclass(frozen=True, slots=True)
class LinkRematch:
    """After the end, record ``room_id`` (a new room, players swapped) as this room's rematch:
    the actor accepts the opponent's offer (a computer, or a game of one seat, needs none)."""

    room_id: str


Command = Join | Play | Tick | Claim | OfferRematch | DeclineRematch | LinkRematch


# ---------------------------------------------------------------------- answers


@dataclass(frozen=True, slots=True)
class Refusal:
    code: Refused
    message: str
    room: Room | None
    """The room as it stands (``None`` only for :attr:`Refused.UNKNOWN_ROOM`)."""


@dataclass(frozen=True, slots=True)
class Commit:
    room: Room
    """The new room: what the shell writes iff the stored version is still the previous one."""
    kind: str
    """``create``, ``join``, ``move`` (timeouts, aborts and claims too), ``offer`` (a rematch
    offered or declined) or ``rematch``: the log entry's kind."""
    detail: tuple[Any, ...]
    """The log entry's data: ``(seat, *move_to_data(move))`` for a move."""
    events: tuple[Event, ...] = ()
    refusal: Refusal | None = None
    """Set when the actor's own command was refused although something is committed."""
    given_ms: int = 0
    """Clock time given back for a store outage in this commit (:mod:`server.core.outages`)."""

    @property
    def seat(self) -> int | None:
        """The seat that moved or joined (for logs), if any."""
        return self.detail[0] if self.kind in ("move", "join") and self.detail else None


@dataclass(frozen=True, slots=True)
class Unchanged:
    room: Room


Decision = Commit | Refusal | Unchanged

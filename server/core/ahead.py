"""What the room service works out ahead of a decision, off the event loop, and when.

Two commands have a costly part that must not run in the event loop: a classic no-guess
game's first click (the layout's search, ``Game.prepared``) and the strong computer's answer
(a search of tens of ms). The shell runs that part in a worker (``server/store/offload.py``)
and then decides as usual; these rules say when it is worth doing. Pure: a room, a command,
plain values.
"""

from __future__ import annotations

from .commands import Play
from .computer import slow_to_answer
from .due import answer_due
from .room import Player, Room


def worth_preparing(room: Room, actor: Player | None, command: Play, seen_version: int | None) -> bool:
    """Whether to do ``command``'s costly part ahead (``Game.prepared``): only for the seat's own
    move on the version it saw. Why: a spectator's or a stale click is refused by ``decide``
    anyway, and preparing it first let anybody keep the board worker busy (a search on a
    large no-guess board) for everybody's first clicks."""
    return (room.seat_of(actor) is not None and seen_version in (None, room.version)
            and room.game.costly(command.move))


def worth_answering(room: Room, now_ms: int) -> bool:
    """Whether a ``Tick`` should have the computer's answer worked out ahead, in the answers'
    worker: the strong computer's (tens of ms of search), once due. Why ahead: decided with the
    clock read before the search and its wait for the worker (busy with other games' answers),
    the wait was charged to the human, who could lose on time right after the computer's move;
    decided after, the computer's clock pays for its own thinking."""
    due = answer_due(room)
    return slow_to_answer(room) and due is not None and now_ms >= due

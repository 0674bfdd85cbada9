"""After the end: offering the same opponent a new game, declining or withdrawing the offer,
and linking the new room once accepted (pure decisions, as :mod:`server.core.decide`'s; the
shell makes the new room, :func:`rematch_players` seated, before it links it)."""

from __future__ import annotations

from .commands import Commit, Decision, Refusal, Refused, Unchanged
from .computer import level_of
from .room import Player, Room, Status, open_seat


def rematch_players(room: Room) -> tuple[Player | None, ...]:
    """The players of a rematch: the same, seats rotated (a duel's seats swapped)."""
    return room.players[1:] + room.players[:1]


def _finished_seat(room: Room, actor: Player | None, what: str) -> int | Refusal:
    seat = room.seat_of(actor)
    if seat is None:
        return Refusal(Refused.NOT_SEATED, f"only a player of this game can {what}", room)
    if room.status is not Status.OVER:
        return Refusal(Refused.NOT_OVER, "a rematch needs a finished game", room)
    return seat


def offer_rematch(room: Room, actor: Player | None) -> Decision:
    seat = _finished_seat(room, actor, "offer a rematch")
    if isinstance(seat, Refusal):
        return seat
    if open_seat(room.players) is not None:  # a challenge called off before anybody took it
        return Refusal(Refused.NOT_PLAYING, "nobody took the other seat: there is nobody to play a rematch with", room)
    if room.rematch is not None or room.rematch_offer == seat:
        return Unchanged(room)
    if room.rematch_offer is not None:
        return Refusal(Refused.NO_OFFER, "your opponent offered a rematch already: accept it", room)
    return Commit(room.evolve(version=room.version + 1, rematch_offer=seat, rematch_declined=None), "offer",
                  (seat, "offer"))


def decline_rematch(room: Room, actor: Player | None) -> Decision:
    seat = _finished_seat(room, actor, "answer a rematch offer")
    if isinstance(seat, Refusal):
        return seat
    if room.rematch_offer is None or room.rematch is not None:
        return Unchanged(room)
    declined = seat if seat != room.rematch_offer else None  # the offerer withdrawing declines nothing
    return Commit(room.evolve(version=room.version + 1, rematch_offer=None, rematch_declined=declined), "offer",
                  (seat, "decline" if declined is not None else "withdraw"))


def accepts_rematch(room: Room, seat: int) -> bool:
    """Whether ``seat`` may start the rematch now: the opponent offered it (a computer always
    would, and a game of one seat has nobody to ask)."""
    others = [s for s in range(len(room.players)) if s != seat]
    return all(room.rematch_offer == s or level_of(room.players[s]) is not None for s in others)


def link_rematch(room: Room, actor: Player | None, room_id: str) -> Decision:
    seat = _finished_seat(room, actor, "start a rematch")
    if isinstance(seat, Refusal):
        return seat
    if room.rematch is not None:
        return Unchanged(room)
    if not accepts_rematch(room, seat):
        return Refusal(Refused.NO_OFFER, "your opponent has not offered a rematch: offer one", room)
    return Commit(room.evolve(version=room.version + 1, rematch=room_id, rematch_offer=None), "rematch", (room_id,))

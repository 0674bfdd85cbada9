"""What a room page says of who left a game being played and what may be done about it: the
away note, the Abort button, the claim area (plain values)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.computer import people_away
from ..core.decide import AWAY_GRACE_MS, LEAVE_GRACE_MS
from ..core.room import Room, Status
from ..store.messages import Attendance
from .i18n import _
from .view_model import display_name

# ---------------------------------------------------------------------- who is here, aborting, claiming


def away_text(room: Room, attendance: Attendance, now_ms: int) -> str:
    """Who of the players has left a game being played (the same for every viewer): away for
    :data:`AWAY_GRACE_MS` at least (a reload is no leaving). The claim area beside it says only
    what may be done about it, not who left again. In correspondence nobody "leaves": the
    note says who is not here (the clock decides, and nothing may be claimed)."""
    if room.status is not Status.PLAYING:
        return ""
    gone = [display_name(p.name) for p, since in zip(room.players, people_away(room, attendance.away_since), strict=False)
            if p is not None and since is not None and now_ms - since >= AWAY_GRACE_MS]
    if not gone:
        return ""
    if room.clock is not None and room.clock.per_move:  # correspondence: being away is how it is played
        if len(gone) == 1:
            return _("%(name)s is not here right now.") % {"name": gone[0]}
        return _("%(first)s and %(second)s are not here right now.") % {"first": ", ".join(gone[:-1]),
                                                                         "second": gone[-1]}
    if len(gone) == 1:
        return _("%(name)s has left the game.") % {"name": gone[0]}
    return _("%(first)s and %(second)s have left the game.") % {"first": ", ".join(gone[:-1]), "second": gone[-1]}


def abortable(room: Room, viewer: int) -> bool:
    """Whether ``viewer`` may call the game off: a seat, before both seats have moved."""
    return viewer in (0, 1) and room.status is not Status.OVER and not room.game.every_seat_moved


@dataclass(frozen=True, slots=True)
class ClaimLook:
    opponent: str
    wait_s: int
    """Seconds until the claim is possible (0: now)."""


def claim_look(room: Room, viewer: int, attendance: Attendance, now_ms: int) -> ClaimLook | None:
    """What a seated viewer may do about an opponent who left a live game (``None``: nothing)."""
    if viewer not in (0, 1) or room.status is not Status.PLAYING or len(room.players) != 2:
        return None
    if room.clock is not None and room.clock.per_move:
        return None  # correspondence: the clock decides
    opponent = room.players[1 - viewer]
    since = people_away(room, attendance.away_since)[1 - viewer]
    if opponent is None or since is None or now_ms - since < AWAY_GRACE_MS:
        return None  # a page reloading, or a joiner's opening: no countdown flashed meanwhile
    wait_ms = LEAVE_GRACE_MS - (now_ms - since)
    return ClaimLook(display_name(opponent.name), max(0, -(-wait_ms // 1000)))


"""What the lobby keeps listed: a pure rule over a room and who is at it.

The lobby (``server/web/lobby.py``) reads every listed room with its presence hash and asks
:func:`worth_listing`; what is not worth listing is unlisted and comes back when one of its
players connects again (``Hub.attach``). Plain values in, a yes or no out: the presence hash
is read by the shell (``server.store.presence.attendance_of``) and the time is passed in.

Why a rule of its own: an untimed game both players left stays "playing" for days, and a
challenge nobody takes stays "waiting"; listed, they fill the lobby with games nobody plays.
"""

from __future__ import annotations

from .computer import level_of
from .decide import LEAVE_GRACE_MS
from .room import Room, Status

GONE_GRACE_MS = 5_000
"""A challenge stays listed this long after its creator's last connection closed (a reload)."""
NEVER_CAME_MS = 30_000
"""A challenge whose creator never opened its page, or a game whose players have not yet come
since both sat down, is listed this long after it was made (pages opening)."""


def listable(room: Room) -> bool:
    """A room the lobby shows: a listed duel not over. A room of one seat never belongs there (one
    listed before ``Aftermath.list`` refused them took the lobby down for every reader)."""
    return room.status is not Status.OVER and len(room.players) == 2 and room.listed


def worth_listing(room: Room, away_since: tuple[int | None, ...], ever: tuple[bool, bool], now_ms: int) -> bool:
    """The one rule of what the lobby keeps (of a :func:`listable` room): a game being played
    while somebody is at the board, a challenge while its creator is there. ``away_since``:
    per seat, since when it has had no connection (``None``: connected); ``ever``: per seat,
    whether it has connected at all."""
    if room.status is Status.PLAYING:
        return somebody_at_the_board(room, away_since, ever, now_ms)
    return creator_here(room, away_since, ever, now_ms)


def somebody_at_the_board(room: Room, away_since: tuple[int | None, ...], ever: tuple[bool, bool],
                          now_ms: int) -> bool:
    """A game being played is live while one of its people is at it: connected, or gone less
    than :data:`LEAVE_GRACE_MS` (the claim's grace: a reload, a short drop), or not yet come
    for :data:`NEVER_CAME_MS` after both sat down (pages opening). A computer is always there:
    it says nothing about a person playing."""
    for seat, player in enumerate(room.players):
        if player is None or level_of(player) is not None:
            continue
        if not ever[seat]:
            if now_ms - (room.seated_ms or room.created_ms) < NEVER_CAME_MS:
                return True
            continue
        since = away_since[seat]
        if since is None or now_ms - since < LEAVE_GRACE_MS:
            return True
    return False


def creator_here(room: Room, away_since: tuple[int | None, ...], ever: tuple[bool, bool], now_ms: int) -> bool:
    """An open challenge is listed while its creator is at its page: connected, gone less than
    :data:`GONE_GRACE_MS` (a reload), or not yet come :data:`NEVER_CAME_MS` after making it. A
    correspondence challenge (days per move) is listed as long as it waits: its creator posts it
    and comes back days later, as every move of such a game is made (an outside probe saw one
    vanish 15 s after its creator closed the page)."""
    if room.clock is not None and room.clock.per_move:
        return True
    seat = next(i for i, p in enumerate(room.players) if p is not None)
    if not ever[seat]:
        return now_ms - room.created_ms < NEVER_CAME_MS
    since = away_since[seat]
    return since is None or now_ms - since < GONE_GRACE_MS

"""The lobby: what the home page lists, read from the store and put into rows.

Games are listed in a ZSET by creation time (:meth:`server.store.store.Store.list_room`; a room put
back when a player returns, by that time):
open challenges made on the home page, and every game being played that was made there, by
quick pairing or against the computer. :func:`read_lobby` reads all of them (up to the list's
bound), a chunk at a time in two round trips (the rooms, then their presence hashes), and keeps
what :func:`server.core.listing.worth_listing` keeps:

- **open challenges**: waiting rooms whose creator is still there (connected to the room,
  or gone for less than :data:`~server.core.listing.GONE_GRACE_MS`, which covers a reload; a
  creator who never connected is given :data:`~server.core.listing.NEVER_CAME_MS`). A
  challenge whose creator left drops out of the list at once, and the room stays reachable by
  its link;
- **live games**: rooms being played that somebody is at (a person connected, gone less than
  the claim's grace, or not yet come since the game began), with names, ratings (rated games),
  score, time control and spectators;
- **counts**: players online over all processes, live games among the listed ones.

Finished and vanished rooms are unlisted as they are met, and so are the rooms that are not
kept by the rule (a challenge its creator left, a game its people left): they would otherwise
stay listed for days (an untimed game, a challenge nobody takes, a correspondence game) and
fill the list. A player connecting to such a room again puts it back on the list
(:meth:`server.store.hub.Hub.attach`). :mod:`.lobby_feed` reads it once a second per process
while anybody watches and pushes it to every lobby socket.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine import SPECTATOR
from engine.clock import Clock

from ..core.computer import level_of
from ..core.listing import listable, worth_listing
from ..core.ratings import Rating, clock_category
from ..core.room import Room, Status
from ..store.presence import attendance_of
from ..store.store import LOBBY_KEEP
from .view_model import player_names, score_pair_text

SCAN = 100
"""Listed rooms read per round trip (their states, then their presence hashes)."""
LIVE_ROWS = 20
CHALLENGE_ROWS = 40
"""Open challenges shown, the newest first (correspondence challenges stay listed for days)."""


@dataclass(frozen=True, slots=True)
class LiveRow:
    id: str
    names: tuple[str, str]
    ratings: tuple[str, str]
    """Beside each name in a rated game ("1523", "1500?"), else empty."""
    score: str
    clock: Clock | None
    """Its time control, put in words where it is shown (in the reader's language)."""
    rated: bool
    spectators: int


@dataclass(frozen=True, slots=True)
class ChallengeRow:
    id: str
    creator: str
    """The creator's player id (their own row offers Cancel)."""
    name: str
    rating: str
    ruleset: str
    clock: Clock | None
    rated: bool
    created_ms: int = 0
    """When it was made (of two alike, the older is taken first: quick pairing by days per move)."""


@dataclass(frozen=True, slots=True)
class Lobby:
    live: tuple[LiveRow, ...] = ()
    challenges: tuple[ChallengeRow, ...] = ()
    online: int = 0
    playing: int = 0
    read_ms: int = 0


async def read_lobby(state: Any, online: int, now_ms: int, *, chunk: int = SCAN, limit: int = LOBBY_KEEP,
                     challenge_rows: int = CHALLENGE_ROWS) -> Lobby:
    """The lobby as it stands (see the module docstring); ``online`` is the count to show.

    Every listed room is read, up to ``limit`` (the list's own bound, :data:`LOBBY_KEEP`: every
    listing trims it to that many), the ids in one read and the rooms and their presence
    hashes ``chunk`` at a time (two round trips per chunk). Why all of them: every open
    challenge is shown, and "games in play" counts every game being played; why that is
    cheap: what is not worth listing any more is unlisted here (:func:`~server.core.listing.worth_listing`), so the
    list holds the rooms people are at (and, for a grace period, those they just left). At most
    ``challenge_rows`` challenges, the newest (the page shows :data:`CHALLENGE_ROWS`)."""
    store = state.store
    ids = await store.listed_rooms(limit)
    live: list[tuple[Room, int]] = []
    challenges: list[Room] = []
    playing = 0
    stale: list[str] = []
    left: list[Room] = []
    for start in range(0, len(ids), chunk):
        part = ids[start:start + chunk]
        rooms = await state.rooms.load_many(part)
        shown = [rooms[i] for i in part if i in rooms and listable(rooms[i])]
        stale += [i for i in part if i not in rooms or not listable(rooms[i])]
        fields = await store.attendance_fields([room.id for room in shown])
        for room, hash_fields in zip(shown, fields, strict=True):
            attendance, ever = attendance_of(hash_fields)
            if not worth_listing(room, attendance.away_since, ever, now_ms):
                left.append(room)
            elif room.status is Status.PLAYING:
                playing += 1
                if len(live) < LIVE_ROWS:
                    live.append((room, attendance.spectators))
            elif len(challenges) < challenge_rows:
                challenges.append(room)
    ratings = await _ratings(state, [room for room, _ in live] + challenges)
    if stale or left:
        with contextlib.suppress(Exception):  # the next read tries again
            await _unlist(state, stale, left, now_ms)
    return Lobby(tuple(_live_row(room, ratings, spectators) for room, spectators in live),
                 tuple(_challenge_row(room, ratings) for room in challenges), online, playing, now_ms)


async def _unlist(state: Any, stale: list[str], left: list[Room], now_ms: int) -> None:
    """Take off the list the rooms over or gone (``stale``) and those their people left
    (``left``). A player who connects to a room meanwhile puts it back (``Hub.attach``, after
    its presence write); one whose write came before the removal is seen by the read after it,
    and the room goes back here: a room its people are at is never left off."""
    await state.store.unlist(stale + [room.id for room in left])
    if not left:
        return
    fields = await state.store.attendance_fields([room.id for room in left])
    for room, hash_fields in zip(left, fields, strict=True):
        attendance, ever = attendance_of(hash_fields)
        if worth_listing(room, attendance.away_since, ever, now_ms):
            await state.rooms.aftermath.list(room, again=True)


async def _ratings(state: Any, rooms: list[Room]) -> dict[tuple[str, str], Rating]:
    """(player id, category) → rating, for the players of rated games and challenges, in one read."""
    wanted = {(p.id, category) for room in rooms if room.rated and (category := clock_category(room.clock))
              for p in room.players if p is not None}
    if not wanted:
        return {}
    by_player = await state.ratings.ratings_many(sorted({pid for pid, _ in wanted}))
    return {(pid, cat): by_player[pid][cat] for pid, cat in wanted if cat in by_player.get(pid, {})}


def _rating_text(ratings: dict[tuple[str, str], Rating], room: Room, player_id: str | None) -> str:
    category = clock_category(room.clock) if room.rated else None
    if category is None or player_id is None:
        return ""
    rating = ratings.get((player_id, category))
    return rating.display if rating is not None else Rating().display


def _live_row(room: Room, ratings: dict[tuple[str, str], Rating], spectators: int) -> LiveRow:
    names = player_names(room)
    a, b = room.view(SPECTATOR).scores
    ids = [p.id if p is not None and level_of(p) is None else None for p in room.players]
    return LiveRow(room.id, (names[0] or "", names[1] or ""),
                   (_rating_text(ratings, room, ids[0]), _rating_text(ratings, room, ids[1])),
                   score_pair_text(a, b), room.clock, room.rated, spectators)


def _challenge_row(room: Room, ratings: dict[tuple[str, str], Rating]) -> ChallengeRow:
    creator = next(p for p in room.players if p is not None)
    return ChallengeRow(room.id, creator.id, creator.name, _rating_text(ratings, room, creator.id), room.ruleset or "",
                        room.clock, room.rated, room.created_ms)


def lobby_sections(env: Any) -> Callable[[Lobby, str | None], dict[str, str]]:
    """The renderer of the lobby's live sections (``web/templates/_lobby.html``): the same
    macros render the home page and every lobby frame."""
    macros = env.get_template("_lobby.html").module

    def render(lobby: Lobby, player_id: str | None) -> dict[str, str]:
        return {"counts": str(macros.counts(lobby)), "challenges": str(macros.challenges(lobby, player_id)),
                "live": str(macros.live(lobby))}

    return render

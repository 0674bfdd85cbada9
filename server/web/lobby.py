"""The home page's list of games to join or watch.

Games created from the home page (and their rematches) are listed in a ZSET by creation
time (:meth:`server.store.store.Store.list_room`); the home page shows the newest that are
still waiting or playing, read in one round trip, and prunes the finished and vanished ones
as it reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import SPECTATOR

from ..core.room import Room, Status
from .view_model import player_names

SCAN = 60
KEEP = 500
MAX_AGE_MS = 7 * 24 * 3600 * 1000


@dataclass(frozen=True, slots=True)
class GameRow:
    id: str
    names: tuple[str | None, str | None]
    score: str
    open: bool


async def list_room(state: Any, room: Room) -> None:
    """List ``room`` on the home page (a convenience: the game exists either way)."""
    try:
        await state.store.list_room(room.id, room.created_ms, KEEP, MAX_AGE_MS)
    except Exception:
        pass


async def live_games(state: Any, limit: int = 20) -> list[GameRow]:
    """The newest listed games still waiting or playing."""
    try:
        ids = await state.store.listed_rooms(SCAN)
        rooms = await state.rooms.load_many(ids)
    except Exception:  # Redis away: the page shows no games rather than failing
        return []
    rows: list[GameRow] = []
    stale = [room_id for room_id in ids if room_id not in rooms or rooms[room_id].status is Status.OVER]
    for room_id in ids:
        room = rooms.get(room_id)
        if room is None or room.status is Status.OVER or len(rows) >= limit:
            continue
        a, b = room.view(SPECTATOR).scores
        playing = room.status is Status.PLAYING
        rows.append(GameRow(room.id, player_names(room), f"{a}\u00a0:\u00a0{b}" if playing else "open", not playing))
    if stale:
        try:
            await state.store.unlist(stale)
        except Exception:
            pass
    return rows

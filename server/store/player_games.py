"""A player's games: the ones being played or waiting (with whose turn it is) and the finished
ones, newest first, kept per player in Redis (keys ``pg:{<player>}:…``, one slot per player).

The room service calls :meth:`PlayerGames.record` after every commit that changes what such a
list keeps (:func:`server.core.summary.index_changed`: a new room, a join, the end), never per
move: reading the ongoing games loads their rooms (one round trip) and takes whose turn it is
and when it is due from them. What it writes is computed from the committed Room alone
(:func:`server.core.summary.summary_of`). One script per player (``PLAYER_GAME``) keeps the
lists consistent whatever order the writes of several processes arrive in: a finished game never
changes again, an ongoing entry is replaced only by a newer version. A failed write is logged
and counted, never raised: the move stands, and the list catches up with the room's next change
(an end, with the sweeper's retry of everything an end leaves behind).

Computer players have no lists. Entries follow the rooms' retention: the keys expire with the
finished rooms (renewed by every write), the finished list keeps the newest :data:`KEEP`, and an
ongoing entry whose room has gone unchanged longer than an idle room lives is dropped when read.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

from ..core.room import Room, Status, open_seat
from ..core.summary import for_player, indexed_players, ongoing_order, summary_of
from ..logs import event
from ..metrics import Metrics
from . import scripts
from .keys import games_on_key, games_over_key, games_summary_key, unpack
from .store import Store

log = logging.getLogger("mineduel.player_games")

KEEP = 100
"""Finished games kept per player."""
DAY_S = 86_400


class PlayerGames:
    def __init__(self, store: Store, metrics: Metrics, *, keep: int = KEEP, finished_ttl_s: int = 30 * DAY_S) -> None:
        """The rooms' retention (0 = for ever): a player's lists outlive their last write as long
        as a finished room is kept (``finished_ttl_s``); an ongoing game whose room has expired
        is dropped when read."""
        self.store = store
        self.metrics = metrics
        self.keep = keep
        self.ttl_ms = finished_ttl_s * 1000 if finished_ttl_s else None

    # ------------------------------------------------------------------ writing

    async def record(self, room: Room) -> bool:
        """Put ``room`` as it now stands on its players' lists. False (logged and counted) if a
        write failed."""
        players = indexed_players(room)
        if not players:
            return True
        summary = summary_of(room)
        text = json.dumps(summary, separators=(",", ":"))
        over = room.status is Status.OVER
        ended = ("-" if open_seat(room.players) is not None else "1") if over else "0"  # a challenge called off: no game
        args: list[bytes | str | int] = [room.id, room.version, text, ended,
                                         summary["ended_ms"] or summary["changed_ms"], self.keep,
                                         "" if self.ttl_ms is None else self.ttl_ms]
        link = self.store.link  # the move path's client: the writes of both players go out together
        answers = await asyncio.gather(
            *(link.evalsha(scripts.PLAYER_GAME, [games_on_key(p), games_over_key(p), games_summary_key(p)], args)
              for p in players), return_exceptions=True)
        failed = [a for a in answers if isinstance(a, BaseException)]
        if failed:
            self.metrics.settle_failures.labels("games").inc()
            event(log, "games_index_failed", level=logging.WARNING, room=room.id, v=room.version,
                  error=type(failed[0]).__name__)
            return False
        return True

    # ------------------------------------------------------------------ reading

    async def ongoing(self, player_id: str) -> list[dict[str, Any]]:
        """``player_id``'s games being played or waiting (:func:`~server.core.summary.for_player`
        entries), their turn first (:func:`~server.core.summary.ongoing_order`)."""
        stored = await self.store.redis.hgetall(games_on_key(player_id))
        return await self._ongoing(player_id, stored)

    async def finished(self, player_id: str, count: int = 20) -> list[dict[str, Any]]:
        """``player_id``'s last ``count`` finished games, newest first."""
        ids = await self.store.redis.zrevrange(games_over_key(player_id), 0, count - 1)
        return await self._summaries(player_id, ids)

    async def finished_page(self, player_id: str, count: int, before: str | None = None
                            ) -> tuple[list[dict[str, Any]], str | None]:
        """``count`` of ``player_id``'s finished games, newest first, after the cursor ``before``
        (``None``: from the newest), and the cursor of the page after them (``None``: none).

        A cursor is ``<ended ms>.<room id>`` (its last game), or ``<ms>`` alone (what ended before
        then). Why the id too: games that ended in the same millisecond (a player resigning
        several at once) would be skipped by a time alone (an outside probe reached 16 of 21). The
        list is at most :data:`KEEP` games: read whole, and paged here."""
        entries = await self.store.redis.zrevrange(games_over_key(player_id), 0, -1, withscores=True)
        start = 0 if before is None else next(
            (i for i, (room, ended) in enumerate(entries) if after_cursor(ended, room, before)), len(entries))
        chosen = entries[start:start + count]
        older = cursor_of(*chosen[-1]) if chosen and start + count < len(entries) else None
        return await self._summaries(player_id, [room for room, _ in chosen]), older

    async def _summaries(self, player_id: str, ids: list[bytes]) -> list[dict[str, Any]]:
        if not ids:
            return []
        found = await self.store.redis.hmget(games_summary_key(player_id), ids)
        return [for_player(json.loads(raw), player_id) for raw in found if raw is not None]

    async def overview(self, player_id: str, count: int = 20) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Both lists (``count`` finished games) in two round trips."""
        async with self.store.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(games_on_key(player_id))
            pipe.zrevrange(games_over_key(player_id), 0, count - 1)
            stored, ids = await pipe.execute()
        return await self._ongoing(player_id, stored), await self._summaries(player_id, ids)

    async def _ongoing(self, player_id: str, stored: dict[bytes, bytes]) -> list[dict[str, Any]]:
        """The stored ongoing entries as their rooms stand now (whose turn, when due: a move
        writes no list); entries whose room has gone (expired) or ended are dropped."""
        ids = [room_id.decode() for room_id in stored]
        rooms = dict(zip(ids, await self.store.load_many(ids), strict=True)) if ids else {}
        entries, stale = [], []
        for room_id, raw in stored.items():
            data = rooms.get(room_id.decode())
            summary = json.loads(raw)
            if data is not None:
                try:
                    room = Room.from_data(unpack(data))
                except ValueError:
                    room = None
                if room is not None and room.status is not Status.OVER:
                    summary = summary_of(room)
            if data is None or summary["status"] == Status.OVER.value:
                stale.append(room_id)  # expired, or over (its finished entry is written by the end)
            else:
                entries.append(for_player(summary, player_id))
        if stale:
            await self.store.redis.hdel(games_on_key(player_id), *stale)
        return ongoing_order(entries)


CURSOR = re.compile(r"^(\d{1,15})(?:\.([A-Za-z0-9_-]{1,64}))?$")
"""A page cursor of the finished list: ``<ended ms>[.<room id>]``."""


def cursor_of(room: bytes, ended_ms: float) -> str:
    return f"{int(ended_ms)}.{room.decode()}"


def after_cursor(ended_ms: float, room: bytes, cursor: str) -> bool:
    """Whether the entry (``ended_ms``, ``room``) comes after ``cursor`` in the list's order
    (newest first; one millisecond's games by id, the greatest first, as ``ZREVRANGE`` has them)."""
    found = CURSOR.match(cursor)
    if found is None:
        raise ValueError(f"not a cursor: {cursor!r}")
    ms, last = int(found.group(1)), (found.group(2) or "").encode()
    return ended_ms < ms or (ended_ms == ms and last != b"" and room < last)

"""A room's stored form, packed at the cost of what changed since the room's previous version.

``pack(room.to_data())`` packs everything again on every commit: the layout, the salt and
every move-list line and log entry the game has ever had, so a commit cost grew with the
game. :class:`StoredForm` writes the same data (decoding it gives exactly ``room.to_data()``)
from the game's :meth:`snapshot_parts`: the ``fixed`` part is packed once per game, the
``appended`` lists are packed once per item (a version's bytes are the previous version's
plus the new items: each tuple extends the one before with the same item objects), and only
the ``changing`` part and the room's own fields are packed each time.

msgpack is a concatenation format: a map is its header and then its keys and values, an array
its header and then its items, so pieces packed at different times join into one valid
document. (Keys come in another order than in ``to_data()``; a map has no order.)
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any

from engine import Game

from ..core.room import Room
from .keys import pack, unpack

GAMES_KEPT = 4096
"""Games whose packed parts are kept (least recently written go first); a miss only costs
packing the game's parts again."""

FINISHED_KEPT = 512
"""Finished games whose packed snapshot is kept for the commits their rooms still make (a
rematch offered, declined, linked): about 4 KB each, 2 MB at most, the least recently written
going first."""


def unpack_room(data: bytes, previous: Room | None = None) -> Room:
    """The Room of a stored form, decoded reusing ``previous`` (an earlier version of it, if any)."""
    return Room.from_data(unpack(data), previous)


def map_header(n: int) -> bytes:
    if n < 16:
        return bytes([0x80 | n])
    if n < 1 << 16:
        return b"\xde" + n.to_bytes(2, "big")
    return b"\xdf" + n.to_bytes(4, "big")


def array_header(n: int) -> bytes:
    if n < 16:
        return bytes([0x90 | n])
    if n < 1 << 16:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


_GAME, _KIND, _STATE = pack("game"), pack("kind"), pack("state")


def packed_pairs(mapping: dict[str, Any]) -> bytes:
    """The keys and values of ``mapping`` as a map packs them, without the map's header."""
    return pack(mapping)[len(map_header(len(mapping))):]


class _Game:
    """What was packed for one game: its fixed part, and per append-only list the bytes of the
    items packed so far with the last of them (to check the next version extends it)."""

    __slots__ = ("fixed", "fixed_bytes", "lists")

    def __init__(self, fixed: dict[str, Any]) -> None:
        self.fixed = fixed  # held: its identity names the game
        self.fixed_bytes = packed_pairs(fixed)
        self.lists: dict[str, tuple[int, Any, bytes]] = {}

    def appended(self, key: str, items: tuple[Any, ...]) -> bytes:
        """``key: items`` packed, reusing the bytes of the prefix packed before."""
        known = self.lists.get(key)
        if known is not None:
            count, last, body = known
            if not (count <= len(items) and (count == 0 or items[count - 1] is last)):
                count, body = 0, b""
        else:
            count, body = 0, b""
        if len(items) > count:
            body += b"".join([pack(item) for item in items[count:]])
            self.lists[key] = (len(items), items[-1], body)
        return pack(key) + array_header(len(items)) + body


class StoredForm:
    def __init__(self, games_kept: int = GAMES_KEPT, finished_kept: int = FINISHED_KEPT) -> None:
        self._games: OrderedDict[int, _Game] = OrderedDict()
        self._kept = games_kept
        self._finished: OrderedDict[int, tuple[weakref.ref[Game], bytes]] = OrderedDict()
        self._finished_kept = finished_kept

    def pack(self, room: Room) -> bytes:
        """The stored form of ``room``: the bytes of ``pack(room.to_data())`` up to key order."""
        fields = room.stored_fields()
        return b"".join((map_header(len(fields) + 1), packed_pairs(fields),
                         _GAME, map_header(2), _KIND, pack(room.kind), _STATE, self._state(room.game)))

    def _state(self, game: Game) -> bytes:
        """``game``'s packed snapshot, from its parts packed before.

        A finished game's parts are dropped once it is packed (kept, each held about 4 KB until
        4,096 later games had pushed it out: some 17 MB, bench/soak.py's server grew by about
        1 MB a minute, docs/PERFORMANCE.md, twentieth session). Its whole snapshot is kept
        instead, with a weak reference to the game object, for the commits its room still makes
        (a rematch offered, declined or linked): a Room's game is never changed once committed
        (server.core.decide copies it to move), so while that object lives its snapshot is these
        bytes; once it is gone, or pushed out, a commit packs it whole again."""
        finished = game.outcome is not None
        if finished:
            known = self._finished.get(id(game))
            if known is not None and known[0]() is game:
                return known[1]
        parts = game.snapshot_parts()
        packed = self._game(parts.fixed, keep=not finished)
        state = (map_header(len(parts.fixed) + len(parts.changing) + len(parts.appended)) + packed.fixed_bytes
                 + packed_pairs(parts.changing)
                 + b"".join(packed.appended(key, items) for key, items in parts.appended.items()))
        if finished:
            self._finished[id(game)] = (weakref.ref(game), state)
            while len(self._finished) > self._finished_kept:
                self._finished.popitem(last=False)
        return state

    def __len__(self) -> int:
        """Games whose packed parts are kept."""
        return len(self._games)

    def finished_kept(self) -> int:
        """Finished games whose packed snapshot is kept."""
        return len(self._finished)

    def _game(self, fixed: dict[str, Any], keep: bool) -> _Game:
        """The packed parts of ``fixed``'s game, kept for its next version if ``keep`` (taken out
        otherwise: a finished game's is not made room for at another game's expense)."""
        key = id(fixed)
        game = self._games.get(key)
        if game is not None and game.fixed is fixed:
            if keep:
                self._games.move_to_end(key)
            else:
                del self._games[key]
            return game
        game = _Game(fixed)
        if keep:
            self._games[key] = game
            while len(self._games) > self._kept:
                self._games.popitem(last=False)
        return game

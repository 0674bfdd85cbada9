"""The programmatic websocket's codec: msgpack maps with a ``t`` key (see docs/PROTOCOL.md).

Every frame carries ``v``: the room version it describes, or for an error the version the
connection's view is at (``None`` before its first snapshot). Views come from the game
(``room.view(viewer)``) and events pass through ``visible_to``, so a frame never holds what
its viewer class may not see. Nothing here names a game: any :class:`engine.Game` renders.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import msgpack

from engine import SPECTATOR, Event, visible_to

from ..core.computer import people_away
from ..core.room import Room
from ..store.messages import Attendance, packed_events
from ..store.stored_form import array_header, map_header, packed_pairs


def now_ms() -> int:
    return time.time_ns() // 1_000_000


pack = msgpack.Packer(use_bin_type=True).pack
"""msgpack bytes of a frame (one packer: ``msgpack.packb`` makes a new one per call)."""

# An update frame is a map of five keys, joined from packed pieces (msgpack concatenates: a map
# is its header, then its keys and values): the same bytes as packing the dict at once.
_UPDATE_HEAD = map_header(5) + pack("t") + pack("update") + pack("v")
_ROOM, _EVENTS, _DIFF = pack("room"), pack("events"), pack("diff")
# A snapshot frame likewise: its five keys, the view's map last
_SNAPSHOT_HEAD = map_header(5) + pack("t") + pack("snapshot") + pack("v")
_YOU, _VIEW, _VIEWER = pack("you"), pack("view"), pack("viewer")


class MsgpackCodec:
    name = "msgpack"

    def __init__(self) -> None:
        # the fan-out in progress: (old, new, events, the frame's head, events packed, frames made)
        self._fanout: tuple[Room, Room, Sequence[Event], bytes, list[bytes], dict[int, bytes]] | None = None
        # the views of the last room snapshotted: per viewer class, the map's header and its
        # pairs but the viewer's
        self._views: tuple[Room, dict[int, tuple[bytes, bytes]]] | None = None

    def snapshot(self, room: Room, viewer: int) -> bytes:
        """``pack({"t": "snapshot", "v": ..., "you": viewer, "room": ..., "view": ...})``, byte
        for byte, with the view packed once per viewer class (:meth:`_view`)."""
        return b"".join((_SNAPSHOT_HEAD, pack(room.version), _YOU, pack(viewer),
                         _ROOM, pack(room.meta_data(now_ms())), _VIEW, self._view(room, viewer)))

    def _view(self, room: Room, viewer: int) -> bytes:
        """``pack(room.view(viewer).to_data())``. The viewers of one class (``Game.view_class``)
        see one view but for its ``viewer`` field, its first; the rest is packed once per class
        of the last room asked for, so the five sockets that follow a game to its rematch, or a
        room's spectators coming back after a restart, get their snapshots for the cost of one
        per class. A seat with something private is a class of its own."""
        view_class = room.game.view_class(viewer)
        held = self._views
        if held is None or held[0] is not room:
            held = self._views = (room, {})
        parts = held[1].get(view_class)
        if parts is None:
            data = room.view(view_class).to_data()
            del data["viewer"]
            parts = held[1][view_class] = (map_header(len(data) + 1), packed_pairs(data))
        return b"".join((parts[0], _VIEWER, pack(viewer), parts[1]))

    def update(self, old: Room, new: Room, viewer: int, events: Sequence[Event]) -> bytes:
        """The update frame for ``viewer``. The hub asks once per viewer class for the same
        ``(old, new, events)``: the room facts and the events' data are made once, and a seat
        that sees the spectators' view before and after the change (``Game.view_class``: it
        has nothing private) gets the spectators' frame, rendered once."""
        fanout = self._fanout
        if fanout is None or fanout[0] is not old or fanout[1] is not new or fanout[2] is not events:
            head = b"".join((_UPDATE_HEAD, pack(new.version), _ROOM, pack(new.meta_data(now_ms()))))
            fanout = self._fanout = (old, new, events, head, packed_events(events), {})
        if old.game.view_class(viewer) == new.game.view_class(viewer) == SPECTATOR:
            viewer = SPECTATOR
        frame = fanout[5].get(viewer)
        if frame is None:
            # a game that can tell the difference's plain data from the move (Duel.diff_data_since)
            # saves making the new view and comparing it with the old one: most of a frame's cost
            since = getattr(new.game, "diff_data_since", None)
            change = since(old.game, viewer) if since is not None else \
                new.game.diff(old.view(viewer), new.view(viewer)).to_data()
            visible = [p for p, e in zip(fanout[4], events) if visible_to(e, viewer)]
            frame = fanout[5][viewer] = b"".join(
                (fanout[3], _EVENTS, array_header(len(visible)), *visible, _DIFF, pack(change)))
        return frame

    def presence(self, room: Room, attendance: Attendance) -> bytes:
        return pack({"t": "presence", "v": room.version, "spectators": attendance.spectators,
                     "away": list(people_away(room, attendance.away_since))})

    def error(self, code: str, message: str, v: int | None = None) -> bytes:
        return pack({"t": "error", "v": v, "code": code, "message": message})

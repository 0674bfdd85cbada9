"""The programmatic websocket's codec: msgpack maps with a ``t`` key (see docs/PROTOCOL.md).

Every frame about the room carries ``v``, the room version it describes. Views come from
the engine (``room.view(viewer)``) and events pass through ``visible_to``, so a frame never
holds what its viewer class may not see.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import msgpack

from engine import Event, diff, visible_to

from .room import Room, event_data


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def pack(obj: object) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


class MsgpackCodec:
    name = "msgpack"

    def __init__(self) -> None:
        self._last: tuple[Sequence[Event], list[dict]] | None = None

    def _events(self, events: Sequence[Event]) -> list[dict]:
        """Plain data of ``events``, converted once per fan-out (the hub passes the same list
        for each viewer class)."""
        if self._last is None or self._last[0] is not events:
            self._last = (events, [event_data(e) for e in events])
        return self._last[1]

    def snapshot(self, room: Room, viewer: int) -> bytes:
        return pack({
            "t": "snapshot",
            "v": room.version,
            "you": viewer,
            "room": room.meta_data(now_ms()),
            "view": room.view(viewer).to_data(),
        })

    def update(self, old: Room, new: Room, viewer: int, events: Sequence[Event]) -> bytes:
        return pack({
            "t": "update",
            "v": new.version,
            "room": new.meta_data(now_ms()),
            "events": [d for e, d in zip(events, self._events(events)) if visible_to(e, viewer)],
            "diff": diff(old.view(viewer), new.view(viewer)).to_data(),
        })

    def presence(self, room: Room, spectators: int) -> bytes:
        return pack({"t": "presence", "v": room.version, "spectators": spectators})

    def error(self, code: str, message: str) -> bytes:
        return pack({"t": "error", "code": code, "message": message})

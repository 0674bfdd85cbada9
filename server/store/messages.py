"""The commit message each room's channel carries, as the commit script publishes it.

``[b"commit", version, packed room, [[audience, event data], ...], nonce]``: enough for a process
that did not make the commit to decode the new room and its events (which may be private:
the message never leaves the servers), and for the one that did to recognise its own commit
by the nonce and reuse the Room it already has. Presence messages are ``P<total>`` (written by
the presence script).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine import Event, event_from_data, event_to_data

from .keys import pack, unpack


@dataclass(frozen=True, slots=True)
class CommitMessage:
    version: int
    room_data: bytes
    """The packed stored room (decode with ``Room.from_data(unpack(...))``: only if needed)."""
    events: list[list[Any]]
    nonce: bytes

    def decoded_events(self) -> tuple[Event, ...]:
        return tuple(event_from_data(data, audience) for audience, data in self.events)


def commit_message(version: int, room_data: bytes, events: Sequence[Event], nonce: bytes) -> bytes:
    return pack([b"commit", version, room_data, [[e.audience, event_to_data(e)] for e in events], nonce])


def is_presence(payload: bytes) -> bool:
    return payload[:1] == b"P"


def presence_total(payload: bytes) -> int:
    return int(payload[1:])


def read_commit(payload: bytes) -> CommitMessage:
    _tag, version, room_data, events, nonce = unpack(payload)
    return CommitMessage(version, room_data, events, nonce)

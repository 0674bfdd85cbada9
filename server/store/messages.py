"""The messages each room's channel carries.

A commit (published by the commit script): ``b"C"``, the version as 8 bytes, the committing
process's nonce (14 bytes), then msgpack ``[packed room, [[audience, event data], ...]]``.
The fixed head lets the process that made the commit recognise it by the nonce without
unpacking the rest; another process decodes the room and its events (which may be private:
the message never leaves the servers). Presence (written by the presence script):
``P<total>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine import Event, event_from_data, event_to_data

from .keys import pack, unpack

COMMIT = b"C"
NONCE_BYTES = 14
_HEAD = 1 + 8 + NONCE_BYTES


@dataclass(frozen=True, slots=True)
class CommitMessage:
    version: int
    nonce: bytes
    body: bytes
    """msgpack ``[packed room, events as data]``: unpack only when this process needs it."""

    def room_data(self) -> bytes:
        return unpack(self.body)[0]

    def decoded_events(self) -> tuple[Event, ...]:
        return tuple(event_from_data(data, audience) for audience, data in unpack(self.body)[1])


def commit_message(version: int, room_data: bytes, events: Sequence[Event], nonce: bytes) -> bytes:
    if len(nonce) != NONCE_BYTES:
        raise ValueError(f"a nonce is {NONCE_BYTES} bytes")
    body: list[Any] = [room_data, [[e.audience, event_to_data(e)] for e in events]]
    return COMMIT + version.to_bytes(8, "big") + nonce + pack(body)


def is_presence(payload: bytes) -> bool:
    return payload[:1] == b"P"


def presence_total(payload: bytes) -> int:
    return int(payload[1:])


def read_commit(payload: bytes) -> CommitMessage:
    """The head of a commit message (raises ``ValueError`` on anything else)."""
    if payload[:1] != COMMIT or len(payload) < _HEAD:
        raise ValueError("not a commit message")
    return CommitMessage(int.from_bytes(payload[1:9], "big"), payload[9:_HEAD], payload[_HEAD:])

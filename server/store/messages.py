"""The messages each room's channel carries.

A commit (published by the commit script): ``b"C"``, the version as 8 bytes, the committing
process's nonce (14 bytes), then msgpack ``[packed room, [[audience, event data], ...]]``.
The fixed head lets the process that made the commit recognise it by the nonce without
unpacking the rest; another process decodes the room and its events (which may be private:
the message never leaves the servers). Presence (written by the presence script):
``P<spectators>:<seat 0 away since>:<seat 1 away since>`` (ms, or ``-`` while connected).
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


@dataclass(frozen=True, slots=True)
class Attendance:
    """Who is connected to a room over all processes: how many spectators, and since when each
    seat has had no connection (``None`` while it has one)."""

    spectators: int = 0
    away_since: tuple[int | None, ...] = (None, None)

    def to_text(self) -> str:
        return ":".join([str(self.spectators), *("-" if t is None else str(t) for t in self.away_since)])

    @classmethod
    def from_text(cls, text: str) -> "Attendance":
        spectators, *away = text.split(":")
        return cls(int(spectators), tuple(None if t in ("-", "") else int(t) for t in away))


def is_presence(payload: bytes) -> bool:
    return payload[:1] == b"P"


def presence_of(payload: bytes) -> Attendance:
    return Attendance.from_text(payload[1:].decode())


def read_commit(payload: bytes) -> CommitMessage:
    """The head of a commit message (raises ``ValueError`` on anything else)."""
    if payload[:1] != COMMIT or len(payload) < _HEAD:
        raise ValueError("not a commit message")
    return CommitMessage(int.from_bytes(payload[1:9], "big"), payload[9:_HEAD], payload[_HEAD:])

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

from engine import Event, event_from_data, event_to_data

from .keys import pack, unpack
from .stored_form import array_header

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
    """The commit message: the bytes ``COMMIT + version + nonce + pack([room_data, [[audience,
    event data], ...]])``, joined from the pieces (the room's bytes are copied once, and each
    event's packed data is :func:`packed_events`', shared with the update frames)."""
    if len(nonce) != NONCE_BYTES:
        raise ValueError(f"a nonce is {NONCE_BYTES} bytes")
    parts = [COMMIT, version.to_bytes(8, "big"), nonce, b"\x92", bin_header(len(room_data)), room_data,
             array_header(len(events))]
    for event, data in zip(events, packed_events(events)):
        audience = event.audience
        parts.append(_PAIR_PUBLIC if audience is None else b"\x92" + pack(audience))
        parts.append(data)
    return b"".join(parts)


_PAIR_PUBLIC = b"\x92" + pack(None)  # [None, ... (an event for everybody)
_PACKED: dict[int, tuple[Sequence[Event], list[bytes]]] = {}
_PACKED_KEPT = 1024


def packed_events(events: Sequence[Event]) -> list[bytes]:
    """``[pack(event_to_data(e)) for e in events]``, made once per ``events`` object (kept for
    the last 1024): a commit's events go into its commit message and, in the process that
    committed it (the same tuple, claimed back from the room cache), into every update frame.

    Why: the engine's plain form of an event costs ~7k instructions on CPython 3.11 (its enum
    values are read through a Python-level property) and packing it ~2k; a move has 3-5
    events, made twice. A pure cache: an entry holds its ``events`` (so the id is not reused
    while it lives) and its answer is what the expression gives."""
    key = id(events)
    hit = _PACKED.get(key)
    if hit is not None and hit[0] is events:
        return hit[1]
    packed = [pack(event_to_data(e)) for e in events]
    if len(_PACKED) >= _PACKED_KEPT:
        del _PACKED[next(iter(_PACKED))]  # the oldest
    _PACKED[key] = (events, packed)
    return packed


def bin_header(n: int) -> bytes:
    """msgpack's header of ``n`` bytes of binary data (bin 8/16/32)."""
    if n < 1 << 8:
        return b"\xc4" + n.to_bytes(1, "big")
    if n < 1 << 16:
        return b"\xc5" + n.to_bytes(2, "big")
    return b"\xc6" + n.to_bytes(4, "big")


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

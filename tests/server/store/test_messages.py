"""The commit message: its head is read without unpacking the rest, and the rest round-trips."""

from __future__ import annotations

import random

import pytest

from engine import Duel, Mark
from server.store.messages import Attendance, commit_message, is_presence, presence_of, read_commit


def test_a_commit_message_round_trips_and_its_head_is_read_alone() -> None:
    duel = Duel.new(random.Random(3), first=0)
    cell = next(c for c in duel.geo.cells if duel.is_hidden(c) and c not in duel.setup.mines)
    events = duel.apply(0, Mark(cell))  # a wrong mark: one private event among public ones
    payload = commit_message(2**40 + 7, b"\x00room", events, b"n" * 14)
    message = read_commit(payload)
    assert (message.version, message.nonce) == (2**40 + 7, b"n" * 14)
    assert message.room_data() == b"\x00room" and message.decoded_events() == tuple(events)
    assert [e.audience for e in message.decoded_events()] == [e.audience for e in events]
    for bad in (b"", b"P3", b"C" + b"\x00" * 5):
        with pytest.raises(ValueError):
            read_commit(bad)
    with pytest.raises(ValueError):
        commit_message(1, b"", [], b"short")
    assert is_presence(b"P12:-:-") and not is_presence(payload)
    assert presence_of(b"P12:-:-") == Attendance(12, (None, None))
    assert presence_of(b"P0:1700:-") == Attendance(0, (1700, None))
    for attendance in (Attendance(), Attendance(3, (5, 7)), Attendance(0, (None, 9))):
        assert Attendance.from_text(attendance.to_text()) == attendance


def test_a_commit_message_is_the_plain_packing_of_its_parts() -> None:
    """commit_message joins pre-packed pieces (a speed path): its dumb twin packs the whole body
    at once, for rooms of every size class of msgpack's bin header and events of every kind."""
    from engine import Explore, event_to_data
    from server.store.keys import pack
    from server.store.messages import packed_events

    rng = random.Random(4)
    duel = Duel.new(rng, first=0)
    while duel.outcome is None:
        cell = rng.choice([c for c in duel.geo.cells if duel.is_hidden(c)])
        events = tuple(duel.apply(duel.to_move, Mark(cell) if rng.random() < 0.4 else Explore(cell)))
        assert packed_events(events) is packed_events(events)  # made once
        assert packed_events(events) == [pack(event_to_data(e)) for e in events]
        assert packed_events(list(events)) == packed_events(events)  # another object: made again, the same
        for room in (b"", b"r" * 255, b"r" * 256, b"r" * 70_000):
            plain = b"C" + (7).to_bytes(8, "big") + b"n" * 14 + pack([room, [[e.audience, event_to_data(e)] for e in events]])
            assert commit_message(7, room, events, b"n" * 14) == plain

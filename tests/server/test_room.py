"""The Room value and its helpers, without Redis."""

import random

from engine import Duel, Explore, Mark, event_to_data
from server.room import Player, Room, clone_duel, event_data, events_from_data, events_to_data


def test_clone_is_independent_and_equal():
    rng = random.Random(3)
    duel = Duel.new(random.Random(1), first=0)
    for _ in range(30):
        if duel.outcome is not None:
            break
        copy = clone_duel(duel)
        assert copy == duel and copy.snapshot() == Duel.from_snapshot(duel.snapshot()).snapshot()
        before = duel.snapshot()
        hidden = [c for c in copy.geo.cells if copy.is_hidden(c)]
        cell = rng.choice(hidden)
        move = Mark(cell) if rng.random() < 0.3 else Explore(cell)
        copy.apply(copy.to_move, move)
        assert duel.snapshot() == before  # the original is untouched
        duel.apply(duel.to_move, move)
        assert duel == copy


def test_room_round_trip_and_events_codec():
    duel = Duel.new(random.Random(2), first=0)
    room = Room("r1", 3, duel, (Player("a", "Anna"), None), None, 123)
    assert room.status == "waiting"
    again = Room.from_data(room.to_data())
    assert again.to_data() == room.to_data()
    events = duel.apply(0, Mark((0, 0)))
    assert events_from_data(events_to_data(events)) == events


def test_a_room_decoded_with_its_previous_version_is_the_plain_decode():
    """What the hub does with another process's commit: decode reusing the Room it has."""
    rng = random.Random(5)
    room = Room("r1", 1, Duel.new(random.Random(5), first=0), (Player("a", "Anna"), Player("b", "Ben")), None, 1)
    held = Room.from_data(room.to_data())
    while room.duel.outcome is None:
        duel = clone_duel(room.duel)
        cell = rng.choice([c for c in duel.geo.cells if duel.is_hidden(c)])
        duel.apply(duel.to_move, Mark(cell) if rng.random() < 0.4 else Explore(cell))
        room = room.evolve(version=room.version + 1, duel=duel)
        decoded = Room.from_data(room.to_data(), held)
        assert decoded.to_data() == room.to_data() == Room.from_data(room.to_data()).to_data()
        assert [decoded.view(v) for v in (0, 1, 2)] == [room.view(v) for v in (0, 1, 2)]
        assert decoded.duel.lines[:-1] == held.duel.lines and decoded.duel.memo is held.duel.memo
        held = decoded


def test_fast_event_data_equals_the_engines():
    for seed in range(6):
        rng = random.Random(seed)
        duel = Duel.new(random.Random(seed), first=0)
        for _ in range(200):
            if duel.outcome is not None:
                break
            hidden = [c for c in duel.geo.cells if duel.is_hidden(c)]
            cell = rng.choice(hidden)
            move = Mark(cell) if rng.random() < 0.4 else Explore(cell)
            for event in duel.apply(duel.to_move, move):
                assert event_data(event) == event_to_data(event)

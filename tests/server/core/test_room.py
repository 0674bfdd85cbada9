"""The Room value: status, views, the stored form and its decoding, without Redis."""

from __future__ import annotations

import random

import pytest

from engine import SPECTATOR, Duel, Explore, Mark, Resign
from engine.clock import Clock
from server.core.room import Player, Room, Status, open_seat

ANNA, BEN = Player("a", "Anna"), Player("b", "Ben")


def a_room(seed: int = 2, players=(ANNA, BEN), clock: Clock | None = None) -> Room:
    return Room("r1", 3, Duel.new(random.Random(seed), first=0), players, clock, 123)


def test_status_follows_the_seats_and_the_game() -> None:
    assert a_room(players=(ANNA, None)).status is Status.WAITING
    room = a_room()
    assert room.status is Status.PLAYING
    game = room.game.copy()
    game.apply(1, Resign())
    assert room.evolve(game=game).status is Status.OVER


def test_the_open_seat_is_the_first_empty_one() -> None:
    assert open_seat((ANNA, BEN)) is None
    assert open_seat((None, BEN)) == 0 and open_seat((ANNA, None)) == 1 and open_seat([None, None]) == 0
    assert a_room(players=(None, BEN)).status is Status.WAITING


def test_seats_and_viewers() -> None:
    room = a_room(players=(None, BEN))
    assert room.seat_of(BEN) == room.seat_of("b") == 1
    assert room.seat_of(ANNA) is None and room.seat_of(None) is None
    assert room.viewer_of(BEN) == 1 and room.viewer_of(ANNA) == room.viewer_of(None) == SPECTATOR


def test_the_stored_form_round_trips_and_the_old_format_still_reads() -> None:
    room = a_room(clock=Clock.new(60_000, 1_000).start(0, 500))
    again = Room.from_data(room.to_data())
    assert again.to_data() == room.to_data() and again.game == room.game
    old = {**room.to_data(), "format": 1, "duel": room.game.snapshot()}
    del old["game"]
    assert Room.from_data(old).to_data() == room.to_data()
    private = room.evolve(listed=False)
    assert Room.from_data(private.to_data()).listed is False and "listed" not in room.to_data()  # older rooms: listed
    assert Room.from_data(room.to_data()).listed is True
    for broken in ({**room.to_data(), "format": 9}, {**room.to_data(), "game": {"kind": "chess", "state": {}}},
                   {"format": 2}, {**room.to_data(), "players": 5}):
        with pytest.raises(ValueError):
            Room.from_data(broken)


def test_public_facts_hold_no_secret() -> None:
    room = a_room(clock=Clock.new(60_000, 1_000).start(0, 500))
    meta = room.meta_data(10_500)
    assert meta["kind"] == "duel" and meta["ruleset"] == "brettspielnetz" and meta["status"] == "playing"
    assert meta["clock"]["remaining_ms"] == [50_000, 60_000] and meta["clock"]["running"] == 0
    text = repr(meta)
    assert room.game.setup.salt not in text and "mines" not in text


def test_views_are_computed_once_per_room() -> None:
    room = a_room()
    assert room.view(0) is room.view(0) and room.view(SPECTATOR) == room.game.view(SPECTATOR)
    assert room.evolve(version=4).view(0) is not room.view(0)


def test_evolve_makes_the_room_dataclasses_replace_makes() -> None:
    """Room.evolve copies the attributes instead of calling __init__ (a speed path): its dumb
    twin is ``dataclasses.replace``."""
    from dataclasses import replace

    room = a_room(clock=Clock.new(60_000, 1_000).start(0, 500))
    room.view(0)
    for changes in ({}, {"version": 9}, {"players": (None, BEN), "rematch": "r2"},
                    {"game": room.game.copy(), "clock": None, "version": 4, "created_ms": 1, "id": "x"}):
        new = room.evolve(**changes)
        want = replace(room, _views={}, **changes)
        assert new == want and vars(new) == vars(want) and type(new) is Room
        assert new._views == {} and new._views is not room._views
        with pytest.raises(AttributeError):
            new.version = 1  # still frozen
    with pytest.raises(TypeError):
        room.evolve(colour="red")  # not a field: refused as replace refuses it
    with pytest.raises(TypeError):
        room.evolve(_views={})


def test_a_room_decoded_with_its_previous_version_is_the_plain_decode() -> None:
    """What the hub does with another process's commit: decode reusing the Room it has."""
    rng = random.Random(5)
    room = a_room(seed=5)
    held = Room.from_data(room.to_data())
    while room.game.outcome is None:
        game = room.game.copy()
        cell = rng.choice([c for c in game.geo.cells if game.is_hidden(c)])
        game.apply(game.to_move, Mark(cell) if rng.random() < 0.4 else Explore(cell))
        room = room.evolve(version=room.version + 1, game=game)
        decoded = Room.from_data(room.to_data(), held)
        assert decoded.to_data() == room.to_data() == Room.from_data(room.to_data()).to_data()
        assert [decoded.view(v) for v in (0, 1, 2)] == [room.view(v) for v in (0, 1, 2)]
        assert decoded.game.lines[:-1] == held.game.lines and decoded.game.memo is held.game.memo
        held = decoded

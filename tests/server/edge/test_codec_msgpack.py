"""The programmatic websocket's codec: every update frame is exactly that viewer's, however
the hub orders its viewer classes, and turns the old view into the new one."""

from __future__ import annotations

import random

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import VIEWERS, Duel, Explore, Mark, event_to_data, patch_data, visible_to
from server.core.commands import Commit, Play
from server.core.decide import decide, open_room
from server.core.room import Player
from server.edge.codec_msgpack import MsgpackCodec

PLAYERS = (Player("a", "Anna"), Player("b", "Ben"))


def rooms_of_a_game(seed: int, moves: int = 60):
    """``(old, new, events)`` per move of a game of random explores and marks (wrong ones too),
    each decided by the room core as the room service does."""
    rng = random.Random(seed)
    room = open_room("r1", Duel.new(rng, "brettspielnetz"), PLAYERS, None, 0).room
    for _ in range(moves * 4):
        game = room.game
        if game.outcome is not None or moves == 0:
            return
        cell = rng.choice([(r, c) for r in range(11) for c in range(11) if game.is_hidden((r, c))])
        move = Mark(cell) if rng.random() < 0.4 else Explore(cell)
        decision = decide(room, PLAYERS[game.to_move], Play(move), room.version, 0)
        if not isinstance(decision, Commit):
            continue
        yield room, decision.room, decision.events
        room = decision.room
        moves -= 1


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([VIEWERS, VIEWERS[::-1], (1, 2, 0)]))
def test_each_viewer_gets_its_own_update_whatever_the_order(seed, order):
    shared = MsgpackCodec()
    for old, new, events in rooms_of_a_game(seed):
        made = {viewer: shared.update(old, new, viewer, events) for viewer in order}
        for viewer in VIEWERS:
            alone = msgpack.unpackb(MsgpackCodec().update(old, new, viewer, events))
            frame = msgpack.unpackb(made[viewer])
            frame["room"]["clock"] = alone["room"]["clock"] = None  # (untimed here; now_ms aside)
            assert frame == alone
            assert frame["v"] == new.version
            assert frame["events"] == [event_to_data(e) for e in events if visible_to(e, viewer)]
            assert patch_data(old.view(viewer), frame["diff"]) == new.view(viewer)


def test_a_wrong_mark_reaches_only_its_author():
    for old, new, events in rooms_of_a_game(7, moves=200):
        if not new.game.wrong_marks[0] - old.game.wrong_marks[0] or new.game.outcome is not None:
            continue
        (cell,) = new.game.wrong_marks[0] - old.game.wrong_marks[0]
        codec = MsgpackCodec()
        frames = {viewer: codec.update(old, new, viewer, events) for viewer in (2, 1, 0)}
        assert frames[0] != frames[1] == frames[2]
        for viewer in (1, 2):
            diff = msgpack.unpackb(frames[viewer])["diff"]
            assert all((r, c) != cell for r, c, _ in diff["cells"])
            assert all(line[3] is None for line in diff["moves"])
        return
    raise AssertionError("seat 0 never made a wrong mark in this game: pick another seed")


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10**6), st.booleans())
def test_an_update_frame_is_the_plain_packing_of_the_frame(seed, timed):
    """The frame is joined from pieces (the room's facts packed once while they hold, each
    event packed once per commit, the diff from the move: speed paths); its dumb twin packs the
    dict of the views' diff, the events' data and the room's facts at once, byte for byte."""
    import server.edge.codec_msgpack as codec_module
    from engine.clock import Clock
    from server.store.keys import pack

    codec_module_now = codec_module.now_ms
    codec_module.now_ms = lambda: 1_000
    try:
        codec = MsgpackCodec()
        for old, new, events in rooms_of_a_game(seed, moves=80):
            if timed:  # the same moves, as a timed room (its facts hold the clock: never kept)
                clock = Clock.new(60_000, 0).start(old.game.to_move, 0)
                old, new = old.evolve(clock=clock), new.evolve(clock=clock)
            for viewer in (2, 0, 1):
                want = pack({
                    "t": "update", "v": new.version, "room": new.meta_data(1_000),
                    "events": [event_to_data(e) for e in events if visible_to(e, viewer)],
                    "diff": new.game.diff(old.view(viewer), new.view(viewer)).to_data(),
                })
                assert codec.update(old, new, viewer, events) == want
    finally:
        codec_module.now_ms = codec_module_now


def _plain_snapshot(room, viewer: int, now: int) -> bytes:
    """The snapshot frame's dumb twin: the dict packed at once."""
    from server.store.keys import pack

    return pack({"t": "snapshot", "v": room.version, "you": viewer, "room": room.meta_data(now),
                 "view": room.view(viewer).to_data()})


def classic_rooms(seed: int, clicks: int = 120):
    """Rooms of one classic game of random reveals, flags and chords, decided as the service does."""
    from engine import Classic
    from engine.moves import Chord, Flag, Reveal

    rng = random.Random(seed)
    room = open_room("c1", Classic.new(9, 9, 10, random.Random(seed)), (PLAYERS[0],), None, 0).room
    yield room
    for _ in range(clicks):
        if room.game.outcome is not None:
            return
        move = rng.choice([Reveal, Reveal, Flag, Chord])((rng.randrange(9), rng.randrange(9)))
        decision = decide(room, PLAYERS[0], Play(move), room.version, 0)
        if isinstance(decision, Commit):
            room = decision.room
            yield room


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([VIEWERS, VIEWERS[::-1], (1, 2, 0), (2, 2, 0, 1, 0, 2)]))
def test_a_snapshot_is_the_plain_packing_of_its_viewers_frame(seed, order):
    """A snapshot is joined from pieces (the view packed once per viewer class of a room: the
    five sockets of a rematch, a room's spectators coming back); its dumb twin packs the dict
    at once, byte for byte, for every viewer in any order, duel (wrong marks made) and classic."""
    import server.edge.codec_msgpack as codec_module

    codec_module_now = codec_module.now_ms
    codec_module.now_ms = lambda: 1_000
    try:
        codec = MsgpackCodec()  # one for all, as the hub's: every room after the one before
        rooms = [new for _, new, _ in rooms_of_a_game(seed, moves=80)] + list(classic_rooms(seed))
        for room in rooms:
            for viewer in order:
                assert codec.snapshot(room, viewer) == _plain_snapshot(room, viewer, 1_000)
        for room in rooms[::-7]:  # and back to rooms asked for before
            for viewer in order:
                assert codec.snapshot(room, viewer) == _plain_snapshot(room, viewer, 1_000)
    finally:
        codec_module.now_ms = codec_module_now


def test_a_seats_wrong_marks_are_only_in_its_own_snapshot():
    """The view shared by a class never carries a seat's private marks to another viewer."""
    for _, room, _ in rooms_of_a_game(7, moves=200):
        if not room.game.wrong_marks[0] or room.game.outcome is not None:
            continue
        codec = MsgpackCodec()
        frames = {viewer: msgpack.unpackb(codec.snapshot(room, viewer)) for viewer in (2, 0, 1, 2, 0)}
        marks = {tuple(c) for c in frames[0]["view"]["wrong_marks"][0]}
        assert marks == set(room.game.wrong_marks[0])
        for viewer in (1, 2):
            assert frames[viewer]["view"]["wrong_marks"][0] == []
            assert frames[viewer]["view"]["viewer"] == viewer
        assert frames[0]["you"] == 0 and frames[0]["view"]["viewer"] == 0
        return
    raise AssertionError("seat 0 never made a wrong mark in this game: pick another seed")

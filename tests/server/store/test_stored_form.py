"""The stored form packed piece by piece decodes to exactly ``room.to_data()``, whatever the
order in which versions of many games are written (and versions of one game that branch)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Duel, Explore, Mark, Resign
from engine.clock import Clock
from server.core.commands import Commit, Join, Play
from server.core.decide import decide, open_room
from server.core.room import Player, Room
from server.store.keys import pack, unpack
from server.store.stored_form import StoredForm, array_header, map_header

P = (Player("gA", "Anna"), Player("gB", "Ben"))


def versions(seed: int) -> list[Room]:
    rng = random.Random(seed)
    clock = Clock.new(600_000, 1_000) if rng.random() < 0.5 else None
    room = open_room(f"r{seed}", Duel.new(random.Random(seed), first=0), (P[0], None), clock, 0).room
    out = [room]
    room = decide(room, P[1], Join(), None, 10).room
    out.append(room)
    now = 10
    while room.game.outcome is None and len(out) < 90:
        game = room.game
        now += rng.randrange(1, 2000)
        cell = rng.choice([c for c in game.geo.cells if game.is_hidden(c)])
        move = Resign() if rng.random() < 0.01 else Mark(cell) if rng.random() < 0.4 else Explore(cell)
        decision = decide(room, P[game.to_move], Play(move), room.version, now)
        if isinstance(decision, Commit):
            room = decision.room
            out.append(room)
    return out


def plain(room: Room):
    return unpack(pack(room.to_data()))


def test_headers_are_msgpack_s() -> None:
    for n in (0, 1, 15, 16, 65535, 65536):
        assert map_header(n) == pack({i: None for i in range(n)})[: len(map_header(n))]
        assert array_header(n) == pack([None] * n)[: len(array_header(n))]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_interleaved_versions_of_several_games_decode_to_their_stored_form(seeds, rng) -> None:
    stored = StoredForm(games_kept=2)  # small: some games are evicted and packed again
    queues = [versions(seed) for seed in seeds]
    written = []
    while any(queues):
        queue = rng.choice([q for q in queues if q])
        room = queue.pop(0) if rng.random() < 0.8 or len(queue) < 2 else queue.pop(1)  # now and then a skip
        data = stored.pack(room)
        assert unpack(data) == plain(room)
        assert Room.from_data(unpack(data)).to_data() == room.to_data()
        written.append(room)
    # a branch: an earlier version written again after later ones (a lost race decided anew)
    for room in rng.sample(written, min(5, len(written))):
        assert unpack(stored.pack(room)) == plain(room)


def test_two_moves_from_one_version_each_get_their_own_lists() -> None:
    """Sibling versions (the same version decided twice, one commit lost its race) share
    their prefix but not their last item: the second must not reuse the first's bytes."""
    stored = StoredForm()
    base = versions(7)[10]
    game = base.game
    cells = [c for c in game.geo.cells if game.is_hidden(c)][:2]
    siblings = [decide(base, P[game.to_move], Play(Explore(cell)), base.version, 99).room for cell in cells]
    assert stored.pack(base) and siblings[0].version == siblings[1].version
    for room in (*siblings, *siblings):
        assert unpack(stored.pack(room)) == plain(room)


def test_a_finished_games_parts_are_not_kept() -> None:
    """Its room commits a few times more (a rematch offered, declined, linked): each packs it
    whole again, exactly as before; games still going stay."""
    stored = StoredForm()
    going, done = versions(3)[:12], versions(5)
    assert done[-1].game.outcome is not None
    for room in [*going, *done]:
        stored.pack(room)
    assert len(stored) == 1
    again = done[-1].evolve(version=done[-1].version + 1, rematch_offer=0)
    assert unpack(stored.pack(again)) == plain(again)
    assert unpack(stored.pack(done[-1])) == plain(done[-1])
    assert len(stored) == 1


def test_packing_a_finished_game_pushes_out_no_game_still_going() -> None:
    stored = StoredForm(games_kept=1)
    going, done = versions(3)[:12], versions(5)[-1]
    stored.pack(going[-2])
    assert unpack(stored.pack(done)) == plain(done)
    assert len(stored) == 1  # the going game's parts: the finished one took no room
    assert unpack(stored.pack(going[-1])) == plain(going[-1])


def test_a_finished_games_snapshot_is_packed_once_while_its_game_lives() -> None:
    stored = StoredForm()
    done = versions(5)[-1]
    assert done.game.outcome is not None
    first = stored.pack(done)
    offer = done.evolve(version=done.version + 1, rematch_offer=0)  # the same game object
    wanted = plain(offer)
    real, calls = done.game.snapshot_parts, []
    done.game.snapshot_parts = lambda: calls.append(1) or real()  # type: ignore[method-assign]
    assert unpack(stored.pack(offer)) == wanted and calls == []  # the kept bytes, not packed again
    del done.game.snapshot_parts
    # another object of the same game (decoded, as after a load) is packed again: the same bytes
    loaded = Room.from_data(unpack(first))
    assert loaded.game is not done.game and stored.pack(loaded) == first
    # only as many finished games as it keeps
    small = StoredForm(finished_kept=1)
    ends = [versions(seed)[-1] for seed in (5, 7)]
    assert all(room.game.outcome is not None for room in ends)
    for room in ends:
        small.pack(room)
    assert small.finished_kept() == 1 and len(small) == 0

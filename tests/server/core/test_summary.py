"""A game as a player's list shows it: pure, from Rooms the room core decides."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Abort, Duel, Explore, Mark, Resign
from engine.clock import DAY_MS, Clock
from server.core.commands import Commit, Join, Play
from server.core.computer import computer
from server.core.decide import decide, open_room
from server.core.room import Player, Room, Status
from server.core.summary import (
    for_player,
    index_changed,
    indexed_players,
    ongoing_order,
    result_of,
    summary_of,
)
from server.edge import new_game

ANNA, BEN = Player("gA", "Anna"), Player("gB", "Ben")
T0 = 1_000_000


def duel(seed: int) -> Duel:
    return Duel.new(random.Random(seed), first=0)


def step(room: Room, actor: Player | None, command: object, now: int) -> Room:
    decision = decide(room, actor, command, None, now)  # type: ignore[arg-type]
    assert isinstance(decision, Commit), decision
    return decision.room


def a_move(room: Room, rng: random.Random) -> Explore | Mark:
    game: Duel = room.game  # type: ignore[assignment]
    cell = rng.choice([c for c in game.geo.cells if game.is_hidden(c)])
    return Mark(cell) if cell in game.setup.mines and rng.random() < 0.8 else Explore(cell)


def test_only_the_people_of_a_duel_have_lists() -> None:
    room = open_room("r1", duel(1), (ANNA, computer(2)), None, T0).room
    assert indexed_players(room) == ["gA"]
    assert indexed_players(open_room("r2", duel(1), (ANNA, None), None, T0).room) == ["gA"]
    solo = open_room("r3", new_game.classic(9, 9, 10, False, 1), (ANNA,), None, T0).room
    assert indexed_players(solo) == []


def test_a_waiting_game_then_a_played_one_then_the_end() -> None:
    clock = Clock.correspondence(3)
    room = open_room("r1", duel(3), (ANNA, None), clock, T0, rated=True).room
    waiting = for_player(summary_of(room), "gA")
    assert waiting["status"] == "waiting" and waiting["your_turn"] is False and waiting["opponent"] is None
    assert waiting["clock"] == {"days": 3} and waiting["category"] == "correspondence" and waiting["rated"]
    joined = step(room, BEN, Join(), T0 + 5)
    assert index_changed(room, joined)
    anna, ben = for_player(summary_of(joined), "gA"), for_player(summary_of(joined), "gB")
    assert anna["your_turn"] and not ben["your_turn"] and anna["opponent"] == BEN.to_data()
    assert anna["due_ms"] == T0 + 5 + 3 * DAY_MS  # the first move's window: the game's days
    over = step(joined, BEN, Play(Resign()), T0 + 9)
    entry = for_player(summary_of(over), "gA")
    assert "your_turn" not in entry and entry["result"] == "won" and entry["ended_ms"] == T0 + 9
    assert for_player(summary_of(over), "gB")["result"] == "lost" and entry["scores"] == [0, 0]
    assert json.loads(json.dumps(summary_of(over))) == summary_of(over)  # plain JSON data


def test_results() -> None:
    room = open_room("r1", duel(4), (ANNA, BEN), Clock.new(60_000, 0), T0).room
    aborted = step(room, ANNA, Play(Abort()), T0 + 1)
    assert result_of(summary_of(aborted), 0) == result_of(summary_of(aborted), 1) == "aborted"
    assert result_of(summary_of(room), 0) is None  # not over
    assert for_player(summary_of(aborted), "gZ")["result"] is None  # not one of its players


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 2**32 - 1))
def test_the_turn_shown_follows_the_room_and_every_change_a_list_keeps_is_written(seed: int, moves_seed: int) -> None:
    """Along a random game: whose turn each player's entry shows is the room's (read from it);
    every commit that changes what a list keeps (status, seats, scores) is one the index
    writes; the end shows the result."""
    rng = random.Random(moves_seed)
    room = open_room("r1", duel(seed), (ANNA, None), Clock.new(600_000, 0), T0).room
    now = T0
    joined = step(room, BEN, Join(), now)
    assert index_changed(room, joined)
    room = joined
    shown = {pid: for_player(summary_of(room), pid) for pid in indexed_players(room)}
    for _ in range(400):
        if room.status is Status.OVER:
            break
        now += 1000
        seat = room.game.to_move
        new = step(room, room.players[seat], Play(a_move(room, rng)), now)
        entries = {pid: for_player(summary_of(new), pid) for pid in indexed_players(new)}
        if not index_changed(room, new):  # nothing a list keeps has changed (the turn is read from the room)
            assert all(entries[p]["status"] == shown[p]["status"] and entries[p]["players"] == shown[p]["players"]
                       and entries[p]["scores"] == shown[p]["scores"] for p in shown)
        shown, room = entries, new
        for pid, entry in entries.items():
            seat_of = room.seat_of(pid)
            if room.status is Status.PLAYING:
                assert entry["your_turn"] == (room.game.to_move == seat_of)
    assert room.status is Status.OVER
    results = {shown[p]["result"] for p in shown}
    assert results in ({"won", "lost"}, {"drawn"})


@given(st.lists(st.tuples(st.booleans(), st.sampled_from(["playing", "waiting"]), st.integers(0, 10**6),
                          st.one_of(st.none(), st.integers(0, 10**6))), max_size=12))
def test_ongoing_games_list_your_turn_first_soonest_due_first(rows) -> None:
    entries = [{"id": str(i), "status": status, "your_turn": mine and status == "playing", "changed_ms": changed,
                "due_ms": due} for i, (mine, status, changed, due) in enumerate(rows)]
    ordered = ongoing_order(entries)
    assert sorted(e["id"] for e in ordered) == sorted(e["id"] for e in entries)
    ranks = [0 if e["your_turn"] else (1 if e["status"] == "playing" else 2) for e in ordered]
    assert ranks == sorted(ranks)
    dues = [e["due_ms"] if e["due_ms"] is not None else 2**62 for e in ordered if e["your_turn"]]
    assert dues == sorted(dues)
    for rank in (1, 2):
        changed = [e["changed_ms"] for e in ordered if not e["your_turn"] and
                   (e["status"] == "playing") == (rank == 1)]
        assert changed == sorted(changed, reverse=True)

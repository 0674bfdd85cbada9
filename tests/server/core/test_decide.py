"""The room core's decisions: plain values in, plain values out, no Redis, no clock.

Every refusal code the core can give is tried, and each leaves the room exactly as it was
(its stored form byte for byte, the same object handed back): the model is the engine's
tests of ``IllegalMove``.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Duel, Explore, IllegalCode, Mark, Resign, Timeout
from engine.clock import Clock
from server.core.decide import (
    ClaimTimeout,
    Commit,
    Join,
    LinkRematch,
    Play,
    Refusal,
    Refused,
    Unchanged,
    decide,
    open_room,
    rematch_players,
)
from server.core.room import Player, Room, Status

ANNA, BEN, CY = Player("gA", "Anna"), Player("gB", "Ben"), Player("gC", "Cy")
T0 = 1_000_000


def duel(seed: int = 7) -> Duel:
    return Duel.new(random.Random(seed), first=0)


def waiting(clock: Clock | None = None) -> Room:
    return open_room("r1", duel(), (ANNA, None), clock, T0).room


def playing(clock: Clock | None = None, seed: int = 7) -> Room:
    return open_room("r1", duel(seed), (ANNA, BEN), clock, T0).room


def safe_cell(room: Room) -> tuple[int, int]:
    game = room.game
    return next(c for c in game.geo.cells if game.is_hidden(c) and c not in game.setup.mines)


def committed(decision) -> Room:  # noqa: ANN001
    assert isinstance(decision, Commit), decision
    return decision.room


def refused(room: Room, actor, command, seen, now, code: Refused) -> Refusal:  # noqa: ANN001
    """``command`` is refused with ``code`` and the room is exactly as it was."""
    before = room.to_data()
    decision = decide(room, actor, command, seen, now)
    assert isinstance(decision, Refusal), decision
    assert decision.code is code, decision
    assert decision.message
    assert decision.room is room and room.to_data() == before
    return decision


# ---------------------------------------------------------------------- opening and joining


def test_a_new_room_is_version_1_and_its_clock_starts_only_when_every_seat_is_taken() -> None:
    clock = Clock.new(60_000, 2_000)
    open_one = open_room("r1", duel(), (ANNA, None), clock, T0)
    assert open_one.kind == "create" and open_one.room.version == 1 and open_one.room.status is Status.WAITING
    assert open_one.room.clock.running is None
    full = open_room("r2", duel(), (ANNA, BEN), clock, T0).room
    assert full.clock.running == 0 and full.deadline_ms() == T0 + 60_000
    with pytest.raises(ValueError):
        open_room("r3", duel(), (ANNA,), None, T0)


def test_joining_fills_the_empty_seat_and_starts_the_clock() -> None:
    room = waiting(Clock.new(60_000, 0))
    commit = decide(room, BEN, Join(), None, T0 + 5_000)
    assert isinstance(commit, Commit) and commit.kind == "join" and commit.detail == (1, BEN.to_data())
    new = commit.room
    assert new.version == 2 and new.players == (ANNA, BEN) and new.status is Status.PLAYING
    assert new.clock.running == 0 and new.deadline_ms() == T0 + 65_000
    assert room.players == (ANNA, None)  # the old room is untouched


def test_joining_twice_changes_nothing_and_a_full_room_refuses() -> None:
    room = waiting()
    assert decide(room, ANNA, Join(), None, T0) == Unchanged(room)
    full = committed(decide(room, BEN, Join(), None, T0))
    assert decide(full, BEN, Join(), None, T0) == Unchanged(full)
    refused(full, CY, Join(), None, T0, Refused.ROOM_FULL)
    refused(room, None, Join(), None, T0, Refused.NOT_SEATED)


# ---------------------------------------------------------------------- playing


def test_a_move_is_a_commit_of_the_next_version_with_its_log_entry_and_events() -> None:
    room = playing()
    cell = safe_cell(room)
    commit = decide(room, ANNA, Play(Explore(cell)), room.version, T0)
    assert isinstance(commit, Commit) and commit.refusal is None
    assert commit.kind == "move" and commit.detail == (0, "explore", *cell) and commit.seat == 0
    assert commit.room.version == room.version + 1 and commit.room.game.to_move == 1
    assert commit.events and commit.events[0].seat == 0
    assert room.game.to_move == 0 and room.game.is_hidden(cell)  # decided on a copy


def test_every_refusal_leaves_the_room_unchanged() -> None:
    room = playing()
    cell = safe_cell(room)
    refused(room, CY, Play(Explore(cell)), room.version, T0, Refused.NOT_SEATED)
    refused(room, None, Play(Resign()), None, T0, Refused.NOT_SEATED)
    refused(room, ANNA, Play(Explore(cell)), room.version - 1, T0, Refused.STALE)
    refused(room, ANNA, Play(Explore(cell)), room.version + 5, T0, Refused.STALE)
    refused(room, ANNA, Play(Resign()), room.version + 1, T0, Refused.STALE)  # a present v is checked
    refused(room, BEN, Play(Explore(cell)), room.version, T0, Refused.NOT_YOUR_TURN)
    refused(room, ANNA, Play(Explore((11, 0))), room.version, T0, Refused.OUT_OF_RANGE)
    refused(room, ANNA, Play(Mark((5, 5))), room.version, T0, Refused.CELL_NOT_HIDDEN)  # the open centre
    refused(room, ANNA, Play(Timeout()), room.version, T0, Refused.NOT_A_MOVE)
    refused(waiting(), ANNA, Play(Explore(cell)), 1, T0, Refused.NOT_PLAYING)
    over = committed(decide(room, BEN, Play(Resign()), None, T0))
    refused(over, ANNA, Play(Explore(cell)), over.version, T0, Refused.GAME_OVER)
    refused(room, ANNA, LinkRematch("r9"), None, T0, Refused.NOT_OVER)
    refused(over, CY, LinkRematch("r9"), None, T0, Refused.NOT_SEATED)


def test_every_rule_refusal_has_a_code_of_the_same_name() -> None:
    for code in IllegalCode:
        assert Refused(code.value).value == code.value


def test_resigning_is_allowed_on_either_turn_and_ends_the_game() -> None:
    room = playing(Clock.new(60_000, 0))
    new = committed(decide(room, BEN, Play(Resign()), None, T0 + 3_000))
    assert new.status is Status.OVER and new.game.outcome.winner == 0
    assert new.clock.running is None and new.clock.remaining_ms == (57_000, 60_000)
    assert new.deadline_ms() is None


# ---------------------------------------------------------------------- clocks


def test_a_move_presses_the_clock_and_adds_the_increment() -> None:
    room = playing(Clock.new(60_000, 2_000))
    new = committed(decide(room, ANNA, Play(Explore(safe_cell(room))), room.version, T0 + 10_000))
    assert new.clock.running == 1 and new.clock.remaining_ms == (52_000, 60_000)
    assert new.deadline_ms() == T0 + 10_000 + 60_000


def test_a_move_after_the_flag_fell_commits_the_timeout_and_is_refused() -> None:
    room = playing(Clock.new(60_000, 0))
    late = T0 + 60_000
    commit = decide(room, ANNA, Play(Explore(safe_cell(room))), room.version, late)
    assert isinstance(commit, Commit) and commit.refusal is not None
    assert commit.refusal.code is Refused.TIME_OUT and commit.refusal.room is commit.room
    assert commit.detail == (0, "timeout") and commit.room.game.outcome.termination == "timeout"
    assert commit.room.game.outcome.winner == 1 and commit.room.clock.running is None
    # the opponent's resignation comes too late as well: the flag fell first
    assert committed(decide(room, BEN, Play(Resign()), None, late)).game.outcome.termination == "timeout"


def test_a_timeout_is_claimed_once_the_flag_fell_and_not_before() -> None:
    room = playing(Clock.new(60_000, 0))
    assert decide(room, None, ClaimTimeout(), None, T0 + 59_999) == Unchanged(room)
    over = committed(decide(room, None, ClaimTimeout(), None, T0 + 60_000))
    assert over.game.outcome.termination == "timeout" and over.status is Status.OVER
    assert decide(over, None, ClaimTimeout(), None, T0 + 99_000) == Unchanged(over)
    assert decide(playing(), None, ClaimTimeout(), None, T0 + 10**9) == Unchanged(playing())  # no clock


# ---------------------------------------------------------------------- rematches


def test_a_rematch_is_linked_once_with_the_seats_swapped() -> None:
    over = committed(decide(playing(), ANNA, Play(Resign()), None, T0))
    linked = committed(decide(over, BEN, LinkRematch("r2"), None, T0))
    assert linked.rematch == "r2" and linked.version == over.version + 1
    assert decide(linked, ANNA, LinkRematch("r3"), None, T0) == Unchanged(linked)
    assert rematch_players(over) == (BEN, ANNA)


# ---------------------------------------------------------------------- any sequence


commands = st.one_of(
    st.builds(lambda r, c, mark: Play(Mark((r, c)) if mark else Explore((r, c))),
              st.integers(-1, 11), st.integers(-1, 11), st.booleans()),
    st.just(Play(Resign())), st.just(Play(Timeout())), st.just(Join()), st.just(ClaimTimeout()),
    st.builds(LinkRematch, st.sampled_from(["x1", "x2"])),
)
actors = st.sampled_from([ANNA, BEN, CY, None])


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), st.booleans(), st.lists(st.tuples(actors, commands, st.integers(-1, 3),
                                                                 st.integers(0, 30_000)), max_size=60))
def test_any_sequence_of_commands_gives_plain_answers_and_refusals_change_nothing(seed, timed, steps) -> None:
    room = open_room("r1", duel(seed), (ANNA, None), Clock.new(60_000, 1_000) if timed else None, T0).room
    now = T0
    for actor, command, lag, step in steps:
        now += step
        seen = None if lag < 0 else room.version - lag
        before = room.to_data()
        decision = decide(room, actor, command, seen, now)
        assert room.to_data() == before  # a decision never changes the room it was made on
        if isinstance(decision, Refusal):
            assert isinstance(decision.code, Refused) and decision.room is room
        elif isinstance(decision, Unchanged):
            assert decision.room is room
        else:
            assert decision.room.version == room.version + 1
            assert Room.from_data(decision.room.to_data()).to_data() == decision.room.to_data()
            room = decision.room

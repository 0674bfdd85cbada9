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

from engine import (
    Abort,
    Chord,
    ClaimAbandoned,
    Classic,
    Duel,
    Explore,
    Flag,
    IllegalCode,
    Mark,
    Resign,
    Reveal,
    Timeout,
)
from engine.clock import DAY_MS, Clock
from server.core.commands import (
    Claim,
    Commit,
    DeclineRematch,
    Join,
    LinkRematch,
    OfferRematch,
    Play,
    Refusal,
    Refused,
    Tick,
    Unchanged,
)
from server.core.computer import computer, pause_ms, reply
from server.core.decide import LEAVE_GRACE_MS, decide, open_room
from server.core.due import FIRST_MOVE_MS, next_due
from server.core.rematch import rematch_players
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


def test_a_new_room_is_version_1_and_its_first_move_is_due_once_every_seat_is_taken() -> None:
    clock = Clock.new(60_000, 2_000)
    open_one = open_room("r1", duel(), (ANNA, None), clock, T0)
    assert open_one.kind == "create" and open_one.room.version == 1 and open_one.room.status is Status.WAITING
    assert open_one.room.clock.running is None and next_due(open_one.room) is None
    full = open_room("r2", duel(), (ANNA, BEN), clock, T0).room
    assert full.clock.running is None and full.seated_ms == T0  # the clock waits for the first move...
    assert next_due(full) == T0 + FIRST_MOVE_MS  # ...which is due within the window
    with pytest.raises(ValueError):
        open_room("r3", duel(), (ANNA,), None, T0)


def test_joining_fills_the_empty_seat_and_the_first_move_is_due() -> None:
    room = waiting(Clock.new(60_000, 0))
    commit = decide(room, BEN, Join(), None, T0 + 5_000)
    assert isinstance(commit, Commit) and commit.kind == "join" and commit.detail == (1, BEN.to_data())
    new = commit.room
    assert new.version == 2 and new.players == (ANNA, BEN) and new.status is Status.PLAYING
    assert new.clock.running is None and new.seated_ms == T0 + 5_000
    assert next_due(new) == T0 + 5_000 + FIRST_MOVE_MS
    assert room.players == (ANNA, None)  # the old room is untouched


def test_a_challenge_called_off_before_anybody_sat_down_has_no_rematch() -> None:
    called_off = committed(decide(waiting(), ANNA, Play(Abort()), None, T0))
    assert called_off.status is Status.OVER
    assert "nobody" in refused(called_off, ANNA, OfferRematch(), None, T0, Refused.NOT_PLAYING).message
    # taking its empty seat: the game is over, not full (its seat was never taken)
    assert refused(called_off, BEN, Join(), None, T0, Refused.GAME_OVER).message == "the challenge was called off"
    assert decide(called_off, ANNA, Join(), None, T0) == Unchanged(called_off)  # its creator: seated already


def test_joining_twice_changes_nothing_and_a_full_room_refuses() -> None:
    room = waiting()
    assert decide(room, ANNA, Join(), None, T0) == Unchanged(room)
    full = committed(decide(room, BEN, Join(), None, T0))
    assert decide(full, BEN, Join(), None, T0) == Unchanged(full)
    assert "both seats" in refused(full, CY, Join(), None, T0, Refused.ROOM_FULL).message
    refused(room, None, Join(), None, T0, Refused.NOT_SEATED)
    solo = open_room("s1", Classic.new(9, 9, 10, random.Random(3)), (ANNA,), None, T0).room
    assert refused(solo, BEN, Join(), None, T0, Refused.ROOM_FULL).message == "a classic game has one player"


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
    refused(over, ANNA, LinkRematch("r9"), None, T0, Refused.NO_OFFER)  # nobody offered one
    refused(room, ANNA, OfferRematch(), None, T0, Refused.NOT_OVER)
    refused(room, ANNA, Play(ClaimAbandoned()), None, T0, Refused.NOT_A_MOVE)
    refused(room, ANNA, Claim(False, None), None, T0, Refused.OPPONENT_PRESENT)
    refused(room, CY, Claim(False, T0), None, T0 + LEAVE_GRACE_MS, Refused.NOT_SEATED)
    refused(waiting(), ANNA, Claim(False, T0), None, T0 + LEAVE_GRACE_MS, Refused.NOT_PLAYING)
    refused(over, ANNA, Claim(False, T0), None, T0 + LEAVE_GRACE_MS, Refused.GAME_OVER)


def test_every_rule_refusal_has_a_code_of_the_same_name() -> None:
    for code in IllegalCode:
        assert Refused(code.value).value == code.value


def test_resigning_is_allowed_on_either_turn_and_ends_the_game() -> None:
    room = playing(Clock.new(60_000, 0))
    new = committed(decide(room, BEN, Play(Resign()), None, T0 + 3_000))
    assert new.status is Status.OVER and new.game.outcome.winner == 0
    assert new.clock.running is None and new.clock.remaining_ms == (60_000, 60_000)  # it never ran
    assert next_due(new) is None


# ---------------------------------------------------------------------- clocks


def test_the_first_move_starts_the_clock_and_later_ones_press_it() -> None:
    room = playing(Clock.new(60_000, 2_000))
    first = committed(decide(room, ANNA, Play(Explore(safe_cell(room))), room.version, T0 + 10_000))
    assert first.clock.running == 1 and first.clock.remaining_ms == (60_000, 60_000)  # Anna's time never ran
    assert first.moved_ms == T0 + 10_000
    assert next_due(first) == T0 + 10_000 + FIRST_MOVE_MS  # Ben's first move is due too
    second = committed(decide(first, BEN, Play(Explore(safe_cell(first))), first.version, T0 + 15_000))
    assert second.clock.running == 0 and second.clock.remaining_ms == (60_000, 57_000)  # 5 s used, 2 s added
    assert next_due(second) == T0 + 15_000 + 60_000  # now only the flag
    third = committed(decide(second, ANNA, Play(Explore(safe_cell(second))), second.version, T0 + 25_000))
    assert third.clock.running == 1 and third.clock.remaining_ms == (52_000, 57_000)


def moved_twice(clock: Clock, at: int = T0) -> Room:
    """Both seats made their first move at ``at``; Anna is to move, her clock running."""
    room = playing(clock)
    room = committed(decide(room, ANNA, Play(Explore(safe_cell(room))), None, at))
    return committed(decide(room, BEN, Play(Explore(safe_cell(room))), None, at))


def test_a_move_after_the_flag_fell_commits_the_timeout_and_is_refused() -> None:
    room = moved_twice(Clock.new(60_000, 0))
    late = T0 + 60_000
    commit = decide(room, ANNA, Play(Explore(safe_cell(room))), room.version, late)
    assert isinstance(commit, Commit) and commit.refusal is not None
    assert commit.refusal.code is Refused.TIME_OUT and commit.refusal.room is commit.room
    assert commit.detail == (0, "timeout") and commit.room.game.outcome.termination == "timeout"
    assert commit.room.game.outcome.winner == 1 and commit.room.clock.running is None
    # the opponent's resignation comes too late as well: the flag fell first
    assert committed(decide(room, BEN, Play(Resign()), None, late)).game.outcome.termination == "timeout"


def test_a_timeout_is_claimed_once_the_flag_fell_and_not_before() -> None:
    room = moved_twice(Clock.new(60_000, 0))
    assert decide(room, None, Tick(), None, T0 + 59_999) == Unchanged(room)
    over = committed(decide(room, None, Tick(), None, T0 + 60_000))
    assert over.game.outcome.termination == "timeout" and over.status is Status.OVER
    assert decide(over, None, Tick(), None, T0 + 99_000) == Unchanged(over)
    assert decide(playing(), None, Tick(), None, T0 + 10**9) == Unchanged(playing())  # no clock


# ---------------------------------------------------------------------- aborts


def test_a_first_move_that_does_not_come_aborts_the_game_without_a_result() -> None:
    room = playing(Clock.new(300_000, 0))
    assert decide(room, None, Tick(), None, T0 + FIRST_MOVE_MS - 1) == Unchanged(room)
    aborted = committed(decide(room, None, Tick(), None, T0 + FIRST_MOVE_MS))
    assert aborted.game.outcome.termination == "aborted" and aborted.game.outcome.winner is None
    assert aborted.status is Status.OVER and next_due(aborted) is None
    # the second seat's first move is due within the window of the first's too
    first = committed(decide(room, ANNA, Play(Explore(safe_cell(room))), None, T0 + 1_000))
    late = committed(decide(first, None, Tick(), None, T0 + 1_000 + FIRST_MOVE_MS))
    assert late.game.outcome.termination == "aborted"
    # a correspondence game waits its days per move instead
    corr = playing(Clock.correspondence(3))
    assert next_due(corr) == T0 + 3 * DAY_MS
    assert committed(decide(corr, None, Tick(), None, T0 + 3 * DAY_MS)).game.outcome.termination == "aborted"


def test_either_player_may_abort_until_both_have_moved() -> None:
    room = playing(Clock.new(60_000, 0))
    assert committed(decide(room, BEN, Play(Abort()), None, T0)).game.outcome.termination == "aborted"
    first = committed(decide(room, ANNA, Play(Explore(safe_cell(room))), None, T0))
    assert committed(decide(first, ANNA, Play(Abort()), None, T0)).game.outcome.termination == "aborted"
    both = committed(decide(first, BEN, Play(Explore(safe_cell(first))), None, T0))
    refused(both, ANNA, Play(Abort()), None, T0, Refused.TOO_LATE_TO_ABORT)
    # the creator may call off a game nobody joined
    assert committed(decide(waiting(), ANNA, Play(Abort()), None, T0)).status is Status.OVER


# ---------------------------------------------------------------------- claims


def test_a_game_is_claimed_only_after_the_opponent_was_gone_for_the_grace_period() -> None:
    room = moved_twice(Clock.new(600_000, 0))
    gone = T0 + 5_000
    early = refused(room, ANNA, Claim(False, gone), None, gone + LEAVE_GRACE_MS - 1, Refused.OPPONENT_PRESENT)
    assert "1 s" in early.message
    won = committed(decide(room, ANNA, Claim(False, gone), None, gone + LEAVE_GRACE_MS))
    assert won.game.outcome.termination == "abandoned" and won.game.outcome.winner == 0
    drawn = committed(decide(room, BEN, Claim(True, gone), None, gone + LEAVE_GRACE_MS))  # on Anna's turn
    assert drawn.game.outcome.termination == "abandoned" and drawn.game.outcome.winner is None
    corr = moved_twice(Clock.correspondence(1))
    refused(corr, ANNA, Claim(False, gone), None, gone + DAY_MS, Refused.OPPONENT_PRESENT)  # the clock decides


def test_nobody_left_before_both_seats_were_taken() -> None:
    """The seat's time without a connection starts while it is still empty: a joiner whose page
    has not yet opened its socket has not left, and is claimed against only once the grace
    period has passed since the join, however long the seat stood empty (or the creator away)."""
    joined_at = T0 + 300_000
    room = committed(decide(waiting(Clock.new(600_000, 5_000)), BEN, Join(), None, joined_at))
    assert room.status is Status.PLAYING and room.seated_ms == joined_at
    for claimer, empty_since in ((ANNA, T0), (BEN, T0 - 1)):  # the joiner's seat; the creator gone long ago
        early = refused(room, claimer, Claim(False, empty_since), None, joined_at + 1, Refused.OPPONENT_PRESENT)
        assert "60 s" in early.message
        refused(room, claimer, Claim(True, empty_since), None, joined_at + LEAVE_GRACE_MS - 1, Refused.OPPONENT_PRESENT)
    claimed = committed(decide(room, ANNA, Claim(False, T0), None, joined_at + LEAVE_GRACE_MS))
    assert claimed.game.outcome.termination == "abandoned" and claimed.game.outcome.winner == 0


def test_a_classic_game_s_timer_starts_with_its_first_opening_click_not_a_flag_before_it() -> None:
    room = open_room("s1", Classic.new(9, 9, 10, random.Random(3)), (ANNA,), None, T0).room
    flagged = committed(decide(room, ANNA, Play(Flag((0, 0))), None, T0 + 1_000))
    assert flagged.started_ms is None and flagged.elapsed_ms(T0 + 9_000) is None
    opened = committed(decide(flagged, ANNA, Play(Reveal((4, 4))), None, T0 + 5_000))
    assert opened.started_ms == T0 + 5_000
    again = committed(decide(opened, ANNA, Play(Flag((8, 8))), None, T0 + 6_000))
    assert again.started_ms == T0 + 5_000
    duel_room = committed(decide(waiting(), BEN, Join(), None, T0))
    assert duel_room.started_ms is None
    hidden = next(c for c in duel_room.game.geo.cells if duel_room.game.is_hidden(c))
    assert committed(decide(duel_room, ANNA, Play(Explore(hidden)), None, T0 + 7)).started_ms == T0 + 7


def test_a_classic_game_cannot_be_claimed_it_has_no_opponent() -> None:
    room = open_room("s1", Classic.new(9, 9, 10, random.Random(3)), (ANNA,), None, T0).room
    for draw in (False, True):
        refused(room, ANNA, Claim(draw, T0), None, T0 + LEAVE_GRACE_MS + 1, Refused.NOT_A_MOVE)
        refused(room, ANNA, Claim(draw, None), None, T0, Refused.NOT_A_MOVE)


# ---------------------------------------------------------------------- computers


def test_a_computer_answers_after_its_pause_from_its_own_view() -> None:
    bot = computer(2)
    room = open_room("r1", duel(), (ANNA, bot), Clock.new(60_000, 0), T0, rated=True).room
    assert not room.rated  # a computer's games are never rated
    assert next_due(room) == T0 + FIRST_MOVE_MS  # Anna first
    moved = committed(decide(room, ANNA, Play(Explore(safe_cell(room))), None, T0 + 1_000))
    due = next_due(moved)
    assert due == T0 + 1_000 + pause_ms(moved) and due < T0 + 1_000 + FIRST_MOVE_MS
    assert decide(moved, None, Tick(), None, due - 1) == Unchanged(moved)
    answered = decide(moved, None, Tick(), None, due)
    assert isinstance(answered, Commit) and answered.detail[0] == 1 and answered.room.game.to_move == 0
    assert decide(moved, None, Tick(), None, due) == answered  # every process decides the same answer
    ahead = decide(moved, None, Tick(reply(moved)), None, due + 1_500)  # worked out in the worker
    assert isinstance(ahead, Commit) and ahead.room.game == answered.room.game
    assert ahead.room.clock.since_ms == due + 1_500  # decided when ready: the computer's time
    assert decide(moved, None, Tick(reply(moved)), None, due - 1) == Unchanged(moved)  # not due yet


def test_a_computer_always_takes_a_rematch() -> None:
    over = committed(decide(open_room("r1", duel(), (ANNA, computer(1)), None, T0).room, ANNA, Play(Resign()),
                            None, T0))
    assert committed(decide(over, ANNA, LinkRematch("r2"), None, T0)).rematch == "r2"


# ---------------------------------------------------------------------- rematches


def test_a_rematch_is_offered_then_accepted_once_with_the_seats_swapped() -> None:
    over = committed(decide(playing(), ANNA, Play(Resign()), None, T0))
    offered = committed(decide(over, ANNA, OfferRematch(), None, T0))
    assert offered.rematch_offer == 0 and offered.version == over.version + 1
    assert decide(offered, ANNA, OfferRematch(), None, T0) == Unchanged(offered)
    refused(offered, BEN, OfferRematch(), None, T0, Refused.NO_OFFER)  # accept it instead
    refused(offered, ANNA, LinkRematch("r2"), None, T0, Refused.NO_OFFER)  # one cannot accept one's own
    linked = committed(decide(offered, BEN, LinkRematch("r2"), None, T0))
    assert linked.rematch == "r2" and linked.rematch_offer is None and linked.version == offered.version + 1
    assert decide(linked, ANNA, LinkRematch("r3"), None, T0) == Unchanged(linked)
    assert rematch_players(over) == (BEN, ANNA)


def test_a_declined_offer_makes_no_game() -> None:
    over = committed(decide(playing(), ANNA, Play(Resign()), None, T0))
    assert decide(over, BEN, DeclineRematch(), None, T0) == Unchanged(over)  # nothing to decline
    offered = committed(decide(over, ANNA, OfferRematch(), None, T0))
    declined = committed(decide(offered, BEN, DeclineRematch(), None, T0))
    assert declined.rematch_offer is None and declined.rematch is None
    refused(declined, BEN, LinkRematch("r2"), None, T0, Refused.NO_OFFER)


# ---------------------------------------------------------------------- any sequence


commands = st.one_of(
    st.builds(lambda r, c, mark: Play(Mark((r, c)) if mark else Explore((r, c))),
              st.integers(-1, 11), st.integers(-1, 11), st.booleans()),
    st.just(Play(Resign())), st.just(Play(Timeout())), st.just(Play(Abort())), st.just(Join()), st.just(Tick()),
    st.builds(Claim, st.booleans(), st.one_of(st.none(), st.integers(T0, T0 + 200_000))),
    st.just(OfferRematch()), st.just(DeclineRematch()),
    st.builds(LinkRematch, st.sampled_from(["x1", "x2"])),
)
actors = st.sampled_from([ANNA, BEN, CY, None])


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), st.booleans(), st.lists(st.tuples(actors, commands, st.integers(-1, 3),
                                                                 st.integers(0, 30_000)), max_size=60))
def test_any_sequence_of_commands_gives_plain_answers_and_refusals_change_nothing(seed, timed, steps) -> None:
    room = open_room("r1", duel(seed), (ANNA, None), Clock.new(60_000, 1_000) if timed else None, T0).room
    play_out(room, steps)


classic_commands = st.one_of(
    st.builds(lambda r, c, kind: Play(kind((r, c))), st.integers(-1, 9), st.integers(-1, 9),
              st.sampled_from([Reveal, Flag, Chord, Explore])),
    st.just(Play(Resign())), st.just(Play(Timeout())), st.just(Play(Abort())), st.just(Join()), st.just(Tick()),
    st.builds(Claim, st.booleans(), st.one_of(st.none(), st.integers(T0, T0 + 200_000))),
    st.just(OfferRematch()), st.just(DeclineRematch()),
    st.builds(LinkRematch, st.sampled_from(["x1", "x2"])),
)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), st.lists(st.tuples(actors, classic_commands, st.integers(-1, 3),
                                                 st.integers(0, 30_000)), max_size=60))
def test_any_sequence_of_commands_on_a_classic_game_gives_plain_answers_and_refusals_change_nothing(
        seed, steps) -> None:
    """The same for the one-seat game: every command the socket and the API can send, the
    ones that only make sense in a duel (a claim, a rematch offer) included."""
    play_out(open_room("s1", Classic.new(9, 9, 10, random.Random(seed)), (ANNA,), None, T0).room, steps)


def play_out(room: Room, steps) -> None:  # noqa: ANN001
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

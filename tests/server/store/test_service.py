"""The room service on the real Valkey: retention, records, rematches, unknown rooms."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator
from itertools import count
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from engine import Classic, Explore, Flag, Game, Resign, Reveal
from engine.clock import Clock
from server.app import Parts
from server.core.commands import DeclineRematch, Join, Play, Refused, Tick
from server.core.computer import computer
from server.core.due import answer_due
from server.core.room import Player, Room, Status
from server.edge import new_game
from server.metrics import Metrics
from server.store.cache import RoomCache
from server.store.committer import Retention
from server.store.keys import CLOCKS, clock_key, log_key, state_key
from server.store.offload import Offload
from server.store.service import (
    BOARD_QUEUE,
    BOARDS_PER_SOURCE,
    RoomRefused,
    RoomService,
)
from server.store.slots import is_shard_slot, slot_of
from server.store.store import Store
from tests.conftest import app_settings
from tests.server.store.held_jobs import Gate, HeldOffload

ANNA, BEN, CY = Player("gA", "Anna"), Player("gB", "Ben"), Player("gC", "Cy")
POLLS = 200


async def test_room_keys_expire_after_the_game_and_when_abandoned(parts: Parts, redis_url: str) -> None:
    """Retention: every commit renews the expiry of the room's state and log — the idle TTL
    while the game is unfinished, the finished TTL once it is over — so Redis does not keep
    every game ever played."""
    rooms = RoomService(parts.store, RoomCache(), parts.rooms.metrics, retention=Retention(1, 3600))
    r = aioredis.Redis.from_url(redis_url)
    try:
        room = await rooms.create(new_game.duel("brettspielnetz", 5), (ANNA, BEN))
        keys = (state_key(room.id), log_key(room.id))
        for key in keys:
            assert 60 < await r.ttl(key) <= 3600  # the idle TTL: abandoned now, it would go in an hour
        await rooms.act(room.id, BEN, Play(Resign()))
        for _ in range(POLLS):  # over: gone after a second
            if not await r.exists(*keys):
                break
            await asyncio.sleep(0.05)
        assert not await r.exists(*keys)
        forever = RoomService(parts.store, RoomCache(), parts.rooms.metrics, retention=Retention(0, 0))
        kept = await forever.create(new_game.duel("brettspielnetz", 5), (ANNA, BEN))
        assert await r.ttl(state_key(kept.id)) == -1  # 0 = keep forever
    finally:
        await r.aclose()


async def test_unknown_rooms_and_records_before_the_end_are_refused(parts: Parts) -> None:
    with pytest.raises(RoomRefused) as e:
        await parts.rooms.load("no-such-room")
    assert e.value.code is Refused.UNKNOWN_ROOM and e.value.room is None
    room = await parts.rooms.create(new_game.duel("coan", 2), (ANNA, None))
    with pytest.raises(RoomRefused) as e:
        await parts.rooms.record(room.id)
    assert e.value.code is Refused.NOT_OVER
    assert (await parts.rooms.act(room.id, BEN, Join())).players == (ANNA, BEN)
    assert (await parts.rooms.act(room.id, BEN, Join())).version == 2  # seated already: unchanged
    over = await parts.rooms.act(room.id, ANNA, Play(Resign()))
    record = await parts.rooms.record(room.id)
    assert record["id"] == room.id and record["v"] == over.version and record["moves"] == [[0, "resign"]]
    assert record["players"] == [ANNA.to_data(), BEN.to_data()] and record["kind"] == "duel"


async def test_a_rematch_is_made_once_with_the_seats_swapped(parts: Parts) -> None:
    room = await parts.rooms.create(new_game.duel("brettspielnetz", 4), (ANNA, BEN))
    with pytest.raises(RoomRefused) as e:
        await parts.rooms.rematch(room.id, ANNA, new_game.rematch_of)
    assert e.value.code is Refused.NOT_OVER
    await parts.rooms.act(room.id, ANNA, Play(Resign()))
    with pytest.raises(RoomRefused) as e:
        await parts.rooms.rematch(room.id, CY, new_game.rematch_of)
    assert e.value.code is Refused.NOT_SEATED
    # both ask at once: one offers, the other accepts (whichever comes first)
    first, again = await asyncio.gather(parts.rooms.rematch(room.id, ANNA, new_game.rematch_of),
                                        parts.rooms.rematch(room.id, BEN, new_game.rematch_of))
    linked = await parts.rooms.load(room.id)
    assert linked.rematch is not None and linked.rematch_offer is None
    assert {first.id, again.id} == {room.id, linked.rematch}
    assert (await parts.rooms.rematch(room.id, ANNA, new_game.rematch_of)).id == linked.rematch  # idempotent
    fresh = await parts.rooms.load(linked.rematch)
    assert fresh.players == (BEN, ANNA) and fresh.status is Status.PLAYING and fresh.version == 1


async def test_a_rematch_offer_is_accepted_or_declined(parts: Parts) -> None:
    room = await parts.rooms.create(new_game.duel("brettspielnetz", 4), (ANNA, BEN))
    await parts.rooms.act(room.id, BEN, Play(Resign()))
    offered = await parts.rooms.rematch(room.id, ANNA, new_game.rematch_of)
    assert offered.id == room.id and offered.rematch_offer == 0 and offered.rematch is None
    assert (await parts.rooms.rematch(room.id, ANNA, new_game.rematch_of)).rematch_offer == 0  # asked again: same
    declined = await parts.rooms.act(room.id, BEN, DeclineRematch())
    assert declined.rematch_offer is None and declined.rematch is None
    again = await parts.rooms.rematch(room.id, BEN, new_game.rematch_of)  # Ben offers now
    assert again.rematch_offer == 1
    fresh = await parts.rooms.rematch(room.id, ANNA, new_game.rematch_of)  # and Anna accepts
    assert fresh.id != room.id and fresh.players == (BEN, ANNA)


async def ended_with_an_offer(rooms: RoomService) -> tuple:
    """A finished game of two fresh players (their game lists hold nothing else) in which the
    second has offered a rematch."""
    anna, ben = Player(f"g{secrets.token_hex(5)}", "Anna"), Player(f"g{secrets.token_hex(5)}", "Ben")
    room = await rooms.create(new_game.duel("brettspielnetz", 4), (anna, ben), clock=Clock.new(60_000))
    await rooms.act(room.id, anna, Play(Resign()))
    await rooms.rematch(room.id, ben, new_game.rematch_of)
    return room, anna, ben


async def gone(parts: Parts, room_id: str, *players: Player) -> bool:
    """``room_id`` is not stored, not due and on no list of ``players``."""
    with pytest.raises(RoomRefused) as e:
        await parts.rooms.load(room_id)
    assert e.value.code is Refused.UNKNOWN_ROOM
    assert room_id not in {d[0] for d in await parts.store.due_clocks(2**62, 10_000)}
    for player in players:
        assert room_id not in {g["id"] for g in await parts.rooms.games.ongoing(player.id)}
    return True


def meanwhile(rooms: RoomService, monkeypatch, then) -> list[str]:  # noqa: ANN001
    """Record the id of every room ``rooms`` makes, and run ``then()`` right after the first:
    what another request does between a rematch room's creation and its link."""
    made, create = [], rooms.create

    async def create_then(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        fresh = await create(*args, **kwargs)
        made.append(fresh.id)
        if len(made) == 1:
            await then()
        return fresh

    monkeypatch.setattr(rooms, "create", create_then)
    return made


async def test_a_rematch_whose_offer_is_withdrawn_meanwhile_leaves_no_game(parts: Parts, monkeypatch) -> None:
    """The accepting side makes the new room, then links it; the offer withdrawn in between
    refuses the link (no_offer), and the room made for it is gone: not seated and due in
    both players' lists (it was, as a game being played, then an aborted one)."""
    rooms = parts.rooms
    room, anna, ben = await ended_with_an_offer(rooms)
    made = meanwhile(rooms, monkeypatch, lambda: rooms.act(room.id, ben, DeclineRematch()))
    with pytest.raises(RoomRefused) as e:
        await rooms.rematch(room.id, anna, new_game.rematch_of)
    assert e.value.code is Refused.NO_OFFER
    assert (await rooms.load(room.id)).rematch is None and len(made) == 1
    assert await gone(parts, made[0], anna, ben)


async def test_a_rematch_accepted_twice_at_once_leaves_one_game(parts: Parts, monkeypatch) -> None:
    """Two accepts race (two tabs, two processes): the second links its room first, so the
    first's link finds the rematch made and answers with it; its own room is gone. The one
    made is on the lobby's list (an accept through the API or a socket once left it off)."""
    rooms = parts.rooms
    room, anna, ben = await ended_with_an_offer(rooms)
    made = meanwhile(rooms, monkeypatch, lambda: rooms.rematch(room.id, anna, new_game.rematch_of))
    first = await rooms.rematch(room.id, anna, new_game.rematch_of)
    lost, won = made
    assert (await rooms.load(room.id)).rematch == won == first.id != lost
    assert await gone(parts, lost, anna, ben)
    for player in (anna, ben):
        assert [g["id"] for g in await rooms.games.ongoing(player.id)] == [won]
    listed = await parts.store.listed_rooms(10_000)
    assert won in listed and lost not in listed  # the lobby's live games: a rematch however accepted


async def test_an_accept_refused_its_game_answers_with_the_rematch_another_made(parts: Parts) -> None:
    """Two accepts at once at the edge of the address's budget: the one whose game is refused
    (the edge's factory raises) while the other links the rematch answers with that rematch,
    as any accept once linked does; with none linked, the refusal stands."""
    rooms = parts.rooms
    room, anna, ben = await ended_with_an_offer(rooms)

    def over_budget(_: Room) -> Game:
        raise RuntimeError("no new games left")

    with pytest.raises(RuntimeError):
        await rooms.rematch(room.id, anna, over_budget)
    assert (await rooms.load(room.id)).rematch is None  # nothing made, the offer standing

    stale = await rooms.load(room.id)  # as an accept read it, before the other accept linked its room
    other = await rooms.rematch(room.id, anna, new_game.rematch_of)
    answer = await rooms._start_rematch(stale, anna, over_budget)  # its game refused only now
    assert answer.id == other.id == (await rooms.load(room.id)).rematch


async def test_a_sweeper_acting_on_an_older_version_never_drops_a_newer_due_time(parts: Parts) -> None:
    """The due set is kept by the commit; a sweeper that read a room's due time and then
    decided (on the version it knew) that nothing falls due may only drop that same time: a
    move committed meanwhile has set the room's next due time (a computer's answer, a first
    move), and dropping it would leave the room waiting for ever."""
    store = parts.store
    room = await parts.rooms.create(new_game.duel("brettspielnetz", 6), (ANNA, BEN), clock=Clock.new(60_000))
    far = room.created_ms + 86_400_000
    [(room_id, first_due)] = [d for d in await store.due_clocks(far, 10_000) if d[0] == room.id]
    moved = await parts.rooms.act(room.id, ANNA, Play(Explore((0, 0))))
    [(_, next_due)] = [d for d in await store.due_clocks(far, 10_000) if d[0] == room.id]
    assert moved.version == 2 and next_due > first_due  # Ben's first move is due from Anna's
    assert not await store.drop_clock(room_id, first_due)  # the time read before: kept
    assert (room.id, next_due) in await store.due_clocks(far, 10_000)
    assert await store.drop_clock(room_id, next_due)  # the current time: dropped
    assert room.id not in {d[0] for d in await store.due_clocks(far, 10_000)}


async def test_the_sweepers_read_every_due_index_the_earliest_first(parts: Parts) -> None:
    """Rooms on different shard slots and a room made before ids fell on them (its place in the
    global ``clocks``) all reach the sweepers' list, which is in due order and limited; the old
    room's entry is dropped from where it is."""
    store, prefix = parts.store, "old" + secrets.token_hex(4)
    old_id = next(f"{prefix}{n}" for n in count() if not is_shard_slot(slot_of(f"{prefix}{n}")))
    made = [await parts.rooms.create(new_game.duel("brettspielnetz", seed), (ANNA, BEN), clock=Clock.new(60_000))
            for seed in range(6)]
    old = await parts.rooms.create(new_game.duel("brettspielnetz", 9), (ANNA, BEN), clock=Clock.new(60_000),
                                   room_id=old_id)
    assert clock_key(old.id) == CLOCKS and len({clock_key(room.id) for room in made}) > 1
    far = old.created_ms + 86_400_000
    listed = await store.due_clocks(far, 10_000)
    assert {room.id for room in [*made, old]} <= {room_id for room_id, _due in listed}
    assert [d for _r, d in listed] == sorted(d for _r, d in listed)
    limited = await store.due_clocks(far, 2)
    assert len(limited) == 2 and [d for _r, d in limited] == sorted(d for _r, d in limited)
    [(_, old_due)] = [d for d in listed if d[0] == old.id]
    assert await store.drop_clock(old.id, old_due)
    assert old.id not in {room_id for room_id, _due in await store.due_clocks(far, 10_000)}


async def test_a_correspondence_game_times_out_once_with_nobody_connected(parts: Parts) -> None:
    """Days per move: when the mover's days run out, the due work (any process's sweeper, no
    socket anywhere) ends the game on time, and two processes acting at once commit it once."""
    now = [0]
    first, second = (RoomService(parts.store, RoomCache(), Metrics(), now_ms=lambda: now[0]) for _ in range(2))
    room = await parts.rooms.create(new_game.duel("brettspielnetz", 8), (ANNA, BEN), clock=Clock.correspondence(3))
    now[0] = room.created_ms + 1_000
    await first.act(room.id, ANNA, Play(Explore((0, 0))))
    moved = await first.act(room.id, BEN, Play(Explore((10, 10))))  # both moved: Anna's 3 days run
    due = moved.clock.deadline_ms()
    assert due == now[0] + 3 * 86_400_000
    now[0] = due - 1
    assert (await first.act(room.id, None, Tick())).version == moved.version  # not yet: nothing happens
    now[0] = due + 1
    assert room.id in {d[0] for d in await parts.store.due_clocks(now[0], 10_000)}  # the sweepers' work list
    ended = await asyncio.gather(first.act(room.id, None, Tick()), second.act(room.id, None, Tick()))
    final = await parts.rooms.load(room.id)
    assert final.status is Status.OVER and final.version == moved.version + 1  # one commit, not two
    assert final.game.outcome.termination == "timeout" and final.game.outcome.winner == 1
    assert {r.version for r in ended} == {final.version}
    record = await parts.rooms.record(room.id)
    assert [m for m in record["moves"] if m[1] == "timeout"] == [[0, "timeout"]]


class SlowOffload(Offload):
    """The real worker process, and the wall clock of the test moved on by ``took_ms`` while it
    works: what drawing an Expert no-guess layout takes (up to seconds on a large board)."""

    def __init__(self, clock: list[int], took_ms: int) -> None:
        super().__init__()
        self.clock, self.took_ms, self.runs = clock, took_ms, 0

    async def run(self, fn, *args, owner=None, group=None):  # noqa: ANN001, ANN201
        done = await super().run(fn, *args, owner=owner, group=group)
        self.clock[0] += self.took_ms
        self.runs += 1
        return done


@contextlib.asynccontextmanager
async def slowly_offloaded(redis_url: str, took_ms: int) -> AsyncIterator[tuple[RoomService, SlowOffload, list[int]]]:
    """A room service on its own store whose worker takes ``took_ms`` of the test's clock (a
    list: its one item is now, in ms), with the offload and the clock. The clock runs an hour
    ahead of the wall: the test servers share the store, and their sweepers ended a strong
    computer's game on time (its clock long run out by the wall's time) between two commits."""
    store = Store(redis_url)
    clock = [time.time_ns() // 1_000_000 + 3_600_000]  # an hour ahead: no other process's sweeper
    offload = SlowOffload(clock, took_ms)                # (same store, the wall clock) finds it due
    try:
        yield (RoomService(store, RoomCache(), Metrics(), now_ms=lambda: clock[0], boards=offload, answers=offload),
               offload, clock)
    finally:
        offload.close()
        await store.close()


async def test_a_no_guess_layout_s_drawing_time_is_not_the_player_s(redis_url: str) -> None:
    """The layout is drawn off the loop before the first click is decided: the timer starts
    when the board is there, not when the click came; nothing else is run off the loop."""
    async with slowly_offloaded(redis_url, 1_800) as (rooms, offload, clock):
        me = Player("g" + secrets.token_hex(5), "Sol")
        room = await rooms.create(new_game.classic(16, 16, 40, no_guess=True, seed=4), (me,))
        for stranger, seen in ((Player("g" + secrets.token_hex(5), "Spy"), room.version), (me, room.version + 5)):
            with pytest.raises(RoomRefused):  # a spectator's click, a stale one: refused, and nothing searched
                await rooms.play(room.id, stranger, Reveal((8, 8)), seen)
        assert offload.runs == 0
        clicked_at = clock[0]
        played = await rooms.play(room.id, me, Reveal((8, 8)), room.version)
        assert offload.runs == 1 and played.started_ms == clicked_at + 1_800
        again = await rooms.play(room.id, me, Flag(next(c for c in played.game.geo.cells if played.game.is_hidden(c))),
                                 played.version)
        assert offload.runs == 1 and again.started_ms == played.started_ms
        assert played.game.mines == new_game.classic(16, 16, 40, no_guess=True, seed=4).prepared(Reveal((8, 8))).mines


async def test_the_strong_computer_s_thinking_is_on_its_own_clock(redis_url: str) -> None:
    """The strong computer works out its answer in the worker; the answer is decided when it
    is ready, so the time it took (the search, and any wait for a worker busy with others'
    work) is the computer's, and the person's clock starts when the answer is there. Decided
    with the clock read before, a busy worker's wait was charged to the person."""
    async with slowly_offloaded(redis_url, 1_900) as (rooms, offload, clock):
        me = Player("g" + secrets.token_hex(5), "Ada")
        room = await rooms.create(new_game.duel("brettspielnetz", 8), (me, computer(3)), Clock.new(60_000))
        clock[0] += 1_000
        moved = await rooms.play(room.id, me, Explore((0, 0)), room.version)
        assert moved.status is Status.PLAYING and moved.game.to_move == 1 and moved.clock.running == 1
        due = answer_due(moved)
        assert due is not None
        clock[0] = due - 1
        assert (await rooms.act(room.id, None, Tick())).version == moved.version and offload.runs == 0
        clock[0] = due
        answered = await rooms.act(room.id, None, Tick())
        assert offload.runs == 1 and answered.version == moved.version + 1 and answered.game.to_move == 0
        assert answered.clock.running == 0 and answered.clock.since_ms == due + 1_900  # mine from now
        assert answered.clock.remaining(0, clock[0]) == 60_000
        assert answered.clock.remaining_ms[1] == 60_000 - (due + 1_900 - moved.clock.since_ms)


@contextlib.asynccontextmanager
async def lanes(redis_url: str, boards: Offload) -> AsyncIterator[tuple[RoomService, list[int]]]:
    """A room service on its own store with ``boards`` as its board lane and a plain worker for
    the computer's answers, and its clock (an hour ahead, as :func:`slowly_offloaded`'s)."""
    store = Store(redis_url)
    clock = [time.time_ns() // 1_000_000 + 3_600_000]
    answers = Offload()
    try:
        yield RoomService(store, RoomCache(), Metrics(), now_ms=lambda: clock[0], boards=boards, answers=answers), clock
    finally:
        boards.close()
        answers.close()
        await store.close()


def someone(name: str) -> Player:
    return Player("g" + secrets.token_hex(5), name)


def no_guess_expert(seed: int = 4) -> Classic:
    return new_game.classic(30, 16, 99, no_guess=True, seed=seed)


async def test_a_computer_s_answer_does_not_wait_behind_a_board(redis_url: str, tmp_path: Path) -> None:
    """Boards and answers have a worker each: while a board's search holds the board worker
    (for as long as the test likes), the strong computer still answers. With one worker for
    both, the answer waited behind every board queued (34.5 s in the probe)."""
    gate = Gate(tmp_path)
    async with lanes(redis_url, HeldOffload(gate)) as (rooms, clock):
        sol = someone("Sol")
        solo = await rooms.create(no_guess_expert(), (sol,))
        click = asyncio.create_task(rooms.play(solo.id, sol, Reveal((8, 15)), solo.version))
        await gate.until_started()
        me = someone("Ada")
        duel = await rooms.create(new_game.duel("brettspielnetz", 8), (me, computer(3)), Clock.new(60_000))
        moved = await rooms.play(duel.id, me, Explore((0, 0)), duel.version)
        due = answer_due(moved)
        assert due is not None and moved.game.to_move == 1
        clock[0] = due
        answered = await asyncio.wait_for(rooms.act(duel.id, None, Tick()), 60)  # a bound, not an expectation
        assert answered.version == moved.version + 1 and answered.game.to_move == 0
        assert not click.done()  # the board is still being made
        gate.open()
        played = await asyncio.wait_for(click, 60)
        assert played.version == solo.version + 1 and played.game.mines is not None


async def test_a_second_first_click_of_the_same_player_is_refused_and_changes_nothing(
        redis_url: str, tmp_path: Path) -> None:
    """One board in flight per player: a double click, or a first click in another game of
    theirs, while their board is being made is refused (``board_pending``), nothing queued and
    the room unchanged; once the board is there the click simply comes again."""
    gate = Gate(tmp_path)
    boards = HeldOffload(gate)
    async with lanes(redis_url, boards) as (rooms, _):
        sol = someone("Sol")
        first, other = await rooms.create(no_guess_expert(4), (sol,)), await rooms.create(no_guess_expert(5), (sol,))
        click = asyncio.create_task(rooms.play(first.id, sol, Reveal((8, 15)), first.version))
        await gate.until_started()
        for room, seen in ((first, first.version), (other, other.version), (other, None)):
            with pytest.raises(RoomRefused) as e:
                await asyncio.wait_for(rooms.play(room.id, sol, Reveal((3, 3)), seen), 30)  # refused at once
            assert e.value.code is Refused.BOARD_PENDING and e.value.room is not None
            assert e.value.room.version == room.version and e.value.room.game.mines is None
            stored = await rooms.load(room.id)
            assert stored.version == room.version and stored.game.mines is None and stored.game.log == []
        assert boards.waiting == 0 and gate.started() == 1  # nothing queued for the refused clicks
        gate.open()
        assert (await asyncio.wait_for(click, 60)).version == first.version + 1
        again = await asyncio.wait_for(rooms.play(other.id, sol, Reveal((3, 3)), other.version), 60)
        assert again.version == other.version + 1 and again.game.mines is not None


async def test_a_first_click_beyond_the_board_queue_is_refused_as_busy_and_changes_nothing(
        redis_url: str, tmp_path: Path) -> None:
    """A bounded queue: with one board being made and ``most_waiting`` (here 1) waiting, the
    next player's first click is refused at once (``busy``: click again) instead of waiting
    behind all of them; its room is unchanged and its click works once the queue drained."""
    gate = Gate(tmp_path)
    boards = HeldOffload(gate, most_waiting=1)
    async with lanes(redis_url, boards) as (rooms, _):
        players = [someone(n) for n in ("Ann", "Bo", "Cy")]
        made = [await rooms.create(no_guess_expert(seed), (p,)) for seed, p in enumerate(players)]
        clicks = [asyncio.create_task(rooms.play(made[0].id, players[0], Reveal((8, 15)), made[0].version))]
        await gate.until_started()
        clicks.append(asyncio.create_task(rooms.play(made[1].id, players[1], Reveal((8, 15)), made[1].version)))
        for _ in range(POLLS):
            if boards.waiting == 1:
                break
            await asyncio.sleep(0.05)
        assert boards.waiting == 1
        late = made[2]
        with pytest.raises(RoomRefused) as e:
            await asyncio.wait_for(rooms.play(late.id, players[2], Reveal((8, 15)), late.version), 30)  # at once
        assert e.value.code is Refused.BUSY and e.value.room is not None and e.value.room.version == late.version
        stored = await rooms.load(late.id)
        assert stored.version == late.version and stored.game.mines is None and stored.game.log == []
        gate.open()
        done = await asyncio.wait_for(asyncio.gather(*clicks), 60)
        assert [r.version for r in done] == [made[0].version + 1, made[1].version + 1]
        again = await asyncio.wait_for(rooms.play(late.id, players[2], Reveal((8, 15)), late.version), 60)
        assert again.version == late.version + 1 and again.game.mines is not None


async def test_an_address_s_first_clicks_beyond_its_share_of_the_board_lane_are_refused_as_busy(
        redis_url: str, tmp_path: Path) -> None:
    """Many guests of one address: one board each is not a bound (an outside probe's 20 guests of
    one address made another player's first click wait seconds). Beyond ``most_per_group`` boards
    of one ``source`` in flight, the next first click from it is refused at once (``busy``), its
    room unchanged; another address's is queued as before; once the boards are made it works."""
    gate = Gate(tmp_path)
    boards = HeldOffload(gate, most_per_group=1)
    async with lanes(redis_url, boards) as (rooms, _):
        players = [someone(n) for n in ("Ann", "Bo", "Cy")]
        made = [await rooms.create(no_guess_expert(seed), (p,)) for seed, p in enumerate(players)]
        first = asyncio.create_task(rooms.play(made[0].id, players[0], Reveal((8, 15)), made[0].version, source="a"))
        await gate.until_started()
        with pytest.raises(RoomRefused) as e:
            await asyncio.wait_for(rooms.play(made[1].id, players[1], Reveal((8, 15)), made[1].version, source="a"), 30)
        assert e.value.code is Refused.BUSY and e.value.room is not None and e.value.room.version == made[1].version
        stored = await rooms.load(made[1].id)
        assert stored.version == made[1].version and stored.game.mines is None and stored.game.log == []
        other = asyncio.create_task(rooms.play(made[2].id, players[2], Reveal((8, 15)), made[2].version, source="b"))
        for _ in range(POLLS):
            if boards.waiting == 1:
                break
            await asyncio.sleep(0.05)
        assert boards.waiting == 1  # the other address's board is queued, not refused
        gate.open()
        done = await asyncio.wait_for(asyncio.gather(first, other), 60)
        assert [r.version for r in done] == [made[0].version + 1, made[2].version + 1]
        again = await asyncio.wait_for(rooms.play(made[1].id, players[1], Reveal((8, 15)), made[1].version,
                                                  source="a"), 60)
        assert again.version == made[1].version + 1 and again.game.mines is not None


def test_the_app_gives_boards_and_answers_a_worker_each(parts: Parts) -> None:
    """As the app builds the room service (``Parts.build``): two lanes, the boards' queue bounded."""
    rooms = parts.rooms
    assert rooms.boards is not rooms.answers and rooms.answers is not rooms.analyses.offload
    assert rooms.boards.most_waiting == app_settings().board_queue == BOARD_QUEUE and rooms.answers.most_waiting is None
    assert rooms.boards.most_per_group == BOARDS_PER_SOURCE and rooms.answers.most_per_group is None

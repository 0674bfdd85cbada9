"""Rated games on the real Valkey: every rated end (resignation, a flag the sweeper sees fall,
all mines) moves both ratings exactly once, by the library's numbers from the ratings before;
casual, computer and aborted games change nothing; two processes seeing one end apply it once;
an end whose process died (or whose rating failed) is settled later by a sweeper: a finished
room stays due in ``clocks`` until its end is settled."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator

import pytest

from engine import Abort, Duel, Explore, Mark, Resign
from engine.clock import Clock
from engine.events import ALL_MINES, TIMEOUT
from server.app import Parts
from server.core.commands import Join, OfferRematch, Play
from server.core.computer import computer
from server.core.ratings import (
    BLITZ,
    BULLET,
    CATEGORIES,
    DEFAULT,
    RAPID,
    Rating,
    rate_game,
    score_of,
)
from server.core.room import Player, Room, Status
from server.edge import new_game
from server.metrics import Metrics
from server.store.cache import RoomCache
from server.store.keys import clock_key, rated_game_key
from server.store.players import Ratings
from server.store.results import Results
from server.store.service import RoomRefused, RoomService
from server.store.store import Store
from server.store.sweeper import sweep_once
from tests.server.store.conftest import all_as_stored, sample

BLITZ_CLOCK = Clock.new(180_000, 2_000)
WAIT_S = 20.0
"""Bound on any wait for the wall clock (a flag falling); generous: the machine is shared."""


def people(*names: str) -> list[Player]:
    return [Player("g" + secrets.token_hex(5), name) for name in names]


def process(store: Store, ratings: Ratings | None = None, metrics: Metrics | None = None,
            **options: int) -> RoomService:
    """A room service as one server process has it: its results rate games."""
    metrics = metrics or Metrics()
    return RoomService(store, RoomCache(), metrics,
                       results=Results(store, metrics, ratings if ratings is not None else Ratings(store.redis)),
                       **options)


async def died(*_: object) -> None:
    """A process gone right after its commit: nothing after it happens."""
    return None


async def due(store: Store, room_id: str) -> int | None:
    """The room's place in its due index (a finished room's: when a sweeper settles its end)."""
    score = await store.redis.zscore(clock_key(room_id), room_id)
    return None if score is None else int(score)


@pytest.fixture
async def other_store(redis_url: str) -> AsyncIterator[Store]:
    """Another process's connections to the same Redis."""
    store = Store(redis_url)
    try:
        yield store
    finally:
        await store.close()


async def warm_up(ratings: Ratings, anna: Player, ben: Player, category: str) -> None:
    """Give both players a rating of their own first (so "before" is not the default)."""
    cleo, dan = people("Cleo", "Dan")
    now = time.time_ns() // 1_000_000
    assert await ratings.apply_result("w" + secrets.token_hex(5), category, (anna.id, cleo.id), 1.0, now)
    assert await ratings.apply_result("w" + secrets.token_hex(5), category, (dan.id, ben.id), 0.5, now)


async def assert_rated_once(ratings: Ratings, room: Room, category: str, before: tuple[Rating, Rating]) -> None:
    a, b = (p.id for p in room.players)  # type: ignore[union-attr]
    after = await ratings.ratings_many([a, b])
    expected = rate_game(before[0], before[1], score_of(room.game.outcome), room.ended_ms)  # type: ignore[arg-type]
    assert all_as_stored((after[a][category], after[b][category]), expected)
    for pid, old in zip((a, b), before, strict=True):
        assert after[pid][category].games == old.games + 1
        history = await ratings.history(pid, category)
        assert [p.game_id for p in history].count(room.id) == 1
        assert history[-1].rating == after[pid][category].rating and history[-1].ended_ms == room.ended_ms
    assert await ratings.redis.exists(rated_game_key(room.id))


async def opened(rooms: RoomService, room: Room) -> Room:
    """``room`` after a safe explore of each seat: a game both have moved in (one ended sooner
    rates nobody, as an abort)."""
    for _ in range(2):
        game: Duel = room.game  # type: ignore[assignment]
        cell = next(c for c in game.geo.cells if game.is_hidden(c) and c not in game.setup.mines)
        room = await rooms.act(room.id, room.players[game.to_move], Play(Explore(cell)))
    assert room.game.every_seat_moved  # type: ignore[attr-defined]
    return room


async def unchanged(ratings: Ratings, *players: Player) -> bool:
    found = await ratings.ratings_many([p.id for p in players])
    return all(found[p.id] == dict.fromkeys(CATEGORIES, DEFAULT) for p in players)


async def test_a_resignation_moves_both_ratings_once(parts: Parts) -> None:
    rooms = process(parts.store, parts.ratings)
    anna, ben = people("Anna", "Ben")
    await warm_up(parts.ratings, anna, ben, BLITZ)
    before = await parts.ratings.ratings_many([anna.id, ben.id])
    room = await rooms.create(new_game.duel("brettspielnetz", 21), (anna, None), BLITZ_CLOCK, rated=True)
    await opened(rooms, await rooms.act(room.id, ben, Join()))
    over = await rooms.act(room.id, ben, Play(Resign()))
    assert over.game.outcome.winner == 0  # type: ignore[union-attr]
    await assert_rated_once(parts.ratings, over, BLITZ, (before[anna.id][BLITZ], before[ben.id][BLITZ]))
    assert (await parts.ratings.ratings_of(anna.id))[RAPID] == DEFAULT  # other categories untouched
    assert await rooms.aftermath.settle(over)  # settling again (a sweeper's retry) changes nothing
    await assert_rated_once(parts.ratings, over, BLITZ, (before[anna.id][BLITZ], before[ben.id][BLITZ]))


async def test_a_game_that_ends_with_all_mines_is_rated(parts: Parts) -> None:
    rooms = process(parts.store, parts.ratings)
    anna, ben = people("Anna", "Ben")
    clock = Clock.new(600_000, 0)
    room = await rooms.create(new_game.duel("coan", 22), (anna, ben), clock, rated=True)
    game: Duel = room.game  # type: ignore[assignment]
    mines = sorted(game.setup.mines)
    for cell in mines:  # each seat marks a mine in turn until all are shown
        room = await rooms.act(room.id, room.players[room.game.to_move], Play(Mark(cell)))
    assert room.status is Status.OVER and room.game.outcome.termination == ALL_MINES  # type: ignore[union-attr]
    await assert_rated_once(parts.ratings, room, RAPID, (DEFAULT, DEFAULT))


async def test_a_flag_the_sweeper_sees_fall_is_rated(parts: Parts) -> None:
    rooms = process(parts.store, parts.ratings)
    anna, ben = people("Anna", "Ben")
    room = await rooms.create(new_game.duel("brettspielnetz", 23), (anna, ben), Clock.new(1_500, 0), rated=True)
    game: Duel = room.game  # type: ignore[assignment]
    safe = [c for c in game.geo.cells if game.is_hidden(c) and c not in game.setup.mines]
    room = await rooms.act(room.id, anna, Play(Explore(safe[0])))
    room = await rooms.act(room.id, ben, Play(Explore(next(c for c in safe if room.game.is_hidden(c)))))
    deadline = time.monotonic() + WAIT_S
    while room.status is not Status.OVER and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        await sweep_once(rooms)  # (a test server's sweeper may be first: it rates the same way)
        room = await rooms.load(room.id)
    assert room.status is Status.OVER and room.game.outcome.termination == TIMEOUT  # type: ignore[union-attr]
    while time.monotonic() < deadline and await due(parts.store, room.id) is not None:
        await asyncio.sleep(0.05)  # the process that timed it out settles it right after its commit
    await assert_rated_once(parts.ratings, room, BULLET, (DEFAULT, DEFAULT))


async def test_casual_computer_and_aborted_games_change_nothing(parts: Parts) -> None:
    rooms = process(parts.store, parts.ratings)
    anna, ben, cleo, dan = people("Anna", "Ben", "Cleo", "Dan")
    casual = await rooms.create(new_game.duel("brettspielnetz", 24), (anna, ben), BLITZ_CLOCK, rated=False)
    casual = await rooms.act(casual.id, ben, Play(Resign()))
    bot = await rooms.create(new_game.duel("brettspielnetz", 25), (cleo, computer(2)), BLITZ_CLOCK, rated=True)
    assert not bot.rated
    bot = await rooms.act(bot.id, cleo, Play(Resign()))
    aborted = await rooms.create(new_game.duel("brettspielnetz", 26), (dan, None), BLITZ_CLOCK, rated=True)
    await rooms.act(aborted.id, ben, Join())
    aborted = await rooms.act(aborted.id, dan, Play(Abort()))
    assert aborted.rated and aborted.status is Status.OVER
    assert await unchanged(parts.ratings, anna, ben, cleo, dan)
    for room in (casual, bot, aborted):
        assert not await parts.ratings.redis.exists(rated_game_key(room.id))
        assert await due(parts.store, room.id) is None  # settled all the same


async def test_a_resignation_before_both_have_moved_rates_nobody(parts: Parts) -> None:
    """A rated win for nothing (a second guest resigning at once) would farm rating."""
    rooms = process(parts.store, parts.ratings)
    anna, ben = people("Anna", "Ben")
    room = await rooms.create(new_game.duel("brettspielnetz", 33), (anna, ben), BLITZ_CLOCK, rated=True)
    at_once = await rooms.act(room.id, ben, Play(Resign()))
    room = await rooms.create(new_game.duel("brettspielnetz", 34), (anna, ben), BLITZ_CLOCK, rated=True)
    game: Duel = room.game  # type: ignore[assignment]
    room = await rooms.act(room.id, anna, Play(Explore(next(c for c in game.geo.cells if c not in game.setup.mines))))
    after_one = await rooms.act(room.id, ben, Play(Resign()))
    for over in (at_once, after_one):
        assert over.status is Status.OVER and over.game.outcome.winner == 0  # type: ignore[union-attr]
        assert not await parts.ratings.redis.exists(rated_game_key(over.id))
        assert await due(parts.store, over.id) is None  # settled all the same
    assert await unchanged(parts.ratings, anna, ben)


class GatedRatings(Ratings):
    """Ratings whose first read waits for another process's: both read before either writes."""

    def __init__(self, redis, barrier: asyncio.Barrier) -> None:  # noqa: ANN001 - redis-py's client
        super().__init__(redis)
        self.barrier, self.gated = barrier, True

    async def _read(self, category: str, players: tuple[str, str]) -> tuple[bytes | None, bytes | None]:
        read = await super()._read(category, players)
        if self.gated:
            self.gated = False
            await asyncio.wait_for(self.barrier.wait(), WAIT_S)
        return read


async def test_two_processes_seeing_one_end_apply_it_once(parts: Parts, other_store: Store) -> None:
    """The end's process dies right after its commit; two processes' sweepers settle it at the
    same moment, both reading the ratings before either writes: applied once."""
    barrier = asyncio.Barrier(2)
    first = process(parts.store, GatedRatings(parts.store.redis, barrier))
    second = process(other_store, GatedRatings(other_store.redis, barrier))
    dying = process(parts.store, parts.ratings)
    dying.aftermath.after = died  # type: ignore[method-assign]
    anna, ben = people("Anna", "Ben")
    room = await opened(dying, await dying.create(new_game.duel("brettspielnetz", 27), (anna, ben), BLITZ_CLOCK, rated=True))
    over = await dying.act(room.id, anna, Play(Resign()))
    assert await unchanged(parts.ratings, anna, ben)
    settle_at = await due(parts.store, room.id)
    assert settle_at is not None and settle_at >= over.ended_ms + 10_000  # type: ignore[operator]
    done = await asyncio.gather(first.aftermath.settle(over, settle_at), second.aftermath.settle(over, settle_at))
    assert done == [True, True]
    await assert_rated_once(parts.ratings, over, BLITZ, (DEFAULT, DEFAULT))
    assert await due(parts.store, room.id) is None


async def test_both_players_ending_one_game_at_once_rate_it_once(parts: Parts, other_store: Store) -> None:
    first, second = process(parts.store, parts.ratings), process(other_store, Ratings(other_store.redis))
    anna, ben = people("Anna", "Ben")
    room = await opened(first, await first.create(new_game.duel("brettspielnetz", 28), (anna, ben), BLITZ_CLOCK, rated=True))
    answers = await asyncio.gather(first.act(room.id, anna, Play(Resign())), second.act(room.id, ben, Play(Resign())),
                                   return_exceptions=True)
    assert sum(isinstance(a, RoomRefused) for a in answers) == 1  # the second finds the game over
    over = await first.load(room.id)
    await assert_rated_once(parts.ratings, over, BLITZ, (DEFAULT, DEFAULT))


async def test_an_end_whose_process_died_is_settled_by_a_sweeper(parts: Parts, other_store: Store) -> None:
    anna, ben = people("Anna", "Ben")
    sweeper = process(other_store, Ratings(other_store.redis))
    dying = process(parts.store, parts.ratings)  # its end is due for the sweepers in 10 s
    dying.aftermath.after = died  # type: ignore[method-assign]
    waiting = await opened(dying, await dying.create(new_game.duel("brettspielnetz", 29), (anna, ben), BLITZ_CLOCK, rated=True))
    await dying.act(waiting.id, ben, Play(Resign()))
    await sweep_once(sweeper)  # not yet: the committing process may still be at it
    assert await unchanged(parts.ratings, anna, ben) and await due(parts.store, waiting.id) is not None

    cleo, dan = people("Cleo", "Dan")
    gone = process(parts.store, parts.ratings, settle_grace_ms=0)  # its end is due at once
    gone.aftermath.after = died  # type: ignore[method-assign]
    room = await opened(gone, await gone.create(new_game.duel("brettspielnetz", 32), (cleo, dan), BLITZ_CLOCK, rated=True))
    over = await gone.act(room.id, dan, Play(Resign()))
    await sweep_once(sweeper)
    await assert_rated_once(parts.ratings, over, BLITZ, (DEFAULT, DEFAULT))
    assert await due(parts.store, room.id) is None
    assert [e["id"] for e in await sweeper.games.finished(cleo.id)] == [room.id]  # the lists too
    await sweep_once(sweeper)  # nothing left to do: applied once
    await assert_rated_once(parts.ratings, over, BLITZ, (DEFAULT, DEFAULT))


class FailingRatings(Ratings):
    async def apply_result(self, *args: object, **kwargs: object) -> bool:
        raise ConnectionError("the ratings are away")


async def an_end_whose_rating_failed(store: Store, seed: int, **options: int) \
        -> tuple[Metrics, Ratings, RoomService, list[Player], Room]:
    """A rated game resigned on a process whose ratings are away: the move stands, the rating
    failed once; returns that process's metrics, the healthy ratings, the process, the players
    and the finished room."""
    metrics, ratings = Metrics(), Ratings(store.redis)
    failing = process(store, FailingRatings(store.redis), metrics, **options)
    anna, ben = people("Anna", "Ben")
    room = await opened(failing, await failing.create(new_game.duel("brettspielnetz", seed), (anna, ben), BLITZ_CLOCK, rated=True))
    over = await failing.act(room.id, anna, Play(Resign()))
    assert over.status is Status.OVER and (await failing.load(room.id)).version == over.version
    assert sample(metrics, "mineduel_settle_failures_total", what="rating") == 1
    assert await unchanged(ratings, anna, ben)
    return metrics, ratings, failing, [anna, ben], over


async def settled_by_a_healthy_sweeper(store: Store, ratings: Ratings, failing: RoomService, over: Room) -> None:
    await store.postpone_clock(over.id, failing.now_ms())  # (time passes)
    await sweep_once(process(store, ratings))
    await assert_rated_once(ratings, over, BLITZ, (DEFAULT, DEFAULT))
    assert await due(store, over.id) is None


async def test_a_failed_rating_never_fails_the_move_and_is_tried_again(own_redis) -> None:
    """On a Valkey of the test's own: no other process's sweeper may settle the end first."""
    store = Store(own_redis.url)
    try:
        metrics, ratings, failing, (anna, ben), over = await an_end_whose_rating_failed(store, 30, settle_grace_ms=0)
        assert await due(store, over.id) is not None  # left for a sweeper
        await sweep_once(failing)  # a sweeper whose rating fails too: tried again later, not at every sweep
        later = await due(store, over.id)
        assert later is not None and later > failing.now_ms() + 5_000
        assert sample(metrics, "mineduel_settle_failures_total", what="rating") == 2
        assert await unchanged(ratings, anna, ben)
        await settled_by_a_healthy_sweeper(store, ratings, failing, over)
    finally:
        await store.close()


async def test_a_rematch_offer_after_the_end_changes_nothing_settled(parts: Parts) -> None:
    rooms = process(parts.store, parts.ratings)
    anna, ben = people("Anna", "Ben")
    room = await opened(rooms, await rooms.create(new_game.duel("brettspielnetz", 31), (anna, ben), BLITZ_CLOCK, rated=True))
    over = await rooms.act(room.id, anna, Play(Resign()))
    offered = await rooms.act(room.id, ben, OfferRematch())
    assert offered.rematch_offer == 1 and await due(parts.store, room.id) is None
    await assert_rated_once(parts.ratings, over, BLITZ, (DEFAULT, DEFAULT))
    assert [e["v"] for e in await rooms.games.finished(anna.id)] == [over.version]


async def test_the_commits_after_the_end_leave_an_unsettled_end_due_and_settle_nothing(own_redis) -> None:
    """The end's rating failed, so its room stays due for a sweeper; the rematch offered and
    linked after it neither settle the end again (no rating tried, however its process would
    fare) nor move or drop its due time: the sweeper settles it as planned. On a Valkey of the
    test's own: no other process's sweeper may settle the end first."""
    store = Store(own_redis.url)
    try:
        metrics, ratings, failing, (anna, ben), over = await an_end_whose_rating_failed(store, 32)
        settle_at = await due(store, over.id)
        assert settle_at is not None
        offered = await failing.act(over.id, ben, OfferRematch())
        fresh = await failing.rematch(over.id, anna, new_game.rematch_of)
        assert offered.rematch_offer == 1 and (await failing.load(over.id)).rematch == fresh.id
        assert await due(store, over.id) == settle_at  # neither moved nor dropped
        assert sample(metrics, "mineduel_settle_failures_total", what="rating") == 1  # nor settled again
        await settled_by_a_healthy_sweeper(store, ratings, failing, over)
    finally:
        await store.close()

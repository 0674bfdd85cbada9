"""The classic game's leaderboards (``server.store.results``) on the real Valkey: equal times
share a rank and list the earlier win first, rows carry the name registered now, each player
stands on a board once, and a game won by its first click (or at a program's pace) is not
ranked."""

from __future__ import annotations

import secrets
import time

import redis.asyncio as aioredis

from engine import Reveal
from engine.classic import Classic, ClassicSetup, numbers_of
from server.core.commands import Commit, Play
from server.core.decide import decide, open_room
from server.core.room import Player
from server.metrics import Metrics
from server.store.keys import log_key, state_key
from server.store.players import Players
from server.store.results import (
    KEEP,
    Results,
    SoloResult,
    best_per_player,
    humanly_possible,
    ranks,
    solo_result,
)
from server.store.store import Store


def test_equal_times_share_a_rank_and_the_next_counts_them() -> None:
    rows = [SoloResult("r", "p", "n", "b", "classic", ms, 1, 1, 0) for ms in (400, 500, 500, 500, 700, 700, 900)]
    assert ranks(rows) == [1, 2, 2, 2, 5, 5, 7]
    assert ranks([]) == []


def test_times_that_read_the_same_to_the_hundredth_share_a_rank() -> None:
    """RULES.md shows the time to two decimals: 5.003 and 5.009 s both read 5.00."""
    rows = [SoloResult("r", "p", "n", "b", "classic", ms, 1, 1, 0) for ms in (4_999, 5_000, 5_003, 5_009, 5_010)]
    assert ranks(rows) == [1, 2, 2, 2, 5]


def test_a_board_shows_each_player_once_with_their_best() -> None:
    def row(room: str, player: str, ms: int, clicks: int = 10) -> SoloResult:
        return SoloResult(room, player, player, "expert", "classic", ms, 100, clicks, 0)
    rows = [row("a1", "ann", 20_000), row("bot", "ben", 1_000, 300), row("a2", "ann", 21_000), row("b1", "ben", 22_000),
            row("a3", "ann", 23_000), row("c1", "cy", 24_000)]
    assert [r.room for r in best_per_player(rows, 50)] == ["a1", "b1", "c1"]  # ben's program's win kept off
    assert [r.room for r in best_per_player(rows, 2)] == ["a1", "b1"]
    assert best_per_player([], 5) == []


async def test_equal_times_list_the_earlier_win_first_under_the_name_registered_now(redis_url: str) -> None:
    store = Store(redis_url)
    players = Players(store.redis)
    results = Results(store, Metrics(), players=players)
    board = "test-" + secrets.token_hex(4)  # a board of its own: the real ones are shared by the suite
    ids = {name: "g" + secrets.token_hex(5) for name in ("ann", "ben", "cy", "dora")}
    old_name = "Ben" + secrets.token_hex(3)
    try:
        for name, player_id in ids.items():
            await players.register(player_id, old_name if name == "ben" else name + secrets.token_hex(3))
        played = [("ann", 5_000, 10, 1_795_000_002_000), ("ben", 5_000, 9, 1_795_000_001_000),
                  ("cy", 5_000, 12, 1_795_000_003_000), ("dora", 4_000, 30, 1_795_000_004_000)]  # a person's pace
        for name, time_ms, clicks, ended_ms in played:
            result = SoloResult("room-" + name, ids[name], old_name if name == "ben" else name, board, "classic",
                                time_ms, 5, clicks, ended_ms)
            await store.record_solo(board, "classic", "d20261129", result.player_id, result.to_json(), time_ms, 50, 60)
        new_name = "Benno" + secrets.token_hex(3)
        await players.rename(ids["ben"], new_name)
        rows = await results.leaderboard(board, "classic", "all")
        assert [r.room for r in rows] == ["room-dora", "room-ben", "room-ann", "room-cy"]  # 9 clicks did not sort last
        assert ranks(rows) == [1, 2, 2, 2]
        assert rows[1].name == new_name and old_name not in [r.name for r in rows]
    finally:
        await store.close()


def classic_room(mines: set[tuple[int, int]]):
    """A Beginner-sized classic room whose layout is ``mines`` (placed before the first click)."""
    game = Classic(ClassicSetup(9, 9, len(mines), False, "ab" * 16))
    game.mines = frozenset(mines)
    game.numbers = numbers_of(game.geo, game.mines)
    me = Player("g" + secrets.token_hex(5), "Sol")
    return open_room("solo-" + secrets.token_hex(4), game, (me,), None, 1_000).room, me


def won(clicks: list[tuple[int, int]], step_ms: int = 1_000):
    room, me = classic_room({(0, c) for c in range(9)} | {(1, 0)})  # Beginner's 10 mines along one side:
    # a click far from them opens the rest
    for n, cell in enumerate(clicks):
        decision = decide(room, me, Play(Reveal(cell)), None, 2_000 + step_ms * n)
        assert isinstance(decision, Commit)
        room = decision.room
    assert room.game.outcome is not None
    return room


def test_a_game_won_by_its_first_click_is_not_ranked() -> None:
    assert won([(8, 8)]).game.view(0).three_bv == 1
    assert solo_result(won([(8, 8)])) is None
    ranked = solo_result(won([(1, 1), (8, 8)]))  # a number beside the mines, then the flood
    assert ranked is not None and ranked.time_ms == 1_000 and ranked.clicks == 2


def test_a_win_faster_than_a_person_plays_is_not_ranked() -> None:
    """The probes' programs: a no-guess Expert in 0.467 s (3BV 146), Beginners in 0.01 s, and a
    no-guess Expert at 18.5 clicks a second in 9.985 s (3BV 160): first place at 2.5 times the
    world record's pace."""
    assert not humanly_possible(467, 146, 146, "expert") and not humanly_possible(10, 3, 3, "beginner")
    assert not humanly_possible(9_985, 160, 185, "expert")
    assert humanly_possible(26_590, 146, 180, "expert")  # an Expert at world-record pace
    assert humanly_possible(490, 2, 2, "beginner")  # the fastest Beginners: 3BV 2 in half a second
    assert not humanly_possible(1_000, 12, 30, "beginner")  # 29 clicks in a second after the first
    assert not humanly_possible(1_000, 30, 10, "beginner")  # chords: few clicks, but 29 3BV in a second
    assert humanly_possible(1_000, 16, 16, "beginner") and not humanly_possible(999, 16, 16, "beginner")  # 15 clicks/s
    assert humanly_possible(1_000, 21, 10, "beginner") and not humanly_possible(999, 21, 10, "beginner")  # 20 3BV/s
    assert humanly_possible(1_000, 13, 10, "intermediate") and not humanly_possible(999, 13, 10, "intermediate")
    assert humanly_possible(1_000, 11, 10, "expert") and not humanly_possible(999, 11, 10, "expert")
    assert solo_result(won([(1, 1), (8, 8)], step_ms=1_000)) is not None
    assert solo_result(won([(1, 1), (8, 8)], step_ms=50)) is None  # 20 clicks a second: a program
    assert solo_result(won([(1, 1), (8, 8)], step_ms=67)) is not None  # 15 a second: still allowed


async def test_a_program_s_win_reaches_neither_the_boards_nor_the_bests(redis_url: str) -> None:
    store = Store(redis_url)
    results = Results(store, Metrics())
    room = won([(1, 1), (8, 8)], step_ms=10)
    try:
        assert await results.finished(room) is True  # nothing to do, nothing to try again
        assert await results.bests(room.players[0].id) == {}
        assert room.id not in [r.room for r in await results.leaderboard("beginner", "classic", "all", 500)]
    finally:
        await store.close()


async def test_boards_and_bests_read_past_entries_made_before_the_pace_rule(redis_url: str) -> None:
    store = Store(redis_url)
    results = Results(store, Metrics())
    board, player = "test-" + secrets.token_hex(4), "g" + secrets.token_hex(5)
    try:
        for room, time_ms, clicks in (("bot", 20, 30), ("anna", 9_000, 30)):
            result = SoloResult(room, player, "P", board, "classic", time_ms, 20, clicks, 1_795_000_000_000)
            await store.record_solo(board, "classic", "d20261129", player, result.to_json(), time_ms, 50, 60)
        assert [r.room for r in await results.leaderboard(board, "classic", "all", 1)] == ["anna"]
        assert await results.bests(player) == {}  # its best is the program's: shown nowhere
    finally:
        await store.close()


async def test_a_board_reads_past_one_player_s_slower_games(redis_url: str) -> None:
    """Ann's five fast games fill the first five places the board keeps; read five at a time,
    it still shows Ben after her best."""
    store = Store(redis_url)
    results = Results(store, Metrics())
    board, ann, ben = "test-" + secrets.token_hex(4), "g" + secrets.token_hex(5), "g" + secrets.token_hex(5)
    try:
        games = [(f"ann{n}", ann, 9_000 + n) for n in range(5)] + [("ben", ben, 9_500)]
        for room, player, time_ms in games:
            result = SoloResult(room, player, "P", board, "classic", time_ms, 20, 30, 1_795_000_000_000)
            await store.record_solo(board, "classic", "d20261129", player, result.to_json(), time_ms, 50, 60)
        assert [r.room for r in await results.leaderboard(board, "classic", "all", 5)] == ["ann0", "ben"]
    finally:
        await store.close()


async def room_keys(client: aioredis.Redis, room_id: str, until_ms: int) -> None:
    """A finished room's keys as its last commit leaves them: expiring at ``until_ms``."""
    await client.hset(state_key(room_id), mapping={"v": 1, "data": b"x"})
    await client.rpush(log_key(room_id), b"entry")
    for key in (state_key(room_id), log_key(room_id)):
        await client.pexpireat(key, until_ms)


async def expiries(client: aioredis.Redis, room_id: str) -> list[int]:
    """When the room's keys expire (ms; -1: never): the moment, not the time left, so that what
    is asserted does not depend on how long the test took."""
    return [await client.pexpiretime(state_key(room_id)), await client.pexpiretime(log_key(room_id))]


async def test_a_game_on_an_all_time_board_is_kept_and_one_of_a_day_outlives_its_board(
        redis_url: str) -> None:
    """Every all-time board row links to a game whose replay must stay: its room's keys lose
    their expiry. A game only on the day's board lives until that board is gone; a game on no
    board, a player's best included (guests are free: every first win is a best), keeps its
    expiry. Boards kept to one entry here, so that a game falls off them."""
    store = Store(redis_url)
    client = aioredis.Redis.from_url(redis_url)
    board = "test-" + secrets.token_hex(4)
    q, p = "g" + secrets.token_hex(5), "g" + secrets.token_hex(5)
    rooms = {name: name + "-" + secrets.token_hex(4) for name in ("q", "p1", "p2", "p3")}
    day_until = time.time_ns() // 1_000_000 + 4 * 86_400_000  # the day's board gone by then
    finished_until = day_until - 86_400_000  # the rooms' own expiry, as their last commit set it

    async def record(name: str, player: str, time_ms: int, day: str) -> bool:
        result = SoloResult(rooms[name], player, name, board, "no-guess", time_ms, 20, 20, 1_795_000_000_000)
        return await store.record_solo(board, "no-guess", day, player, result.to_json(), time_ms, 1, 60,
                                       room_id=rooms[name], day_until_ms=day_until)

    try:
        for room_id in rooms.values():
            await room_keys(client, room_id, finished_until)
        assert await record("q", q, 9_000, "d20261128") is True  # first on the all-time board
        assert await expiries(client, rooms["q"]) == [-1, -1]
        assert await record("p1", p, 10_000, "d20261128") is True  # a best, on no board (one kept): not kept
        assert await expiries(client, rooms["p1"]) == [finished_until, finished_until]
        assert await record("p2", p, 20_000, "d20261129") is False  # only first on its day's board
        assert [await client.pexpiretime(key) for key in (state_key(rooms["p2"]), log_key(rooms["p2"]))] == [
            day_until, day_until]
        assert await record("p3", p, 30_000, "d20261129") is False  # on no board: its expiry stays
        assert await expiries(client, rooms["p3"]) == [finished_until, finished_until]
        past = SoloResult(rooms["p3"], p, "p3", board, "no-guess", 30_000, 20, 20, 0).to_json()
        await store.record_solo(board, "no-guess", "d19700101", p, past, 30_000, 1, 60, room_id=rooms["p3"],
                                day_until_ms=1)  # a day long gone (an end settled late): never cut short
        assert await expiries(client, rooms["p3"]) == [finished_until, finished_until]
        # recorded again (a settle tried again after the keeping failed): the same answer, kept
        await client.expire(state_key(rooms["q"]), 100)
        assert await record("q", q, 9_000, "d20261128") is True
        assert await expiries(client, rooms["q"]) == [-1, -1]
    finally:
        for room_id in rooms.values():
            await client.delete(state_key(room_id), log_key(room_id))
        await client.aclose()
        await store.close()


async def test_a_best_no_person_could_play_gives_way_to_the_next_win(redis_url: str) -> None:
    """A best stored before the pace rule grew tighter is shown nowhere; the next win compared
    its time with it and was never a best either (an outside probe: no "Your bests" at all)."""
    store = Store(redis_url)
    results = Results(store, Metrics())
    room = won([(1, 1), (8, 8)], step_ms=1_000)  # a person's pace: 1 s
    player = room.players[0].id
    try:
        fast = SoloResult("old-" + secrets.token_hex(3), player, "Sol", "beginner", "classic", 500, 20, 30, 1_795_000_000_000)
        await store.record_solo("beginner", "classic", "d20261129", player, fast.to_json(), 500, KEEP, 60)
        assert await results.bests(player) == {}  # 29 clicks in 0.5 s: no person's
        assert await results.finished(room) is True
        assert [r.room for r in (await results.bests(player)).values()] == [room.id]
    finally:
        await store.close()

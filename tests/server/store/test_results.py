"""The classic game's leaderboards (``server.store.results``) on the real Valkey: equal times
share a rank and list the earlier win first, rows carry the name registered now, and a game
won by its first click is not ranked."""

from __future__ import annotations

import secrets

from engine import Reveal
from engine.classic import Classic, ClassicSetup, numbers_of
from server.core.commands import Commit, Play
from server.core.decide import decide, open_room
from server.core.room import Player
from server.metrics import Metrics
from server.store.players import Players
from server.store.results import Results, SoloResult, ranks, solo_result
from server.store.store import Store


def test_equal_times_share_a_rank_and_the_next_counts_them() -> None:
    rows = [SoloResult("r", "p", "n", "b", "classic", ms, 1, 1, 0) for ms in (400, 500, 500, 500, 700, 700, 900)]
    assert ranks(rows) == [1, 2, 2, 2, 5, 5, 7]
    assert ranks([]) == []


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
        played = [("ann", 500, 10, 1_795_000_002_000), ("ben", 500, 9, 1_795_000_001_000),
                  ("cy", 500, 12, 1_795_000_003_000), ("dora", 400, 30, 1_795_000_004_000)]
        for name, time_ms, clicks, ended_ms in played:
            result = SoloResult("room-" + name, ids[name], old_name if name == "ben" else name, board, "classic",
                                time_ms, 5, clicks, ended_ms)
            await store.record_solo(board, "classic", "d20261129", result.player_id, result.to_json(), time_ms, 50, 60)
        new_name = "Benno" + secrets.token_hex(3)
        await players.rename(ids["ben"], new_name)
        await players.register("g" + secrets.token_hex(5), old_name)  # somebody else takes the name given up
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


def won(clicks: list[tuple[int, int]]):
    room, me = classic_room({(0, c) for c in range(9)} | {(1, 0)})  # Beginner's 10 mines along one side:
    # a click far from them opens the rest
    for n, cell in enumerate(clicks):
        decision = decide(room, me, Play(Reveal(cell)), None, 2_000 + 1_000 * n)
        assert isinstance(decision, Commit)
        room = decision.room
    assert room.game.outcome is not None
    return room


def test_a_game_won_by_its_first_click_is_not_ranked() -> None:
    assert won([(8, 8)]).game.view(0).three_bv == 1
    assert solo_result(won([(8, 8)])) is None
    ranked = solo_result(won([(1, 1), (8, 8)]))  # a number beside the mines, then the flood
    assert ranked is not None and ranked.time_ms == 1_000 and ranked.clicks == 2

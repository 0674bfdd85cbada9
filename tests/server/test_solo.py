"""The classic single-player game as a room: the API, the same websocket protocol, the
leaderboard, a restart mid-game, and the layout never in a frame before the end."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
import redis.asyncio as aioredis

from engine.classic import numbers_of
from engine.geometry import geometry
from server.client import Api, ApiError, GameSocket
from server.store.keys import log_key, state_key
from tests.names import unique


async def layout(api: Api, game_id: str) -> set[tuple[int, int]]:
    return {tuple(m) for m in (await api.request("GET", f"/api/v1/games/{game_id}/layout"))["mines"]}


PACE_S = 0.1
"""A click every 100 ms at the quickest: below the leaderboards' 15 a second (a person's pace,
``server.store.results.humanly_possible``), with room for flags made before the first reveal
(they count among the game's clicks, not its time), so a test's win is ranked."""


async def play_to_a_win(api: Api, sock: GameSocket, game_id: str, width: int, height: int,
                        first=(0, 0), pace_s: float = 0) -> None:
    """Reveal the first cell, read the layout (test hook), open every other safe cell
    (``pace_s`` apart: a ranked win needs a person's pace)."""
    await sock.move("reveal", first)
    await sock.until(lambda f: f["t"] == "update")
    mines = await layout(api, game_id)
    for cell in geometry(width, height).cells:
        if sock.view.outcome is not None:
            break
        if cell not in mines and sock.view.char(cell) == ".":
            await asyncio.sleep(pace_s)
            await sock.move("reveal", cell)
            await sock.until(lambda f: f["t"] in ("update", "error"))


async def test_a_solo_game_plays_to_a_win_over_the_protocol_and_reaches_the_leaderboard(api, live_server):
    anna = await api.guest(unique("Anna"))
    game = await api.solo(anna.token, width=9, height=9, mines=10, seed=5)
    assert game["room"]["kind"] == "classic" and game["room"]["status"] == "playing"
    assert game["view"]["mines"] is None and game["view"]["seed"] is None
    async with await GameSocket.connect(live_server.url, game["id"], anna.token) as sock, \
            await GameSocket.connect(live_server.url, game["id"]) as watcher:
        await sock.until(lambda f: f["t"] == "snapshot")
        await watcher.until(lambda f: f["t"] == "snapshot")
        await sock.move("flag", (8, 8))
        await sock.until(lambda f: f["t"] == "update")
        assert sock.view.char((8, 8)) == "F" and sock.view.mines_left == 9
        await sock.move("chord", (0, 0))  # nothing is open yet: refused, nothing changes
        assert (await sock.until(lambda f: f["t"] == "error"))["code"] == "chord_not_satisfied"
        await sock.move("flag", (8, 8))
        await sock.until(lambda f: f["t"] == "update")
        await asyncio.sleep(PACE_S)  # the flags started the timer: every click from here at a person's pace
        await play_to_a_win(api, sock, game["id"], 9, 9, pace_s=PACE_S)
        assert sock.view.outcome.termination == "cleared"
        end = sock.frames[-1]
        assert end["room"]["ended_ms"] - end["room"]["started_ms"] >= 0
        await watcher.until_version(sock.v)
        assert watcher.view == replace(sock.view, viewer=2)  # a spectator sees what the player sees
        assert sock.view.three_bv is not None and sock.view.mines is not None
    # the end is published by its commit; its leaderboard entry is written right after (settled)
    for _ in range(200):
        board = await api.leaderboard("beginner")
        mine = [r for r in board["results"] if r["game"] == game["id"]]
        if mine:
            break
        await asyncio.sleep(0.025)
    assert len(mine) == 1 and mine[0]["player"]["name"] == anna.name and mine[0]["three_bv"] == sock.view.three_bv
    assert [r["time_ms"] for r in board["results"]] == sorted(r["time_ms"] for r in board["results"])
    today = await api.leaderboard("beginner", period="today")
    assert any(r["game"] == game["id"] for r in today["results"])
    record = await api.record(game["id"])
    assert record["kind"] == "classic" and record["three_bv"] == sock.view.three_bv


async def test_a_game_on_the_leaderboard_outlives_the_retention_of_finished_games(start_server, redis_url):
    """With finished games kept 5 s, a Beginner win at a person's pace goes on the all-time
    board and becomes its player's best: the game its rows link to is kept (its keys lose their
    expiry), also once its restart is linked from it (a later commit of the finished room)."""
    server = start_server(MINEDUEL_FINISHED_TTL_S="5")
    client = aioredis.Redis.from_url(redis_url)
    async with Api(server.url) as api:
        anna = await api.guest(unique("Anna"))
        game = await api.solo(anna.token, seed=5)  # Beginner's board
        async with await GameSocket.connect(server.url, game["id"], anna.token) as sock:
            await sock.until(lambda f: f["t"] == "snapshot")
            await play_to_a_win(api, sock, game["id"], 9, 9, pace_s=PACE_S)
            assert sock.view.outcome.termination == "cleared"
        keys = (state_key(game["id"]), log_key(game["id"]))
        try:
            for _ in range(200):  # settled right after the commit that ended it
                if [await client.pttl(key) for key in keys] == [-1, -1]:
                    break
                await asyncio.sleep(0.025)
            assert [await client.pttl(key) for key in keys] == [-1, -1]
            restart = await api.rematch(anna.token, game["id"])
            assert restart["id"] != game["id"]
            assert [await client.pttl(key) for key in keys] == [-1, -1]  # the link did not renew the expiry
            assert (await api.record(game["id"]))["three_bv"] == sock.view.three_bv
            assert any(r["game"] == game["id"] for r in (await api.leaderboard("beginner"))["results"])
        finally:
            await client.aclose()


async def test_a_loss_shows_the_fatal_mine_and_ranks_nowhere(api, live_server):
    anna = await api.guest(unique("Anna"))
    game = await api.solo(anna.token, seed=7)
    async with await GameSocket.connect(live_server.url, game["id"], anna.token) as sock:
        await sock.until(lambda f: f["t"] == "snapshot")
        await sock.move("reveal", (4, 4))
        await sock.until(lambda f: f["t"] == "update")
        mine = sorted(await layout(api, game["id"]))[0]
        await sock.move("reveal", mine)
        await sock.until(lambda f: f["t"] == "update" and f["room"]["status"] == "over")
        assert sock.view.char(mine) == "X" and sock.view.outcome.termination == "exploded"
        assert sock.frames[-1]["events"][-1]["t"] == "classic_ended"
    board = await api.leaderboard("beginner")
    assert not any(r["game"] == game["id"] for r in board["results"])


async def test_bad_solo_requests(api):
    anna = await api.guest(unique("Anna"))
    for body in ({"width": 4}, {"width": 61}, {"height": 41}, {"mines": 0}, {"width": 9, "height": 9, "mines": 73},
                 {"width": 9.0}, {"no_guess": "yes"}, {"preset": "huge"}, {"mines": True}, {"preset": []},
                 {"preset": {}}, {"preset": ["beginner"]},
                 {"preset": "beginner", "width": 30}, {"preset": "expert", "mines": 10},  # a preset or a size, not both
                 {"width": 60, "height": 40, "mines": 1600, "no_guess": True}):  # no-guess: seconds of search each
        with pytest.raises(ApiError) as e:
            await api.request("POST", "/api/v1/solo", anna.token, body)
        assert e.value.status == 400 and e.value.code == "bad_field", body
    with pytest.raises(ApiError) as e:
        await api.request("GET", "/api/v1/leaderboard?preset=beginner&period=ever")
    assert e.value.status == 400


async def test_a_solo_game_survives_a_server_restart_with_its_timer(start_server):
    server = start_server()
    async with Api(server.url) as api:
        anna = await api.guest(unique("Anna"))
        game = await api.solo(anna.token, width=16, height=16, mines=40, seed=11)
        sock = await GameSocket.connect(server.url, game["id"], anna.token)
        await sock.until(lambda f: f["t"] == "snapshot")
        await sock.move("reveal", (0, 0))
        first = await sock.until(lambda f: f["t"] == "update")
        await sock.close()
        started = first["room"]["started_ms"]
        server.kill()
        again = start_server()
        opened = sock.view.rows
        async with await GameSocket.connect(again.url, game["id"], anna.token) as sock:
            snap = await sock.until(lambda f: f["t"] == "snapshot")
            assert snap["room"]["started_ms"] == started and snap["room"]["status"] == "playing"
            assert sock.view.rows == opened  # the same game, the timer's start kept
            async with Api(again.url) as api2:
                mines = await layout(api2, game["id"])
            await sock.move("reveal", next(c for c in geometry(16, 16).cells
                                           if c not in mines and sock.view.char(c) == "."))
            await sock.until(lambda f: f["t"] == "update")  # and it plays on
        numbers = numbers_of(geometry(16, 16), frozenset(mines))
        assert all(numbers[(r, c)] == int(ch) for r, row in enumerate(snap["view"]["rows"])
                   for c, ch in enumerate(row) if ch.isdigit())


async def test_the_layout_hook_is_off_without_the_test_hooks(start_server):
    server = start_server(MINEDUEL_TEST_HOOKS="0")
    async with Api(server.url) as api:
        anna = await api.guest(unique("Anna"))
        game = await api.solo(anna.token)
        with pytest.raises(ApiError) as e:
            await layout(api, game["id"])
        assert e.value.status == 403
    await asyncio.sleep(0)


async def test_a_classic_game_cannot_be_claimed_and_the_socket_stays_open(api, live_server):
    """A claim is for a duel whose opponent left: a classic game's player asking for one over
    HTTP or the socket is refused (it has no opponent), the game unchanged and the socket open."""
    anna = await api.guest(unique("Anna"))
    game = await api.solo(anna.token, width=9, height=9, mines=10, seed=5)
    for result in ("win", "draw"):
        with pytest.raises(ApiError) as e:
            await api.request("POST", f"/api/v1/games/{game['id']}/claim", anna.token, {"result": result})
        assert (e.value.status, e.value.code) == (409, "not_a_move")
    async with await GameSocket.connect(live_server.url, game["id"], anna.token) as sock:
        await sock.until(lambda f: f["t"] == "snapshot")
        await sock.send({"t": "claim", "result": "win"})
        assert (await sock.until(lambda f: f["t"] == "error"))["code"] == "not_a_move"
        await sock.move("flag", (8, 8))  # the socket still plays
        await sock.until(lambda f: f["t"] == "update")
    assert (await api.game(game["id"]))["v"] == game["v"] + 1  # the flag, nothing else

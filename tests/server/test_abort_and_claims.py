"""Aborting a game before both players moved, and claiming one the opponent left: over HTTP
and the msgpack websocket, with presence counted over real sockets."""

from __future__ import annotations

import time

import pytest
import redis

from server.client import ApiError, GameSocket
from server.store.keys import watchers_key

from .helpers import seated_game


async def test_either_player_aborts_until_both_have_moved(api, live_server):
    game_id, anna, ben = await seated_game(api, 5, clock={"initial": 300, "increment": 0})
    aborted = await api.request("POST", f"/api/v1/games/{game_id}/abort", ben.token, json={})
    game = await api.game(game_id, anna.token)
    assert game["room"]["status"] == "over" and game["view"]["outcome"] == ["aborted", None]
    assert game["v"] == aborted["v"] and (await api.record(game_id))["moves"] == [[1, "abort"]]
    with pytest.raises(ApiError) as over:
        await api.request("POST", f"/api/v1/games/{game_id}/abort", anna.token, json={})
    assert over.value.code == "game_over"

    game_id, anna, ben = await seated_game(api, 5)
    async with await GameSocket.connect(live_server.url, game_id, anna.token) as a, \
            await GameSocket.connect(live_server.url, game_id, ben.token) as b:
        await a.until(lambda f: f["t"] == "snapshot")
        await b.until(lambda f: f["t"] == "snapshot")
        await a.move("explore", (4, 4))
        await b.until(lambda f: f["t"] == "update")
        await b.move("explore", (0, 0))
        await a.until_version(b.v + 1)
        await a.send({"t": "abort", "v": a.v})
        refused = await a.until(lambda f: f["t"] == "error")
        assert refused["code"] == "too_late_to_abort"
        await a.send({"t": "claim", "result": "maybe"})
        assert (await a.until(lambda f: f["t"] == "error"))["code"] == "bad_field"
    assert (await api.game(game_id, anna.token))["room"]["status"] == "playing"


async def test_a_player_who_left_is_shown_and_the_game_can_be_claimed_after_the_grace(api, live_server, redis_url):
    game_id, anna, ben = await seated_game(api, 6, clock={"initial": 300, "increment": 0})
    async with await GameSocket.connect(live_server.url, game_id, anna.token) as a:
        await a.until(lambda f: f["t"] == "snapshot")
        async with await GameSocket.connect(live_server.url, game_id, ben.token) as b:
            await b.until(lambda f: f["t"] == "snapshot")
            here = await a.until(lambda f: f["t"] == "presence" and f["away"][1] is None)
            assert here["away"] == [None, None] and here["spectators"] == 0
            await a.move("explore", (4, 4))
            await b.until(lambda f: f["t"] == "update")
            await b.move("explore", (0, 0))
            await a.until(lambda f: f["t"] == "update")
        before = time.time_ns() // 1_000_000
        gone = await a.until(lambda f: f["t"] == "presence" and f["away"][1] is not None)
        assert gone["away"][0] is None and before - 5_000 <= gone["away"][1] <= before + 5_000
        await a.send({"t": "claim", "result": "win"})
        early = await a.until(lambda f: f["t"] == "error")
        assert early["code"] == "opponent_present" and "claim in" in early["message"]
        # Ben has been gone for a minute (the field the presence script keeps, set back)
        with redis.Redis.from_url(redis_url) as r:
            r.hset(watchers_key(game_id), "away:1", gone["away"][1] - 61_000)
        with pytest.raises(ApiError) as stranger:
            await api.request("POST", f"/api/v1/games/{game_id}/claim", (await api.guest()).token,
                              json={"result": "win"})
        assert stranger.value.code == "not_seated"
        claimed = await api.request("POST", f"/api/v1/games/{game_id}/claim", anna.token, json={"result": "win"})
        over = await a.until(lambda f: f["t"] == "update" and f["v"] == claimed["v"])
        assert over["room"]["status"] == "over"
        assert a.view.outcome.termination == "abandoned" and a.view.outcome.winner == 0


async def test_a_player_back_before_the_grace_cannot_be_claimed_against(api, live_server):
    game_id, anna, ben = await seated_game(api, 7)
    async with await GameSocket.connect(live_server.url, game_id, anna.token) as a:
        await a.until(lambda f: f["t"] == "snapshot")
        async with await GameSocket.connect(live_server.url, game_id, ben.token) as b:
            await b.until(lambda f: f["t"] == "snapshot")
        await a.until(lambda f: f["t"] == "presence" and f["away"][1] is not None)
        async with await GameSocket.connect(live_server.url, game_id, ben.token) as b:
            await b.until(lambda f: f["t"] == "snapshot")
            await a.until(lambda f: f["t"] == "presence" and f["away"][1] is None)
            await a.send({"t": "claim", "result": "draw"})
            assert (await a.until(lambda f: f["t"] == "error"))["code"] == "opponent_present"

"""Aborting a game before both players moved, and claiming one the opponent left: over HTTP
and the msgpack websocket, with presence counted over real sockets."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis

from engine import Explore
from server.client import ApiError, GameSocket, Guest
from server.core.room import Player
from server.edge import new_game
from server.metrics import Metrics
from server.store.cache import RoomCache
from server.store.keys import watchers_key
from server.store.room_feed import AWAY_GRACE_S
from server.store.service import RoomService
from server.store.store import Store
from tests.names import unique

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


async def begun_long_ago(api, redis_url: str, ago_ms: int) -> tuple[str, Guest, Guest]:
    """A game Anna and Ben sat down to and each moved in ``ago_ms`` ago: made and played by a
    room service of the test's own whose clock is that far behind (the server then loads it from
    Valkey like any other game). Untimed: the server's sweeper would otherwise abort it, its
    first-move window long past, between the test's commits."""
    anna, ben = await api.guest(unique("Anna")), await api.guest(unique("Ben"))
    seats = (Player(anna.id, anna.name), Player(ben.id, ben.name))
    store = Store(redis_url)
    try:
        then = RoomService(store, RoomCache(), Metrics(), now_ms=lambda: time.time_ns() // 1_000_000 - ago_ms)
        room = await then.create(new_game.duel("brettspielnetz", 6), seats)
        room = await then.play(room.id, seats[0], Explore((4, 4)), room.version)
        await then.play(room.id, seats[1], Explore((0, 0)), room.version)
    finally:
        await store.close()
    return room.id, anna, ben


async def test_a_player_who_left_is_shown_and_the_game_can_be_claimed_after_the_grace(api, live_server, redis_url):
    game_id, anna, ben = await begun_long_ago(api, redis_url, 90_000)
    async with await GameSocket.connect(live_server.url, game_id, anna.token) as a:
        await a.until(lambda f: f["t"] == "snapshot")
        async with await GameSocket.connect(live_server.url, game_id, ben.token) as b:
            await b.until(lambda f: f["t"] == "snapshot")
            here = await a.until(lambda f: f["t"] == "presence" and f["away"][1] is None)
            assert here["away"] == [None, None] and here["spectators"] == 0
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


async def test_a_joiner_whose_socket_is_not_open_yet_cannot_be_claimed_against(api, live_server, redis_url):
    """Seat 1 stood empty, without a connection, for two minutes; Ben joins and his page has
    not yet opened its socket: Anna, connected all along, cannot claim until a minute after
    the join (nobody left before both seats were taken). It was a rated win at once."""
    anna, ben = await api.guest(unique("Anna")), await api.guest(unique("Ben"))
    game_id = (await api.create_game(anna.token, seat=0, clock={"initial": 600, "increment": 5}, rated=True))["id"]
    async with await GameSocket.connect(live_server.url, game_id, anna.token) as a:
        await a.until(lambda f: f["t"] == "snapshot")
        with redis.Redis.from_url(redis_url) as r:  # the empty seat's time without a connection, set back
            r.hset(watchers_key(game_id), "away:1", time.time_ns() // 1_000_000 - 120_000)
        await api.join(ben.token, game_id)
        with pytest.raises(ApiError) as early:
            await api.request("POST", f"/api/v1/games/{game_id}/claim", anna.token, json={"result": "win"})
        assert early.value.code == "opponent_present" and "claim in 6" in str(early.value)
        assert (await api.game(game_id, anna.token))["room"]["status"] == "playing"


async def test_a_joiner_who_never_connects_is_announced_after_the_arrival_grace(api, live_server):
    """Ben joins over HTTP and never opens a socket (no presence of his is ever written): Anna's
    socket is told he is away (since the join) once he has had the arrival grace to connect.
    Cleo's opponent connects at once: she hears only that he is here."""
    async def waits_for(joiner_connects: bool) -> list[dict]:
        anna, ben = await api.guest(unique("Anna")), await api.guest(unique("Ben"))
        game_id = (await api.create_game(anna.token, seat=0))["id"]
        async with await GameSocket.connect(live_server.url, game_id, anna.token) as a:
            await a.until(lambda f: f["t"] == "snapshot")
            await a.until(lambda f: f["t"] == "presence")
            joined_ms = time.time_ns() // 1_000_000
            await api.join(ben.token, game_id)
            await a.until(lambda f: f["t"] == "update" and f["room"]["status"] == "playing")
            frames = []
            if joiner_connects:
                async with await GameSocket.connect(live_server.url, game_id, ben.token) as b:
                    await b.until(lambda f: f["t"] == "snapshot")
                    with pytest.raises(TimeoutError):
                        frames.append(await a.until(lambda f: f["t"] == "presence" and f["away"][1] is not None,
                                                    timeout_s=AWAY_GRACE_S + 1))
            else:
                frames.append(await a.until(lambda f: f["t"] == "presence", timeout_s=AWAY_GRACE_S + 5))
                assert joined_ms <= frames[0]["away"][1] <= time.time_ns() // 1_000_000  # away since the join
        return frames

    never, at_once = await asyncio.gather(waits_for(False), waits_for(True))
    assert [f["away"][0] for f in never] == [None] and at_once == []


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

"""Clock timeouts through the sweeper, spectator presence, and the hub's resync after a
pub/sub reconnect."""

from __future__ import annotations

import redis

from server.client import Api, GameSocket

from .helpers import seated_game


async def test_clock_runs_out_and_the_sweeper_ends_the_game(api, live_server):
    game_id, anna, ben = await seated_game(api, 4, clock={"initial": 5, "increment": 0})
    async with await GameSocket.connect(live_server.url, game_id) as spectator:
        snap = await spectator.until(lambda f: f["t"] == "snapshot")
        assert snap["room"]["clock"]["running"] is None  # the first move starts the clock
        async with await GameSocket.connect(live_server.url, game_id, anna.token) as a, \
                await GameSocket.connect(live_server.url, game_id, ben.token) as b:
            await a.until(lambda f: f["t"] == "snapshot")
            await b.until(lambda f: f["t"] == "snapshot")
            await a.move("explore", (4, 4))
            await b.until(lambda f: f["t"] == "update")
            await b.move("explore", (0, 0))
            await a.until(lambda f: f["t"] == "update")
        over = await spectator.until(lambda f: f["t"] == "update" and f["room"]["status"] == "over", timeout_s=30)
        assert over["room"]["clock"]["running"] is None
        assert spectator.view.outcome.termination == "timeout" and spectator.view.outcome.winner == 1
    record = await api.record(game_id)
    assert record["moves"][-1] == [0, "timeout"]


async def test_a_first_move_that_does_not_come_aborts_the_game(api, live_server):
    game_id, anna, _ben = await seated_game(api, 4, clock={"initial": 0.3, "increment": 0})
    async with await GameSocket.connect(live_server.url, game_id) as spectator:
        await spectator.until(lambda f: f["t"] == "snapshot")
        await spectator.until(lambda f: f["t"] == "update" and f["room"]["status"] == "over", timeout_s=10)
        assert spectator.view.outcome.termination == "aborted" and spectator.view.outcome.winner is None
    assert (await api.record(game_id))["moves"] == [[0, "abort"]]


async def test_clock_press_adds_increment(api, live_server):
    # The increment dwarfs any time the test can take (its timeout is 300 s), so the bounds
    # below say "the increment was added" without depending on how fast the machine is.
    game_id, anna, ben = await seated_game(api, 4, clock={"initial": 60, "increment": 600})
    async with await GameSocket.connect(live_server.url, game_id, anna.token) as a, \
            await GameSocket.connect(live_server.url, game_id, ben.token) as b:
        await a.until(lambda f: f["t"] == "snapshot")
        await b.until(lambda f: f["t"] == "snapshot")
        await a.move("explore", (4, 4))  # the first move starts Ben's time; Anna's never ran
        first = (await a.until(lambda f: f["t"] == "update"))["room"]["clock"]
        assert first["running"] == 1 and first["remaining_ms"][0] == 60_000
        await b.until(lambda f: f["t"] == "update")
        await b.move("explore", (0, 0))
        await a.until(lambda f: f["t"] == "update")
        await a.move("explore", (10, 10) if a.view.rows[10][10] in ".x" else (10, 0))
        frame = await a.until(lambda f: f["t"] == "update")
        clock = frame["room"]["clock"]
        assert clock["running"] == 1
        assert 60_000 < clock["remaining_ms"][0] <= 660_000


async def test_spectator_count_is_pushed(api, live_server):
    game_id, anna, _ben = await seated_game(api, 6)
    async with await GameSocket.connect(live_server.url, game_id, anna.token) as a:
        await a.until(lambda f: f["t"] == "snapshot")
        await a.until(lambda f: f["t"] == "presence")
        assert a.spectators == 0
        s1 = await GameSocket.connect(live_server.url, game_id)
        await a.until(lambda f: f["t"] == "presence" and f["spectators"] == 1)
        s2 = await GameSocket.connect(live_server.url, game_id)
        await a.until(lambda f: f["t"] == "presence" and f["spectators"] == 2)
        await s1.close()
        await a.until(lambda f: f["t"] == "presence" and f["spectators"] == 1)
        await s2.close()
        await a.until(lambda f: f["t"] == "presence" and f["spectators"] == 0)


async def test_pubsub_reconnect_resyncs_every_local_connection(start_server, own_redis):
    """On a Valkey of its own: killing every pub/sub client of the shared one would cut every
    other test's server too."""
    server = start_server(REDIS_URL=own_redis.url)
    redis_url = own_redis.url
    async with Api(server.url) as api:
        game_id, anna, ben = await seated_game(api, 9)
    socks = [await GameSocket.connect(server.url, game_id, anna.token),
             await GameSocket.connect(server.url, game_id)]
    try:
        for s in socks:
            await s.until(lambda f: f["t"] == "snapshot")
        r = redis.Redis.from_url(redis_url)
        try:
            killed = r.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
        finally:
            r.close()
        assert killed >= 1
        for s in socks:  # a fresh snapshot arrives without anything else happening
            await s.until(lambda f: f["t"] == "snapshot", timeout_s=15)
        await socks[0].move("explore", (4, 4))  # and updates flow again
        for s in socks:
            await s.until(lambda f: f["t"] == "update")
        assert socks[1].view.rows[4][4] != "."
    finally:
        for s in socks:
            await s.close()

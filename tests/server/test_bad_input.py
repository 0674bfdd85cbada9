"""Bad input gets an error frame or a 1008 close; nothing changes; the process keeps serving."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import msgpack
import pytest
from websockets.exceptions import ConnectionClosed

from engine import SPECTATOR
from server.client import Api, ApiError, GameSocket
from tests.names import unique

from .helpers import referee, seated_game, three_sockets


async def next_error(sock: GameSocket) -> dict:
    return await sock.until(lambda f: f["t"] == "error", timeout_s=5)


async def closed_with(sock: GameSocket) -> int | None:
    with pytest.raises(ConnectionClosed):
        for _ in range(100):
            await sock.next(5)
    return sock.ws.close_code


@pytest.fixture
async def game(api, live_server):
    """A seeded game with sockets for Anna (seat 0, to move), Ben and a spectator."""
    game_id, anna, ben = await seated_game(api, 8)
    socks = await three_sockets(game_id, anna, ben, live_server.url)
    for sock in socks.values():
        await sock.until(lambda f: f["t"] == "snapshot")
    yield game_id, socks
    for sock in socks.values():
        await sock.close()


def a_safe_cell():
    duel = referee(8)
    return next(c for c in duel.geo.cells if duel.is_hidden(c) and c not in duel.setup.mines)


BAD_FRAMES = [
    (b"\xc1\xc1\xc1", "malformed"),                      # never-used msgpack byte
    (b"\x92\x01", "malformed"),                          # truncated array
    (msgpack.packb([1, 2, 3]), "not_a_map"),
    (msgpack.packb("move"), "not_a_map"),
    (msgpack.packb({"t": "dance"}), "unknown_type"),
    (msgpack.packb({"t": "move", "action": "explore", "cell": [4, 4]}), "bad_field"),          # no v
    (msgpack.packb({"t": "move", "v": 2, "action": "sweep", "cell": [4, 4]}), "bad_field"),
    (msgpack.packb({"t": "move", "v": 2, "action": "explore", "cell": [4]}), "bad_field"),
    (msgpack.packb({"t": "move", "v": 2, "action": "explore", "cell": "a1"}), "bad_field"),
    (msgpack.packb({"t": "move", "v": 2, "action": "explore", "cell": [2**40, 1]}), "bad_field"),
    (msgpack.packb({"t": "move", "v": True, "action": "explore", "cell": [4, 4]}), "bad_field"),
    (msgpack.packb({"t": "move", "v": 2, "action": "explore", "cell": [11, 0]}), "out_of_range"),
    (msgpack.packb({"t": "move", "v": 2, "action": "mark", "cell": [-1, 3]}), "out_of_range"),
    (msgpack.packb({"t": "move", "v": 2, "action": "explore", "cell": [5, 5]}), "cell_not_hidden"),
]


async def test_bad_frames_get_error_frames_and_change_nothing(api, game):
    game_id, socks = game
    before = await api.game(game_id)
    anna = socks[0]
    for frame, code in BAD_FRAMES:
        await anna.ws.send(frame)
        err = await next_error(anna)
        assert err["code"] == code, (frame, err)
        assert err["message"]
        assert err["v"] == before["v"]  # every frame carries the version the socket's view is at
    await anna.ws.send("a text frame")
    assert (await next_error(anna))["code"] == "malformed"
    assert (await api.game(game_id))["v"] == before["v"]
    # ... and the same socket still plays
    await anna.move("explore", a_safe_cell())
    await anna.until_version(before["v"] + 1)


async def test_wrong_turn_stale_and_spectator_moves_are_refused(api, game):
    game_id, socks = game
    v = socks[0].v
    cell = a_safe_cell()
    await socks[1].move("explore", cell)
    err = await next_error(socks[1])
    assert (err["code"], err["v"]) == ("not_your_turn", v)
    await socks[SPECTATOR].move("explore", cell)
    err = await next_error(socks[SPECTATOR])
    assert (err["code"], err["v"]) == ("spectator", v)
    await socks[SPECTATOR].resign()
    assert (await next_error(socks[SPECTATOR]))["code"] == "spectator"
    await socks[0].move("explore", cell, v=v - 1)
    err = await next_error(socks[0])
    assert (err["code"], err["v"]) == ("stale", v)
    snap = await socks[0].until(lambda f: f["t"] == "snapshot")
    assert snap["v"] == v
    assert (await api.game(game_id))["v"] == v


async def test_oversized_frame_closes_with_1008_and_server_keeps_serving(api, game, live_server):
    _game_id, socks = game
    await socks[0].ws.send(b"\x00" * 10_000)
    assert await closed_with(socks[0]) == 1008
    assert httpx.get(live_server.url + "/healthz").status_code == 200
    await socks[1].move("explore", a_safe_cell())  # Ben's socket still answers
    assert (await next_error(socks[1]))["code"] == "not_your_turn"


async def test_a_text_frame_is_measured_in_bytes_not_characters(game):
    """4,000 characters of ``é`` are 8,000 bytes: over the 4,096-byte limit (they passed it when
    the limit counted characters); 4,096 bytes of ASCII text are within it."""
    _game_id, socks = game
    await socks[1].ws.send("a" * 4096)  # within the limit: understood as nothing, answered
    assert (await next_error(socks[1]))["code"] == "malformed"
    await socks[2].ws.send("\u00e9" * 4000)
    assert await closed_with(socks[2]) == 1008


async def test_flood_closes_with_1008(game):
    _game_id, socks = game
    sock = socks[SPECTATOR]
    frame = msgpack.packb({"t": "dance"})
    with pytest.raises(ConnectionClosed):
        for _ in range(200):
            await sock.ws.send(frame)
            await asyncio.sleep(0)
        for _ in range(400):
            await sock.next(5)
    assert sock.ws.close_code == 1008


async def test_bad_token_and_unknown_game(live_server, game):
    game_id, _ = game
    bad = await GameSocket.connect(live_server.url, game_id, "forged.token")
    err = await next_error(bad)
    assert (err["code"], err["v"]) == ("bad_token", None)  # no view yet: no version
    assert await closed_with(bad) == 1008
    lost = await GameSocket.connect(live_server.url, "no-such-game")
    err = await next_error(lost)
    assert (err["code"], err["v"]) == ("unknown_room", None)
    assert await closed_with(lost) == 1008


async def test_http_errors(api, live_server):
    anna = await api.guest(unique("Anna"))
    with pytest.raises(ApiError) as e:
        await api.create_game("", seat=0)
    assert e.value.status == 401
    for body, code in [({"ruleset": "chess"}, "bad_field"), ({"seat": 2}, "bad_field"),
                       ({"clock": {"initial": -1}}, "bad_field"), ({"clock": "fast"}, "bad_field"),
                       ({"seed": "x"}, "bad_field")]:
        with pytest.raises(ApiError) as e:
            await api.request("POST", "/api/v1/games", anna.token, body)
        assert e.value.status == 400 and e.value.code == code, body
    r = httpx.post(live_server.url + "/api/v1/games", content=b"{not json",
                   headers={"Authorization": f"Bearer {anna.token}"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "malformed"
    with pytest.raises(ApiError) as e:
        await api.game("nope")
    assert e.value.status == 404
    game_id, _a, other = await seated_game(api, 1)
    with pytest.raises(ApiError) as e:
        await api.join(anna.token, game_id)
    assert e.value.status == 409 and e.value.code == "room_full"
    called_off = await api.create_game(anna.token, seat=0)
    await api.request("POST", f"/api/v1/games/{called_off['id']}/abort", anna.token, {})
    with pytest.raises(ApiError) as e:
        await api.join(other.token, called_off["id"])
    assert e.value.status == 409 and e.value.code == "game_over", e.value.message  # not "both seats are taken"


async def test_seed_is_refused_when_test_hooks_are_off(start_server):
    server = start_server(MINEDUEL_TEST_HOOKS="0")
    async with Api(server.url) as api:
        anna = await api.guest(unique("Anna"))
        with pytest.raises(ApiError) as e:
            await api.create_game(anna.token, seed=1)
        assert e.value.status == 403 and e.value.code == "test_hooks_off"
        game = await api.create_game(anna.token)  # without a seed all is well
        assert game["room"]["status"] == "waiting"


def test_healthz(live_server):
    r = httpx.get(live_server.url + "/healthz")
    assert r.status_code == 200 and r.json()["redis"] is True


# ---------------------------------------------------------------------- found from outside


async def test_a_seat_must_be_an_integer_not_a_float_or_a_boolean(api, live_server):
    anna = await api.guest(unique("Anna"))
    for seat in (0.0, 1.0, True, False, "0", [0]):
        r = httpx.post(live_server.url + "/api/v1/games", json={"seat": seat},
                       headers={"Authorization": f"Bearer {anna.token}"})
        assert (r.status_code, r.json()["error"]["code"]) == (400, "bad_field"), seat


async def test_versions_and_cells_of_the_wrong_type_are_never_played(api, game):
    game_id, socks = game
    v = socks[0].v
    cell = a_safe_cell()
    for frame in ({"t": "move", "v": str(v), "action": "explore", "cell": list(cell)},
                  {"t": "move", "v": float(v), "action": "explore", "cell": list(cell)},
                  {"t": "move", "v": v, "action": "explore", "cell": [str(cell[0]), str(cell[1])]},
                  {"t": "move", "v": v, "action": "explore", "cell": f"{cell[0]}-{cell[1]}"}):
        await socks[0].ws.send(msgpack.packb(frame))
        err = await next_error(socks[0])
        assert (err["code"], err["v"]) == ("bad_field", v), frame
    assert (await api.game(game_id))["v"] == v  # nothing was played


async def test_a_resignation_checks_its_version_and_refuses_garbage(api, game, live_server):
    game_id, socks = game
    v = socks[0].v
    for bad in ("4", float("nan"), -1, 2**64 - 1, True, [v]):
        await socks[1].ws.send(msgpack.packb({"t": "resign", "v": bad}))
        assert (await next_error(socks[1]))["code"] == "bad_field", bad
    for stale in (v - 1, v + 1):
        await socks[1].ws.send(msgpack.packb({"t": "resign", "v": stale}))
        assert (await next_error(socks[1]))["code"] == "stale", stale
        await socks[1].until(lambda f: f["t"] == "snapshot")
    ben = socks[1]
    token = ben.ws.request.headers["Authorization"].split()[1]
    r = httpx.post(f"{live_server.url}/api/v1/games/{game_id}/resign", json={"v": "x"},
                   headers={"Authorization": f"Bearer {token}"})
    assert (r.status_code, r.json()["error"]["code"]) == (400, "bad_field")
    assert (await api.game(game_id))["room"]["status"] == "playing"
    await socks[1].ws.send(msgpack.packb({"t": "resign", "v": v}))
    await socks[0].until(lambda f: f["t"] == "update" and f["room"]["status"] == "over")


async def test_a_foreign_origin_is_refused_without_an_error_in_the_log(start_server):
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    server = start_server(LOG_LEVEL="info")
    async with Api(server.url) as api:
        game_id, _anna, _ben = await seated_game(api, 3)
    ws = server.url.replace("http://", "ws://")
    for path in (f"/api/v1/games/{game_id}/ws", f"/g/{game_id}/ws"):
        with pytest.raises(InvalidStatus) as refused:
            async with connect(ws + path, origin="http://evil.example"):
                pass
        assert refused.value.response.status_code == 403
    async with connect(ws + f"/api/v1/games/{game_id}/ws") as accepted:  # a program: no Origin
        await accepted.recv()
    text = server.log()
    assert text.count('" 403') == 2 and "ERROR" not in text and "without completing handshake" not in text


async def test_a_heartbeat_period_of_zero_means_no_heartbeat(start_server):
    from websockets.asyncio.client import connect

    quiet, beating = start_server(MINEDUEL_HEARTBEAT_S="0"), start_server(MINEDUEL_HEARTBEAT_S="0.2")
    for server, heartbeats in ((beating, True), (quiet, False)):
        async with Api(server.url) as api:
            game_id, _anna, _ben = await seated_game(api, 3)
        ws = server.url.replace("http://", "ws://")
        async with connect(f"{ws}/g/{game_id}/ws", origin=server.url) as page:
            assert (await asyncio.wait_for(page.recv(), 10)).startswith("<!--snapshot-->")
            seen = []
            with pytest.raises(TimeoutError) if not heartbeats else contextlib.nullcontext():
                async with asyncio.timeout(3):  # a bound: with the heartbeat on, one comes in 0.2 s
                    while True:
                        frame = await page.recv()
                        if 'id="hb"' in frame:
                            seen.append(frame)
                            break
            assert bool(seen) is heartbeats


async def until_logged(server, text: str) -> str:
    for _ in range(200):
        log = server.log()
        if text in log:
            return log
        await asyncio.sleep(0.025)
    raise AssertionError(f"{text!r} never logged")


async def test_a_client_leaving_mid_body_and_a_token_in_a_path_are_no_errors_in_the_log(start_server):
    """A request whose client closes the connection before its body is all there (the API's
    JSON and a page's form) is logged as the client's leaving, not as an exception in the
    application; a request with ``?token=`` keeps its access line, the token redacted."""
    server = start_server(LOG_LEVEL="info")
    host, port = server.url.removeprefix("http://").split(":")
    for path in ("/api/v1/guests", "/guest"):
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{{}}".encode())
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.close()
        await until_logged(server, f"event=client_gone path={path}")
    async with httpx.AsyncClient(base_url=server.url) as http:
        assert (await http.get("/api/v1/leaderboard?preset=beginner&token=abc.secret")).status_code == 200
    text = await until_logged(server, "token=[redacted]")
    assert "GET /api/v1/leaderboard?preset=beginner&token=[redacted] HTTP/1.1\" 200" in text
    assert "abc.secret" not in text
    assert "ERROR" not in text and "Traceback" not in text and "Logging error" not in text

"""Operations: /metrics counts what happens, logs are one key=value line per event without
secrets, and SIGTERM is a graceful shutdown (1012, exit status 0, the game goes on elsewhere).
(Conflicts and slow consumers are counted in tests/server/store/test_hub.py.)"""

from __future__ import annotations

import asyncio
import random
import shlex
import signal
import subprocess

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from engine import SPECTATOR
from server.client import Api, GameSocket, ws_url

from .helpers import assert_view, pick_move, referee, seated_game, three_sockets, wire_move
from .test_game import play_out

POLLS = 200  # bounded waits on a condition, 50 ms apart
SHUTDOWN_BOUND_S = 10


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


async def scrape(url: str) -> dict:
    async with httpx.AsyncClient(timeout=5) as http:
        r = await http.get(url + "/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return samples(r.text)


async def until_metrics(url: str, check) -> dict:
    found: dict = {}
    for _ in range(POLLS):
        found = await scrape(url)
        if check(found):
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"metrics never matched: { {k: v for k, v in found.items() if 'mineduel' in k[0]} }")


async def test_metrics_count_connections_commits_latency_and_closes(start_server):
    server = start_server()  # a fresh process: its counters start at zero
    seed = 12
    async with Api(server.url) as api:
        game_id, anna, ben = await seated_game(api, seed)
    duel, rng = referee(seed), random.Random(seed)
    socks = await three_sockets(game_id, anna, ben, server.url)
    try:
        for sock in socks.values():
            await sock.until(lambda f: f["t"] == "snapshot")
        found = await until_metrics(server.url, lambda m: (
            value(m, "mineduel_connections", kind="player", codec="msgpack") == 2
            and value(m, "mineduel_connections", kind="spectator", codec="msgpack") == 1))
        assert value(found, "mineduel_rooms_live") == 1
        assert value(found, "mineduel_moves_committed_total", kind="create") == 1
        assert value(found, "mineduel_moves_committed_total", kind="join") == 1
        assert value(found, "mineduel_move_to_push_seconds_count") == 0
        assert value(found, "mineduel_redis_up") == 1

        for _ in range(3):
            seat = duel.to_move
            move = pick_move(duel, rng)
            await socks[seat].move(*wire_move(move))
            duel.apply(seat, move)
            for sock in socks.values():
                await sock.until_version(sock.v + 1)
        found = await scrape(server.url)
        assert value(found, "mineduel_moves_committed_total", kind="move") == 3
        assert value(found, "mineduel_move_to_push_seconds_count") == 3  # one per move taken here
        assert value(found, "mineduel_frames_queued_total") >= 3 * 3
        assert value(found, "mineduel_commit_conflicts_total") == 0

        await socks[0].send([1, 2, 3])  # not a map
        await socks[0].until(lambda f: f["t"] == "error")
        await socks[SPECTATOR].ws.send(b"\x80" * 10_000)  # over the frame limit: 1008
        with pytest.raises(ConnectionClosed):
            await socks[SPECTATOR].until(lambda f: False, timeout_s=10)
        assert socks[SPECTATOR].ws.close_code == 1008
        found = await until_metrics(server.url, lambda m: (
            value(m, "mineduel_connections", kind="spectator", codec="msgpack") == 0))
        assert value(found, "mineduel_bad_messages_total") == 1
        assert sum(v for (name, _), v in found.items() if name == "mineduel_policy_closes_total") == 1
    finally:
        for sock in socks.values():
            await sock.close()
    await until_metrics(server.url, lambda m: (
        value(m, "mineduel_rooms_live") == 0
        and value(m, "mineduel_connections", kind="player", codec="msgpack") == 0))


async def test_logs_are_one_line_per_event_and_never_hold_a_secret(start_server):
    server = start_server(LOG_LEVEL="info")
    seed = 17
    async with Api(server.url) as api:
        game_id, anna, ben = await seated_game(api, seed)
    duel = referee(seed)
    socks = {0: await GameSocket.connect(server.url, game_id, anna.token),
             # Ben puts his token in the query string: uvicorn logs that URL
             1: GameSocket(await connect(ws_url(server.url, game_id) + f"?token={ben.token}")),
             SPECTATOR: await GameSocket.connect(server.url, game_id)}
    try:
        for viewer, sock in socks.items():
            await sock.until(lambda f: f["t"] == "snapshot")
            assert_view(sock, duel, viewer)
        await play_out(socks, duel, random.Random(seed))
    finally:
        for sock in socks.values():
            await sock.close()
    async with Api(server.url) as api:
        record = await api.record(game_id)
    for _ in range(POLLS):  # the disconnects are logged once the handlers finish
        if server.log().count("event=disconnect") >= 3:
            break
        await asyncio.sleep(0.05)
    text = server.log()

    for secret in (record["salt"], anna.token, ben.token, "test-secret"):
        assert secret not in text
    assert "token=[redacted]" in text  # uvicorn's "WebSocket ... [accepted]" line, scrubbed
    events = [line for line in text.splitlines() if " event=" in line]
    fields = [dict(part.split("=", 1) for part in shlex.split(line)) for line in events]
    assert all({"ts", "level", "logger", "event"} <= f.keys() for f in fields)
    mine = [f for f in fields if f.get("room") == game_id]
    moves = [f for f in mine if f["event"] == "move_committed"]
    assert len(moves) == len(duel.log)
    assert [int(f["v"]) for f in moves] == list(range(3, 3 + len(duel.log)))
    assert all(f["player"] == (anna.id, ben.id)[int(f["seat"])] for f in moves)
    connects = [f for f in mine if f["event"] == "connect"]
    assert sorted(f.get("player", "-") for f in connects) == sorted([anna.id, ben.id, "-"])
    assert sum(f["event"] == "disconnect" for f in mine) == 3
    assert {f["event"] for f in mine} >= {"create_committed", "join_committed", "move_committed", "connect",
                                          "disconnect"}


async def test_sigterm_closes_sockets_with_1012_and_exits_0_while_the_game_goes_on(start_server):
    p1, p2 = start_server(LOG_LEVEL="info"), start_server()
    seed = 19
    async with Api(p1.url) as api:
        game_id, anna, ben = await seated_game(api, seed)
    duel, rng = referee(seed), random.Random(seed)
    socks = await three_sockets(game_id, anna, ben, p1.url, p2.url)
    try:
        for sock in socks.values():
            await sock.until(lambda f: f["t"] == "snapshot")
        for _ in range(2):
            seat = duel.to_move
            move = pick_move(duel, rng)
            await socks[seat].move(*wire_move(move))
            duel.apply(seat, move)
            for sock in socks.values():
                await sock.until_version(sock.v + 1)

        p1.proc.send_signal(signal.SIGTERM)
        for viewer in (0, SPECTATOR):
            with pytest.raises(ConnectionClosed):
                await socks[viewer].until(lambda f: False, timeout_s=SHUTDOWN_BOUND_S)
            assert socks[viewer].ws.close_code == 1012  # "service restart": clients reconnect elsewhere
        try:
            code = await asyncio.to_thread(p1.proc.wait, SHUTDOWN_BOUND_S)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running {SHUTDOWN_BOUND_S} s after SIGTERM") from None
        assert code == 0, p1.log()
        assert "event=shutdown" in p1.log()
        with pytest.raises(httpx.ConnectError):
            httpx.get(p1.url + "/healthz", timeout=2)

        for viewer, token in ((0, anna.token), (SPECTATOR, None)):
            await socks[viewer].close()
            socks[viewer] = await GameSocket.connect(p2.url, game_id, token)
            await socks[viewer].until(lambda f: f["t"] == "snapshot")
            assert_view(socks[viewer], duel, viewer)
        await play_out(socks, duel, rng)
    finally:
        for sock in socks.values():
            await sock.close()

"""Two server processes on one Redis: cross-process games, racing commits, and a crash."""

from __future__ import annotations

import asyncio
import random

import msgpack
import pytest
import redis

from engine import SPECTATOR, Explore
from server.client import Api, GameSocket
from server.store.keys import log_key

from .helpers import assert_view, pick_move, referee, seated_game, three_sockets, wire_move
from .test_game import play_out

pytestmark = pytest.mark.slow


@pytest.fixture
def two_servers(start_server):
    return start_server(), start_server()


async def test_game_across_two_processes(two_servers):
    p1, p2 = two_servers
    seed = 21
    async with Api(p1.url) as api:
        game_id, anna, ben = await seated_game(api, seed)
    duel = referee(seed)
    socks = await three_sockets(game_id, anna, ben, p1.url, p2.url, p2.url)
    try:
        for viewer, sock in socks.items():
            await sock.until(lambda f: f["t"] == "snapshot")
            assert_view(sock, duel, viewer)
        await play_out(socks, duel, random.Random(seed))
    finally:
        for sock in socks.values():
            await sock.close()


async def test_conflicting_moves_commit_exactly_one_per_version(two_servers, redis_url):
    """Each round, twelve sockets (three per player per process) send a move on the same
    version at once, each on a different cell: exactly one is committed, the eleven others get
    an error frame (``stale``, or ``not_your_turn`` for the player not to move)."""
    p1, p2 = two_servers
    seed = 33
    async with Api(p1.url) as api:
        game_id, anna, ben = await seated_game(api, seed)
    duel = referee(seed)
    tokens = {0: anna.token, 1: ben.token}
    socks = {seat: [await GameSocket.connect(p.url, game_id, tokens[seat]) for p in (p1, p2) for _ in range(3)]
             for seat in (0, 1)}
    everyone = socks[0] + socks[1]
    rounds = 12
    expected_errors = {s: 0 for s in everyone}
    try:
        for sock in everyone:
            await sock.until(lambda f: f["t"] == "snapshot")
        for _ in range(rounds):
            seat, v = duel.to_move, everyone[0].v
            hidden = [c for c in duel.geo.cells if duel.is_hidden(c) and c not in duel.setup.mines]
            cells = random.Random(v).sample(hidden, len(everyone))
            await asyncio.gather(*(s.move("explore", cell, v) for s, cell in zip(everyone, cells)))
            for s in everyone:
                await s.until_version(v + 1)
            # exactly one of the mover's cells was taken; the referee follows it
            view = everyone[0].view
            mover_cells = [cell for s, cell in zip(everyone, cells) if s in socks[seat]]
            assert view.moves[-1].cell in mover_cells
            duel.apply(seat, Explore(view.moves[-1].cell))
            for s, cell in zip(everyone, cells):
                expected_errors[s] += 0 if cell == view.moves[-1].cell else 1
                for _ in range(100):
                    if sum(f["t"] == "error" for f in s.frames) >= expected_errors[s]:
                        break
                    await s.next()
            for viewer, s in ((0, socks[0][0]), (1, socks[1][0])):
                assert_view(s, duel, viewer)
    finally:
        for sock in everyone:
            await sock.close()

    r = redis.Redis.from_url(redis_url)
    try:
        entries = [msgpack.unpackb(x, raw=False) for x in r.lrange(log_key(game_id), 0, -1)]
    finally:
        r.close()
    versions = [e[0] for e in entries]
    assert versions == list(range(1, len(versions) + 1)), "gaps or duplicates in the log"
    moves = [e for e in entries if e[1] == "move"]
    assert len(moves) == rounds
    # every refused sender got an error frame, never a second commit
    errors = [f for s in everyone for f in s.frames if f["t"] == "error"]
    assert len(errors) == rounds * (len(everyone) - 1)
    assert {e["code"] for e in errors} <= {"stale", "not_your_turn"}


async def test_sigkill_one_process_mid_game(two_servers):
    p1, p2 = two_servers
    seed = 44
    async with Api(p1.url) as api:
        game_id, anna, ben = await seated_game(api, seed)
    duel = referee(seed)
    rng = random.Random(seed)
    socks = await three_sockets(game_id, anna, ben, p1.url, p2.url)
    try:
        for sock in socks.values():
            await sock.until(lambda f: f["t"] == "snapshot")
        for _ in range(6):  # a few moves on both processes
            seat = duel.to_move
            move = pick_move(duel, rng)
            await socks[seat].move(*wire_move(move))
            duel.apply(seat, move)
            for sock in socks.values():
                await sock.until_version(sock.v + 1)
        p1.kill()
        for viewer in (0, SPECTATOR):
            with pytest.raises(Exception):
                await socks[viewer].until(lambda f: False, timeout_s=10)
            await socks[viewer].close()
        socks[0] = await GameSocket.connect(p2.url, game_id, anna.token)
        socks[SPECTATOR] = await GameSocket.connect(p2.url, game_id)
        for viewer in (0, SPECTATOR):
            first = await socks[viewer].until(lambda f: f["t"] == "snapshot")
            assert first["v"] == socks[1].v
            assert_view(socks[viewer], duel, viewer)
        await play_out(socks, duel, rng)
    finally:
        for sock in socks.values():
            await sock.close()


async def test_sigkill_one_process_under_load(two_servers, redis_url):
    """Six rooms play at once over both processes (players split, spectators on p1); after
    30 moves p1 is SIGKILLed. Its clients reconnect to p2, every game is played to its end, and
    each room's log holds exactly the referee's moves at versions 1..N: no move was lost or
    applied twice. After reconnecting, a client replays its last committed move and resends
    the pending one on their versions (as the htmx ws extension replays queued sends): the
    replay must be refused as stale."""
    from .bots import RoomBots, assert_log_matches, play_through_a_fault, stored_log

    p1, p2 = two_servers
    dead: set[str] = set()
    rooms: list[RoomBots] = []
    async with Api(p1.url) as api:
        for i, seed in enumerate(range(201, 207)):
            game_id, anna, ben = await seated_game(api, seed)
            home = {0: (p1, p2)[i % 2], 1: (p2, p1)[i % 2], SPECTATOR: p1}

            def url_for(viewer: int, home=home) -> str:
                server = home[viewer]
                return p2.url if server.url in dead else server.url

            rooms.append(RoomBots(game_id, seed, {0: anna.token, 1: ben.token}, url_for))
    for bots in rooms:
        await bots.start()

    async def crash() -> None:
        dead.add(p1.url)
        await asyncio.to_thread(p1.kill)

    at_kill, played = await play_through_a_fault(rooms, 30, crash)
    for bots in rooms:
        assert bots.duel.outcome is not None
        assert all(s.ws.remote_address[1] == p2.port for s in bots.socks.values())  # all on the survivor
        assert_log_matches(bots, stored_log(redis_url, bots.game_id))
    replays = sum(b.replays for b in rooms)
    assert replays >= 1, "no client replayed a committed move after reconnecting"
    print(f"p1 SIGKILLed after {at_kill} of {played} moves in {len(rooms)} rooms; "
          f"reconnects while playing {sum(b.reconnects for b in rooms)}, moves resent {sum(b.resends for b in rooms)}, "
          f"committed moves replayed (all refused as stale) {replays}")

"""Faults of the store: Redis SIGKILLed during a stream of moves, and Redis away for a while.

Each test starts its own Valkey (the production launcher, AOF on, data in a tmp dir) and a
live server process pointed at it through ``REDIS_URL`` (so the server runs as with an
external Redis: ``WAITAOF 1 0`` after each commit), kills or stops that Valkey, and starts it
again on the same port and data directory. No server process is restarted.
"""

from __future__ import annotations

import asyncio
import random
import signal

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect

from engine import SPECTATOR
from server.client import Api, GameSocket
from server.embedded_redis import EmbeddedRedis

from .bots import RoomBots, assert_log_matches, play_through_a_fault, stored_log
from .helpers import assert_view, both_move, pick_move, seated_game, wire_move

pytestmark = pytest.mark.slow

POLL = 300  # bounded polls of /healthz (50 ms apart)


class Store:
    """A Valkey we can SIGKILL or stop, and start again on the same port and data directory."""

    def __init__(self, base) -> None:
        self.base = base
        self.server = EmbeddedRedis(base).start()
        self.port = self.server.port
        self.url = self.server.url

    def kill(self) -> None:
        proc = self.server.process
        assert proc is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        self.server.process = None

    def stop(self) -> None:
        self.resume()
        self.server.stop()

    def pause(self) -> None:
        """SIGSTOP: the store hangs, its connections stay open (a stopped process, a full disk)."""
        assert self.server.process is not None
        self.server.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.server.process is not None:
            self.server.process.send_signal(signal.SIGCONT)

    def start(self) -> None:
        self.server = EmbeddedRedis(self.base, port=self.port).start()


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "store")
    yield s
    s.stop()


async def health(url: str, status: int) -> None:
    async with httpx.AsyncClient(timeout=5) as http:
        for _ in range(POLL):
            if (await http.get(url + "/healthz")).status_code == status:
                return
            await asyncio.sleep(0.05)
    raise AssertionError(f"/healthz never answered {status}")


def metric(text: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    raise KeyError(name)


async def seated_rooms(url: str, seeds: list[int], url_for) -> list[RoomBots]:
    out = []
    async with Api(url) as api:
        for seed in seeds:
            game_id, anna, ben = await seated_game(api, seed)
            out.append(RoomBots(game_id, seed, {0: anna.token, 1: ben.token}, url_for))
    return out


async def test_acknowledged_moves_survive_a_redis_sigkill(start_server, store):
    """Six rooms play at once; after 25 moves Valkey is SIGKILLed and restarted on the same data.
    Every move any client saw acknowledged is in the log at its version, no version is missing
    or repeated, and every game is played to its end."""
    server = start_server(REDIS_URL=store.url)
    seeds = [101, 102, 103, 104, 105, 106]
    rooms = await seated_rooms(server.url, seeds, lambda viewer: server.url)
    for bots in rooms:
        await bots.start()
    async def kill_and_restart() -> None:
        store.kill()
        await health(server.url, 503)
        await asyncio.to_thread(store.start)

    at_kill, played = await play_through_a_fault(rooms, 25, kill_and_restart)
    unavailable = sum(f.get("code") == "unavailable" for b in rooms for s in b.all_sockets for f in s.frames)
    print(f"valkey SIGKILLed after {at_kill} of {played} moves; {len(rooms)} rooms; "
          f"'unavailable' frames {unavailable}; moves resent {sum(b.resends for b in rooms)}, "
          f"committed moves replayed (all refused as stale) {sum(b.replays for b in rooms)}; "
          f"acknowledged versions checked {sum(len(b.acknowledged()) for b in rooms)}")
    for bots in rooms:
        assert bots.duel.outcome is not None
        assert_log_matches(bots, stored_log(store.url, bots.game_id))


async def test_redis_outage_is_shown_refuses_moves_and_heals_itself(start_server, store):
    seed = 107
    server = start_server(REDIS_URL=store.url)
    async with Api(server.url) as api:
        game_id, anna, ben = await seated_game(api, seed)
    bots = RoomBots(game_id, seed, {0: anna.token, 1: ben.token}, lambda viewer: server.url)
    await bots.start()
    ws_base = server.url.replace("http://", "ws://")
    browser = await connect(f"{ws_base}/g/{game_id}/ws", origin=server.url)  # a spectator's page
    try:
        assert (await asyncio.wait_for(browser.recv(), 10)).startswith("<!--snapshot-->")
        await bots.play(max_moves=2)

        store.stop()
        # every client is told, without having to do anything
        for viewer in (0, 1, SPECTATOR):
            frame = await bots.socks[viewer].until(lambda f: f["t"] == "error", timeout_s=15)
            assert frame["code"] == "unavailable" and "interrupted" in frame["message"]
            assert frame["v"] == bots.v  # the version that viewer's board shows
        for _ in range(100):
            text = await asyncio.wait_for(browser.recv(), 15)
            if "Service interrupted" in text:
                break
        else:
            raise AssertionError("no service-interrupted banner on the browser socket")
        # a move is refused, with a clear code, and the socket stays open
        seat, v = bots.duel.to_move, bots.v
        refused = pick_move(bots.duel, random.Random(0))
        await bots.socks[seat].move(*wire_move(refused), v)
        frame = await bots.socks[seat].until(lambda f: f["t"] == "error", timeout_s=15)
        assert frame["code"] == "unavailable"
        await health(server.url, 503)
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            r = await http.get(f"/api/v1/games/{game_id}")
            assert r.status_code == 503 and r.json()["error"]["code"] == "unavailable"
            text = (await http.get("/metrics")).text
            assert metric(text, "mineduel_redis_up") == 0
            assert metric(text, "mineduel_unavailable_refusals_total") >= 1
            assert metric(text, "mineduel_redis_errors_total", op="pubsub") >= 1

        await asyncio.to_thread(store.start)
        # it heals by itself: fresh snapshots at the same version (the refused move is not there)
        for viewer in (0, 1, SPECTATOR):
            frame = await bots.socks[viewer].until(lambda f: f["t"] == "snapshot", timeout_s=20)
            assert frame["v"] == v
            assert_view(bots.socks[viewer], bots.duel, viewer)
        for _ in range(100):
            text = await asyncio.wait_for(browser.recv(), 20)
            if text.startswith("<!--snapshot-->"):
                break
        else:
            raise AssertionError("no snapshot on the browser socket after the outage")
        assert "Service interrupted" not in text and 'class="lost"' in text
        await browser.close()  # (unread heartbeats would fill its queue and stall the close)
        await health(server.url, 200)
        # and the game goes on, on the same processes, to its end
        await bots.play()
        await bots.finish()
    finally:
        await browser.close()
        await bots.close()
    assert_log_matches(bots, stored_log(store.url, game_id))  # the log is the referee's game, nothing more


async def test_a_hanging_store_shows_the_banner_until_it_answers_again(start_server, store):
    """A store that hangs keeps the pub/sub connection open; its calls time out (5 s): the
    browser's heartbeat shows "service interrupted" from the first failed call, and clears
    once the store answers."""
    server = start_server(REDIS_URL=store.url)
    async with Api(server.url) as api:
        game_id, _anna, _ben = await seated_game(api, 5)
    ws_base = server.url.replace("http://", "ws://")
    browser = await connect(f"{ws_base}/g/{game_id}/ws", origin=server.url)  # a spectator's page
    try:
        assert (await asyncio.wait_for(browser.recv(), 10)).startswith("<!--snapshot-->")
        for _ in range(20):  # the first heartbeat: the socket is attached (a hang before that is a refused connect)
            if 'id="hb"' in await asyncio.wait_for(browser.recv(), 10):
                break
        store.pause()
        for _ in range(60):  # heartbeats, one a second: bounded at a minute
            if "Service interrupted" in await asyncio.wait_for(browser.recv(), 15):
                break
        else:
            raise AssertionError("no service-interrupted banner while the store hangs")
        store.resume()
        for _ in range(60):
            if "Service interrupted" not in await asyncio.wait_for(browser.recv(), 15):
                break
        else:
            raise AssertionError("the banner stayed after the store answered again")
    finally:
        store.resume()
        await browser.close()



async def test_a_move_sent_into_a_hang_reaches_everybody_and_the_waiting_clock_is_given_the_hang(start_server, store):
    """The store hangs (its connections stay open), a move is sent into the hang: its mover is
    answered "unavailable" when the call times out, and the store may run the command when it
    wakes. Once it answers again the server resyncs its rooms (an outside probe: the opponent
    and the spectators stayed at the version before the move, the opponent's flag running), and
    the running clock is given the hang's time by a commit of its own at once (a ``resume``
    entry), not with the next move. Both passes: the lean client's and redis-py's."""
    server = start_server(REDIS_URL=store.url)
    async with Api(server.url) as api:
        game_id, anna, ben = await seated_game(api, 7, clock={"initial": 60, "increment": 0})
    duel = await both_move(server.url, game_id, 7, (anna.token, ben.token))  # Anna to move, her clock running
    cell = next(c for c in duel.geo.cells if duel.is_hidden(c) and c not in duel.setup.mines)
    mover = await GameSocket.connect(server.url, game_id, anna.token)
    other = await GameSocket.connect(server.url, game_id, ben.token)
    watcher = await GameSocket.connect(server.url, game_id)
    try:
        for ws in (mover, other, watcher):  # attached: the snapshot (v4: created, joined, a move each), then presence
            await ws.until(lambda f: f.get("t") == "presence" and f["v"] >= 4, 30)
        store.pause()
        try:
            await asyncio.sleep(0.5)  # (into the hang; nothing is timed by it)
            await mover.move("explore", cell)
            refused = await mover.until(lambda f: f.get("t") == "error", 30)
            assert refused["code"] == "unavailable", refused
        finally:
            store.resume()
        # the running clock is given the hang's time by a commit of its own (Ben's, if the move
        # was run when the store woke, as the lean client's is; Anna's if not, as redis-py's,
        # which drops the connection at its timeout, may leave it)
        for _ in range(300):  # (bounded: 30 s)
            entries = [entry[1] for entry in stored_log(store.url, game_id)]
            if "resume" in entries:
                break
            await asyncio.sleep(0.1)
        assert entries.count("resume") == 1, entries
        # and everybody's socket, as it was, reaches the stored version (the move included, if run)
        for ws in (mover, other, watcher):
            await ws.until_version(len(entries), 30)
    finally:
        for ws in (mover, other, watcher):
            await ws.close()

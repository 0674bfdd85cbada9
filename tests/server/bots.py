"""Bots that keep playing through faults: reconnects, Redis outages, server crashes.

A :class:`RoomBots` drives one seeded game with its two players (and a spectator) over the
msgpack websocket, mirrored by the referee (a local engine Duel). A move is sent with the
version the referee is at, and resent blindly with that same version whenever its fate is
unknown (an ``unavailable`` error, a dropped socket): the version makes resending safe, since a
move that was in fact committed makes the resend ``stale``. A move counts as committed once the
mover's socket shows the next version (an update, or a snapshot after a resync or reconnect)
and any resend has been answered; the referee then applies it and the socket's view must
equal the referee's.

Every frame every socket received is kept (``all_sockets``), so tests can check that every
version a client saw acknowledged is in Redis's log.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import msgpack
import redis
from websockets.exceptions import ConnectionClosed

from engine import SPECTATOR, Duel, Move
from server.client import GameSocket
from server.store.keys import log_key

from .helpers import assert_view, pick_move, referee, wire_move

MAX_STEPS = 300  # moves + retries per game (a duel has at most 121 cells)
MAX_FRAMES = 500  # frames read while waiting for one move's fate
RECONNECTS = 100  # attempts to reconnect one socket (100 ms apart)
FRAME_TIMEOUT_S = 30.0  # longest silence while waiting for a move's fate (outages last a few s)


class RoomBots:
    def __init__(self, game_id: str, seed: int, tokens: dict[int, str], url_for: Callable[[int], str]) -> None:
        self.game_id = game_id
        self.seed = seed
        self.tokens = tokens
        self.url_for = url_for
        """Server base URL for a viewer (0, 1, or SPECTATOR); may change (after a crash)."""
        self.duel: Duel = referee(seed)
        self.rng = random.Random(seed)
        self.v = 0
        self.socks: dict[int, GameSocket] = {}
        self.all_sockets: list[GameSocket] = []
        self.resends = 0
        self.replays = 0
        self.reconnects = 0
        self.last: dict[int, tuple[str, tuple[int, int], int]] = {}
        """Each seat's last committed move as ``(action, cell, version it was sent on)``."""
        self.moves = 0

    async def connect(self, viewer: int) -> GameSocket:
        """(Re)connect ``viewer`` and read its snapshot; retried while servers come and go."""
        last: Exception | None = None
        for _ in range(RECONNECTS):
            try:
                sock = await GameSocket.connect(self.url_for(viewer), self.game_id,
                                                None if viewer == SPECTATOR else self.tokens[viewer])
            except (OSError, ConnectionClosed, asyncio.TimeoutError) as exc:
                last = exc
                await asyncio.sleep(0.1)
                continue
            self.all_sockets.append(sock)
            try:
                await sock.until(lambda f: f["t"] == "snapshot", timeout_s=FRAME_TIMEOUT_S)
            except (ConnectionClosed, asyncio.TimeoutError) as exc:  # e.g. closed while Redis is away
                last = exc
                await sock.close()
                await asyncio.sleep(0.1)
                continue
            self.socks[viewer] = sock
            return sock
        raise AssertionError(f"could not reconnect viewer {viewer} of {self.game_id}: {last!r}")

    async def start(self) -> None:
        for viewer in (0, 1, SPECTATOR):
            await self.connect(viewer)
        self.v = self.socks[0].v
        assert_view(self.socks[0], self.duel, 0)

    async def play(self, max_moves: int = MAX_STEPS, on_move: Callable[[], Any] | None = None) -> None:
        """Play the referee's game through every fault: to its end, or ``max_moves`` moves."""
        for _ in range(max_moves):
            if self.duel.outcome is not None:
                return
            seat = self.duel.to_move
            move = pick_move(self.duel, self.rng)
            await self._commit(seat, move)
            self.duel.apply(seat, move)
            self.v += 1
            self.moves += 1
            assert_view(self.socks[seat], self.duel, seat)
            if on_move is not None:
                on_move()
        if max_moves == MAX_STEPS:
            raise AssertionError("the game did not end")

    async def _commit(self, seat: int, move: Move) -> None:
        """Send ``move`` on version ``self.v`` until the mover's socket shows version ``self.v + 1``.

        Whenever its fate is unknown — the socket dropped, or an ``unavailable`` error came — the
        bot acts like a client replaying its queued sends once the connection is back (after the
        reconnect, or the snapshot that follows an outage): it sends this seat's previous move
        again with its old version, which must be answered ``stale``, and resends this move
        blindly on the same version, answered ``stale`` if the first send had been committed,
        else by its update. A server that applied a move twice shows here as a skipped
        version or a rules error.
        """
        action, cell = wire_move(move)
        send, resent, refused, replays = True, False, False, 0
        try:
            await self.socks[seat].until_version(self.v, timeout_s=FRAME_TIMEOUT_S)
        except ConnectionClosed:  # dropped while the other seat moved: replay as after any reconnect
            self.reconnects += 1
            await self.connect(seat)
            resent = True
        for _ in range(MAX_FRAMES):
            sock = self.socks[seat]
            try:
                if send:
                    if resent and seat in self.last:
                        await sock.move(*self.last[seat])  # the previous move, replayed: must be stale
                        replays += 1
                        self.replays += 1
                    await sock.move(action, cell, self.v)
                    send = False
                frame = await sock.next(FRAME_TIMEOUT_S)
            except ConnectionClosed:  # the server died or shut down
                self.reconnects += 1
                await self.connect(seat)
                self.resends += 1
                send, resent, refused, replays = True, True, False, 0
                continue
            except asyncio.TimeoutError:
                seen = [(f["t"], f.get("v"), f.get("code")) for f in sock.frames[-12:]]
                raise AssertionError(f"{self.game_id} seat {seat}: no frame for {FRAME_TIMEOUT_S} s at v{self.v} "
                                     f"(socket v{sock.v}, resent={resent} refused={refused} replays={replays}); "
                                     f"last frames {seen}") from None
            kind = frame["t"]
            if kind == "error":
                assert frame["code"] in ("unavailable", "stale"), f"{self.game_id}: {frame}"
                if frame["code"] == "stale":
                    if replays:
                        replays -= 1  # the replayed move: refused, as it must be
                    else:
                        resent = False  # the resend: this move was committed already
                else:
                    refused = True  # a snapshot follows when the service is back
            elif kind == "update" and frame["v"] == self.v + 1:
                resent = False  # this move's commit, from whichever send
            elif kind == "snapshot" and refused:
                self.resends += 1
                send, resent, refused, replays = True, True, False, 0
                continue
            elif kind == "snapshot" and frame["v"] == self.v + 1:
                resent = False  # committed (a refresh after an outage shows it as a snapshot)
            assert sock.v is not None and sock.v <= self.v + 1, \
                f"{self.game_id}: v{sock.v} after v{self.v}: a move applied twice?"
            if sock.v == self.v + 1 and not resent and not replays:
                self.last[seat] = (action, cell, self.v)
                return
        raise AssertionError(f"{self.game_id}: no outcome for a move after {MAX_FRAMES} frames")

    async def finish(self) -> None:
        """Every socket (reconnected if needed) reaches the final version and shows the referee's view."""
        for viewer in (0, 1, SPECTATOR):
            sock = self.socks[viewer]
            try:
                await sock.until_version(self.v, timeout_s=FRAME_TIMEOUT_S)
            except ConnectionClosed:
                sock = await self.connect(viewer)
            assert sock.v == self.v
            assert_view(sock, self.duel, viewer)

    async def close(self) -> None:
        for sock in self.all_sockets:
            await sock.close()

    def acknowledged(self) -> dict[int, list[Any]]:
        """Version → ``[seat, action]`` of every move any socket saw in an update frame."""
        seen: dict[int, list[Any]] = {}
        for sock in self.all_sockets:
            for frame in sock.frames:
                if frame.get("t") != "update":
                    continue
                for ev in frame["events"]:
                    if ev["t"] == "move_played":
                        seen[frame["v"]] = [ev["seat"], ev["action"]]
        return seen


def stored_log(redis_url: str, game_id: str) -> list[list[Any]]:
    r = redis.Redis.from_url(redis_url)
    try:
        return [msgpack.unpackb(x, raw=False) for x in r.lrange(log_key(game_id), 0, -1)]
    finally:
        r.close()


def assert_log_matches(bots: RoomBots, entries: list[list[Any]]) -> int:
    """The stored log has versions 1..N without gaps or repeats, its moves are exactly the
    referee's, and every acknowledged move is in it at its version. Returns N."""
    versions = [e[0] for e in entries]
    assert versions == list(range(1, len(versions) + 1)), f"{bots.game_id}: gaps or repeats {versions}"
    assert versions[-1] == bots.v
    moves = [e[2] for e in entries if e[1] == "move"]
    assert moves == [[seat, *_move_data(m)] for seat, m in bots.duel.log], f"{bots.game_id}: log differs"
    by_version = {e[0]: e for e in entries}
    acked = bots.acknowledged()
    assert acked, "no update frames were seen"
    for v, (seat, action) in acked.items():
        entry = by_version.get(v)
        assert entry is not None and entry[1] == "move", f"acknowledged v{v} missing from the log"
        assert entry[2][0] == seat and entry[2][1] == action, f"v{v}: log {entry} vs acknowledged {seat} {action}"
    return len(entries)


def _move_data(move: Move) -> list[Any]:
    from engine import move_to_data

    return move_to_data(move)


async def play_through_a_fault(
    rooms: list[RoomBots], after_moves: int, fault: Callable[[], Any]
) -> tuple[int, int]:
    """Play every room to its end while ``fault`` (a coroutine function) strikes once
    ``after_moves`` moves are in. Returns ``(moves played when it struck, moves played in all)``
    and asserts the fault really happened mid-game."""
    played = [0]
    at_fault: list[int] = []

    async def strike() -> None:
        for _ in range(2000):  # until enough moves are in (bounded: 20 s)
            if played[0] >= after_moves:
                break
            await asyncio.sleep(0.01)
        at_fault.append(played[0])
        await fault()

    def count() -> None:
        played[0] += 1

    try:
        await asyncio.gather(strike(), *(bots.play(on_move=count) for bots in rooms))
        for bots in rooms:
            await bots.finish()
    finally:
        for bots in rooms:
            await bots.close()
    assert at_fault and played[0] > at_fault[0], "the fault did not happen during the games"
    return at_fault[0], played[0]

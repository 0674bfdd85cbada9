"""The open-loop load client of ``bench/load.py``: one process's share of the rooms.

One client for both targets, so that its cost and its own delays are the same in both:

- ``ours``: a MineDuel game per room (``/api/v1/games/{id}/ws``, docs/PROTOCOL.md): two bot
  players (seats 0 and 1) and K spectators. A move is ``{"t": "move", "v", "action": "explore",
  "cell"}`` from the seat to move; it is delivered when the ``update`` with version ``v + 1``
  arrives, at all 2 + K sockets (the mover's own included).
- ``baseline``: ``bench/baseline_app.py`` (``/rooms/{id}/ws``), the same 2 + K sockets per
  room. A "move" is a msgpack frame of the same shape (``{"t": "move", "v": version it makes,
  "action", "cell"}``) from the seat to move, which the app sends to the 1 + K *other* sockets.
  Seats alternate, so the next mover has to have received the previous message, as in a game.

Both: every socket decodes every frame it gets with msgpack (picows callbacks on uvloop), looks
up the move of that version, and records ``arrival - min(scheduled, sent)``; the same frames
(moves) are built with ``msgpack.packb``. The one extra piece of work for ``ours``: seat 0's
socket keeps the game state (hidden cells, whose turn, over) from each update's diff.

Open loop: each room has a timetable, one slot every ``1/rate`` s from a random phase. At its
slot a move is sent if the mover has seen the room's latest version (ours: the state tracker has
applied it, and no move of ours is still uncommitted); otherwise the slot waits in the room's
queue ("late") and is sent the moment the mover is ready, its latency still counted from the
slot. (Timers are armed 1 ms early, see ``TIMER_EARLY_NS``; a move sent before its slot has
its latency counted from when it was sent.) A game that ends is replaced by its rematch
(offered by one player, then accepted by the other: same players, seats swapped; with the
socket's ``rematch`` frames, or ``POST .../rematch`` where the server does not know them). Our sockets
ask to follow their game there (``?follow=rematch``, docs/PROTOCOL.md): a server that does (it
says so in the upgrade's answer) moves the same 2 + K sockets to the new game; otherwise (an
older commit under ``--compare``) the new game's 2 + K sockets are opened before the old ones
are closed. Those HTTP calls, moves and handshakes are part of our server's load
(``restarts``). The room's timetable goes on meanwhile: slots that come while it is replaced
wait for the new game (``across_restart``; at 1 move/s per room the replacement is normally
done long before the room's next slot), and so do slots queued when the game ended, so a
backlog is never dropped. A slot is "skipped" only if its room's replacement failed.

Slots from ``start`` to ``start + warmup`` warm up; the slots of the next ``duration`` seconds
are measured (by scheduled time). After that no new slot is made; the window's queued slots are
still sent and every sent move's deliveries awaited, for at most ``drain`` seconds; deliveries
that never came, and queued slots never sent (each worth 2 + K or 1 + K deliveries), are
"undelivered" and rank above every measured latency in the percentiles.
"""

from __future__ import annotations

import asyncio
import gc
import os
import random
import resource
import time
import traceback
from collections import deque
from dataclasses import dataclass
from typing import Any

import msgpack
from picows import WSCloseCode, WSListener, WSMsgType, ws_connect

from server.loop_lag import LoopLag

TIMER_EARLY_NS = 1_000_000
"""Timers are armed this much before their slot: uvloop's (libuv's) have 1 ms granularity and
otherwise fire up to ~1.5 ms late, which would be the client's delay, not the server's. A move
sent before its slot has its latency counted from its send, so this only moves the timetable by
about a millisecond; the client's lag past the slot is printed ("timer lag")."""


@dataclass
class Plan:
    """What one client process does (picklable: it crosses ``fork``)."""

    kind: str  # "ours" | "baseline"
    url: str  # http://127.0.0.1:port
    rooms: int  # this process's share
    first_room: int  # index of its first room (baseline room ids)
    spectators: int
    rate: float  # slots per second per room
    warmup: float
    duration: float
    drain: float
    seed: int
    setup_timeout: float = 300.0
    preplay: int = 0  # ours: each room first plays 0..preplay of its moves (uniformly), unmeasured


class Room:
    """One room's sockets, what its bots know, its timetable and its moves in flight."""

    def __init__(self, index: int, room_id: str, tokens: list[str] | None) -> None:
        self.index = index
        self.id = room_id
        self.tokens = tokens
        self.conns: list[Conn] = []
        self.gen = 0  # bumped when a rematch's sockets take over
        self.v = 0  # the version the state tracker is at
        self.seat_v = [0, 0]  # the version each player's socket has seen
        self.to_move: int | None = 0
        self.hidden: set[tuple[int, int]] = set()
        self.over = False
        self.switching = False
        self.dead = False  # its replacement failed: its slots are skipped from then on
        self.outstanding: int | None = None  # ours: the version our last move will make, until applied
        self.pending: deque[int] = deque()  # slots (ns) waiting for the mover
        self.moves: dict[int, list] = {}  # version -> [start_ns, deliveries left, in_window, first_arrival]
        self.waiter: asyncio.Future[None] | None = None  # pre-play: the mover is ready (or the game over)
        self.offer: asyncio.Future[bool] | None = None  # a rematch offered on the socket: seen (or not understood)


class OpenLoopClient:
    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.ours = plan.kind == "ours"
        self.recipients = plan.spectators + (2 if self.ours else 1)
        self.rng = random.Random(plan.seed)
        self.interval_ns = int(1e9 / plan.rate)
        self.rooms: list[Room] = []
        self.start_ns = self.warm_ns = self.end_ns = 0
        self.scheduling = False
        # figures (the window's, unless said otherwise)
        self.lat: list[int] = []  # latency of each delivery of a move scheduled in the window
        self.lat_sched: list[int] = []  # that move's slot
        self.slots = 0  # slots in the window
        self.sent = 0  # moves sent of those slots
        self.late: list[int] = []  # ns after its slot, for each window slot that had to wait
        self.timer_lag: list[int] = []  # send - slot for the window's slots sent at their slot
        self.skipped = 0  # window slots dropped: their room's replacement game could not be had
        self.across_restart = 0  # window slots that waited for their room's replacement game
        self.refused = 0  # window moves answered with an error frame
        self.abandoned = 0  # deliveries of window moves given up when their room was replaced
        self.messages = 0  # moves whose first delivery arrived inside the wall-clock window
        self.deliveries = 0  # deliveries (of any move) that arrived inside the wall-clock window
        self.errors: dict[str, int] = {}
        self.closed_early = 0
        self.restarts = 0  # games replaced by their rematch inside the window
        self.restarts_all = 0
        self.followed_restarts = 0  # of ``restarts``: the sockets moved by the server, not reopened
        self.socket_rematch = self.ours  # offered and accepted with socket frames (until a server does not know them)
        self.socket_restarts = 0  # of ``restarts``: the rematch made with socket frames, not HTTP
        self.restart_failures = 0
        self.api: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None

    # ------------------------------------------------------------------ setup

    async def setup(self) -> None:
        self.loop = asyncio.get_running_loop()
        plan = self.plan
        if self.ours:
            from server.client import Api

            self.api = Api(plan.url, timeout_s=60)
            sem = asyncio.Semaphore(16)

            async def make(i: int) -> Room:
                async with sem:
                    a, b = await self.api.guest(), await self.api.guest()
                    game = await self.api.create_game(a.token, seat=0)
                    await self.api.join(b.token, game["id"])
                    return Room(i, game["id"], [a.token, b.token])

            self.rooms = list(await asyncio.gather(*(make(i) for i in range(plan.rooms))))
        else:
            self.rooms = [Room(i, f"r{plan.first_room + i}", None) for i in range(plan.rooms)]
        sem = asyncio.Semaphore(64)

        async def open_room(room: Room) -> None:
            async with sem:
                room.conns = await self.open_conns(room, room.id, room.tokens, room.gen)
            for conn in room.conns:
                self.adopt_snapshot(room, conn)

        await asyncio.wait_for(asyncio.gather(*(open_room(r) for r in self.rooms)), plan.setup_timeout)

    async def preplay(self) -> None:
        """Ours: every room first plays a random number of its moves (0 to ``plan.preplay``,
        uniformly, as fast as the server answers), none measured, so that when the timetable
        starts the rooms' games are spread over their phases as on a server with games of all
        ages, not all at their first move. Why: a move's cost rises and falls with its game
        (the auto-reveal's several times over), so with every game starting at once a window
        measured one phase of all of them (docs/PERFORMANCE.md, twelfth session). A game that
        ends meanwhile is replaced by its rematch."""
        most = self.plan.preplay
        if not self.ours or most <= 0:
            return
        self.warm_ns = self.end_ns = 1 << 62  # nothing of this is in the window
        assert self.loop is not None

        async def one(room: Room, moves: int) -> None:
            for _ in range(moves):
                while not self.ready(room) and not room.over:
                    room.waiter = self.loop.create_future()
                    await asyncio.wait_for(room.waiter, 60)
                if room.over:
                    break
                now = time.monotonic_ns()
                self.send(room, now, now)
            while room.outstanding is not None and not room.over:  # the last move's update
                room.waiter = self.loop.create_future()
                await asyncio.wait_for(room.waiter, 60)
            if room.over:
                room.switching = True
                await self.restart(room)
                if room.dead:
                    raise RuntimeError(f"pre-play: room {room.id} could not be replaced")

        await asyncio.gather(*(one(room, self.rng.randint(0, most)) for room in self.rooms))
        self.warm_ns = self.end_ns = 0

    def ws_url(self, room_id: str) -> str:
        base = self.plan.url.replace("http://", "ws://").rstrip("/")
        # ours: the sockets ask to follow their game to its rematch (a server that does says so)
        return base + (f"/api/v1/games/{room_id}/ws?follow=rematch" if self.ours else f"/rooms/{room_id}/ws")

    async def open_conns(self, room: Room, room_id: str, tokens: list[str] | None, gen: int) -> list[Conn]:
        """2 + K sockets on ``room_id``, each once its first frame (snapshot / hello) is in."""
        url = self.ws_url(room_id)
        conns = [Conn(self, room, slot, gen) for slot in range(2 + self.plan.spectators)]

        async def one(conn: Conn) -> None:
            token = tokens[conn.slot] if tokens and conn.slot < 2 else None
            headers = {"Authorization": f"Bearer {token}"} if token else None
            await ws_connect(lambda: conn, url, extra_headers=headers, websocket_handshake_timeout=60,
                             max_frame_size=2**22)
            await asyncio.wait_for(conn.first, 60)

        await asyncio.gather(*(one(c) for c in conns))
        return conns

    def adopt_snapshot(self, room: Room, conn: Conn) -> None:
        """Take the state a socket's first frame gave (when its generation becomes the room's)."""
        f = conn.snapshot
        assert f is not None
        if conn.slot < 2:
            room.seat_v[conn.slot] = f["v"]
        if conn.slot == 0:
            room.v = f["v"]
            if self.ours:
                view = f["view"]
                if f["you"] != 0:
                    raise RuntimeError(f"seat 0's socket is viewer {f['you']}")
                room.to_move = view["to_move"]
                room.hidden = {(r, c) for r, row in enumerate(view["rows"]) for c, ch in enumerate(row) if ch in ".x"}
                room.over = f["room"]["status"] != "playing"
            else:
                room.to_move = room.v % 2

    # ------------------------------------------------------------------ the timetable

    def start(self, start_ns: int) -> None:
        p = self.plan
        self.start_ns = start_ns
        self.warm_ns = start_ns + int(p.warmup * 1e9)
        self.end_ns = self.warm_ns + int(p.duration * 1e9)
        self.scheduling = True
        for room in self.rooms:
            self.arm(room, start_ns + int(self.rng.random() * self.interval_ns))

    def arm(self, room: Room, slot_ns: int) -> None:
        if slot_ns >= self.end_ns:
            return
        assert self.loop is not None
        early = slot_ns - TIMER_EARLY_NS - time.monotonic_ns()
        self.loop.call_later(max(0, early) / 1e9, self.on_slot, room, slot_ns)

    def on_slot(self, room: Room, slot_ns: int) -> None:
        self.arm(room, slot_ns + self.interval_ns)
        in_window = slot_ns >= self.warm_ns
        if in_window:
            self.slots += 1
        if room.dead:
            if in_window:
                self.skipped += 1
            return
        if room.over or room.switching:
            if in_window:
                self.across_restart += 1
            room.pending.append(slot_ns)
            return
        if not room.pending and self.ready(room):
            now = time.monotonic_ns()
            if in_window:
                self.timer_lag.append(now - slot_ns)
            self.send(room, slot_ns, now)
        else:
            room.pending.append(slot_ns)

    def ready(self, room: Room) -> bool:
        seat = room.to_move
        return (seat is not None and room.outstanding is None and not room.over and not room.switching
                and room.seat_v[seat] == room.v and (bool(room.hidden) or not self.ours))

    def send_queued(self, room: Room) -> None:
        waiter = room.waiter
        if waiter is not None and (room.over or room.outstanding is None):  # the pre-play looks again
            room.waiter = None
            if not waiter.done():
                waiter.set_result(None)
        if room.pending and self.ready(room):
            slot_ns = room.pending.popleft()
            now = time.monotonic_ns()
            if slot_ns >= self.warm_ns:
                # queued at its (early) timer, but ready before its slot came: on time after all
                (self.late if now > slot_ns else self.timer_lag).append(now - slot_ns)
            self.send(room, slot_ns, now)

    def send(self, room: Room, slot_ns: int, now: int) -> None:
        seat = room.to_move
        assert seat is not None
        if self.ours:
            cell = self.rng.choice(tuple(room.hidden))
            made = room.v + 1
            frame = msgpack.packb({"t": "move", "v": room.v, "action": "explore", "cell": list(cell)})
            room.outstanding = made
        else:
            made = room.v + 1
            cell = divmod(self.rng.randrange(121), 11)
            frame = msgpack.packb({"t": "move", "v": made, "action": "explore", "cell": list(cell)})
            room.v = made  # the app has no commit: the move is the new version
            room.seat_v[seat] = made
            room.to_move = made % 2
        in_window = slot_ns >= self.warm_ns
        room.moves[made] = [min(slot_ns, now), self.recipients, in_window, 0]
        if in_window:
            self.sent += 1
        room.conns[seat].send(frame)

    # ------------------------------------------------------------------ frames

    def on_frame(self, conn: Conn, f: dict, now: int) -> None:
        room = conn.room
        if conn.gen != room.gen:
            return  # a replaced game's socket (its last deliveries are counted in ``deliver``)
        t = f.get("t")
        offer = room.offer
        if offer is not None and not offer.done():  # a rematch offered on the socket: seen, or not understood
            if t == "update" and f["room"].get("rematch_offer") is not None:
                offer.set_result(True)
            elif t == "error" and f.get("code") == "unknown_type":
                offer.set_result(False)
                return
        if t == "update" or t == "move":
            v = f["v"]
            self.deliver(room, v, now)
            slot = conn.slot
            if slot < 2:
                room.seat_v[slot] = max(room.seat_v[slot], v)
                if self.ours and slot == 0:
                    self.apply_update(room, f)
                self.send_queued(room)
        elif t == "error":
            code = f.get("code", "?")
            self.errors[code] = self.errors.get(code, 0) + 1
            if conn.slot < 2 and room.outstanding is not None and conn.slot == room.to_move:
                rec = room.moves.pop(room.outstanding, None)
                room.outstanding = None
                if rec is not None and rec[2]:
                    self.refused += 1
        elif t == "snapshot" and f["room"]["id"] != room.id:  # moved to the rematch (``followed``)
            if conn.moved is None:
                conn.moved = asyncio.get_running_loop().create_future()
            if not conn.moved.done():
                conn.moved.set_result(f)
        elif t == "snapshot" and conn.slot < 2:  # after a stale error or a gap: start again from it
            conn.snapshot = f
            if room.outstanding is not None:
                room.moves.pop(room.outstanding, None)
                room.outstanding = None
            self.adopt_snapshot(room, conn)
            self.send_queued(room)

    def deliver(self, room: Room, v: int, now: int) -> None:
        rec = room.moves.get(v)
        if rec is None:
            return
        if self.warm_ns <= now < self.end_ns:
            self.deliveries += 1
            if not rec[3]:
                self.messages += 1
        if not rec[3]:
            rec[3] = now
        if rec[2]:
            self.lat.append(now - rec[0])
            self.lat_sched.append(rec[0])
        rec[1] -= 1
        if rec[1] <= 0:
            del room.moves[v]

    def apply_update(self, room: Room, f: dict) -> None:
        v = f["v"]
        if v <= room.v:
            return
        room.v = v
        if room.outstanding is not None and v >= room.outstanding:
            room.outstanding = None
        diff = f["diff"]
        hidden = room.hidden
        for r, c, ch in diff["cells"]:
            if ch == "." or ch == "x":
                hidden.add((r, c))
            else:
                hidden.discard((r, c))
        changed = diff["changed"]
        if "to_move" in changed:
            room.to_move = changed["to_move"]
        if f["room"]["status"] == "over" and not room.over:
            # Replace the game; the room's queued slots wait for the new one (the offered load
            # and any backlog carry over). After the window only a room that owes slots is.
            room.over = True
            if self.scheduling or any(slot_ns >= self.warm_ns for slot_ns in room.pending):
                self.across_restart += sum(1 for slot_ns in room.pending if slot_ns >= self.warm_ns)
                room.switching = True
                asyncio.ensure_future(self.restart(room))

    async def restart(self, room: Room) -> None:
        """Replace an ended game by its rematch: new sockets first, then the old ones closed."""
        try:
            deadline = time.monotonic() + 2.0
            while room.moves and time.monotonic() < deadline:  # the last move's pushes
                await asyncio.sleep(0.005)
            assert room.tokens is not None
            tokens = [room.tokens[1], room.tokens[0]]  # seats swapped
            follow = all(conn.follows for conn in room.conns)
            on_sockets = follow and await self.rematch_on_sockets(room)
            if not on_sockets:
                # a rematch is offered by one player and accepted by the other (the accept makes it)
                fresh = await self.api.rematch(room.tokens[0], room.id)
                if fresh.get("offered"):
                    fresh = await self.api.rematch(room.tokens[1], room.id)
            if follow:
                conns = await self.followed(room)
                fresh = {"id": conns[0].snapshot["room"]["id"]}
            else:
                conns = await self.open_conns(room, fresh["id"], tokens, room.gen + 1)
        except Exception:
            self.restart_failures += 1
            room.switching = False
            room.dead = True  # stays over: its slots are skipped
            self.skipped += sum(1 for slot_ns in room.pending if slot_ns >= self.warm_ns)
            room.pending.clear()
            return
        for rec in room.moves.values():
            if rec[2]:
                self.abandoned += rec[1]
        old = [conn for conn in room.conns if conn not in conns]
        room.moves.clear()
        room.gen += 1
        for conn in conns:
            conn.gen = room.gen
        room.id, room.tokens, room.conns = fresh["id"], tokens, conns
        room.outstanding = None
        room.over = False
        for conn in conns:
            self.adopt_snapshot(room, conn)
        room.switching = False
        self.restarts_all += 1
        if self.warm_ns <= time.monotonic_ns() < self.end_ns:
            self.restarts += 1
            self.followed_restarts += follow
            self.socket_restarts += on_sockets
        for conn in old:
            conn.close()
        self.send_queued(room)

    async def rematch_on_sockets(self, room: Room) -> bool:
        """The rematch offered on seat 0's socket and, once its update is in, accepted on seat
        1's (the HTTP calls' order); False, and HTTP from then on, for a server that does not
        know the frames (an older commit under ``--compare``)."""
        if not self.socket_rematch:
            return False
        room.offer = asyncio.get_running_loop().create_future()
        try:
            room.conns[0].send(msgpack.packb({"t": "rematch"}))
            if not await asyncio.wait_for(room.offer, 10):
                self.socket_rematch = False
                return False
        finally:
            room.offer = None
        room.conns[1].send(msgpack.packb({"t": "rematch"}))
        return True

    async def followed(self, room: Room) -> list[Conn]:
        """The same sockets, once the server has moved each to the rematch (its snapshot there
        is in), in their new slots (the players' seats are swapped)."""
        loop = asyncio.get_running_loop()
        for conn in room.conns:
            if conn.moved is None:
                conn.moved = loop.create_future()
        snapshots = asyncio.gather(*(conn.moved for conn in room.conns))
        try:
            await asyncio.wait_for(snapshots, 60)
        finally:
            # cut short (the run's end, a socket's close cancelling its future): what ended it is
            # read here, or asyncio prints "exception was never retrieved" into the bench's report
            if snapshots.done() and not snapshots.cancelled():
                snapshots.exception()
        conns = sorted(room.conns, key=lambda c: c.slot if c.slot >= 2 else c.moved.result()["you"])
        for slot, conn in enumerate(conns):
            conn.slot, conn.snapshot, conn.moved = slot, conn.moved.result(), None
        return conns

    # ------------------------------------------------------------------ the end

    def outstanding_window(self) -> int:
        """Deliveries still owed to moves scheduled in the window (queued slots included)."""
        owed = 0
        for room in self.rooms:
            owed += sum(rec[1] for rec in room.moves.values() if rec[2])
            owed += self.recipients * sum(1 for s in room.pending if s >= self.warm_ns)
        return owed

    async def drain(self) -> tuple[int, int]:
        """After the window: queued slots still go out; wait for what was sent, bounded.
        Returns (undelivered deliveries, queued slots never sent)."""
        self.scheduling = False
        deadline = time.monotonic() + self.plan.drain
        while time.monotonic() < deadline and self.outstanding_window():
            await asyncio.sleep(0.01)
        unsent = sum(1 for room in self.rooms for s in room.pending if s >= self.warm_ns)
        return self.outstanding_window() + self.abandoned, unsent

    def close(self) -> None:
        for room in self.rooms:
            for conn in room.conns:
                conn.close()


class Conn(WSListener):  # type: ignore[misc]
    """One socket: a picows listener that hands every binary frame, decoded, to the client."""

    def __init__(self, client: OpenLoopClient, room: Room, slot: int, gen: int) -> None:
        super().__init__()
        self.client = client
        self.room = room
        self.slot = slot
        self.gen = gen
        self.transport: Any = None
        self.snapshot: dict | None = None
        self.first: asyncio.Future = asyncio.get_running_loop().create_future()
        self.closing = False
        self.follows = False  # the server moves this socket to its game's rematch
        self.moved: asyncio.Future | None = None  # the rematch's snapshot, when it was moved

    def on_ws_connected(self, transport: Any) -> None:
        self.transport = transport
        self.follows = transport.response.headers.get("x-mineduel-follow") == "rematch"

    def on_ws_frame(self, transport: Any, frame: Any) -> None:
        kind = frame.msg_type
        if kind == WSMsgType.BINARY:
            now = time.monotonic_ns()
            f = msgpack.unpackb(frame.get_payload_as_memoryview(), raw=False, strict_map_key=False)
            if self.snapshot is None:
                self.snapshot = f
                if not self.first.done():
                    self.first.set_result(None)
                return
            self.client.on_frame(self, f, now)
        elif kind == WSMsgType.CLOSE:
            transport.send_close(frame.get_close_code())
            transport.disconnect()

    def on_ws_disconnected(self, transport: Any) -> None:
        if not self.closing and self.gen == self.room.gen:
            self.client.closed_early += 1
        if not self.first.done():
            self.first.set_exception(ConnectionError("closed before its first frame"))

    def send(self, payload: bytes) -> None:
        self.transport.send(WSMsgType.BINARY, payload)

    def close(self) -> None:
        if self.closing or self.transport is None:
            return
        self.closing = True
        try:
            self.transport.send_close(WSCloseCode.OK)
            self.transport.disconnect()
        except Exception:
            pass


# ---------------------------------------------------------------------- the process


def raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


async def _run(plan: Plan, barrier: Any, start_value: Any, results: Any) -> None:
    client = OpenLoopClient(plan)
    await client.setup()
    await client.preplay()
    await asyncio.sleep(0.3)  # presence frames and the like settle
    # The client is the measuring instrument: its own cyclic-GC passes over thousands of
    # sockets would stall its reads and show up as latency. The run is bounded, so
    # collection is off while it measures (and the objects of the setup are frozen).
    gc.collect()
    gc.freeze()
    gc.disable()
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, barrier.wait)  # every process is set up
    await loop.run_in_executor(None, barrier.wait)  # the parent has set the start
    client.start(start_value.value)
    lags: list[float] = []  # s: how late this process's loop ran a 20 ms timer, in the window

    def in_window(late: float) -> None:
        if client.warm_ns <= time.monotonic_ns() < client.end_ns:
            lags.append(late)

    probe = LoopLag(in_window)  # the client's own stalls look like the server's in its latencies
    probe.start()
    await asyncio.sleep(max(0.0, (client.end_ns - time.monotonic_ns()) / 1e9))
    await probe.stop()
    undelivered, unsent = await client.drain()
    results.put({
        "pid": os.getpid(), "lat": client.lat, "lat_sched": client.lat_sched, "warm_ns": client.warm_ns,
        "slots": client.slots, "sent": client.sent, "late": client.late, "timer_lag": client.timer_lag,
        "skipped": client.skipped, "across_restart": client.across_restart, "refused": client.refused,
        "undelivered": undelivered, "unsent": unsent, "messages": client.messages,
        "deliveries": client.deliveries, "errors": client.errors, "closed_early": client.closed_early,
        "restarts": client.restarts, "restarts_all": client.restarts_all, "followed_restarts": client.followed_restarts,
        "socket_restarts": client.socket_restarts,
        "restart_failures": client.restart_failures, "recipients": client.recipients,
        "conns": sum(len(r.conns) for r in client.rooms),
        "loop_lag": lags,
    })
    client.close()
    if client.api is not None:
        await client.api.close()
    await asyncio.sleep(0.2)


def worker(plan: Plan, barrier: Any, start_value: Any, results: Any) -> None:
    """A client process: set up its rooms, meet the others at the barrier, play, report."""
    raise_fd_limit()
    try:
        import uvloop

        uvloop.run(_run(plan, barrier, start_value, results))
    except BaseException:
        # the error first: the parent reads it as soon as the barrier breaks
        results.put({"pid": os.getpid(), "error": traceback.format_exc()})
        barrier.abort()

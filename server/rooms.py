"""The room service: load → engine.apply → one compare-and-set commit → publish.

Every public coroutine either returns the committed :class:`Room` or raises a
:class:`RoomError` (with a machine-readable ``code``) or the engine's ``IllegalMove``; a refused
action changes nothing anywhere. Results reach connected clients through the hub (every
process's pub/sub), never through the return value, so the caller's own socket gets exactly
what everybody else gets.

Retention: every commit renews the expiry of the room's keys — ``finished_ttl_s`` once the
game is over, ``idle_ttl_s`` before (an abandoned room goes away that long after its last
change); 0 keeps them forever.

Operations: each commit is counted (:class:`~server.metrics.Metrics`) and logged as one
``event=<kind>_committed`` line (``move_committed``, ``join_committed``...: room, version,
seat, player id, action), each lost compare-and-set as
``event=commit_conflict``.

Concurrency: the commit succeeds only if the stored version is still the one the change was
computed from. A move carries the version its sender saw, so when another change won the
race the move is refused as stale (the client gets a fresh snapshot). Changes without a seen
version (join, resign, timeout, rematch) reload and retry, at most ``retries`` times.
"""

from __future__ import annotations

import logging
import random
import secrets
import time
from collections.abc import Callable
from typing import Any

from engine import Duel, Explore, Mark, Move, Resign, Timeout, move_to_data
from engine.clock import Clock
from engine.rules import RULESETS

from .logs import event
from .metrics import Metrics
from .room import Player, Room, Status, clone_duel, events_to_data
from .store import Store, pack, unpack

log = logging.getLogger("mineduel.rooms")

DAY_S = 86_400


class RoomError(Exception):
    """A refused room action: ``code`` for machines, ``message`` for people."""

    code = "room_error"
    http_status = 400

    def __init__(self, message: str, room: Room | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.room = room


class UnknownRoom(RoomError):
    code, http_status = "unknown_room", 404


class StaleVersion(RoomError):
    """The move was computed on an old version; ``room`` is the current one (send a snapshot)."""

    code, http_status = "stale", 409


class NotSeated(RoomError):
    code, http_status = "not_seated", 403


class NotPlaying(RoomError):
    """The room is waiting for its second player (or over, for actions that need a live game)."""

    code, http_status = "not_playing", 409


class RoomFull(RoomError):
    code, http_status = "room_full", 409


class NotOver(RoomError):
    code, http_status = "not_over", 409


class TimedOut(RoomError):
    """The mover's time had run out: the timeout was committed instead of the move."""

    code, http_status = "time_out", 409


class Busy(RoomError):
    """Too many concurrent changes; try again."""

    code, http_status = "busy", 503


class BadRequest(RoomError):
    code, http_status = "bad_request", 400


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def new_room_id() -> str:
    return secrets.token_urlsafe(9)


class Rooms:
    def __init__(
        self,
        store: Store,
        *,
        retries: int = 8,
        now_ms: Callable[[], int] = wall_ms,
        on_commit: Callable[[bytes, Room | None, list[Any], float | None], None] | None = None,
        metrics: Metrics | None = None,
        finished_ttl_s: int = 30 * DAY_S,
        idle_ttl_s: int = 7 * DAY_S,
    ) -> None:
        self.store = store
        self.retries = retries
        self.now_ms = now_ms
        self.on_commit = on_commit
        """Called with ``(nonce, room, events, started)`` just before each commit this process
        attempts, and with ``(nonce, None, [], None)`` if it lost: the hub then uses the Room it
        already has when the commit's message (which carries the nonce) comes back over pub/sub.
        ``started`` is the ``time.perf_counter()`` at which the move arrived (or ``None``)."""
        self.metrics = metrics or Metrics()
        self._committed: dict[str, Any] = {}  # commit kind -> its moves_committed counter
        self.finished_ttl_s = finished_ttl_s
        self.idle_ttl_s = idle_ttl_s
        self.stats = {"cache_hits": 0, "loads": 0, "conflicts": 0}
        self._nonce = secrets.token_bytes(6)
        self._count = 0
        self.cached: Callable[[str], Room | None] = lambda room_id: None
        """The latest Room this process knows without asking Redis (the hub's), or ``None``.
        Only an optimisation: the commit's compare-and-set catches a cache that is behind."""

    # ------------------------------------------------------------------ reading

    async def load(self, room_id: str) -> Room:
        """The current Room; raises :class:`UnknownRoom`."""
        self.stats["loads"] += 1
        found = await self.store.load(room_id)
        if found is None:
            raise UnknownRoom(f"no game {room_id!r}")
        _v, data = found
        return Room.from_data(unpack(data))

    async def record(self, room_id: str) -> dict[str, Any]:
        """Everything needed to verify a finished game; raises :class:`NotOver` before the end."""
        room = await self.load(room_id)
        if room.status is not Status.OVER:
            raise NotOver("the record is published when the game is over", room)
        duel = room.duel
        setup = duel.setup
        return {
            "id": room.id,
            "v": room.version,
            "ruleset": setup.ruleset,
            "width": setup.width,
            "height": setup.height,
            "players": [p.to_data() if p else None for p in room.players],
            "first": setup.first,
            "moves": [[seat, *move_to_data(move)] for seat, move in duel.log],
            "lines": [m.to_data() for m in room.view(2).moves],
            "outcome": duel.outcome.to_data() if duel.outcome else None,
            "scores": list(duel.scores),
            "mines": [list(m) for m in sorted(setup.mines)],
            "salt": setup.salt,
            "commitment": duel.commitment,
        }

    # ------------------------------------------------------------------ creating and joining

    async def create(
        self,
        player: Player,
        *,
        ruleset: str = "brettspielnetz",
        clock: tuple[int, int] | None = None,
        seat: int | str = "random",
        seed: int | None = None,
        opponent: Player | None = None,
    ) -> Room:
        """A new room with ``player`` seated (and ``opponent`` in the other seat, if given).

        ``clock`` is ``(initial_ms, increment_ms)``. Seat 0 moves first; ``seat`` picks the
        creator's seat ("random" draws it). ``seed`` makes the layout deterministic and must
        only be passed when the test hooks are on (the edge checks).
        """
        if ruleset not in RULESETS:
            raise BadRequest(f"unknown ruleset {ruleset!r}; use one of {sorted(RULESETS)}")
        if seat == "random":
            seat = random.SystemRandom().randrange(2)
        if seat not in (0, 1):
            raise BadRequest("seat must be 0, 1 or \"random\"")
        rng: Any = random.Random(seed) if seed is not None else random.SystemRandom()
        duel = Duel.new(rng, ruleset, first=0)
        players: list[Player | None] = [None, None]
        players[seat] = player
        if opponent is not None:
            players[1 - seat] = opponent
        now = self.now_ms()
        the_clock = Clock.new(*clock) if clock is not None else None
        room = Room(new_room_id(), 1, duel, (players[0], players[1]), the_clock, now)
        if the_clock is not None and room.status is Status.PLAYING:
            room = room.evolve(clock=the_clock.start(duel.to_move, now))
        ok, _ = await self._commit(None, room, "create", [], [])
        if not ok:  # a 72-bit random id collided
            raise Busy("could not allocate a room id; try again")
        return room

    async def join(self, room_id: str, player: Player) -> tuple[Room, int]:
        """Seat ``player`` in the empty seat; idempotent for a player already seated."""
        for _ in range(self.retries):
            room = await self.load(room_id)
            seat = room.seat_of(player.id)
            if seat is not None:
                return room, seat
            if room.status is not Status.WAITING:
                raise RoomFull("both seats are taken", room)
            seat = 0 if room.players[0] is None else 1
            players = list(room.players)
            players[seat] = player
            new = room.evolve(version=room.version + 1, players=(players[0], players[1]))
            if new.clock is not None and new.status is Status.PLAYING:
                new = new.evolve(clock=new.clock.start(new.duel.to_move, self.now_ms()))
            ok, _ = await self._commit(room.version, new, "join", [seat, player.to_data()], [])
            if ok:
                return new, seat
        raise Busy("too many concurrent changes; try again")

    # ------------------------------------------------------------------ playing

    async def play(self, room_id: str, seat: int, move: Move, seen_version: int | None) -> Room:
        """Apply ``seat``'s ``move`` and commit it as version ``seen_version + 1``.

        Raises :class:`StaleVersion` (with the current room) if the room moved on from
        ``seen_version`` (also when another change wins the race), :class:`NotPlaying` while
        a seat is empty, :class:`TimedOut` if the mover's clock had run out (the timeout is
        committed instead), or ``IllegalMove`` from the engine. ``seen_version=None`` skips
        the check and retries lost races (used for resign and timeout).
        """
        started = time.perf_counter()
        for attempt in range(self.retries):
            room = self.cached(room_id) if attempt == 0 else None
            if room is None or (seen_version is not None and seen_version != room.version):
                room = await self.load(room_id)
            else:
                self.stats["cache_hits"] += 1
            if seen_version is not None and seen_version != room.version:
                raise StaleVersion(f"you saw version {seen_version}, the game is at {room.version}", room)
            if room.status is Status.WAITING:
                raise NotPlaying("waiting for the second player", room)
            now = self.now_ms()
            clock = room.clock
            if clock is not None and room.status is Status.PLAYING and clock.expired(now):
                timed = await self._apply(room, room.duel.to_move, Timeout(), now)
                if timed is not None:
                    raise TimedOut("your time ran out", timed)
                continue
            new = await self._apply(room, seat, move, now, started)
            if new is not None:
                return new
            if seen_version is not None:
                raise StaleVersion("another change was committed first", await self.load(room_id))
        raise Busy("too many concurrent changes; try again")

    async def resign(self, room_id: str, seat: int) -> Room:
        """``seat`` resigns (allowed on either turn while the game is on)."""
        return await self.play(room_id, seat, Resign(), None)

    async def timeout(self, room_id: str) -> Room | None:
        """Commit a timeout if the running clock has expired; ``None`` if there is nothing to do.

        Any process may call this for any room: the CAS makes the timeout happen once.
        """
        for _ in range(self.retries):
            try:
                room = await self.load(room_id)
            except UnknownRoom:
                await self.store.drop_clock(room_id)
                return None
            now = self.now_ms()
            clock = room.clock
            if room.status is not Status.PLAYING or clock is None or clock.running is None:
                await self.store.drop_clock(room_id)
                return None
            if not clock.expired(now):
                return None
            new = await self._apply(room, room.duel.to_move, Timeout(), now)
            if new is not None:
                return new
        return None

    async def rematch(self, room_id: str, player: Player) -> Room:
        """After the end, a new game with the same players in swapped seats, recorded on the old
        room (a versioned change) so both players see it. Idempotent: returns the existing one."""
        for _ in range(self.retries):
            room = await self.load(room_id)
            seat = room.seat_of(player.id)
            if seat is None:
                raise NotSeated("only a player of this game can ask for a rematch", room)
            if room.status is not Status.OVER:
                raise NotOver("a rematch needs a finished game", room)
            if room.rematch is not None:
                return await self.load(room.rematch)
            p0, p1 = room.players
            assert p0 is not None and p1 is not None
            clock = (room.clock.initial_ms, room.clock.increment_ms) if room.clock else None
            fresh = await self.create(p1, ruleset=room.ruleset, clock=clock, seat=0, opponent=p0)
            new = room.evolve(version=room.version + 1, rematch=fresh.id)
            ok, _ = await self._commit(room.version, new, "rematch", [fresh.id], [])
            if ok:
                return fresh
        raise Busy("too many concurrent changes; try again")

    # ------------------------------------------------------------------ internals

    async def _apply(self, room: Room, seat: int, move: Move, now: int, started: float | None = None) -> Room | None:
        """Apply ``move`` to a copy and commit it; ``None`` if another change won the race."""
        duel = clone_duel(room.duel)
        events = duel.apply(seat, move)  # IllegalMove propagates; the stored room is untouched
        clock = room.clock
        if clock is not None:
            if duel.outcome is not None:
                clock = clock.stop(now)
            elif isinstance(move, (Explore, Mark)) and clock.running == seat:
                clock = clock.press(seat, now)
        new = room.evolve(version=room.version + 1, duel=duel, clock=clock)
        ok, _ = await self._commit(room.version, new, "move", [seat, *move_to_data(move)], events, started)
        return new if ok else None

    def ttl_s(self, room: Room) -> int | None:
        """How long the room's keys live after this change (``None``: forever)."""
        ttl = self.finished_ttl_s if room.status is Status.OVER else self.idle_ttl_s
        return ttl or None

    async def _commit(self, expected: int | None, new: Room, kind: str, detail: list[Any], events: list[Any],
                      started: float | None = None) -> tuple[bool, int | None]:
        data = pack(new.to_data())
        ev = events_to_data(events)
        self._count += 1
        nonce = self._nonce + self._count.to_bytes(8, "big")
        message = pack([b"commit", new.version, data, ev, nonce])
        deadline = None
        if new.clock is not None and new.status is Status.PLAYING:
            deadline = new.clock.deadline_ms()
        if self.on_commit is not None:
            self.on_commit(nonce, new, events, started)
        try:
            result = await self.store.commit(
                new.id, expected, new.version, data, pack([new.version, kind, detail]), message, deadline,
                self.ttl_s(new),
            )
        except BaseException:
            result = (False, None)
            raise
        finally:
            if not result[0] and self.on_commit is not None:
                self.on_commit(nonce, None, [], None)
        seat = detail[0] if kind in ("move", "join") and detail else None
        player = new.players[seat] if seat in (0, 1) else None
        if result[0]:
            counter = self._committed.get(kind)
            if counter is None:  # labels() locks and builds a key: look each child up once
                counter = self._committed[kind] = self.metrics.moves_committed.labels(kind)
            counter.inc()
            event(log, f"{kind}_committed", room=new.id, v=new.version, kind=kind, seat=seat,
                  player=player.id if player is not None else None,
                  action=detail[1] if kind == "move" and len(detail) > 1 else None, status=new.status.value)
        else:
            self.metrics.commit_conflicts.inc()
            event(log, "commit_conflict", room=new.id, v=new.version, expected=expected, found=result[1], kind=kind,
                  seat=seat, player=player.id if player is not None else None)
        return result


def parse_move(action: str, cell: tuple[int, int]) -> Move:
    """``"explore"``/``"mark"`` and a cell → an engine move (the wire has validated both)."""
    if action == "explore":
        return Explore(cell)
    if action == "mark":
        return Mark(cell)
    raise ValueError(f"not an action: {action!r}")

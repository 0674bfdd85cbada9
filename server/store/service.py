"""The room service: load (cache first) → :func:`~server.core.decide.decide` → one
compare-and-set commit (which publishes) → retry. The imperative shell around the room core.

Every public coroutine returns the Room as it stands after the action, or raises
:class:`RoomRefused` carrying the core's :class:`~server.core.commands.Refusal` (a plain code
each edge maps to its own status or frame); a refused action changes nothing anywhere.
Results reach connected clients through the hub (every process's pub/sub), never through the
return value, so the caller's own socket gets exactly what everybody else gets.

Concurrency: a commit succeeds only if the stored version is still the one the change was
decided on. A command carrying the version its sender saw is refused as stale when another
change won the race (the client gets a fresh snapshot); one without (a join, a resignation
over HTTP, a timeout, a rematch) is decided again on the fresh room, at most ``retries`` times.

What is written where: :mod:`~.committer` makes a decision durable (the stored form, the
compare-and-set, its accounting); :mod:`~.aftermath` writes what a commit leaves behind outside
the room (the game lists, an end's settling, the lobby's list).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from engine import Game, Move
from engine.clock import Clock

from ..core.ahead import worth_answering, worth_preparing
from ..core.commands import (
    Command,
    LinkRematch,
    OfferRematch,
    Play,
    Refusal,
    Refused,
    Tick,
    Unchanged,
)
from ..core.computer import reply
from ..core.decide import decide, open_room
from ..core.rematch import accepts_rematch, rematch_players
from ..core.room import Player, Room, Status
from ..metrics import Metrics
from .aftermath import SETTLE_GRACE_MS, Aftermath
from .analyses import Analyses, StoredAnalysis
from .cache import RoomCache
from .committer import Committer, Retention
from .offload import GroupBusy, Offload, OwnerBusy, QueueFull
from .outage_log import OutageLog
from .player_games import PlayerGames
from .results import Results
from .room_feed import RoomFeed
from .single_flight import SingleFlight
from .slots import new_room_id
from .store import Store
from .stored_form import unpack_room

log = logging.getLogger("mineduel.rooms")


class RoomRefused(Exception):
    """A refused room action; ``refusal`` says why (``code``, ``message``, the room as it stands)."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal

    @property
    def code(self) -> Refused:
        return self.refusal.code

    @property
    def message(self) -> str:
        return self.refusal.message

    @property
    def room(self) -> Room | None:
        return self.refusal.room


def refused(code: Refused, message: str, room: Room | None = None) -> RoomRefused:
    return RoomRefused(Refusal(code, message, room))


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def prepared(game: Game, move: Move) -> Game:
    """``game.prepared(move)``, as a function the offload's worker process can be sent."""
    return game.prepared(move)


BOARD_QUEUE = 16
"""Boards (no-guess layouts) that may wait for the board worker; a first click beyond is refused
as ``busy`` (click again) rather than kept waiting behind all of them. Why 16: a board the
rules allow takes at most about 0.2 s to search (:data:`engine.classic.NO_GUESS_WORK`), so a
first click waits at most about 3 s behind others' boards, one each (16 players at once: one
player has one board in flight at a time); an Expert board takes about 5 ms, so real traffic
(20 no-guess Expert first clicks at once in the browser bench) drains far below the bound."""

BOARDS_PER_SOURCE = 4
"""Boards of one client address that may be in flight at once; one more first click is refused
as ``busy``. Why: one board per player does not bound one address, whose guests are cheap (an
outside probe's 20 guests of one address made another player's first click wait 2–4 s); with
4, an address holds at most about 0.8 s of the queue ahead of anybody else, and a family or a
school behind one NAT rarely makes five no-guess boards in the same fifth of a second."""


def board_lane(most_waiting: int = BOARD_QUEUE) -> Offload:
    """The board lane: a worker of its own, one board in flight per player, a few per address
    (:data:`BOARDS_PER_SOURCE`), ``most_waiting`` waiting (the app passes its setting)."""
    return Offload(most_waiting=most_waiting, most_per_group=BOARDS_PER_SOURCE)


class RoomService:
    def __init__(self, store: Store, cache: RoomCache, metrics: Metrics, *, retries: int = 8,
                 retention: Retention = Retention(), now_ms: Callable[[], int] = wall_ms,
                 boards: Offload | None = None, answers: Offload | None = None, results: Results | None = None,
                 analyses: Analyses | None = None, games: PlayerGames | None = None,
                 settle_grace_ms: int = SETTLE_GRACE_MS, outages: OutageLog | None = None,
                 feed: RoomFeed | None = None) -> None:
        self.store = store
        self.outages = outages or OutageLog(now_ms)
        """When this process could not reach the store: what :func:`decide` gives clock time back for
        (every load and commit here, the sweeper and the hub's pub/sub link report to it)."""
        self.boards = boards or board_lane()
        """Runs the decisions a game says are costly (a no-guess layout) off the event loop: a
        lane of its own, one board in flight per player, a few per address, a bounded queue
        (:meth:`_prepared`)."""
        self.answers = answers or Offload()
        """The strong computer's answers, off the event loop: a lane of their own, so an answer
        never waits behind boards."""
        self.results = results or Results(store, metrics)
        self.games = games or PlayerGames(store, metrics, finished_ttl_s=retention.finished_ttl_s)
        self.aftermath = Aftermath(store, metrics, self.results, self.games, now_ms)
        """What a commit leaves behind outside its room: game lists, an end's settling, the lobby."""
        self.committer = Committer(store, cache, metrics, retention, self.outages, feed)
        self.analyses = analyses or Analyses(store, metrics)
        """Finished duels' analyses: started by the commit that ends a game, stored once."""
        self.cache = cache
        self.metrics = metrics
        self.retries = retries
        self.now_ms = now_ms
        self.settle_grace_ms = settle_grace_ms
        self._counts = {"cache_hits": 0, "loads": 0}
        self._loads: SingleFlight[Room] = SingleFlight()

    @property
    def stats(self) -> dict[str, int]:
        """Cache hits, loads and lost compare-and-sets so far (``/api/v1/stats``, tests)."""
        return {**self._counts, "conflicts": self.committer.conflicts}

    # ------------------------------------------------------------------ reading

    async def load(self, room_id: str) -> Room:
        """The current Room from Redis; raises :class:`RoomRefused` (``unknown_room``)."""
        self._counts["loads"] += 1
        found = await self.outages.reaching(self.store.load(room_id))
        if found is None:
            raise refused(Refused.UNKNOWN_ROOM, f"no game {room_id!r}")
        return unpack_room(found[1])

    async def latest(self, room_id: str) -> Room:
        """The latest Room this process knows (the cache of a watched room), else loaded: a
        load of it already under way (another socket of the same game opening) is shared."""
        room = self.cache.latest(room_id)
        if room is not None:
            self._counts["cache_hits"] += 1
            return room
        return await self._loads.run(room_id, lambda: self.load(room_id))

    async def load_many(self, room_ids: list[str]) -> dict[str, Room]:
        """The rooms of ``room_ids`` that exist and decode, in one round trip; each decoded
        from the cached version of it where this process has one (its move list and log are
        not decoded again: the lobby reads every listed room every second)."""
        found: dict[str, Room] = {}
        for room_id, data in zip(room_ids, await self.store.load_many(room_ids)):
            if data is not None:
                try:
                    found[room_id] = unpack_room(data, self.cache.latest(room_id))
                except ValueError:
                    log.warning("room %s does not decode", room_id)
        return found

    async def record(self, room_id: str) -> dict[str, Any]:
        """Everything needed to verify a finished game; refused (``not_over``) before the end."""
        room = await self.load(room_id)
        if room.status is not Status.OVER:
            raise refused(Refused.NOT_OVER, "the record is published when the game is over", room)
        return {"id": room.id, "v": room.version, "kind": room.kind,
                "players": [p.to_data() if p else None for p in room.players], **room.game.record()}

    async def analysis(self, room_id: str) -> StoredAnalysis:
        """A finished duel's analysis: the stored one (one read), else the room is loaded
        (``unknown_room``), checked (:class:`~server.store.analyses.NotAnalysed`: ``not_over``,
        ``no_analysis``) and its analysis computed off the loop and stored."""
        found = await self.analyses.stored(room_id)
        if found is not None:
            return found
        return await self.analyses.of(await self.load(room_id))

    # ------------------------------------------------------------------ changing

    async def act(self, room_id: str, actor: Player | None, command: Command, seen_version: int | None = None,
                  started: float | None = None, known: int | None = None, source: str | None = None) -> Room:
        """Decide ``command`` for ``actor`` and commit it; the committed (or unchanged) Room.

        ``seen_version``: the version the actor saw (``None``: not checked, and lost races are
        decided again). ``started``: ``time.perf_counter()`` when the command arrived (the
        move-to-push latency is observed from it). ``known``: a version the caller has read
        (a cached room older than it is not decided on: its refusal could be wrong).
        ``source``: the client's address, where a move's costly part may be asked for (its
        share of the board worker: :data:`BOARDS_PER_SOURCE`)."""
        for attempt in range(self.retries):
            room = self.cache.latest(room_id) if attempt == 0 else None
            if (room is None or (seen_version is not None and seen_version != room.version)
                    or (known is not None and room.version < known)):
                room = await self.load(room_id)  # the cache may be behind the version the client saw
            else:
                self._counts["cache_hits"] += 1
            deciding = command  # this attempt's: with what was worked out ahead for this room
            if isinstance(command, Play) and worth_preparing(room, actor, command, seen_version):
                room = room.evolve(game=await self._prepared(room, actor, command.move, source))
            elif isinstance(command, Tick) and worth_answering(room, self.now_ms()):
                deciding = Tick(await self.answers.run(reply, room))
            now = self.now_ms()  # after the preparing and the thinking: decided when they are done
            decision = decide(room, actor, deciding, seen_version, now, self.outages.outages(now))
            if isinstance(decision, Refusal):
                raise RoomRefused(decision)
            if isinstance(decision, Unchanged):
                return decision.room
            ends = decision.room.status is Status.OVER and room.status is not Status.OVER
            settle_at = self.now_ms() + self.settle_grace_ms if ends else None
            after_end = room.status is Status.OVER  # a rematch offered, declined or linked
            if await self.committer.commit(room.version, decision, started, settle_at, after_end):
                await self.aftermath.after(room, decision.room, settle_at)
                if ends:
                    self.analyses.finished(decision.room)
                if decision.refusal is not None:
                    raise RoomRefused(decision.refusal)
                return decision.room
            if seen_version is not None:
                raise refused(Refused.STALE, "another change was committed first", await self.load(room_id))
        raise refused(Refused.BUSY, "too many concurrent changes; try again")

    async def _prepared(self, room: Room, actor: Player | None, move: Move, source: str | None) -> Game:
        """``room``'s game with ``move``'s costly part done in the board worker; refused, and
        nothing queued, while a board of ``actor``'s is in flight (``board_pending``: a double
        click, or a first click in another game), or :data:`BOARDS_PER_SOURCE` of ``source``'s
        are, or :data:`BOARD_QUEUE` boards wait already (both ``busy``). Either way the room is
        unchanged and the click can simply come again."""
        try:
            return await self.boards.run(prepared, room.game, move, owner=actor.id if actor else None, group=source)
        except OwnerBusy:
            raise refused(Refused.BOARD_PENDING, "a board of yours is still being made; click again once it is there",
                          room) from None
        except (GroupBusy, QueueFull):
            raise refused(Refused.BUSY, "many boards are being made; click again in a moment", room) from None

    async def play(self, room_id: str, actor: Player, move: Any, seen_version: int | None,
                   started: float | None = None, source: str | None = None) -> Room:
        return await self.act(room_id, actor, Play(move), seen_version, started, source=source)

    async def create(self, game: Game, players: tuple[Player | None, ...], clock: Clock | None = None,
                     room_id: str | None = None, rated: bool = False, recorded: bool = True,
                     listed: bool = True) -> Room:
        """A new room (version 1) for ``game`` with ``players`` seated (``None`` = an open seat),
        on its players' game lists unless not ``recorded`` (a rematch room: once linked); not
        ``listed``: the lobby never lists it (a private challenge)."""
        for _ in range(3):
            commit = open_room(room_id or new_room_id(), game, players, clock, self.now_ms(), rated, listed)
            if await self.committer.commit(None, commit):
                if recorded:
                    await self.aftermath.after(None, commit.room, None)
                return commit.room
            if room_id is not None:
                break
        raise refused(Refused.BUSY, "could not allocate a room id; try again")  # 72-bit ids collided

    async def rematch(self, room_id: str, player: Player, new_game: Callable[[Room], Game]) -> Room:
        """After the end: accept the opponent's rematch offer, or make one. Accepting makes a
        new room with the same players in rotated seats and the same clock and rating, linked
        from the old room (a versioned change, so both players see it) and returns it;
        offering returns the old room with the offer (a versioned change too: the opponent
        sees it and may accept or decline). Idempotent: once linked, the linked room.
        ``new_game(old_room)`` makes the new room's game."""
        for attempt in range(self.retries):
            # the cached room first (its sockets keep it current; a finished game's load and
            # decode was the dearest part of a rematch): if it is behind, the commit's
            # compare-and-set refuses and the next attempt loads
            room = await (self.latest(room_id) if attempt == 0 else self.load(room_id))
            seat = room.seat_of(player)
            if room.rematch is not None and seat is not None:
                return await self.latest(room.rematch)
            if seat is not None and room.status is Status.OVER and accepts_rematch(room, seat):
                return await self._start_rematch(room, player, new_game)
            try:
                # refused there if it may not
                return await self.act(room_id, player, OfferRematch(), known=room.version)
            except RoomRefused as exc:
                if exc.code is not Refused.NO_OFFER:
                    raise
                # both offered at once and the opponent's came first: accept it
        raise refused(Refused.BUSY, "too many concurrent changes; try again")

    async def _start_rematch(self, room: Room, player: Player, new_game: Callable[[Room], Game]) -> Room:
        """The new room first, then the link (a link never points at nothing). Until the link
        is committed nobody knows the new room: it goes on the players' game lists only then,
        and a room whose link lost its race (the other player accepted too, or withdrew the
        offer) is deleted, not left seated and due (it showed in both players' lists as a game
        being played, then as an aborted one)."""
        fresh_id = new_room_id()
        clock = room.clock.fresh() if room.clock else None
        try:
            game = new_game(room)  # (the edges' factory may refuse: the address's budget of new games)
        except Exception:
            linked = (await self.load(room.id)).rematch
            if linked is not None:  # another accept linked one meanwhile: once linked, that room
                return await self.latest(linked)
            raise
        fresh = await self.create(game, rematch_players(room), clock, room_id=fresh_id, rated=room.rated,
                                  recorded=False, listed=room.listed)
        try:
            linked = await self.act(room.id, player, LinkRematch(fresh_id), known=room.version)
        except BaseException:
            await self.aftermath.discard(fresh)
            raise
        if linked.rematch != fresh_id:
            await self.aftermath.discard(fresh)
            return await self.load(linked.rematch or fresh_id)
        await self.aftermath.after(None, fresh, None)
        await self.aftermath.list(fresh)
        return fresh

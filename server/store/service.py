"""The room service: load (cache first) → :func:`~server.core.decide.decide` → one
compare-and-set commit (which publishes) → retry. The imperative shell around the room core.

Every public coroutine returns the Room as it stands after the action, or raises
:class:`RoomRefused` carrying the core's :class:`~server.core.decide.Refusal` (a plain code
each edge maps to its own status or frame); a refused action changes nothing anywhere.
Results reach connected clients through the hub (every process's pub/sub), never through the
return value, so the caller's own socket gets exactly what everybody else gets.

Concurrency: a commit succeeds only if the stored version is still the one the change was
decided on. A command carrying the version its sender saw is refused as stale when another
change won the race (the client gets a fresh snapshot); one without (a join, a resignation
over HTTP, a timeout, a rematch) is decided again on the fresh room, at most ``retries`` times.

After a commit: the players' game lists (:mod:`~.player_games`) when the status or the seats
changed (a move writes nothing there), and what an end leaves behind (:meth:`RoomService.settle`: ratings, leaderboards, the
finished lists). The commit that ends a game leaves the room in its due index (``clocks:{<tag>}``), due
:data:`SETTLE_GRACE_MS` later (the same atomic write as the commit: nothing more on the move
path); settling drops that entry, so an end whose process dies or fails before it is settled
by any process's sweeper (everything settled is idempotent). The finished room's later commits
(a rematch offered, declined or linked) leave that entry as it is and settle nothing: an end
not settled yet stays due, a settled one is not settled again. Failures there are logged and
counted, never raised: the commit stands.

Retention: every commit renews the expiry of the room's keys — ``finished_ttl_s`` once the
game is over, ``idle_ttl_s`` before; 0 keeps them forever.

Operations: each commit is counted and logged as one ``event=<kind>_committed`` line (room,
version, seat, player id, action), each lost compare-and-set as ``event=commit_conflict``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from engine import Game
from engine.clock import Clock

from ..core.computer import slow_to_answer
from ..core.decide import (
    Command,
    Commit,
    LinkRematch,
    OfferRematch,
    Play,
    Refusal,
    Refused,
    Tick,
    Unchanged,
    accepts_rematch,
    decide,
    open_room,
    rematch_players,
)
from ..core.due import next_due
from ..core.room import Player, Room, Status
from ..core.summary import index_changed
from ..logs import event
from ..metrics import Metrics
from ..outage import is_outage, redis_down
from .analyses import Analyses, StoredAnalysis
from .cache import RoomCache
from .keys import pack
from .messages import commit_message
from .offload import Offload
from .outage_log import OutageLog
from .player_games import PlayerGames
from .results import Results
from .room_feed import RoomFeed
from .single_flight import SingleFlight
from .slots import new_room_id
from .store import KEEP_DUE, Store
from .stored_form import StoredForm, unpack_room

log = logging.getLogger("mineduel.rooms")

T = TypeVar("T")
DAY_S = 86_400
SETTLE_GRACE_MS = 10_000
"""A finished room's end is left to the sweeper this long after its commit (the committing
process settles it at once and drops the entry; a sweeper finds it only if that failed)."""


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


@dataclass(frozen=True, slots=True)
class Retention:
    """How long a room's keys live after its last change (0 = forever)."""

    finished_ttl_s: int = 30 * DAY_S
    idle_ttl_s: int = 7 * DAY_S

    def ttl_s(self, room: Room) -> int | None:
        ttl = self.finished_ttl_s if room.status is Status.OVER else self.idle_ttl_s
        return ttl or None


class RoomService:
    def __init__(self, store: Store, cache: RoomCache, metrics: Metrics, *, retries: int = 8,
                 retention: Retention = Retention(), now_ms: Callable[[], int] = wall_ms,
                 offload: Offload | None = None, results: Results | None = None,
                 analyses: Analyses | None = None, games: PlayerGames | None = None,
                 settle_grace_ms: int = SETTLE_GRACE_MS, outages: OutageLog | None = None,
                 feed: RoomFeed | None = None) -> None:
        self.store = store
        self.feed = feed
        """Where a commit nobody else heard of goes (this process's connections to the room);
        ``None``: every commit is published to whoever listens, this process included."""
        self.outages = outages or OutageLog(now_ms)
        """When this process could not reach the store: what :func:`decide` gives clock time back for
        (every load and commit here, the sweeper and the hub's pub/sub link report to it)."""
        self.offload = offload or Offload()
        """Runs the decisions a game says are costly (a no-guess layout) off the event loop."""
        self.results = results or Results(store, metrics)
        """Told of every commit that ends a game (ratings, leaderboards)."""
        self.games = games or PlayerGames(store, metrics, finished_ttl_s=retention.finished_ttl_s)
        """The players' game lists, written after every commit that changes what they keep."""
        self.analyses = analyses or Analyses(store, metrics)
        """Finished duels' analyses: started by the commit that ends a game, stored once."""
        self.cache = cache
        self.metrics = metrics
        self.retries = retries
        self.retention = retention
        self.now_ms = now_ms
        self.settle_grace_ms = settle_grace_ms
        self.stats = {"cache_hits": 0, "loads": 0, "conflicts": 0}
        self.stored = StoredForm()
        self._loads: SingleFlight[Room] = SingleFlight()
        self._committed: dict[str, Any] = {}  # commit kind -> its moves_committed counter

    # ------------------------------------------------------------------ reading

    async def load(self, room_id: str) -> Room:
        """The current Room from Redis; raises :class:`RoomRefused` (``unknown_room``)."""
        self.stats["loads"] += 1
        found = await self._reaching(self.store.load(room_id))
        if found is None:
            raise refused(Refused.UNKNOWN_ROOM, f"no game {room_id!r}")
        return unpack_room(found[1])

    async def latest(self, room_id: str) -> Room:
        """The latest Room this process knows (the cache of a watched room), else loaded: a
        load of it already under way (another socket of the same game opening) is shared."""
        room = self.cache.latest(room_id)
        if room is not None:
            self.stats["cache_hits"] += 1
            return room
        return await self._loads.run(room_id, lambda: self.load(room_id))

    async def load_many(self, room_ids: list[str]) -> dict[str, Room]:
        """The rooms of ``room_ids`` that exist and decode, in one round trip."""
        found: dict[str, Room] = {}
        for room_id, data in zip(room_ids, await self.store.load_many(room_ids)):
            if data is not None:
                try:
                    found[room_id] = unpack_room(data)
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
                  started: float | None = None, known: int | None = None) -> Room:
        """Decide ``command`` for ``actor`` and commit it; the committed (or unchanged) Room.

        ``seen_version``: the version the actor saw (``None``: not checked, and lost races are
        decided again). ``started``: ``time.perf_counter()`` when the command arrived (the
        move-to-push latency is observed from it). ``known``: a version the caller has read
        (a cached room older than it is not decided on: its refusal could be wrong)."""
        for attempt in range(self.retries):
            room = self.cache.latest(room_id) if attempt == 0 else None
            if (room is None or (seen_version is not None and seen_version != room.version)
                    or (known is not None and room.version < known)):
                room = await self.load(room_id)  # the cache may be behind the version the client saw
            else:
                self.stats["cache_hits"] += 1
            now = self.now_ms()
            outages = self.outages.outages(now)
            if (isinstance(command, Play) and room.game.costly(command.move)) or (
                    isinstance(command, Tick) and slow_to_answer(room)):
                decision = await self.offload.run(decide, room, actor, command, seen_version, now, outages)
            else:
                decision = decide(room, actor, command, seen_version, now, outages)
            if isinstance(decision, Refusal):
                raise RoomRefused(decision)
            if isinstance(decision, Unchanged):
                return decision.room
            ends = decision.room.status is Status.OVER and room.status is not Status.OVER
            settle_at = self.now_ms() + self.settle_grace_ms if ends else None
            after_end = room.status is Status.OVER  # a rematch offered, declined or linked
            if await self._commit(room.version, decision, started, settle_at, after_end):
                await self._after(room, decision.room, settle_at)
                if ends:
                    self.analyses.finished(decision.room)
                if decision.refusal is not None:
                    raise RoomRefused(decision.refusal)
                return decision.room
            if seen_version is not None:
                raise refused(Refused.STALE, "another change was committed first", await self.load(room_id))
        raise refused(Refused.BUSY, "too many concurrent changes; try again")

    async def play(self, room_id: str, actor: Player, move: Any, seen_version: int | None,
                   started: float | None = None) -> Room:
        return await self.act(room_id, actor, Play(move), seen_version, started)

    async def create(self, game: Game, players: tuple[Player | None, ...], clock: Clock | None = None,
                     room_id: str | None = None, rated: bool = False, recorded: bool = True) -> Room:
        """A new room (version 1) for ``game`` with ``players`` seated (``None`` = an open seat),
        on its players' game lists unless not ``recorded`` (a rematch room: once linked)."""
        for _ in range(3):
            commit = open_room(room_id or new_room_id(), game, players, clock, self.now_ms(), rated)
            if await self._commit(None, commit):
                if recorded:
                    await self._after(None, commit.room, None)
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
        fresh = await self.create(new_game(room), rematch_players(room), clock, room_id=fresh_id, rated=room.rated,
                                  recorded=False)
        try:
            linked = await self.act(room.id, player, LinkRematch(fresh_id), known=room.version)
        except BaseException:
            await self._discard(fresh)
            raise
        if linked.rematch != fresh_id:
            await self._discard(fresh)
            return await self.load(linked.rematch or fresh_id)
        await self._after(None, fresh, None)
        await self.list(fresh)
        return fresh

    async def list(self, room: Room) -> None:
        """``room`` on the lobby's list: every rematch, however it was accepted (a page's form,
        the API, a socket's frame), and a game's first room when whoever asked for it says so
        (a private challenge is not listed). A convenience: the game exists either way, so a
        failure is counted and logged, never raised (but a bug's)."""
        try:
            await self.store.list_room(room.id, room.created_ms)
        except Exception as exc:
            if not redis_down(self.metrics, "list", exc, room=room.id):
                raise

    async def _discard(self, room: Room) -> None:
        """Delete a rematch room that was never linked. Redis away: it stays unlisted until its
        first move's window aborts it (or it expires)."""
        try:
            await self.store.discard_room(room.id)
        except Exception as exc:
            if not redis_down(self.metrics, "discard", exc, room=room.id):
                raise

    # ------------------------------------------------------------------ after a commit

    async def _after(self, old: Room | None, new: Room, settle_at: int | None) -> None:
        """What a successful commit leaves behind: the game lists (when they change) and, for the
        commit that ended the game, :meth:`settle`. Never raises: the commit stands whatever
        fails here."""
        try:
            if settle_at is not None:
                await self.settle(new, settle_at)
            elif index_changed(old, new):
                await self.games.record(new)
        except Exception as exc:  # Redis away after the commit: the sweeper settles an end later
            self.metrics.redis_errors.labels("settle").inc()
            event(log, "settle_failed", level=logging.WARNING, room=new.id, v=new.version, error=type(exc).__name__)

    async def settle(self, room: Room, due_ms: int | None = None) -> bool:
        """Everything the end of ``room``'s game leaves behind: ratings and leaderboards
        (:meth:`Results.finished`) and the players' finished lists. Idempotent, so any process
        may do it again (the sweeper does, for a finished room still in its due index at
        ``due_ms``). True when all of it is done; then the due entry is dropped (if it is still
        ``due_ms``: a later commit's stays)."""
        done = await self.results.finished(room)
        done = await self.games.record(room) and done
        if done and due_ms is not None:
            await self.store.drop_clock(room.id, due_ms)
        return done

    # ------------------------------------------------------------------ the commit

    async def _reaching(self, call: Awaitable[T]) -> T:
        """Await a store call, telling :attr:`outages` whether the store answered."""
        try:
            result = await call
        except Exception as exc:
            if is_outage(exc):
                self.outages.lost()
            raise
        self.outages.back()
        return result

    async def _commit(self, expected: int | None, commit: Commit, started: float | None = None,
                      settle_at: int | None = None, after_end: bool = False) -> bool:
        """Commit ``commit`` if the stored version is still ``expected``. The room's place in
        due index: when something falls due (``next_due``); for the commit that ends the game
        ``settle_at``, when a sweeper settles its end unless this process has; ``after_end``
        (a later commit of the finished room): as it is, so an end not settled yet stays due
        and a settled one is not settled again."""
        new = commit.room
        data = self.stored.pack(new)
        nonce = self.cache.announce(new, commit.events, started)
        message = commit_message(new.version, data, commit.events, nonce)
        ok = published = False
        feed = self.feed
        try:
            ok, found, published = await self._reaching(self.store.commit(
                new.id, expected, new.version, data, pack([new.version, commit.kind, list(commit.detail)]), message,
                KEEP_DUE if after_end else settle_at if settle_at is not None else next_due(new),
                self.retention.ttl_s(new), self.cache.own_channel(new.id) if feed is not None else "",
            ))
        finally:
            if not published:
                self.cache.withdraw(nonce)
        if ok and not published and feed is not None:
            feed.committed_here(new, commit.events, started)
        seat = commit.seat
        player = new.players[seat] if seat is not None and 0 <= seat < len(new.players) else None
        if ok:
            counter = self._committed.get(commit.kind)
            if counter is None:  # labels() locks and builds a key: look each child up once
                counter = self._committed[commit.kind] = self.metrics.moves_committed.labels(commit.kind)
            counter.inc()
            if log.isEnabledFor(logging.INFO):  # (the arguments alone cost ~5k instructions a move)
                event(log, f"{commit.kind}_committed", room=new.id, v=new.version, kind=commit.kind, seat=seat,
                      player=player.id if player is not None else None,
                      action=commit.detail[1] if commit.kind == "move" and len(commit.detail) > 1 else None,
                      status=new.status.value)
            if commit.given_ms:
                event(log, "clock_given_back", room=new.id, v=new.version, seat=new.clock.running if new.clock else None,
                      given_ms=commit.given_ms)
        else:
            self.stats["conflicts"] += 1
            self.metrics.commit_conflicts.inc()
            event(log, "commit_conflict", room=new.id, v=new.version, expected=expected, found=found,
                  kind=commit.kind, seat=seat, player=player.id if player is not None else None)
        return ok

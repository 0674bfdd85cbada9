"""Quick pairing, the per-process service (``app.state.pairing``): seekers wait here until paired.

:meth:`Pairing.seek` is the whole surface an edge needs: it enters the seek
(:class:`~server.store.pairing.PairingStore`, one script call that pairs at once when a partner
fits) and waits until paired, until ``wait_s`` pass, or until the caller cancels it (the HTTP
route when its client closes the request; the lobby websocket when it closes) — either way the
seek is gone from the pool before ``seek`` returns or re-raises.

A pair forms in one script call, in the process that made it: a new seek's own call, or any
process's match pass (every ``tick_s`` every process matches every pool that has seekers, since
windows widen with waiting; the scripts are atomic, so running everywhere is safe). That
process opens the room (``make_game``, under the room id the pair carries) and then announces
the pair on the pairing channel; every process listens there on a pub/sub link of its own
(:mod:`.pairing_channel`) and wakes its waiters of that pair at once.

**Told, not just answered.** ``seek`` never takes its pair: it returns :class:`Paired` with the
pair still waiting in Redis, and the edge calls :meth:`Pairing.told` only once its answer went
to a client that was still there. A seek cancelled at any await (its request closed, its socket
went away), or answered to a client that had gone, thus leaves the pair for the player's next
seek (handed over within the pair's lifetime, of any pool), and a told pair is never handed
again. Taking it before answering lost it whenever the answer did not arrive: the client left
as the pair formed, and a cancel landed after the take or the answer went to nobody.

Each tick also pushes on the liveness of this process's seeks and asks which were paired or
are gone: that is how a waiter learns its pair when the announcement was lost (the link
dropped; it also asks at once after reconnecting) or never sent. **Recovery:** a pair whose
room is still missing ``grace_ms`` after it formed had its opener die between the script and
the room (or fail): the waiter opens it itself, under the same room id. Opening is the room's
create-if-absent commit, so however many processes try, there is one room, and both players are
told of it; the dead opener's own seeker, if it seeks again within the pair's lifetime, is
handed that game. Going back to the pool instead would race with a slow opener: the room is
another slot, so no script can make "open the room" and "return to the pool" exclusive, and a
player could end up in the pool and in a game with a running clock at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from ..core.pools import POOLS, Pool
from ..core.room import Player
from ..logs import event
from ..metrics import Metrics
from ..outage import redis_down
from ..tasks import stop_tasks
from .pairing import Answer, Pair, PairingStore, Ticket
from .pairing_channel import PairingChannel
from .pubsub import PubSub
from .seek_ends import (
    CLOSING,
    AlreadySeeking,
    Closing,
    Paired,
    Unpaired,
    Waiter,
    paired_for,
    wake,
)
from .service import wall_ms

log = logging.getLogger("mineduel.pairing")

MakeGame = Callable[[Pool, tuple[Player, Player], str], Awaitable[bool]]
"""``make_game(pool, (seat 0, seat 1), room_id)``: open the pool's game under ``room_id`` with
the players seated; True if this call opened it, False if it was open already."""
RatingOf = Callable[[str, str], Awaitable[float]]
"""``rating_of(player_id, category)``: the player's rating in a rating category."""
SeenGame = Callable[[str, int], Awaitable[bool]]
"""``seen(room_id, seat)``: whether the player in ``seat`` has seen the pair's game already (it
is over, or they opened it or moved in it): a pair never taken is then taken, not handed again."""


async def _unseen(_room_id: str, _seat: int) -> bool:
    return False

GRACE_MS = 3_000


class Pairing:
    """This process's seekers and its part in pairing everybody's."""

    def __init__(self, store: PairingStore, pubsub: PubSub, make_game: MakeGame, rating_of: RatingOf,
                 metrics: Metrics, *, tick_s: float = 1.0, grace_ms: int = GRACE_MS,
                 now_ms: Callable[[], int] = wall_ms, seen: SeenGame = _unseen) -> None:
        self.store = store
        self.channel = PairingChannel(pubsub, store.channel, metrics, self._on_message, self._relinked)
        self.make_game = make_game
        self.rating_of = rating_of
        self.seen = seen
        self.metrics = metrics
        self.tick_s = tick_s
        self.grace_ms = grace_ms
        self.now_ms = now_ms
        self.stats = {"pairing_seeks": 0, "pairing_formed": 0, "pairing_matched": 0, "pairing_timeouts": 0,
                      "pairing_recovered": 0, "pairing_reconnects": 0}
        self._waiters: dict[str, Waiter] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._background: set[asyncio.Task[Any]] = set()
        self._poke = asyncio.Event()
        self._stopping = False

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Subscribe to the pairing channel (confirmed before this returns), then start the
        listener and the ticks."""
        await self.channel.link()
        self._tasks = [asyncio.create_task(self.channel.listen(), name="pairing-listener"),
                       asyncio.create_task(self._ticks(), name="pairing-ticks")]

    async def close(self) -> None:
        """End every local seek as if it timed out (bounded), then stop."""
        for waiter in list(self._waiters.values()):
            wake(waiter, CLOSING)
        for _ in range(200):  # at most 2 s
            if not self._waiters:
                break
            await asyncio.sleep(0.01)
        self._stopping = self.channel.stopping = True
        await stop_tasks([*self._tasks, *self._background])
        await self.channel.close()

    # ------------------------------------------------------------------ what edges call

    async def seek(self, player: Player, pool: Pool, wait_s: float | None = 30.0,
                   rating: float | None = None) -> Paired | Unpaired:
        """Seek a game in ``pool`` for up to ``wait_s`` seconds (``None``: until cancelled).

        Returns :class:`Paired` once the game is open, :attr:`Unpaired.TIMED_OUT` after
        ``wait_s``, or :attr:`Unpaired.CANCELLED` when :meth:`cancel` ended it (or the service
        closed). Raises :class:`AlreadySeeking` if the player seeks already.
        Cancelling the call ends the seek (its cleanup runs in the background); a pair formed a
        moment before stands and is handed to the player's next seek. So does a pair answered
        with :class:`Paired`: the caller calls :meth:`told` once the player got the answer.
        ``rating``: default the player's rating in the pool's category (``rating_of``); casual
        pools ignore it.
        """
        if rating is None:
            rating = await self.rating_of(player.id, pool.category) if pool.category else 0.0
        ticket = Ticket.new(player, pool, rating, self.now_ms())
        waiter = Waiter(ticket, asyncio.get_running_loop().create_future())
        self._waiters[ticket.seek] = waiter
        self.stats["pairing_seeks"] += 1
        try:
            reply = await self.store.seek(ticket, ticket.joined_ms)
            if reply.answer is Answer.HANDED and reply.pair is not None and await self._seen(reply.pair, player):
                reply = await self.store.seek(ticket, ticket.joined_ms)  # that pair taken: seek afresh
            if reply.answer is Answer.ALREADY_SEEKING:
                raise AlreadySeeking("you are seeking already: one seek at a time")
            if reply.pair is not None:  # formed by this call, or handed from an earlier seek
                if reply.answer is Answer.FORMED:
                    self.stats["pairing_formed"] += 1
                    await self._open(reply.pair)
                else:
                    await self._room_ready(reply.pair)
                return paired_for(reply.pair, player)
            waiter.stored = True
            return await self._wait(waiter, wait_s)
        except asyncio.CancelledError:
            self._spawn(self._abandon(ticket))
            raise
        finally:
            self._waiters.pop(ticket.seek, None)

    async def told(self, paired: Paired) -> bool:
        """The player got ``paired`` (its answer went to a client still there): take its pair, so
        the player's next seek starts afresh. Never raises: a pair this could not take (Redis
        away) is handed to the player's next seeks within its lifetime (the same game). True if
        taken now."""
        if paired.pair is None:
            return False
        try:
            return await self.store.take(paired.pair, paired.pair.players[paired.seat].id)
        except Exception as exc:
            if not redis_down(self.metrics, "pairing_told", exc, room=paired.room_id):
                log.exception("pairing: taking the pair of room %s failed", paired.room_id)
            return False

    async def cancel(self, player_id: str) -> bool:
        """End the player's waiting seek, wherever it waits (its ``seek`` returns
        :attr:`Unpaired.CANCELLED`).
        True if one was waiting."""
        ticket = await self.store.seek_of(player_id)
        if ticket is None:
            return False
        reply = await self.store.end(ticket, take=False, tell=True)
        waiter = self._waiters.get(ticket.seek)
        if waiter is not None and reply.answer is Answer.CANCELLED:
            wake(waiter, None)
        return reply.answer is Answer.CANCELLED

    async def pools_census(self) -> dict[str, int]:
        """Seekers waiting in each pool, over all processes (pool id → count)."""
        return await self.store.census()

    # ------------------------------------------------------------------ a seek's end

    async def _wait(self, waiter: Waiter, wait_s: float | None) -> Paired | Unpaired:
        ticket = waiter.ticket
        timed_out = False
        try:
            async with asyncio.timeout(wait_s):
                woken = await waiter.woken
        except TimeoutError:
            woken, timed_out = CLOSING, True
        if isinstance(woken, Closing):  # timed out or closing: end it, unless it was paired meanwhile
            self.stats["pairing_timeouts"] += timed_out
            reply = await self.store.end(ticket, take=False)
            if reply.pair is None:
                return Unpaired.TIMED_OUT if timed_out else Unpaired.CANCELLED
            await self._room_ready(reply.pair)
            return paired_for(reply.pair, ticket.player)
        if woken is None:
            return Unpaired.CANCELLED
        pair, ready = woken
        if not ready:
            await self._room_ready(pair)
        return paired_for(pair, ticket.player)  # untaken until the edge says the player was told

    async def _abandon(self, ticket: Ticket) -> None:
        """A cancelled seek: gone from the pool; a pair it had formed gets its room all the same."""
        reply = await self.store.end(ticket, take=False)
        if reply.pair is not None:
            await self._room_ready(reply.pair)

    async def _seen(self, pair: Pair, player: Player) -> bool:
        """Whether ``player`` has seen the game of ``pair``, a pair handed to a new seek because
        it was never taken: then it is taken now (True). Why: the server takes a pair once its
        answer reached a client still there; a one-shot client (it reads and closes at once) is
        never seen to get it, and its every next seek within the pair's 30 s was answered with
        the same game, also once that game was over (an outside probe resigned it and got it
        back). A game its player opened, moved in or finished was seen whatever the request did."""
        seat = next(i for i, p in enumerate(pair.players) if p.id == player.id)
        try:
            if not await self.seen(pair.room, seat):
                return False
            return await self.store.take(pair, player.id)
        except Exception as exc:  # Redis away: hand it as before (the same game)
            if not redis_down(self.metrics, "pairing_seen", exc, room=pair.room):
                raise
            return False

    async def _room_ready(self, pair: Pair) -> None:
        """Return once ``pair``'s room is open: its opener's work, or ours after the grace."""
        deadline = pair.formed_ms + self.grace_ms
        while not await self.store.room_exists(pair.room):
            left_ms = deadline - self.now_ms()
            if left_ms <= 0:
                self.stats["pairing_recovered"] += 1
                event(log, "pairing_recovered", room=pair.room, pool=pair.pool.id)
                await self._open(pair)
                return
            await asyncio.sleep(min(0.02, left_ms / 1000))

    async def _open(self, pair: Pair) -> None:
        """Open the pair's room, then tell every process (and the local waiters at once)."""
        await self.make_game(pair.pool, pair.players, pair.room)
        await self.store.announce(pair)
        self._wake_pair(pair)

    # ------------------------------------------------------------------ waking waiters

    def _wake_pair(self, pair: Pair, ready: bool = True) -> None:
        for seek in pair.seeks:
            waiter = self._waiters.get(seek)
            if waiter is not None:
                wake(waiter, (pair, ready))

    def _on_message(self, payload: object) -> None:
        try:
            data = json.loads(payload)  # type: ignore[arg-type]
            if "ended" in data:
                waiter = self._waiters.get(data["ended"])
                if waiter is not None:
                    wake(waiter, None)
            else:
                self._wake_pair(Pair.from_json(payload))  # type: ignore[arg-type]
        except (ValueError, KeyError, TypeError):
            log.warning("pairing: an unreadable message on the pairing channel")

    def _relinked(self) -> None:
        """The channel was down (announcements lost): ask for this process's pairs at once."""
        self.stats["pairing_reconnects"] += 1
        self._poke.set()

    # ------------------------------------------------------------------ the ticks

    async def _ticks(self) -> None:
        failing = 0
        while not self._stopping:
            try:
                await self.tick()
                if failing:
                    event(log, "pairing_resumed", failed_ticks=failing)
                failing = 0
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not failing and not redis_down(self.metrics, "pairing", exc):
                    log.exception("pairing tick failed")
                failing += 1
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.tick_s):  # not wait_for: on 3.11 it can swallow a cancel
                    await self._poke.wait()
            self._poke.clear()

    async def tick(self) -> None:
        """Keep this process's seeks alive (and learn their pairs), forget dead seeks, and
        pair what waits in every pool that has seekers."""
        now = self.now_ms()
        await self._refresh(now)
        await self.store.sweep(now)
        for pool_id, count in (await self.store.census()).items():
            if count:
                pairs = await self.store.match(POOLS[pool_id], now)
                self.stats["pairing_matched"] += len(pairs)
                await asyncio.gather(*(self._open_logged(pair) for pair in pairs))

    async def _refresh(self, now: int) -> None:
        waiters = [w for w in self._waiters.values() if w.stored and not w.woken.done()]
        states = await self.store.refresh([w.ticket.seek for w in waiters], now)
        for waiter, state in zip(waiters, states, strict=True):
            if isinstance(state, Pair):
                wake(waiter, (state, False))
            elif state is False:
                wake(waiter, None)

    async def _open_logged(self, pair: Pair) -> None:
        try:
            await self._open(pair)
        except Exception as exc:  # its waiters open it after the grace
            if not redis_down(self.metrics, "pairing_open", exc, room=pair.room):
                log.exception("pairing: opening room %s failed", pair.room)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(self._logged(work))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _logged(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except Exception as exc:  # a cancelled seek that Redis could not end: it dies with its liveness
            if not redis_down(self.metrics, "pairing_end", exc):
                log.exception("pairing: ending a cancelled seek failed")

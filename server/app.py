"""The Starlette application: ``create_app(settings)`` with ONE lifespan owning every resource.

The lifespan opens the Redis store (starting an embedded server when no ``REDIS_URL`` is
set) and builds the pieces (:class:`Parts`) in the order they depend on each other, each
handed what it shares at construction: the room cache goes to both the room service and the
hub, the ratings and the players' game lists to the room service (which writes them after its
commits) and to the pages and routes that read them, the hub's census to the metrics'
collector. It puts them on ``app.state`` (``settings``, ``store``, ``auth``, ``rooms``, ``hub``,
``players``, ``ratings``, ``games``, ``pairing``, ``codecs``, ``metrics``, ``web``) and closes them
in reverse order. Nothing connects at import time.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from . import logs
from .config import Settings
from .core.pools import Window
from .edge import api, new_game, ops, players_api, ws_api, ws_browser, ws_lobby, ws_pair
from .edge.admission import quiet_denials
from .edge.auth import Auth
from .edge.body_limit import BodyLimit
from .edge.codec_msgpack import MsgpackCodec
from .edge.guests import Guests, reserved_names
from .edge.limits import Guard
from .edge.raw_send import ExposeRawSend
from .embedded_redis import EmbeddedRedis
from .gc_policy import GcPolicy
from .loop_lag import LoopLag
from .metrics import Metrics
from .store import sweeper
from .store.analyses import Analyses
from .store.cache import RoomCache
from .store.committer import Retention
from .store.fanout import Codec, Fanout
from .store.hub import Hub
from .store.matchmaker import Pairing
from .store.offload import Offload
from .store.pairing import PairingStore
from .store.player_games import PlayerGames
from .store.players import Players, Ratings
from .store.presence import Presence
from .store.pubsub import PubSub, open_pubsub
from .store.results import Results
from .store.room_feed import RoomFeed
from .store.service import RoomService, board_lane
from .store.store import Store
from .tasks import stop_tasks
from .web import pages, sound
from .web.assets import Assets
from .web.html_codec import HtmlCodec
from .web.language import ReaderLanguage, localized
from .web.lobby import lobby_sections
from .web.lobby_feed import LobbyFeed
from .web.site import Web

log = logging.getLogger("mineduel.app")


@dataclass(frozen=True)
class Parts:
    """The room server's parts, built in the order they depend on each other, each handed what
    it shares at construction: the room cache and the room feed go to both the room service
    (which hands the feed its commits nobody else heard of) and the hub (which hands it the
    pub/sub messages); the ratings (through the service's :class:`Results`) and the players'
    game lists to the room service, which writes them after its commits."""

    store: Store
    cache: RoomCache
    rooms: RoomService
    hub: Hub
    ratings: Ratings
    games: PlayerGames
    pairing: Pairing

    @classmethod
    def build(cls, url: str, settings: Settings, codecs: dict[str, Codec], metrics: Metrics,
              pubsub: PubSub | None = None) -> Parts:
        store = Store(url, waitaof=settings.waits_for_aof, lean=settings.lean_redis)
        cache = RoomCache()
        feed = RoomFeed(cache, Fanout(codecs, metrics), Presence(store, metrics), metrics)
        ratings = Ratings(store.redis)
        games = PlayerGames(store, metrics, finished_ttl_s=settings.finished_ttl_s)
        rooms = RoomService(store, cache, metrics, retries=settings.commit_retries,
                            retention=Retention(settings.finished_ttl_s, settings.idle_ttl_s),
                            analyses=Analyses(store, metrics, at_end=settings.analyse_at_end),
                            # a worker each: boards never delay a computer's answer (server/store/offload.py)
                            boards=board_lane(settings.board_queue),
                            answers=Offload(),
                            results=Results(store, metrics, ratings, Players(store.redis)), games=games, feed=feed)
        hub = Hub(rooms, cache, feed, pubsub or open_pubsub(url, lean=settings.lean_redis), metrics)
        pools = PairingStore(store.redis, window=Window.of(*settings.pairing_window),
                             live_ms=round(settings.pairing_live_s * 1000))
        # its own pub/sub link: pairing announcements never wait behind room traffic (or the hub)
        pairing = Pairing(pools, open_pubsub(url, lean=settings.lean_redis), functools.partial(new_game.pool_game, rooms),
                          functools.partial(rating_in, ratings), metrics, tick_s=settings.pairing_tick_s,
                          seen=functools.partial(new_game.pool_game_seen, rooms))
        return cls(store, cache, rooms, hub, ratings, games, pairing)


async def rating_in(ratings: Ratings, player_id: str, category: str) -> float:
    """The player's rating in ``category``: what a rated pool pairs by."""
    return (await ratings.ratings_of(player_id))[category].rating


def create_app(
    settings: Settings | None = None,
    *,
    extra_routes: Sequence[BaseRoute] = (),
    codecs: dict[str, Codec] | None = None,
    web: bool = True,
) -> Starlette:
    settings = settings or Settings.from_env()
    html = HtmlCodec()
    speaking = localized(html)  # one "html" codec per language: frames are shared per language
    all_codecs: dict[str, Codec] = {"msgpack": MsgpackCodec()}
    routes: list[BaseRoute] = [*api.routes, *players_api.routes, *ws_api.routes, *ops.routes]
    if web:
        for codec in speaking.values():  # frames are shared per codec: per language, per sound
            all_codecs[codec.name] = codec  # type: ignore[assignment]
            all_codecs[codec.name + sound.SUFFIX] = sound.SoundHtml(codec)  # type: ignore[arg-type]
        routes += [*ws_browser.routes, *ws_lobby.routes, *ws_pair.routes, *pages.routes]
    all_codecs.update(codecs or {})
    routes.extend(extra_routes)
    metrics = Metrics()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        state = app.state
        embedded: EmbeddedRedis | None = None
        url = settings.redis_url
        if url is None:
            embedded = EmbeddedRedis(settings.data_dir).start()  # main thread: see embedded_redis
            url = embedded.url
        parts = Parts.build(url, settings, all_codecs, metrics)
        store, rooms = parts.store, parts.rooms
        hub: Hub | None = None
        pairing: Pairing | None = None
        sweep: asyncio.Task[None] | None = None
        lobby: asyncio.Task[None] | None = None
        collector: GcPolicy | None = None
        lag = LoopLag(metrics.loop_lag.observe)
        try:
            key = settings.secret_key or await store.shared_secret()
            aof = await store.durability()
            logs.event(log, "redis_durability", appendonly=aof.get("appendonly"), appendfsync=aof.get("appendfsync"),
                       waitaof=store.waitaof, embedded=embedded is not None, lean_redis=settings.lean_redis,
                       inline_send=settings.inline_send, raw_send=settings.raw_send, gc_check_s=settings.gc_check_s)
            hub = parts.hub
            metrics.observe(hub.census, all_codecs)
            await hub.start()
            pairing = parts.pairing
            await pairing.start()
            sweep = asyncio.create_task(sweeper.run(rooms, settings.sweep_interval_s), name="clock-sweeper")
            lag.start()  # the event loop's stalls, for /metrics (server/loop_lag.py)
            state.store, state.auth, state.rooms, state.hub = store, Auth(key), rooms, hub
            state.players = Players(store.redis, reserved_names())
            state.ratings, state.games = parts.ratings, parts.games
            state.pairing = pairing
            state.guests = Guests(state.auth, state.players)
            state.web = Web(html, Assets(), key, speaking) if web else None
            if web:
                state.lobby = LobbyFeed(state, lobby_sections(state.web.env), settings.lobby_refresh_s,
                                        hub.players_connected, hub.presence.process_id)
                lobby = asyncio.create_task(state.lobby.run(), name="lobby-feed")
            if settings.gc_check_s > 0:  # full GC passes on heap growth and a timer (server/gc_policy.py)
                collector = GcPolicy(settings.gc_check_s, settings.gc_full_s, metrics)
                collector.start()
            yield
        finally:
            logs.event(log, "shutdown", connections=sum(hub.census().connections.values()) if hub else 0)
            if collector is not None:
                await collector.stop()
            await lag.stop()
            await stop_tasks((lobby, sweep))
            if pairing is not None:
                await pairing.close()
            if hub is not None:
                await hub.stop()
            await rooms.analyses.close()
            rooms.answers.close()
            rooms.boards.close()
            await store.close()
            if embedded is not None:
                await asyncio.to_thread(embedded.stop)

    handlers = {**ops.exception_handlers, **(pages.exception_handlers if web else {})}
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers,
                    middleware=[Middleware(BodyLimit, limit=settings.max_body_bytes)])
    app.state.settings = settings
    app.state.guard = Guard(settings)  # per-IP limits of this process (server/edge/limits.py)
    app.state.codecs = all_codecs
    app.state.metrics = metrics
    if web:
        app.add_middleware(ReaderLanguage)  # pages and sockets in the reader's language (server/web/language.py)
    app.add_middleware(ops.CloseObserver, metrics=metrics)  # sees every websocket close
    quiet_denials()  # a refused upgrade is not a server error (server/edge/admission.py)
    if settings.raw_send:
        app.add_middleware(ExposeRawSend)  # outermost: data frames skip the stack (server/edge/raw_send.py)
    return app


def app_from_env() -> Starlette:
    """Factory for ``uvicorn --factory server.app:app_from_env`` (used with several workers)."""
    settings = Settings.from_env()
    logs.configure(settings.log_level)  # here too: uvicorn's worker processes do not run __main__
    return create_app(settings)

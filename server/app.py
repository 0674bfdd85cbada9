"""The Starlette application: ``create_app(settings)`` with ONE lifespan owning every resource.

The lifespan opens the Redis store (starting an embedded server when no ``REDIS_URL`` is
set), the room service, the pub/sub hub and the clock sweeper, puts them on ``app.state``
(``settings``, ``store``, ``auth``, ``rooms``, ``hub``, ``codecs``, ``metrics``) and closes them in
reverse order. Nothing connects at import time. ``/metrics``, the outage handlers and the
policy-close observer come from :mod:`server.ops`.

The browser edge plugs in here: when ``server.html_render`` exists its ``HtmlCodec`` is
registered as codec ``"html"``, and the ``routes`` lists of ``server.pages`` and
``server.ws_browser`` are mounted (see docs/ARCHITECTURE.md, "The seam").
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from . import api, logs, ops, sweeper, ws_api
from .auth import Auth
from .codec_msgpack import MsgpackCodec
from .config import Settings
from .embedded_redis import EmbeddedRedis
from .fanout import Codec, ExposeRawSend
from .gc_policy import GcPolicy
from .guard import BodyLimit, Guard
from .hub import Hub
from .metrics import Metrics
from .rooms import Rooms
from .store import Store

log = logging.getLogger("mineduel.app")


def _optional(module: str) -> Any | None:
    """Import ``server.<module>`` if it exists (the browser edge lands separately)."""
    try:
        return importlib.import_module(f"server.{module}")
    except ModuleNotFoundError as exc:
        if exc.name == f"server.{module}":
            return None
        raise


def _web_parts() -> tuple[list[BaseRoute], dict[str, Codec]]:
    routes: list[BaseRoute] = []
    codecs: dict[str, Codec] = {}
    render = _optional("html_render")
    if render is not None and hasattr(render, "HtmlCodec"):
        codec = render.HtmlCodec()
        codecs[codec.name] = codec
    for name in ("ws_browser", "pages"):
        module = _optional(name)
        if module is not None:
            routes.extend(getattr(module, "routes", []))
    return routes, codecs


def create_app(
    settings: Settings | None = None,
    *,
    extra_routes: Sequence[BaseRoute] = (),
    codecs: dict[str, Codec] | None = None,
    web: bool = True,
) -> Starlette:
    settings = settings or Settings.from_env()
    all_codecs: dict[str, Codec] = {"msgpack": MsgpackCodec()}
    routes: list[BaseRoute] = [*api.routes, *ws_api.routes, *ops.routes]
    metrics = Metrics()
    if web:
        web_routes, web_codecs = _web_parts()
        all_codecs.update(web_codecs)
        routes.extend(web_routes)
    all_codecs.update(codecs or {})
    routes.extend(extra_routes)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        state = app.state
        embedded: EmbeddedRedis | None = None
        url = settings.redis_url
        if url is None:
            embedded = EmbeddedRedis(settings.data_dir).start()  # main thread: see embedded_redis
            url = embedded.url
        store = Store(url, waitaof=settings.waits_for_aof)
        hub: Hub | None = None
        sweep: asyncio.Task[None] | None = None
        collector: GcPolicy | None = None
        try:
            key = settings.secret_key or await store.shared_secret()
            aof = await store.durability()
            logs.event(log, "redis_durability", appendonly=aof.get("appendonly"), appendfsync=aof.get("appendfsync"),
                       waitaof=store.waitaof, embedded=embedded is not None)
            rooms = Rooms(store, retries=settings.commit_retries, metrics=metrics,
                          finished_ttl_s=settings.finished_ttl_s, idle_ttl_s=settings.idle_ttl_s)
            hub = Hub(store, rooms, all_codecs, metrics=metrics)
            rooms.on_commit, rooms.cached = hub.note_commit, hub.cached_room
            await hub.start()
            sweep = asyncio.create_task(sweeper.run(rooms, settings.sweep_interval_s), name="clock-sweeper")
            state.settings, state.store, state.auth = settings, store, Auth(key)
            state.rooms, state.hub, state.codecs = rooms, hub, all_codecs
            if settings.gc_young_ms > 0:  # short GC passes on a timer (server/gc_policy.py)
                collector = GcPolicy(settings.gc_young_ms / 1000, settings.gc_full_s, metrics)
                collector.start()
            yield
        finally:
            logs.event(log, "shutdown", connections=sum(len(e.conns) for e in hub.entries.values()) if hub else 0)
            if collector is not None:
                await collector.stop()
            if sweep is not None:
                sweep.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await sweep
            if hub is not None:
                await hub.stop()
            await store.close()
            if embedded is not None:
                await asyncio.to_thread(embedded.stop)

    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=ops.exception_handlers,
                    middleware=[Middleware(BodyLimit, limit=settings.max_body_bytes)])
    app.state.settings = settings
    app.state.guard = Guard(settings)  # per-IP limits of this process (server/guard.py)
    app.state.codecs = all_codecs
    app.state.metrics = metrics
    app.add_middleware(ops.CloseObserver, metrics=metrics)  # sees every websocket close
    app.add_middleware(ExposeRawSend)  # outermost: data frames skip the stack (server/fanout.py)
    return app


def app_from_env() -> Starlette:
    """Factory for ``uvicorn --factory server.app:app_from_env`` (used with several workers)."""
    settings = Settings.from_env()
    logs.configure(settings.log_level)  # here too: uvicorn's worker processes do not run __main__
    return create_app(settings)

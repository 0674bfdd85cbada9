"""Settings from environment variables (documented in README.md), read once at start-up."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def _bool(value: str | None, default: bool) -> bool:
    if value is None or value == "":
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


Rate = tuple[float, float] | None
"""``(credits, per_seconds)`` of a credit bucket (:mod:`server.ratelimit`); ``None`` = no limit."""


def _rate(value: str | None, default: Rate) -> Rate:
    """``"100/20"`` = 100 messages per 20 s (a burst of 100, refilled at 5/s); ``"off"``/``"0"`` = none."""
    if value is None or value.strip() == "":
        return default
    text = value.strip().lower()
    if text in ("0", "off", "none", "no"):
        return None
    credits, _, seconds = text.partition("/")
    rate = (float(credits), float(seconds or "1"))
    if rate[0] <= 0 or rate[1] <= 0:
        raise ValueError(f"a rate is <credits>/<seconds> with both > 0, not {value!r}")
    return rate


def _numbers(value: str | None, default: tuple[float, ...]) -> tuple[float, ...]:
    """``"100,25,20"`` → ``(100.0, 25.0, 20.0)``, as many numbers as ``default`` has."""
    if value is None or value.strip() == "":
        return default
    numbers = tuple(float(part) for part in value.split(","))
    if len(numbers) != len(default) or min(numbers) < 0:
        raise ValueError(f"expected {len(default)} numbers >= 0 separated by commas, not {value!r}")
    return numbers


def _origins(value: str | None) -> tuple[str, ...]:
    """Comma-separated origins (``https://mineduel.example``), lower-cased, without trailing slashes."""
    return tuple(o.strip().rstrip("/").lower() for o in (value or "").split(",") if o.strip())


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    redis_url: str | None = None
    """``None`` = start an embedded valkey-server under ``data_dir``."""
    data_dir: Path = Path("var")
    test_hooks: bool = False
    """Test-only: allows ``"seed"`` on game creation. NEVER enable in production."""
    secret_key: str | None = None
    """Signs guest tokens. ``None`` = a random key shared through Redis (all processes agree)."""
    waitaof: bool | None = None
    """Wait for the AOF fsync (``WAITAOF 1 0``) before acknowledging; default: on with an
    external ``REDIS_URL``, off with the embedded server (which runs ``appendfsync always``)."""
    max_frame_bytes: int = 4096
    """Client websocket frames above this are refused (1008); uvicorn cuts frames above 4x (1009)."""
    max_body_bytes: int = 4096
    """HTTP request bodies above this get 413 before the route reads them."""
    send_queue: int = 64
    player_rate: Rate = (100.0, 20.0)
    """Messages a seated player's websocket may send: 100 per 20 s (then 1008)."""
    solo_rate: Rate = (400.0, 20.0)
    """Messages the player of a classic game may send: 400 per 20 s (then 1008). Why more than a
    duel's: an Expert board is about 170 clicks of the least kind plus flags, and fast players
    click 8-10 times a second for minutes; a duel's player waits for the opponent's turns."""
    spectator_rate: Rate = (20.0, 20.0)
    """Messages a spectator's websocket may send (spectators cannot move): 20 per 20 s."""
    ip_guest_rate: Rate = (60.0, 60.0)
    """Guest creations per client IP (API and form): a burst of 60, then one per second (429)."""
    ip_game_rate: Rate = (30.0, 300.0)
    """Duel creations per client IP (API, forms, quick pairing, a duel's rematch): a burst of 30,
    then one per 10 s (429). Classic games have their own bucket (``ip_classic_rate``)."""
    ip_classic_rate: Rate = (300.0, 300.0)
    """Classic game creations per client IP (``POST /api/v1/solo``, the Restart and Play again
    forms, a classic game's rematch): a burst of 300, then one per second (429). Why this much:
    a speed player restarts a Beginner board every 1-3 s for as long as a session lasts, and
    players behind one NAT share the address; a refill of one per second never stops a player
    restarting every second, and the burst covers a faster spell (every half second for five
    minutes) or a few such players at once. Still a bound on a flood: at most 300 + 86,400
    rooms a day per address and process (the duels': 30 + 8,640), each kept until it expires
    (``idle_ttl_s`` unfinished, ``finished_ttl_s`` finished)."""
    ip_max_sockets: int = 64
    """Concurrent websockets per client IP in one process (0 = no limit); more get 429."""
    allowed_origins: tuple[str, ...] = ()
    """Origins whose pages may open our websockets and post our forms; empty = the request's own host."""
    trusted_proxy: bool = False
    """Behind a reverse proxy: the client IP is the last ``X-Forwarded-For`` entry and TLS is
    ``X-Forwarded-Proto: https``. Off: both come from the connection itself (headers ignored)."""
    ws_ping_interval_s: float = 20.0
    ws_ping_timeout_s: float = 20.0
    commit_retries: int = 8
    sweep_interval_s: float = 0.1
    lobby_refresh_s: float = 1.0
    """How often each process reads the lobby while somebody watches it (server/web/lobby_feed.py)."""
    gc_check_s: float = 60.0
    """How often the GC policy reads the heap's size to see whether a full cyclic GC is due, so
    also the shortest time between two of them (server/gc_policy.py); 0 = CPython's own
    allocation-count trigger instead of the policy."""
    gc_full_s: float = 600.0
    """A full cyclic GC at the latest every this many seconds (sooner when the heap grew by a
    quarter: server/gc_policy.py)."""
    heartbeat_s: float = 1.0
    """Browser edge heartbeat period ("connection lost" notice, clocks); 0 = off. The msgpack
    edge relies on websocket pings."""
    request_timeout_s: float = 10.0
    """Each HTTP request must be read (head and body) within this many seconds of its first byte,
    or of its connection's opening; else 408 and the connection is closed (server/request_timeout.py);
    0 = no limit."""
    ws_deflate: bool = False
    """permessage-deflate on websockets: smaller frames, more CPU and latency per frame."""
    lean_redis: bool = True
    """Speed bypass: the move path's commands over the lean pipelined client (server/store/resp.py)
    where it can serve the URL; off = redis-py everywhere."""
    inline_send: bool = True
    """Speed bypass: frames written inline by stepping the send coroutine (server/edge/outbox.py);
    off = each send in a task."""
    raw_send: bool = True
    """Speed bypass: data frames straight to uvicorn's transport, or where it cannot take them to
    the server's ASGI send (server/edge/raw_send.py); off = through Starlette's send and the
    middleware stack."""
    log_level: str = "info"
    finished_ttl_s: int = 30 * 86_400
    """Retention of a finished game's keys (state and move log), renewed by a rematch offer; 0 = forever."""
    idle_ttl_s: int = 7 * 86_400
    """An unfinished game's keys expire this long after its last change (abandoned rooms); 0 = never."""
    pairing_tick_s: float = 1.0
    """How often each process keeps its seekers alive and pairs what waits in the pools."""
    pairing_live_s: float = 6.0
    """A waiting seek whose process stopped keeping it alive is dropped this long after."""
    pairing_window: tuple[float, ...] = (100.0, 25.0, 20.0)
    """Rated pairing's rating window: ± this at once, this much wider per second of waiting,
    unlimited after this many seconds (server/core/pools.py, ``Window``)."""
    pairing_computer_after_s: float = 20.0
    """The quick-pairing page offers "Play the computer instead" after this long alone; 0 = never."""
    analyse_at_end: bool = False
    """Start a duel's analysis (server/store/analyses.py) in the worker process as soon as the
    game ends; off (the default) = on its first request only. Why off: computed for every game
    that ends, the analyses took a third of the server's CPU at 500 rooms under load (a fifth of
    a core beside the app's 35%; docs/PERFORMANCE.md, thirteenth session), mostly for games
    nobody opens; asked for, one takes about 15 ms (the page's odds element loads itself)."""
    board_queue: int = 16
    """No-guess boards that may wait for this process's board worker; a first click beyond is
    refused as ``busy`` (click again). Why 16: ``BOARD_QUEUE`` in server/store/service.py."""
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def waits_for_aof(self) -> bool:
        return self.waitaof if self.waitaof is not None else self.redis_url is not None

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        e = os.environ if env is None else env
        waitaof = e.get("MINEDUEL_WAITAOF")
        # MINEDUEL_BYPASSES=off switches every speed bypass off at once (the plain paths: CI
        # runs the server tests that way too); a bypass's own setting still wins
        bypasses = _bool(e.get("MINEDUEL_BYPASSES"), True)
        return cls(
            host=e.get("HOST", "127.0.0.1"),
            port=int(e.get("PORT", "8000")),
            workers=int(e.get("WORKERS", "1")),
            redis_url=e.get("REDIS_URL") or None,
            data_dir=Path(e.get("MINEDUEL_DATA", "var")),
            test_hooks=_bool(e.get("MINEDUEL_TEST_HOOKS"), False),
            secret_key=e.get("SECRET_KEY") or None,
            waitaof=None if waitaof in (None, "") else _bool(waitaof, False),
            max_frame_bytes=int(e.get("MINEDUEL_MAX_FRAME_BYTES", "4096")),
            max_body_bytes=int(e.get("MINEDUEL_MAX_BODY_BYTES", "4096")),
            send_queue=int(e.get("MINEDUEL_SEND_QUEUE", "64")),
            player_rate=_rate(e.get("MINEDUEL_RATE_PLAYER"), cls.player_rate),
            solo_rate=_rate(e.get("MINEDUEL_RATE_SOLO"), cls.solo_rate),
            spectator_rate=_rate(e.get("MINEDUEL_RATE_SPECTATOR"), cls.spectator_rate),
            ip_guest_rate=_rate(e.get("MINEDUEL_RATE_IP_GUESTS"), cls.ip_guest_rate),
            ip_game_rate=_rate(e.get("MINEDUEL_RATE_IP_GAMES"), cls.ip_game_rate),
            ip_classic_rate=_rate(e.get("MINEDUEL_RATE_IP_CLASSIC"), cls.ip_classic_rate),
            ip_max_sockets=int(e.get("MINEDUEL_MAX_SOCKETS_PER_IP", "64")),
            allowed_origins=_origins(e.get("MINEDUEL_ALLOWED_ORIGINS")),
            trusted_proxy=_bool(e.get("MINEDUEL_TRUSTED_PROXY"), False),
            ws_ping_interval_s=float(e.get("MINEDUEL_WS_PING_INTERVAL_S", "20")),
            ws_ping_timeout_s=float(e.get("MINEDUEL_WS_PING_TIMEOUT_S", "20")),
            sweep_interval_s=float(e.get("MINEDUEL_SWEEP_INTERVAL_S", "0.1")),
            lobby_refresh_s=float(e.get("MINEDUEL_LOBBY_REFRESH_S", "1")),
            gc_check_s=float(e.get("MINEDUEL_GC_CHECK_S", "60" if bypasses else "0")),
            gc_full_s=float(e.get("MINEDUEL_GC_FULL_S", "600")),
            heartbeat_s=float(e.get("MINEDUEL_HEARTBEAT_S", "1")),
            request_timeout_s=float(e.get("MINEDUEL_REQUEST_TIMEOUT_S", "10")),
            ws_deflate=_bool(e.get("MINEDUEL_WS_DEFLATE"), False),
            lean_redis=_bool(e.get("MINEDUEL_LEAN_REDIS"), bypasses),
            inline_send=_bool(e.get("MINEDUEL_INLINE_SEND"), bypasses),
            raw_send=_bool(e.get("MINEDUEL_RAW_SEND"), bypasses),
            log_level=e.get("LOG_LEVEL", "info"),
            finished_ttl_s=int(e.get("MINEDUEL_FINISHED_TTL_S", str(30 * 86_400))),
            idle_ttl_s=int(e.get("MINEDUEL_IDLE_TTL_S", str(7 * 86_400))),
            pairing_tick_s=float(e.get("MINEDUEL_PAIRING_TICK_S", "1")),
            pairing_live_s=float(e.get("MINEDUEL_PAIRING_LIVE_S", "6")),
            pairing_window=_numbers(e.get("MINEDUEL_PAIRING_WINDOW"), cls.pairing_window),
            pairing_computer_after_s=float(e.get("MINEDUEL_PAIRING_COMPUTER_AFTER_S", "20")),
            analyse_at_end=_bool(e.get("MINEDUEL_ANALYSE_AT_END"), False),
            board_queue=int(e.get("MINEDUEL_BOARD_QUEUE", "16")),
        )

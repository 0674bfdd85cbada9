"""Settings from environment variables (documented in README.md), read once at start-up."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def _bool(value: str | None, default: bool) -> bool:
    if value is None or value == "":
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


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
    send_queue: int = 64
    rate_per_s: float = 20.0
    rate_burst: int = 40
    commit_retries: int = 8
    sweep_interval_s: float = 0.1
    heartbeat_s: float = 0.0
    """Browser edge heartbeat period (0 = off); the msgpack edge relies on websocket pings."""
    ws_deflate: bool = False
    """permessage-deflate on websockets: smaller frames, more CPU and latency per frame."""
    log_level: str = "info"
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def waits_for_aof(self) -> bool:
        return self.waitaof if self.waitaof is not None else self.redis_url is not None

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Settings":
        e = os.environ if env is None else env
        waitaof = e.get("MINEDUEL_WAITAOF")
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
            send_queue=int(e.get("MINEDUEL_SEND_QUEUE", "64")),
            rate_per_s=float(e.get("MINEDUEL_RATE_PER_S", "20")),
            rate_burst=int(e.get("MINEDUEL_RATE_BURST", "40")),
            sweep_interval_s=float(e.get("MINEDUEL_SWEEP_INTERVAL_S", "0.1")),
            heartbeat_s=float(e.get("MINEDUEL_HEARTBEAT_S", "0")),
            ws_deflate=_bool(e.get("MINEDUEL_WS_DEFLATE"), False),
            log_level=e.get("LOG_LEVEL", "info"),
        )

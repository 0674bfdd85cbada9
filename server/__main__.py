"""``python -m server`` / ``mineduel``: start the app with uvicorn (and an embedded Redis if needed).

Without ``REDIS_URL`` a private valkey-server is started here, in the parent, with AOF
(``appendfsync always``) under ``$MINEDUEL_DATA/valkey``, and every worker shares it; it is
stopped when the server exits.

SIGTERM (or Ctrl+C) is a graceful shutdown: uvicorn stops accepting, closes every websocket
with 1012 (clients reconnect to another process), waits at most 5 s for handlers, the lifespan
closes the hub and Redis, and the process exits with status 0 — within 10 s in all.
"""

from __future__ import annotations

import os
import signal
import sys

import uvicorn

from . import logs
from .config import Settings
from .embedded_redis import EmbeddedRedis
from .request_timeout import RequestTimeoutProtocol

GRACE_S = 5
"""Seconds uvicorn waits for connections and handlers after SIGTERM before cancelling them."""


def _raise_fd_limit() -> None:
    """Each websocket is a file descriptor: allow as many as the hard limit permits."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ImportError, ValueError, OSError):
        pass


def main(argv: list[str] | None = None) -> int:
    settings = Settings.from_env()
    _raise_fd_limit()
    logs.configure(settings.log_level)
    # uvicorn handles SIGTERM/SIGINT itself during run(), then re-raises the signal it caught
    # with the handlers that were there before: make that re-raise harmless, so that after a
    # graceful shutdown the embedded server is stopped below and the exit status is 0, not -15.
    served = False

    def on_signal(sig: int, _frame: object) -> None:
        if not served:  # still starting: stop now
            raise SystemExit(128 + sig)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    embedded: EmbeddedRedis | None = None
    if settings.redis_url is None:
        embedded = EmbeddedRedis(settings.data_dir).start()
        os.environ["REDIS_URL"] = embedded.url
        os.environ.setdefault("MINEDUEL_WAITAOF", "0")  # the embedded server fsyncs every write itself
        print(f"mineduel: embedded valkey at {embedded.url}, data in {embedded.data_dir}", flush=True)
    shown = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    print(f"mineduel: open http://{shown}:{settings.port}/", flush=True)
    try:
        served = True
        uvicorn.run(
            "server.app:app_from_env",
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=settings.workers,
            log_level=settings.log_level,
            # frames above 4x the app's limit are refused (1009) before they are buffered whole
            ws_max_size=settings.max_frame_bytes * 4,
            ws_ping_interval=settings.ws_ping_interval_s,
            ws_per_message_deflate=settings.ws_deflate,
            ws_ping_timeout=settings.ws_ping_timeout_s,
            timeout_graceful_shutdown=GRACE_S,
            # a request must be read within MINEDUEL_REQUEST_TIMEOUT_S (slow clients hold no connection)
            http=RequestTimeoutProtocol,
            # forwarded headers are read by the app, and only with MINEDUEL_TRUSTED_PROXY (server/guard.py)
            proxy_headers=False,
        )
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

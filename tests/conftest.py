"""Shared fixtures: a real embedded Valkey, live server processes, small clients.

- ``redis_url`` (session): one embedded valkey-server (the same launcher as production) for
  the whole run, one per worker under pytest-xdist (``make test`` runs two); tests keep apart
  by using fresh room ids.
- ``start_server(**env)`` (function): launches ``python -m server`` on a free loopback port
  against that Redis and waits for ``/healthz``; every process is killed at teardown.
  ``LiveServer`` has ``url``, ``port``, ``proc``, ``log_path``, ``kill()`` (SIGKILL), ``stop()``.
- ``live_server`` (session): one shared server with the test hooks on.
- ``api`` (function): a :class:`server.client.Api` on ``live_server``.
- :func:`app_settings` for in-process apps: the environment's settings (so a run with
  ``MINEDUEL_BYPASSES=off`` tests the plain paths in-process too) with the test's overrides.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from server.config import Settings
from server.embedded_redis import EmbeddedRedis, free_port

ROOT = Path(__file__).resolve().parent.parent


def app_settings(**overrides: object) -> Settings:
    """Settings for an app or store made in the test process: the environment's (the speed
    bypasses on or off, as the run asks) with ``overrides``."""
    return dataclasses.replace(Settings.from_env({k: v for k, v in os.environ.items() if k.startswith("MINEDUEL_")}),
                               **overrides)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path_factory.mktemp("valkey")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_url(redis_server: EmbeddedRedis) -> str:
    return redis_server.url


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    """A Valkey of the test's own, for tests that pause, kill or restart it (the shared one
    serves every other test's rooms meanwhile)."""
    server = EmbeddedRedis(tmp_path / "own-valkey").start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class LiveServer:
    url: str
    port: int
    proc: subprocess.Popen[bytes]
    log_path: Path

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as in a crash."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


class PortTaken(RuntimeError):
    """The server could not bind the port it was given: somebody took it first."""


def launch_server(redis_url: str | None, log_dir: Path, **env: str) -> LiveServer:
    """Start ``python -m server`` on a free port and wait (bounded) until /healthz answers 200.
    A server that exits because its port was taken between :func:`free_port` and its bind
    (two test workers may be handed the same free port) is started again on another."""
    for _ in range(2):
        with contextlib.suppress(PortTaken):
            return _launch_on(free_port(), redis_url, log_dir, env)
    return _launch_on(free_port(), redis_url, log_dir, env)


def _launch_on(port: int, redis_url: str | None, log_dir: Path, env: dict[str, str]) -> LiveServer:
    full_env = {
        **os.environ,
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "SECRET_KEY": "test-secret",
        "MINEDUEL_TEST_HOOKS": "1",
        "MINEDUEL_DATA": str(log_dir / "data"),
        "LOG_LEVEL": "warning",
        # every test client is 127.0.0.1: the per-IP limits are off on test servers unless a
        # test turns them on (tests/security/test_limits.py does)
        "MINEDUEL_RATE_IP_GUESTS": "off",
        "MINEDUEL_RATE_IP_GAMES": "off",
        "MINEDUEL_RATE_IP_CLASSIC": "off",
        "MINEDUEL_MAX_SOCKETS_PER_IP": "0",
    }
    if redis_url is not None:
        full_env["REDIS_URL"] = redis_url
    full_env.update(env)
    log_path = log_dir / f"server-{port}.log"
    with open(log_path, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "server"], cwd=ROOT, env=full_env,
                                stdout=out, stderr=subprocess.STDOUT)
    server = LiveServer(f"http://127.0.0.1:{port}", port, proc, log_path)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log = server.log()
            raise (PortTaken if "address already in use" in log else RuntimeError)(
                f"server exited with {proc.returncode}:\n{log}")
        try:
            if httpx.get(server.url + "/healthz", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    server.kill()
    raise RuntimeError(f"server did not become healthy:\n{server.log()}")


@pytest.fixture
def start_server(redis_url: str, tmp_path: Path) -> Iterator[Callable[..., LiveServer]]:
    started: list[LiveServer] = []

    def start(**env: str) -> LiveServer:
        server = launch_server(env.pop("REDIS_URL", redis_url), tmp_path, **env)
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()


@pytest.fixture(scope="session")
def live_server(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = launch_server(redis_url, tmp_path_factory.mktemp("live"))
    yield server
    server.stop()


@pytest.fixture
async def api(live_server: LiveServer):
    from server.client import Api

    async with Api(live_server.url) as client:
        yield client


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files with volume or slow tests first, each file's own order kept: the suite runs on
    two workers, one file to a worker at a time (``-n 2 --dist loadfile``, the Makefile), and a
    two-minute file started last would leave the other worker idle for as long."""
    def rank(item: pytest.Item) -> int:
        return 0 if item.get_closest_marker("volume") else 1 if item.get_closest_marker("slow") else 2

    def file_of(item: pytest.Item) -> str:
        return item.nodeid.split("::", 1)[0]

    files: dict[str, int] = {}
    for item in items:
        files[file_of(item)] = min(files.get(file_of(item), 2), rank(item))
    order = {path: n for n, path in enumerate(files)}
    items.sort(key=lambda item: (files[file_of(item)], order[file_of(item)]))


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001 - pytest's hook
    """Name the volume tests in the summary, with their outcome and time: they run in CI on
    purpose, and a reader of the log should see that they did."""
    lines = []
    for outcome in ("passed", "failed", "error", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            if getattr(report, "when", "call") == "call" and "volume" in getattr(report, "keywords", {}):
                lines.append(f"{outcome.upper()} {report.nodeid} ({report.duration:.0f} s)")
    if lines:
        terminalreporter.section("volume tests")
        for line in lines:
            terminalreporter.write_line(line)

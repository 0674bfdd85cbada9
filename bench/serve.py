"""A fresh server for one benchmark run, exactly as ``python -m server`` starts it.

Why: a load figure depends on more than our code. The host's speed on the shared development
VMs moves by a quarter within an hour and has halved within minutes (docs/PERFORMANCE.md), the disk's fsync (the embedded Valkey runs ``appendfsync
always``) stalls now and then, and a server that already served a run carries its data and
its objects into the next one. So each run gets its own server and data directory, and
reports, next to its latencies, what it ran on:

- ``gauge_s()``: a fixed piece of pure-Python work, timed (best of 3): the machine's speed at
  that moment, comparable between runs and days;
- ``BenchServer.valkey_report()``: Valkey's own record of slow ``aof-fsync-always`` calls
  (``LATENCY HISTORY``, armed at 5 ms when the server starts), its other stalls (``LATENCY
  LATEST``: a fork, a slow command, an expiry cycle) and its AOF rewrites;
- ``BenchServer.gc_passes()``: the app's cyclic-GC passes (its ``/metrics``);
- ``loop_lag_buckets(url)``: how late the app's event loop ran its timer (its ``/metrics``),
  read at the window's start and end by ``bench/load.py``.

Used by ``bench/load.py --serve``; the per-IP limits, which are for the internet and not for
a load client on 127.0.0.1, are switched off in that server, and it listens on loopback only.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterable
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server.embedded_redis import free_port

BENCH_ENV = {
    "MINEDUEL_RATE_IP_GUESTS": "off",
    "MINEDUEL_RATE_IP_GAMES": "off",
    "MINEDUEL_RATE_IP_CLASSIC": "off",
    "MINEDUEL_MAX_SOCKETS_PER_IP": "0",
    "LOG_LEVEL": "warning",
    "HOST": "127.0.0.1",
}
LATENCY_THRESHOLD_MS = 5


def gauge_s() -> float:
    """Seconds for ``sum(range(3 * 10**7))``, best of 3: the host's speed right now."""
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        sum(range(3 * 10**7))
        best = min(best, time.perf_counter() - t0)
    return best


def children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found.extend(int(p) for p in (task / "children").read_text().split())
    except OSError:
        pass
    return found


def _command(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")


class BenchServer:
    """``python -m server`` with its embedded Valkey in a new data directory; a context manager.

    ``url`` is the app's, ``app_pids`` the process(es) serving it (the uvicorn workers when
    ``WORKERS`` > 1), ``valkey_url`` and ``valkey_pid`` the embedded server's, ``data_dir``
    where both keep their data and the app its log (removed afterwards unless ``keep_data``),
    ``exit_status`` the app's once it has stopped (0 after a graceful SIGTERM).
    """

    def __init__(self, env: dict[str, str] | None = None, *, keep_data: bool = False,
                 prefix: str = "mineduel-bench-", start_timeout_s: float = 60.0,
                 root: Path | None = None, data_parent: str | None = None, baseline: bool = False,
                 store: bool = False, cpu_shares: bool = False) -> None:
        self.env = {**BENCH_ENV, **(env or {})}
        self.keep_data = keep_data
        self.prefix = prefix
        self.start_timeout_s = start_timeout_s
        self.root = Path(root) if root is not None else ROOT
        """The source tree whose ``python -m server`` runs (cwd and ``PYTHONPATH``): another
        commit's checkout for ``load.py --compare``; the same venv either way."""
        self.data_parent = data_parent
        """Where the data directory is made (``None``: the system's temporary directory;
        ``/dev/shm`` puts Valkey's AOF and its fsyncs on tmpfs)."""
        self.baseline = baseline
        """Run ``bench/baseline_app.py`` (of this tree) instead: the fan-out app, no Valkey."""
        self.store = store
        """With ``baseline``: its store mode (``BASELINE_STORE=1``), on an embedded Valkey started
        as ours is: each message committed and published before its fan-out."""
        self.cpu_shares = cpu_shares
        """Run the server through ``bench/cpu_share.py`` (a CPU clock around a few functions);
        ``cpu_shares_path`` is then where it writes on SIGUSR1."""
        self.cpu_shares_path: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.data_dir: Path | None = None
        self.log_path: Path | None = None
        self.url = ""
        self.valkey_url = ""
        self.app_pids: list[int] = []
        self.valkey_pid: int | None = None
        self.exit_status: int | None = None

    def __enter__(self) -> BenchServer:
        self.data_dir = Path(tempfile.mkdtemp(prefix=self.prefix, dir=self.data_parent))
        port = free_port()
        env = {**os.environ, **self.env, "PORT": str(port), "MINEDUEL_DATA": str(self.data_dir)}
        env.pop("REDIS_URL", None)
        if self.baseline:
            command = [sys.executable, str(ROOT / "bench" / "baseline_app.py")]
            env["PYTHONPATH"] = str(ROOT)
            if self.store:
                env["BASELINE_STORE"] = "1"
            cwd = ROOT
        else:
            command = [sys.executable, "-m", "server"]
            if self.cpu_shares:
                self.cpu_shares_path = self.data_dir / "cpu-shares.jsonl"
                command = [sys.executable, str(ROOT / "bench" / "cpu_share.py")]
                env["MINEDUEL_CPU_SHARES"] = str(self.cpu_shares_path)
            env["PYTHONPATH"] = str(self.root)
            cwd = self.root
        self.log_path = self.data_dir / "server.log"
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            self._wait_ready(port)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _wait_ready(self, port: int) -> None:
        assert self.process is not None and self.log_path is not None
        deadline = time.monotonic() + self.start_timeout_s
        while "open http://" not in self.log_path.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the bench server did not start:\n{self.log_path.read_text()[-2000:]}")
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{port}"
        if self.baseline and not self.store:
            self._wait_listening(port, deadline)
            self.app_pids = children(self.process.pid) if int(self.env.get("WORKERS", "1")) > 1 else []
            self.app_pids = [p for p in self.app_pids if "spawn_main" in _command(p)] or [self.process.pid]
            return
        found = re.search(r"embedded valkey at ((?:redis|unix)://[^\s,]+)", self.log_path.read_text())
        if found is None:
            raise RuntimeError("the bench server did not start its embedded Valkey")
        self.valkey_url = found.group(1)
        if self.baseline:
            self._wait_listening(port, deadline)
        else:
            self._wait_healthy(port, deadline)
        kids = children(self.process.pid)
        valkey = [p for p in kids if "valkey-server" in _command(p) or "redis-server" in _command(p)]
        workers = [p for p in kids if p not in valkey and "spawn_main" in _command(p)]
        self.valkey_pid = valkey[0] if valkey else None
        self.app_pids = workers or [self.process.pid]
        client = self._redis()
        try:
            client.config_set("latency-monitor-threshold", LATENCY_THRESHOLD_MS)
        finally:
            client.close()

    def _wait_answer(self, port: int, deadline: float, path: str, status: bytes) -> None:
        """Until ``GET path`` is answered with a status line starting ``status``."""
        request = f"GET {path} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode()
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(request)
                    if s.recv(64).startswith(status):
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the bench server did not answer GET {path} in time")

    def _wait_listening(self, port: int, deadline: float) -> None:
        """Until the port answers HTTP (any status: the baseline has no ``/healthz``)."""
        self._wait_answer(port, deadline, "/", b"HTTP/1.1 ")

    def _wait_healthy(self, port: int, deadline: float) -> None:
        """Until ours answers ``/healthz`` with 200: listening, and its lifespan (Redis, hub) is up."""
        self._wait_answer(port, deadline, "/healthz", b"HTTP/1.1 200")

    def _redis(self) -> redis.Redis:
        return redis.Redis.from_url(self.valkey_url, socket_timeout=5)

    @property
    def pid_list(self) -> str:
        return ",".join(str(p) for p in self.app_pids)

    def valkey_report(self) -> str:
        """Since the start: the seconds with an AOF fsync of ≥ 5 ms and the longest (Valkey keeps
        at most one event per second, the longest of that second), and the AOF rewrites (each
        forks a child that writes the whole dataset: CPU and disk taken from the run)."""
        client = self._redis()
        try:
            history = client.execute_command("LATENCY", "HISTORY", "aof-fsync-always")
            latest = client.execute_command("LATENCY", "LATEST")
            rewrites = client.info("persistence").get("aof_rewrites", "?")
        finally:
            client.close()
        longest = max((int(ms) for _t, ms in history), default=0)
        others = ", ".join(f"{_text(row[0])} {int(row[3])} ms" for row in latest
                           if _text(row[0]) != "aof-fsync-always")
        return (f"valkey: {len(history)} seconds with an AOF fsync >= 5 ms (longest {longest} ms), "
                f"{rewrites} AOF rewrites, during the server's life; its other stalls >= 5 ms, the longest of "
                f"each kind: {others or 'none'}")

    def gc_passes(self) -> dict[str, tuple[int, float, float]]:
        """Per generation: ``(passes, seconds in all, upper bound of the longest)`` from the
        app's ``mineduel_gc_pause_seconds`` histogram (with ``WORKERS`` > 1, of whichever worker
        answered)."""
        found: dict[str, list] = {}  # generation -> [passes, seconds, [(le, cumulative passes), ...]]
        for family in metric_families(self.url):
            if family.name != "mineduel_gc_pause_seconds":
                continue
            for sample in family.samples:
                entry = found.setdefault(sample.labels["generation"], [0, 0.0, []])
                if sample.name.endswith("_count"):
                    entry[0] = int(sample.value)
                elif sample.name.endswith("_sum"):
                    entry[1] = sample.value
                elif sample.name.endswith("_bucket"):
                    entry[2].append((float(sample.labels["le"]), sample.value))
        return {gen: (n, total, longest_bucket(buckets)) for gen, (n, total, buckets) in found.items() if n}

    def __exit__(self, *exc: object) -> None:
        proc, self.process = self.process, None
        if proc is not None:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)  # graceful: closes sockets, stops its Valkey
            try:
                self.exit_status = proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                self.exit_status = proc.wait(10)
        if self.data_dir is not None and not self.keep_data:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def longest_bucket(buckets: Iterable[tuple[float, float]]) -> float:
    """The upper bound of the highest bucket that holds samples the one below it does not
    (``inf`` past the last bound; 0 with no sample), from a histogram's ``(le, cumulative
    count)`` pairs in ascending order: the longest sample is at most that."""
    longest = below = 0.0
    for le, n in buckets:
        if n > below:
            longest = le
        below = n
    return longest


def metric_families(url: str) -> list:
    """The app's ``/metrics``, parsed (with ``WORKERS`` > 1, of whichever worker answers)."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(url + "/metrics", timeout=10) as answer:
        return list(text_string_to_metric_families(answer.read().decode()))


def loop_lag_buckets(url: str) -> dict[float, float] | None:
    """The app's ``mineduel_loop_lag_seconds`` histogram as ``{upper bound: samples at most
    that late}`` (``inf`` included), or None if it has none (an older commit, the baseline)."""
    for family in metric_families(url):
        if family.name == "mineduel_loop_lag_seconds":
            return {float(sample.labels["le"]): sample.value for sample in family.samples
                    if sample.name.endswith("_bucket")}
    return None

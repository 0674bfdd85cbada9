"""server.store.offload: a worker process does not outlive the server process that started it
(a crash or kill -9 runs no shutdown code)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tests.conftest import ROOT

SCRIPT = """
import asyncio, os, sys, time
from server.store.offload import Offload

async def main():
    pid = await Offload().run(os.getpid)
    print(pid, flush=True)
    time.sleep(60)

asyncio.run(main())
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its new parent) counts as gone
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except OSError:
        return False


def test_a_worker_ends_when_its_server_is_killed() -> None:
    server = subprocess.Popen([sys.executable, "-c", SCRIPT], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        worker = int(server.stdout.readline())
        assert worker != server.pid and alive(worker)
        server.send_signal(signal.SIGKILL)
        server.wait(10)
        deadline = time.monotonic() + 20  # a bound, not an expectation
        while alive(worker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(worker), "the worker outlived its server"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)

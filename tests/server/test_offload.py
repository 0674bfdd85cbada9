"""server.store.offload: a worker process does not outlive the server process that started it
(a crash or kill -9 runs no shutdown code)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

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


def test_a_nicer_worker_runs_at_a_lower_priority_than_its_server() -> None:
    """The analyses' worker is background work: it yields the CPU to the server's moves."""
    import asyncio

    from server.store.analyses import ANALYSIS_NICE, Analyses
    from server.store.offload import Offload

    async def run() -> tuple[int, int]:
        plain, nicer = Offload(), Offload(nice=ANALYSIS_NICE)
        try:
            return await plain.run(os.nice, 0), await nicer.run(os.nice, 0)
        finally:
            plain.close()
            nicer.close()

    here = os.nice(0)
    plain, nicer = asyncio.run(run())
    assert plain == here and nicer == min(19, here + ANALYSIS_NICE) and ANALYSIS_NICE > 0
    assert Analyses(store=None, metrics=None).offload.nice == ANALYSIS_NICE  # type: ignore[arg-type]


async def test_a_lane_refuses_a_second_job_of_an_owner_and_one_beyond_its_queue(tmp_path: Path) -> None:
    """One job in flight per owner, at most ``most_waiting`` waiting; refused before anything is
    queued. A job stays counted until its worker is done, also when its caller stopped waiting
    (a socket closed mid-search): its cost is spent anyway."""
    import asyncio

    import pytest

    from server.store.offload import OwnerBusy, QueueFull
    from tests.server.store.held_jobs import Gate, HeldOffload

    gate = Gate(tmp_path)
    lane = HeldOffload(gate, most_waiting=1)
    try:
        first = asyncio.create_task(lane.run(os.getpid, owner="ann"))
        await gate.until_started()
        second = asyncio.create_task(lane.run(os.getpid, owner="bo"))
        await asyncio.sleep(0)
        assert lane.waiting == 1
        with pytest.raises(OwnerBusy):
            await lane.run(os.getpid, owner="ann")
        with pytest.raises(QueueFull):
            await lane.run(os.getpid, owner="cy")
        first.cancel()  # its caller leaves; the job goes on in the worker
        with pytest.raises(asyncio.CancelledError):
            await first
        with pytest.raises(OwnerBusy):
            await lane.run(os.getpid, owner="ann")
        gate.open()
        assert await asyncio.wait_for(second, 60) != os.getpid()
        for _ in range(1000):  # the cancelled caller's job ends too, and frees its owner (a bound)
            try:
                assert await asyncio.wait_for(lane.run(os.getpid, owner="ann"), 60) != os.getpid()
                break
            except OwnerBusy:
                await asyncio.sleep(0.05)
        else:
            raise AssertionError("the owner of a finished job stayed busy")
        assert lane.waiting == 0
    finally:
        lane.close()


async def test_a_lane_refuses_a_job_of_a_group_that_has_its_share_in_flight(tmp_path: Path) -> None:
    """At most ``most_per_group`` jobs of one group (a client's address) in flight, whoever owns
    them; another group's job is taken; the group's share comes back as its jobs end."""
    import asyncio

    import pytest

    from server.store.offload import GroupBusy
    from tests.server.store.held_jobs import Gate, HeldOffload

    gate = Gate(tmp_path)
    lane = HeldOffload(gate, most_per_group=2)
    try:
        held = [asyncio.create_task(lane.run(os.getpid, owner=who, group="10.0.0.1")) for who in ("ann", "bo")]
        await asyncio.sleep(0)
        with pytest.raises(GroupBusy):
            await lane.run(os.getpid, owner="cy", group="10.0.0.1")
        elsewhere = asyncio.create_task(lane.run(os.getpid, owner="cy", group="10.0.0.2"))
        ungrouped = asyncio.create_task(lane.run(os.getpid, owner="di"))
        gate.open()
        pids = await asyncio.wait_for(asyncio.gather(*held, elsewhere, ungrouped), 60)
        assert all(pid != os.getpid() for pid in pids)
        assert await asyncio.wait_for(lane.run(os.getpid, owner="cy", group="10.0.0.1"), 60) != os.getpid()
    finally:
        lane.close()

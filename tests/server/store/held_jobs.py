"""A job held in its worker process until the test lets it go: what a slow board is to its
lane (a search of seconds), without any timing. Its own small module: the worker imports it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from server.store.offload import Offload

T = TypeVar("T")
HOLD_AT_MOST_S = 120.0
"""A bound, not an expectation: a test that never opens the gate still ends."""


def held(gate: str, fn: Callable[..., T], *args: Any) -> T:
    """In the worker: say it started (a line in ``gate.started``), wait until the file ``gate``
    exists, then ``fn(*args)``."""
    with open(gate + ".started", "a") as started:
        started.write("1\n")
    deadline = time.monotonic() + HOLD_AT_MOST_S
    while not Path(gate).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return fn(*args)


class Gate:
    """A file that the held jobs wait for."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "gate"

    def open(self) -> None:
        self.path.touch()

    def started(self) -> int:
        """How many held jobs have started in a worker."""
        try:
            return len((self.path.parent / "gate.started").read_text().split())
        except FileNotFoundError:
            return 0

    async def until_started(self, jobs: int = 1, within_s: float = 60.0) -> None:
        """Until ``jobs`` held jobs have started in a worker (a bound, not an expectation)."""
        deadline = time.monotonic() + within_s
        while self.started() < jobs:
            assert time.monotonic() < deadline, f"{jobs} held job(s) never started"
            await asyncio.sleep(0.01)


class HeldOffload(Offload):
    """An :class:`Offload` whose every job is :func:`held` at ``gate`` in its worker."""

    def __init__(self, gate: Gate, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gate = gate

    async def run(self, fn: Callable[..., T], *args: Any, owner: str | None = None, group: str | None = None) -> T:
        return await super().run(held, str(self.gate.path), fn, *args, owner=owner, group=group)

"""Callers that ask for the same key while a call is under way share it (a game's sockets
opening together load the room once)."""

from __future__ import annotations

import asyncio

import pytest

from server.store.single_flight import SingleFlight


def test_callers_at_the_same_moment_share_one_call_and_later_ones_start_anew() -> None:
    async def run() -> None:
        flights: SingleFlight[int] = SingleFlight()
        started: list[str] = []
        gate = asyncio.Event()

        async def load(key: str) -> int:
            started.append(key)
            await gate.wait()
            return len(started)

        together = [asyncio.ensure_future(flights.run("a", lambda: load("a"))) for _ in range(5)]
        other = asyncio.ensure_future(flights.run("b", lambda: load("b")))
        for _ in range(5):  # the callers ran, then the calls they started
            await asyncio.sleep(0)
        assert started == ["a", "b"] and flights.in_flight() == 2
        gate.set()
        assert await asyncio.gather(*together) == [2] * 5 and await other == 2
        assert flights.in_flight() == 0
        assert await flights.run("a", lambda: load("a")) == 3  # landed: the next one is a new call

    asyncio.run(run())


def test_a_caller_that_goes_does_not_cancel_the_others_call_and_a_failure_reaches_all() -> None:
    async def run() -> None:
        flights: SingleFlight[str] = SingleFlight()
        gate = asyncio.Event()

        async def load() -> str:
            await gate.wait()
            return "room"

        gone = asyncio.ensure_future(flights.run("a", load))
        stays = asyncio.ensure_future(flights.run("a", load))
        for _ in range(5):
            await asyncio.sleep(0)
        gone.cancel()
        gate.set()
        assert await stays == "room" and gone.cancelled()

        async def fail() -> str:
            await asyncio.sleep(0)
            raise LookupError("no game")

        callers = [asyncio.ensure_future(flights.run("x", fail)) for _ in range(3)]
        for caller in callers:
            with pytest.raises(LookupError):
                await caller
        assert flights.in_flight() == 0

    asyncio.run(run())

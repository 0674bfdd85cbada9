"""What a process remembers of its store outages (``server/store/outage_log.py``)."""

from __future__ import annotations

from server.core.outages import Outage
from server.store.outage_log import OutageLog


def test_an_outage_runs_from_the_first_failure_to_the_first_success() -> None:
    now = [100]
    log = OutageLog(lambda: now[0], keep=2)
    log.back()  # nothing going on: nothing to end
    assert log.outages(100) == () and not log.down
    log.lost()
    now[0] = 150
    log.lost()  # still the same outage
    assert log.down and log.outages(170) == (Outage(100, 170),)  # going on: ends "now"
    now[0] = 200
    log.back()
    assert not log.down and log.outages(999) == (Outage(100, 200),)
    for start in (300, 500):
        now[0] = start
        log.lost()
        now[0] = start + 10
        log.back()
    assert log.outages(999) == (Outage(300, 310), Outage(500, 510))  # the oldest forgotten


def test_an_outage_starts_when_its_failed_call_was_made_not_when_it_timed_out() -> None:
    """A hanging store fails a call only at its timeout: the outage runs from the call's making
    (the waiting seat's clock got back only the time after the timeout before), but never from
    before the store last answered."""
    import asyncio

    now = [1_000]
    log = OutageLog(lambda: now[0])

    async def hangs_then_times_out() -> None:
        now[0] += 5_000  # the call's timeout
        raise TimeoutError

    async def answers() -> int:
        return 1

    async def run() -> None:
        try:
            await log.reaching(hangs_then_times_out())  # made at 1,000, failed at 6,000
        except TimeoutError:
            pass
        now[0] = 11_000
        assert await log.reaching(answers()) == 1

    asyncio.run(run())
    assert log.outages(99_999) == (Outage(1_000, 11_000),)
    log.lost(made_ms=5_000)  # a call made at 5,000 fails now (11,000), after an answer at 11,000
    assert log.outages(12_000)[-1] == Outage(11_000, 12_000)

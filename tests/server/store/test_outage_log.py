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

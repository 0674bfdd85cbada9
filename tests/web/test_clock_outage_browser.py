"""A player's clock after the server lost its store for a while (issue 14): the time it ran
meanwhile is given back, and the page shows the clock as it stood when the outage began.

The server runs on a Valkey of the test's own, stopped and started again on the same port."""

from __future__ import annotations

import re
import time

import pytest

from server.embedded_redis import EmbeddedRedis

from .conftest import WAIT_MS, Person, start_duel

pytestmark = pytest.mark.browser

SEED = 3
AWAY_S = 8.0
BOUND_S = 3
"""The clock may show up to this much less than before the outage: the seconds between the
last heartbeat the test read and the outage's start as the server saw it (its first failed
store call, within its 0.1 s sweep), its end (the first success again), and the display's
whole seconds. Without the refund it shows ``AWAY_S`` less (8 s)."""


def seconds(text: str) -> int:
    m, s = re.fullmatch(r"\s*(\d+):(\d\d)\s*", text).groups()
    return int(m) * 60 + int(s)


def test_the_clock_gets_back_the_time_it_ran_while_the_store_was_away(browser, own_redis: EmbeddedRedis,
                                                                       start_server) -> None:
    server = start_server(REDIS_URL=own_redis.url)
    anna = Person.open(browser, server.url, "Anna")
    ben = Person.open(browser, server.url, "Ben")
    try:
        start_duel(anna, ben, SEED, clock="300+0")
        for person in (anna, ben):
            person.page.wait_for_selector("#status.your-turn, #status.their-turn", state="attached")
            person.page.click("label.quick-explore")
        anna.page.wait_for_selector("#status.your-turn")
        anna.page.click("#cell-0-0")
        ben.page.wait_for_selector("#status.your-turn")
        ben.page.click("#cell-10-10")
        anna.wait_move(2)  # both have moved: Anna's clock runs
        anna.page.wait_for_timeout(1500)
        before = seconds(anna.text("#clock-0"))

        own_redis.stop()
        anna.page.wait_for_selector(".hb .interrupted", state="attached")
        anna.page.wait_for_timeout(AWAY_S * 1000)
        own_redis.start()
        anna.page.wait_for_selector(".hb .interrupted", state="detached", timeout=WAIT_MS)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # the heartbeats bring the refunded clock
            after = seconds(anna.text("#clock-0"))
            if after >= before - BOUND_S:
                break
            anna.page.wait_for_timeout(200)
        assert before - BOUND_S <= after <= before, (before, after)
        assert seconds(ben.text("#clock-0")) >= before - BOUND_S  # everybody sees it
        anna.page.click("#cell-0-10")  # and play goes on
        ben.wait_move(3)
    finally:
        anna.close()
        ben.close()

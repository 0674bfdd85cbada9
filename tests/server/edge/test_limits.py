"""The per-address budgets of new games (``server.edge.limits.Guard``), in the process with an
injected clock: a duel's and a classic game's buckets apart, and a rematch's game charged only
when it is made, before it is (``Guard.charged``). The routes that use them:
tests/security/test_rematch_limits.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from starlette.requests import Request

from server.config import Settings
from server.edge.limits import Guard, Limited


def conn(ip: str) -> Request:
    return Request({"type": "http", "method": "POST", "path": "/", "headers": [], "client": (ip, 4000)})


def guard(duels: int = 2, classics: int = 5) -> Guard:
    """No refill worth the name: the clock stands still at 0."""
    settings = Settings(ip_game_rate=(float(duels), 600.0), ip_classic_rate=(float(classics), 600.0))
    return Guard(settings, now=lambda: 0.0)


DUEL, CLASSIC = SimpleNamespace(kind="duel"), SimpleNamespace(kind="classic")
"""Stand-ins for old rooms: ``Guard.charged`` reads only their kind."""


def test_classic_games_and_duels_have_their_own_buckets():
    g = guard()
    for _ in range(2):
        g.new_game(conn("10.0.0.1"))
    with pytest.raises(Limited) as refused:
        g.new_game(conn("10.0.0.1"))
    assert refused.value.what == "new games" and refused.value.retry_after_s >= 1
    for _ in range(5):  # the duels' spent bucket leaves the classic games' whole
        g.new_game(conn("10.0.0.1"), classic=True)
    with pytest.raises(Limited):
        g.new_game(conn("10.0.0.1"), classic=True)
    g.new_game(conn("10.0.0.2"), classic=True)  # another address has its own


@pytest.mark.parametrize(("old", "classic"), [(DUEL, False), (CLASSIC, True)])
def test_a_rematch_is_charged_when_its_game_is_made_from_the_old_rooms_kind(old, classic):
    g = guard(duels=1, classics=1)
    made = []
    make = g.charged(conn("10.0.1.1"), lambda room: made.append(room) or "game")
    g.new_game(conn("10.0.1.1"), classic=not classic)  # the other kind's bucket spent: no matter
    assert made == []  # handed over (an offer made with it): nothing spent yet
    assert make(old) == "game" and made == [old]
    with pytest.raises(Limited):  # this kind's one credit went to the rematch
        g.new_game(conn("10.0.1.1"), classic=classic)


@pytest.mark.parametrize("old", [DUEL, CLASSIC])
def test_a_refused_rematch_makes_no_game(old):
    g = guard(duels=1, classics=1)
    g.new_game(conn("10.0.2.1"), classic=old is CLASSIC)
    made = []
    make = g.charged(conn("10.0.2.1"), made.append)
    with pytest.raises(Limited):
        make(old)
    assert made == []  # refused before the game (and so the room) is made
    g.charged(conn("10.0.2.2"), made.append)(old)  # the budget is the address's
    assert made == [old]


def test_the_classic_bucket_is_a_setting_of_its_own():
    assert Settings().ip_classic_rate == (300.0, 300.0)
    assert Settings.from_env({}).ip_classic_rate == (300.0, 300.0)
    env = {"MINEDUEL_RATE_IP_CLASSIC": "100/50", "MINEDUEL_RATE_IP_GAMES": "off"}
    assert Settings.from_env(env).ip_classic_rate == (100.0, 50.0)
    assert Settings.from_env(env).ip_game_rate is None
    assert Settings.from_env({"MINEDUEL_RATE_IP_CLASSIC": "off"}).ip_classic_rate is None
    unlimited = Guard(Settings(ip_classic_rate=None), now=lambda: 0.0)
    for _ in range(1000):
        unlimited.new_game(conn("10.0.3.1"), classic=True)

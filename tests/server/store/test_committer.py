"""Retention (``server.store.committer.Retention``): the expiry each commit gives a room's keys."""

from __future__ import annotations

import random

from engine import Duel, Resign, Reveal
from engine.classic import Classic, ClassicSetup, numbers_of
from server.core.commands import Commit, Play
from server.core.decide import decide, open_room
from server.core.room import Player, Status
from server.store.committer import Retention


def finished_classic_room():
    game = Classic(ClassicSetup(9, 9, 10, False, "ab" * 16))
    game.mines = frozenset({(0, c) for c in range(9)} | {(1, 0)})
    game.numbers = numbers_of(game.geo, game.mines)
    me = Player("gSol", "Sol")
    room = open_room("solo-keep", game, (me,), None, 1_000).room
    for n, cell in enumerate([(1, 1), (8, 8)]):
        decision = decide(room, me, Play(Reveal(cell)), None, 2_000 + 1_000 * n)
        assert isinstance(decision, Commit)
        room = decision.room
    assert room.status is Status.OVER
    return room


def test_a_finished_classic_game_s_later_commits_leave_its_expiry_alone() -> None:
    """Its end sets the finished game's expiry; its leaderboard entry may then have kept it
    (``Store.record_solo``), and the link to its restart, a later commit, must not undo that."""
    retention = Retention(finished_ttl_s=5, idle_ttl_s=7)
    room = finished_classic_room()
    assert retention.ttl_s(room) == 5  # the commit that ends it
    assert retention.ttl_s(room.evolve(rematch="solo-next"), after_end=True) is None  # its restart's link
    duel = open_room("duel-keep", Duel.new(random.Random(1)), (Player("gA", "A"), Player("gB", "B")), None,
                     1_000).room
    assert retention.ttl_s(duel) == 7
    resigned = decide(duel, Player("gA", "A"), Play(Resign()), None, 2_000)
    assert isinstance(resigned, Commit) and resigned.room.status is Status.OVER
    assert retention.ttl_s(resigned.room, after_end=True) == 5  # a duel's rematch offer renews, as ever

"""What the lobby keeps listed (server/core/listing.py): plain rooms, plain times."""

from __future__ import annotations

import random

from engine import Classic, Duel, Resign
from engine.clock import Clock
from server.core.commands import Play
from server.core.computer import computer
from server.core.decide import LEAVE_GRACE_MS, decide, open_room
from server.core.listing import (
    GONE_GRACE_MS,
    NEVER_CAME_MS,
    creator_here,
    listable,
    somebody_at_the_board,
    worth_listing,
)
from server.core.room import Player, Status

ANNA, BEN = Player("gA", "Anna"), Player("gB", "Ben")
T0 = 1_000
T = 10_000_000


def duel(players=(ANNA, BEN), listed: bool = True):  # noqa: ANN001, ANN201
    return open_room("r1", Duel.new(random.Random(1)), players, None, T0, listed=listed).room


def test_only_listed_duels_not_over_are_listable() -> None:
    assert listable(duel()) and listable(duel((ANNA, None)))
    assert not listable(duel(listed=False))  # a private challenge
    over = decide(duel(), ANNA, Play(Resign()), None, T0 + 5)
    assert over.room.status is Status.OVER and not listable(over.room)
    assert not listable(open_room("s1", Classic.new(9, 9, 10, random.Random(3)), (ANNA,), None, T0).room)


def test_a_live_game_is_listed_while_somebody_is_at_the_board() -> None:
    """Connected, gone less than the claim's grace, or not yet come since both sat down: live.
    Both gone for longer (an untimed game left for days): not listed. A computer counts for nobody."""
    room = duel()  # seated at T0
    assert somebody_at_the_board(room, (None, None), (True, True), T)  # both connected
    assert somebody_at_the_board(room, (T - 5_000, T - LEAVE_GRACE_MS - 1), (True, True), T)  # one just left
    assert not somebody_at_the_board(room, (T - LEAVE_GRACE_MS, T - 600_000), (True, True), T)  # both gone
    assert somebody_at_the_board(room, (None, None), (False, False), T0 + NEVER_CAME_MS - 1)  # pages opening
    assert not somebody_at_the_board(room, (None, None), (False, False), T0 + NEVER_CAME_MS)
    against = duel((ANNA, computer(2)))
    assert not somebody_at_the_board(against, (T - 600_000, None), (True, False), T)  # only the computer "there"
    assert somebody_at_the_board(against, (None, None), (True, False), T)


def test_a_challenge_is_listed_while_its_creator_is_at_its_page() -> None:
    """Connected, or gone less than a reload takes; never come: for a while after making it."""
    challenge = duel((None, BEN))
    assert creator_here(challenge, (None, None), (False, True), T)
    assert creator_here(challenge, (None, T - GONE_GRACE_MS + 1), (False, True), T)  # a reload keeps it
    assert not creator_here(challenge, (None, T - GONE_GRACE_MS), (False, True), T)  # the tab closed
    assert creator_here(challenge, (None, None), (False, False), T0 + NEVER_CAME_MS - 1)  # the page opening
    assert not creator_here(challenge, (None, None), (False, False), T0 + NEVER_CAME_MS)


def test_a_correspondence_challenge_is_listed_while_it_waits_whoever_is_there() -> None:
    """Days per move: its creator comes back days later; listed until taken or cancelled."""
    posted = open_room("r2", Duel.new(random.Random(1)), (None, BEN), Clock.correspondence(3), T0).room
    assert creator_here(posted, (None, T0 + 1_000), (False, True), T)  # the page closed long ago
    assert creator_here(posted, (None, None), (False, False), T)  # never opened
    assert worth_listing(posted, (None, T0 + 1_000), (False, True), T)
    live = open_room("r3", Duel.new(random.Random(1)), (None, BEN), Clock.new(180_000, 2_000), T0).room
    assert not creator_here(live, (None, T0 + 1_000), (False, True), T)


def test_worth_listing_asks_the_rule_of_the_room_s_phase() -> None:
    """Gone 10 s: a game being played is still live (the claim's grace), a challenge is not."""
    gone = (T - 10_000, T - 10_000)
    assert worth_listing(duel(), gone, (True, True), T)
    assert not worth_listing(duel((ANNA, None)), gone, (True, False), T)

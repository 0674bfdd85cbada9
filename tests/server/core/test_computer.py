"""server.core.computer: the computer's answer is a function of its seat's view and a random
source that is the same in every process but secret until the end (plain values only)."""

from __future__ import annotations

import dataclasses
import random

from engine import Duel
from server.core.computer import answer_rng, computer, reply
from server.core.decide import open_room
from server.core.room import Player


def room_with_salt(salt: str):  # noqa: ANN201
    """The same layout, players and version; only the secret salt differs."""
    setup = dataclasses.replace(Duel.new(random.Random(5), first=1).setup, salt=salt)
    return open_room("r1", Duel(setup), (Player("gA", "Anna"), computer(1)), None, 1_000).room


def test_the_answer_is_the_same_everywhere_and_unknowable_without_the_salt() -> None:
    rooms = [room_with_salt(f"{n:064x}") for n in range(8)]
    public = {dataclasses.replace(r.view(1), commitment="") for r in rooms}
    assert len(public) == 1  # what the seat (and everybody) sees: the same, but for the salt's fingerprint
    assert reply(rooms[0]) == reply(room_with_salt(f"{0:064x}"))  # any process answers alike
    assert len({answer_rng(r).random() for r in rooms}) == len(rooms)  # the salt is in the seed
    assert len({reply(r) for r in rooms}) > 1  # so the public room id and version do not tell the answer

"""New games for new rooms, drawn from the system's random source.

The room core takes games ready-made (it never draws randomness); the edges make them here.
A ``seed`` (a deterministic layout) is a test-only hook that the edges accept only when
``settings.test_hooks`` is on.
"""

from __future__ import annotations

import random

from engine import Duel, Game

from ..core.room import Room


def duel(ruleset: str, seed: int | None = None) -> Duel:
    """A duel under ``ruleset`` (seat 0 moves first); raises ``ValueError`` for an unknown ruleset."""
    rng = random.Random(seed) if seed is not None else random.SystemRandom()
    return Duel.new(rng, ruleset, first=0)


def rematch_of(room: Room) -> Game:
    """A new game of the same kind and settings as ``room``'s."""
    return duel(room.ruleset)


def random_seat(seats: int) -> int:
    return random.SystemRandom().randrange(seats)

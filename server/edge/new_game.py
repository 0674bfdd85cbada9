"""New games for new rooms, drawn from the system's random source.

The room core takes games ready-made (it never draws randomness); the edges make them here.
A ``seed`` (a deterministic layout) is a test-only hook that the edges accept only when
``settings.test_hooks`` is on.
"""

from __future__ import annotations

import random

from engine import Classic, Duel, Game

from ..core.room import Room


def duel(ruleset: str, seed: int | None = None) -> Duel:
    """A duel under ``ruleset`` (seat 0 moves first); raises ``ValueError`` for an unknown ruleset."""
    rng = random.Random(seed) if seed is not None else random.SystemRandom()
    return Duel.new(rng, ruleset, first=0)


def classic(width: int, height: int, mines: int, no_guess: bool = False, seed: int | None = None) -> Classic:
    """A classic game (its layout is drawn at the first click from a seed drawn now); raises
    ``ValueError`` for a board RULES.md does not allow."""
    rng = random.Random(seed) if seed is not None else random.SystemRandom()
    return Classic.new(width, height, mines, rng, no_guess)


def rematch_of(room: Room) -> Game:
    """A new game of the same kind and settings as ``room``'s (a classic game's restart)."""
    if room.kind == "classic":
        s = room.game.settings
        return classic(s["width"], s["height"], s["mines"], s["no_guess"])
    return duel(room.ruleset or "brettspielnetz")


def random_seat(seats: int) -> int:
    return random.SystemRandom().randrange(seats)

"""The moves the engine benchmarks play: one rule for ``bench/reveal.py`` and ``bench/path.py``,
so that their figures for a workload are of the same games.

- ``explore``: a random hidden cell, explored;
- ``random``: a random hidden cell, marked with p = 0.4, else explored;
- ``bot``: ``engine.bots.choose_move`` for the seat to move.

The engine is imported when a move is asked for, not when this module loads:
``bench/path.py --root`` measures another checkout's engine, whichever is first on
``sys.path`` by then.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any


def next_move(duel: Any, kind: str, rng: random.Random) -> Any:
    """``kind``'s next move for the seat to move in ``duel``. It may be refused (``IllegalMove``):
    a seat's own wrong mark is hidden to the public, so it can be drawn again."""
    from engine import Explore, Mark
    from engine.bots import choose_move

    if kind == "bot":
        return choose_move(duel.view(duel.to_move), rng)
    hidden = [(r, c) for r in range(11) for c in range(11) if duel.is_hidden((r, c))]  # the 11x11 board both play
    cell = rng.choice(hidden)
    return Mark(cell) if kind == "random" and rng.random() < 0.4 else Explore(cell)


def play(duel: Any, kind: str, rng: random.Random, limit: int) -> Iterator[tuple[int, Any]]:
    """Play ``duel`` with ``kind``'s moves to its end (at most ``limit`` tries, refused ones
    included), yielding each applied move as ``(seat, move)``."""
    from engine import IllegalMove

    for _ in range(limit):
        if duel.outcome is not None:
            return
        seat = duel.to_move
        move = next_move(duel, kind, rng)
        try:
            duel.apply(seat, move)
        except IllegalMove:  # (a seat's own wrong mark: it is hidden to the public)
            continue
        yield seat, move

"""A bot that plays from a view, with public information only (plus its own wrong marks).

Certain mines first (marking is where the points are), then certain-safe cells, then the
hidden cell least likely to hold a mine. Used by the benchmarks, the load tests and the
server's bot players. Pure: the caller passes the random source used to break ties.
"""

from __future__ import annotations

from random import Random

from .deduce import analyze
from .encoding import CHAR_CLAIMS, HIDDEN, OWN_WRONG_MARK
from .geometry import Cell
from .moves import Explore, Mark
from .view import View


def public_position(view: View) -> tuple[dict[Cell, int], list[Cell]]:
    """``(numbers, visible_mines)`` as :mod:`engine.deduce` wants them, read off a view's rows."""
    numbers: dict[Cell, int] = {}
    mines: list[Cell] = []
    for r, row in enumerate(view.rows):
        for c, ch in enumerate(row):
            if ch.isdigit():
                numbers[(r, c)] = int(ch)
            elif ch in CHAR_CLAIMS:
                mines.append((r, c))
    return numbers, mines


def hidden_cells(view: View) -> list[Cell]:
    """Cells a move may target: hidden in the public view (own wrong marks included)."""
    return [
        (r, c) for r, row in enumerate(view.rows) for c, ch in enumerate(row) if ch in (HIDDEN, OWN_WRONG_MARK)
    ]


def choose_move(view: View, rng: Random) -> Explore | Mark:
    """The bot's move for the seat whose view this is (which must be that seat's turn)."""
    numbers, mines = public_position(view)
    analysis = analyze(view.width, view.height, view.total_mines, numbers, mines)
    if analysis.mines:
        return Mark(rng.choice(sorted(analysis.mines)))
    if analysis.safe:
        return Explore(rng.choice(sorted(analysis.safe)))
    probabilities = analysis.probabilities
    lowest = min(probabilities.values())
    return Explore(rng.choice(sorted(c for c, p in probabilities.items() if p == lowest)))

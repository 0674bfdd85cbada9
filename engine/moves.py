"""Moves a seat can make, as frozen values, and their plain-data form for the move log."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .geometry import Cell
from .rules import Action


@dataclass(frozen=True, slots=True)
class Explore:
    cell: Cell


@dataclass(frozen=True, slots=True)
class Mark:
    cell: Cell


@dataclass(frozen=True, slots=True)
class Resign:
    """The seat gives up; allowed at any time while the game is on, on either turn."""


@dataclass(frozen=True, slots=True)
class Timeout:
    """The seat to move ran out of time. The server's clock decides when; the engine applies it."""


Move = Explore | Mark | Resign | Timeout

CELL_MOVES: dict[str, type[Explore] | type[Mark]] = {Action.EXPLORE.value: Explore, Action.MARK.value: Mark}
"""The moves that act on one cell, by their action name (the wire's ``action`` field)."""


def move_to_data(move: Move) -> list[Any]:
    """``["explore", r, c]``, ``["mark", r, c]``, ``["resign"]`` or ``["timeout"]``."""
    match move:
        case Explore(cell):
            return [Action.EXPLORE.value, *cell]
        case Mark(cell):
            return [Action.MARK.value, *cell]
        case Resign():
            return ["resign"]
        case Timeout():
            return ["timeout"]
    raise TypeError(f"not a move: {move!r}")


def move_from_data(data: list[Any]) -> Move:
    """Inverse of :func:`move_to_data`; raises ``ValueError`` on anything else."""
    match data:
        case [("explore" | "mark") as kind, int(r), int(c)]:
            return CELL_MOVES[kind]((r, c))
        case ["resign"]:
            return Resign()
        case ["timeout"]:
            return Timeout()
    raise ValueError(f"not a move: {data!r}")

"""Moves a seat can make, as frozen values, and their plain-data form for the move log.

The duel's moves (``Explore``, ``Mark``) and the classic game's (``Reveal``, ``Flag``,
``Chord``) share one vocabulary: each game refuses the moves that are not its own
(``IllegalCode.NOT_A_MOVE``), and the wire builds any of them from its action name.
"""

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
class Reveal:
    """Classic: open a hidden cell (a left click)."""

    cell: Cell


@dataclass(frozen=True, slots=True)
class Flag:
    """Classic: put a flag on a hidden cell, or take it away (a right click)."""

    cell: Cell


@dataclass(frozen=True, slots=True)
class Chord:
    """Classic: on an open number with as many flags around it, open its other hidden neighbours."""

    cell: Cell


@dataclass(frozen=True, slots=True)
class Resign:
    """The seat gives up; allowed at any time while the game is on, on either turn."""


@dataclass(frozen=True, slots=True)
class Timeout:
    """The seat to move ran out of time. The server's clock decides when; the engine applies it."""


@dataclass(frozen=True, slots=True)
class Abort:
    """The game is called off without a result: allowed until every seat has made a move (a
    duel), by either seat on either turn. The server also aborts a game whose first moves do
    not come in time."""


@dataclass(frozen=True, slots=True)
class ClaimAbandoned:
    """The seat ends the game because its opponent left: a win, or a draw when ``draw``. The
    server decides when the opponent counts as gone; the engine applies it."""

    draw: bool = False


Move = Explore | Mark | Reveal | Flag | Chord | Resign | Timeout | Abort | ClaimAbandoned
CellMove = Explore | Mark | Reveal | Flag | Chord

CELL_MOVES: dict[str, type[CellMove]] = {
    Action.EXPLORE.value: Explore, Action.MARK.value: Mark, "reveal": Reveal, "flag": Flag, "chord": Chord,
}
"""The moves that act on one cell, by their action name (the wire's ``action`` field)."""


_ACTIONS: dict[type, str] = {kind: action for action, kind in CELL_MOVES.items()}


def move_name(move: object) -> str:
    """What a refusal calls ``move``: its action's name (``"explore"``, ``"abort"``), not a
    Python repr."""
    try:
        return str(move_to_data(move)[0])  # type: ignore[arg-type]
    except TypeError:
        return type(move).__name__


def move_to_data(move: Move) -> list[Any]:
    """``["explore", r, c]`` (any cell move by its action name), ``["resign"]``, ``["timeout"]``,
    ``["abort"]``, or ``["claim", "win"|"draw"]``."""
    action = _ACTIONS.get(type(move))
    if action is not None:
        return [action, *move.cell]  # type: ignore[union-attr]
    if isinstance(move, Resign):
        return ["resign"]
    if isinstance(move, Timeout):
        return ["timeout"]
    if isinstance(move, Abort):
        return ["abort"]
    if isinstance(move, ClaimAbandoned):
        return ["claim", "draw" if move.draw else "win"]
    raise TypeError(f"not a move: {move!r}")


def move_from_data(data: list[Any]) -> Move:
    """Inverse of :func:`move_to_data`; raises ``ValueError`` on anything else."""
    match data:
        case [str() as kind, int(r), int(c)] if kind in CELL_MOVES:
            return CELL_MOVES[kind]((r, c))
        case ["resign"]:
            return Resign()
        case ["timeout"]:
            return Timeout()
        case ["abort"]:
            return Abort()
        case ["claim", "win" | "draw" as result]:
            return ClaimAbandoned(result == "draw")
    raise ValueError(f"not a move: {data!r}")

"""What a classic game shows, and the difference between two of its views.

Classic Minesweeper has one player and no private knowledge: the player and any spectator
see the same board (flags included), so every viewer class sees one view (but for its
``viewer`` field). The layout, the seed it was drawn from and the 3BV stay secret until the
end, as the duel's layout does.

Board characters: ``.`` hidden, ``F`` a flag on a hidden cell, ``0``-``8`` an open number;
once the game is over also ``*`` a mine nobody flagged, ``X`` the mine that was opened (the
loss), ``W`` a flag on a safe cell (a wrong flag). On a win every mine shows as a flag.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from .encoding import changed_cells
from .events import CLEARED, Outcome
from .geometry import Cell

HIDDEN, FLAG, MINE, FATAL, WRONG_FLAG = ".", "F", "*", "X", "W"


@dataclass(frozen=True, slots=True)
class ClassicView:
    viewer: int
    width: int
    height: int
    total_mines: int
    no_guess: bool
    rows: tuple[str, ...]
    phase: str
    outcome: Outcome | None
    flags: int
    """Flags on the board: the counter shows ``total_mines - flags``."""
    clicks: tuple[int, int, int]
    """Moves made: reveals (left clicks), flag toggles (right clicks), chords."""
    last_opened: tuple[Cell, ...]
    commitment: str
    seed: str | None = None
    """Published at the end: the layout is ``engine.classic.generate`` from it."""
    mines: tuple[Cell, ...] | None = None
    """The layout, published at the end."""
    three_bv: int | None = None
    """The layout's 3BV, published at the end (during the game it would hint at the layout)."""

    @property
    def mines_left(self) -> int:
        """What the counter shows: mines minus flags (it may go below zero); 0 once the board is
        cleared, when every mine shows as a flag whether flagged or not (as every Minesweeper)."""
        if self.outcome is not None and self.outcome.termination == CLEARED:
            return 0
        return self.total_mines - self.flags

    def char(self, cell: Cell) -> str:
        return self.rows[cell[0]][cell[1]]

    def to_data(self) -> dict[str, Any]:
        """Plain data with exact round-trip through :meth:`from_data`."""
        return {f.name: _encode(f.name, getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "ClassicView":
        return cls(
            viewer=data["viewer"], width=data["width"], height=data["height"], total_mines=data["total_mines"],
            no_guess=data["no_guess"], rows=tuple(data["rows"]), phase=data["phase"],
            outcome=Outcome.from_data(data["outcome"]) if data["outcome"] is not None else None,
            flags=data["flags"], clicks=tuple(data["clicks"]),  # type: ignore[arg-type]
            last_opened=tuple((r, c) for r, c in data["last_opened"]), commitment=data["commitment"],
            seed=data["seed"], mines=tuple((r, c) for r, c in data["mines"]) if data["mines"] is not None else None,
            three_bv=data["three_bv"],
        )


def _encode(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name == "outcome":
        return value.to_data()
    if name in ("last_opened", "mines"):
        return [list(c) for c in value]
    if name in ("rows", "clicks"):
        return list(value)
    return value


@dataclass(frozen=True, slots=True)
class ClassicDiff:
    """What changed between two views: ``cells`` to redraw (``(r, c, char)``: changed
    characters and changed highlights) and the other fields that changed."""

    cells: tuple[tuple[int, int, str], ...]
    changed: dict[str, Any] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.cells or self.changed)

    def to_data(self) -> dict[str, Any]:
        return {"cells": [list(c) for c in self.cells],
                "changed": {name: _encode(name, value) for name, value in self.changed.items()}}


_DIFFED = ("phase", "outcome", "flags", "clicks", "last_opened", "seed", "mines", "three_bv")


def diff(old: ClassicView, new: ClassicView) -> ClassicDiff:
    """The :class:`ClassicDiff` that turns ``old`` into ``new`` (one viewer, one game)."""
    if old.commitment != new.commitment:
        raise ValueError("views of different games")
    cells = changed_cells(old.rows, new.rows, new.width, old.last_opened, new.last_opened)
    changed = {name: getattr(new, name) for name in _DIFFED if getattr(new, name) != getattr(old, name)}
    return ClassicDiff(cells, changed)


def patch_data(old: ClassicView, change: dict[str, Any]) -> ClassicView:
    """Apply a diff in plain-data form (as it comes off the wire) to the view it was made from."""
    rows = [list(row) for row in old.rows]
    for r, c, ch in change["cells"]:
        rows[r][c] = ch
    changed = ClassicView.from_data({**old.to_data(), **change["changed"]})
    return replace(old, rows=tuple("".join(row) for row in rows),
                   **{name: getattr(changed, name) for name in change["changed"]})

"""Board geometry: cells, names and precomputed neighbours.

A cell is an ``(r, c)`` tuple, row ``r`` top to bottom and column ``c`` left to right. In move
lists a cell is named column letter + row number from 1 (``f6`` is ``(5, 5)``), as RULES.md says.
Neighbour tables are computed once per board size, since every rule and the deduction ask
for them on every move.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from string import ascii_lowercase

Cell = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Geometry:
    """A ``width`` x ``height`` board; use :func:`geometry` to get a shared, cached instance."""

    width: int
    height: int
    cells: tuple[Cell, ...] = field(init=False, repr=False, compare=False)
    _neighbours: dict[Cell, tuple[Cell, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (1 <= self.width <= 60 and 1 <= self.height <= 60):
            raise ValueError(f"board size {self.width}x{self.height} out of range 1..60")
        cells = tuple((r, c) for r in range(self.height) for c in range(self.width))
        neighbours = {
            (r, c): tuple(
                (r + dr, c + dc)
                for dr in (-1, 0, 1)
                for dc in (-1, 0, 1)
                if (dr or dc) and 0 <= r + dr < self.height and 0 <= c + dc < self.width
            )
            for r, c in cells
        }
        object.__setattr__(self, "cells", cells)
        object.__setattr__(self, "_neighbours", neighbours)

    @property
    def size(self) -> int:
        return self.width * self.height

    def contains(self, cell: object) -> bool:
        """True for an ``(r, c)`` tuple of ints on this board (anything else is False, never an error)."""
        return (
            isinstance(cell, tuple)
            and len(cell) == 2
            and all(type(x) is int for x in cell)
            and 0 <= cell[0] < self.height
            and 0 <= cell[1] < self.width
        )

    def neighbours(self, cell: Cell) -> tuple[Cell, ...]:
        """The up to 8 cells around ``cell``."""
        return self._neighbours[cell]

    def block(self, cell: Cell) -> tuple[Cell, ...]:
        """``cell`` and its neighbours: the 3x3 block that opening rules keep free of mines."""
        return (cell, *self._neighbours[cell])

    @property
    def centre(self) -> Cell:
        return self.own((self.height // 2, self.width // 2))

    def own(self, cell: Cell) -> Cell:
        """This board's own tuple for ``cell`` (a cell of the board), equal to it.

        Why: a dict is tracked by the cyclic GC from the moment a tracked key goes in, and only
        a full collection untracks it again; a tuple made a moment ago is tracked, this board's
        are not (the collector untracks tuples of ints once it has seen them). A duel's
        ``numbers`` keyed by these tuples stays out of the GC's young passes, copies included
        (``bench/path.py --young``)."""
        return self.cells[cell[0] * self.width + cell[1]]


@lru_cache(maxsize=64)
def geometry(width: int, height: int) -> Geometry:
    """The shared :class:`Geometry` for a board size."""
    return Geometry(width, height)


def cell_name(cell: Cell) -> str:
    """Name a cell as in move lists.

    >>> cell_name((5, 5))
    'f6'
    >>> cell_name((0, 27))
    'ab1'
    """
    r, c = cell
    letters = ""
    c += 1
    while c:
        c, rem = divmod(c - 1, 26)
        letters = ascii_lowercase[rem] + letters
    return f"{letters}{r + 1}"


def parse_cell_name(name: str) -> Cell:
    """Inverse of :func:`cell_name`; raises ``ValueError`` on anything else.

    >>> parse_cell_name("f6")
    (5, 5)
    """
    letters = name.rstrip("0123456789")
    digits = name[len(letters):]
    if not letters or not digits or not letters.isalpha() or not letters.islower() or digits[0] == "0":
        raise ValueError(f"not a cell name: {name!r}")
    c = 0
    for ch in letters:
        c = c * 26 + (ord(ch) - ord("a") + 1)
    return (int(digits) - 1, c - 1)

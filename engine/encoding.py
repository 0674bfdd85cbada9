"""The one-character-per-cell board encoding shared by snapshots, views and the wire.

``.`` hidden, ``0``-``8`` a revealed number, ``A``/``B`` a mine marked by seat 0/1,
``a``/``b`` a mine hit by seat 0/1, ``x`` the viewer's own wrong mark on a hidden cell,
``*`` a mine nobody claimed (shown only once the game is over).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .geometry import Cell
from .rules import Claim

HIDDEN = "."
OWN_WRONG_MARK = "x"
UNCLAIMED_MINE = "*"

CLAIM_CHARS: tuple[dict[Claim, str], dict[Claim, str]] = (
    {Claim.MARKED: "A", Claim.HIT: "a"},
    {Claim.MARKED: "B", Claim.HIT: "b"},
)
CHAR_CLAIMS: dict[str, tuple[int, Claim]] = {
    ch: (seat, claim) for seat, table in enumerate(CLAIM_CHARS) for claim, ch in table.items()
}


def changed_cells(old_rows: Sequence[str], new_rows: Sequence[str], width: int,
                  old_opened: Iterable[Cell], new_opened: Iterable[Cell]) -> tuple[tuple[int, int, str], ...]:
    """``(r, c, char)`` of every cell whose character changed between two encodings of one
    board, and of every cell whose "just opened" highlight changed (``*_opened``): what a view's
    diff redraws. Rows that are equal and hold no such cell are skipped whole (a string
    comparison), so an unchanged board costs one comparison per row."""
    touched = set(old_opened) ^ set(new_opened)
    touched_rows = {r for r, _c in touched}
    return tuple(
        (r, c, new_row[c])
        for r, (old_row, new_row) in enumerate(zip(old_rows, new_rows))
        if old_row != new_row or r in touched_rows
        for c in range(width)
        if new_row[c] != old_row[c] or (r, c) in touched
    )


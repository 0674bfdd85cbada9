"""The fairness commitment of RULES.md: publish a hash at the start, the layout and salt at the end.

Anyone can recompute the hash from the published layout and salt and so check that the mines
never moved. The canonical form is fixed by RULES.md; changing it breaks every stored record.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from .geometry import Cell

PREFIX = "mineduel-v1"
SALT_BYTES = 32


def canonical(width: int, height: int, mines: Iterable[Cell], salt_hex: str) -> str:
    """The exact string that is hashed: ``mineduel-v1:WxH:r,c;r,c;...:salt_hex`` (mines sorted).

    >>> canonical(3, 2, [(1, 2), (0, 1)], "ab")
    'mineduel-v1:3x2:0,1;1,2:ab'
    """
    cells = ";".join(f"{r},{c}" for r, c in sorted(mines))
    return f"{PREFIX}:{width}x{height}:{cells}:{salt_hex}"


def commitment(width: int, height: int, mines: Iterable[Cell], salt_hex: str) -> str:
    """The sha256 hex digest published at the start of a game."""
    return hashlib.sha256(canonical(width, height, mines, salt_hex).encode()).hexdigest()


def verify(commitment_hex: str, width: int, height: int, mines: Iterable[Cell], salt_hex: str) -> bool:
    """True iff the revealed layout and salt hash to the published commitment."""
    return commitment(width, height, mines, salt_hex) == commitment_hex

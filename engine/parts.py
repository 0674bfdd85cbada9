"""A snapshot split by how its parts change from version to version.

Writers that store every version of a game (the room server's stored form) pack ``fixed``
once per game and ``appended`` once per item: see ``Game.snapshot_parts``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class SnapshotParts:
    fixed: dict[str, Any]
    """The same dict object for every version of one game (never mutated)."""
    changing: dict[str, Any]
    appended: dict[str, tuple[Any, ...]]
    """Append-only lists: each version's tuple extends the previous version's with the same
    item objects."""

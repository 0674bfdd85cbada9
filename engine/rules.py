"""Rulesets and the vocabulary of a duel move: every number that scores lives here.

RULES.md names two rulesets. ``brettspielnetz`` (the default) scores exploring and pays a
table value for the k-th visible mine; ``coan`` (the original YourTurnMyTurn text) scores
only marks. Keeping each ruleset a frozen value means the state machine has no branches on
ruleset names, only lookups.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

DUEL_WIDTH = 11
DUEL_HEIGHT = 11
DUEL_MINES = 15

#: Points for marking the k-th visible mine (k = 1..15), ``brettspielnetz`` ruleset.
#: The published rules give +5, +3, +3, +4, +4, .., +6, +6, +6, +6; values 6-11 are our reading.
MARK_TABLE_BRETTSPIELNETZ: tuple[int, ...] = (5, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6)
#: ``coan``: every correct mark is worth +5.
MARK_TABLE_COAN: tuple[int, ...] = (5,) * DUEL_MINES


class Action(StrEnum):
    """What a player does to a hidden cell (a click once = explore, twice = mark)."""

    EXPLORE = "explore"
    MARK = "mark"


class Verdict(StrEnum):
    """The word the move list shows for a move's outcome."""

    GUT = "Gut!"
    """A safe cell explored, or a mine correctly marked."""
    AUTSCH = "Autsch!"
    """A mine explored: it becomes visible as hit by the player."""
    BLUBB = "Blubb!"
    """A safe cell marked: a wrong mark, secret to everyone but its author."""


class Claim(StrEnum):
    """How a mine became visible."""

    MARKED = "marked"
    HIT = "hit"


@dataclass(frozen=True, slots=True)
class Ruleset:
    name: str
    explore_scores: bool
    """Exploring a safe cell scores one point per neighbouring mine not yet visible."""
    hit_points: int
    wrong_mark_points: int
    mark_table: tuple[int, ...]
    """Points for the k-th visible mine, k = 1..len(mark_table)."""

    def mark_points(self, k: int) -> int:
        """Points for a correct mark that makes ``k`` mines visible (hit or marked alike)."""
        return self.mark_table[k - 1]

    def explore_points(self, number: int, visible_neighbour_mines: int) -> int:
        """Points for exploring a safe cell showing ``number``."""
        return number - visible_neighbour_mines if self.explore_scores else 0


BRETTSPIELNETZ = Ruleset("brettspielnetz", True, -5, -3, MARK_TABLE_BRETTSPIELNETZ)
COAN = Ruleset("coan", False, -5, -2, MARK_TABLE_COAN)
RULESETS: dict[str, Ruleset] = {r.name: r for r in (BRETTSPIELNETZ, COAN)}
DEFAULT_RULESET = BRETTSPIELNETZ.name

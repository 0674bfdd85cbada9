"""Small domain helpers for duel tests: fixed layouts, named cells, event lookups."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine import Duel, Event, Setup, parse_cell_name
from engine.geometry import Cell

SALT = "ab" * 32

#: A fixed layout used across tests, written in move-list names. Chosen so that ``a1`` is a
#: mine with ``b2`` showing 2 (a1, a2 mines), and ``k11`` is an isolated mine in a corner.
LAYOUT_NAMES = ("a1", "a2", "c1", "k11", "k1", "a11", "e1", "g1", "i1", "a5", "a7", "k5", "k7", "e11", "g11")


def cells(*names: str) -> list[Cell]:
    return [parse_cell_name(n) for n in names]


def cell(name: str) -> Cell:
    return parse_cell_name(name)


def make_duel(
    mines: Iterable[str] = LAYOUT_NAMES, *, first: int = 0, ruleset: str = "brettspielnetz"
) -> Duel:
    return Duel(Setup(ruleset, 11, 11, frozenset(cells(*mines)), SALT, first))


def of_type(events: Sequence[Event], kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]


def one(events: Sequence[Event], kind: type):
    found = of_type(events, kind)
    assert len(found) == 1, f"expected one {kind.__name__} in {events}"
    return found[0]

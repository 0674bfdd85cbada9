"""What a move did, as frozen events, each addressed to everybody or to one seat.

The shell never has to work out what is secret: an event with ``audience=None`` may go to
anyone; an event with ``audience=s`` goes to seat ``s`` only. A wrong mark is the only thing
that produces a private event (:class:`WrongMarkPlaced`); its public twin is a
:class:`MovePlayed` whose ``cell`` is ``None``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any

from .geometry import Cell
from .rules import Action, Claim, Verdict

PUBLIC = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the game ended. ``winner`` is a seat, or ``None`` for a draw."""

    termination: str
    """One of :data:`TERMINATIONS`."""
    winner: int | None

    def to_data(self) -> list[Any]:
        return [self.termination, self.winner]

    @classmethod
    def from_data(cls, data: list[Any]) -> "Outcome":
        termination, winner = data
        if termination not in TERMINATIONS or winner not in (0, 1, None):
            raise ValueError(f"not an outcome: {data!r}")
        return cls(termination, winner)


ALL_MINES = "all_mines"
"""All mines are visible; more points wins, equal points draws."""
RESIGNATION = "resignation"
"""A seat resigned and lost."""
TIMEOUT = "timeout"
"""A seat's clock ran out and it lost."""
TERMINATIONS = (ALL_MINES, RESIGNATION, TIMEOUT)


@dataclass(frozen=True, slots=True)
class MovePlayed:
    """One move-list line. ``cell`` is ``None`` in the public event of a wrong mark."""

    number: int
    seat: int
    action: Action
    cell: Cell | None
    verdict: Verdict
    points: int
    auto_revealed: int
    audience: int | None = PUBLIC


@dataclass(frozen=True, slots=True)
class WrongMarkPlaced:
    """The author's private knowledge of where its wrong mark lies."""

    seat: int
    cell: Cell
    audience: int | None = PUBLIC  # always set to ``seat`` by the engine


@dataclass(frozen=True, slots=True)
class CellsRevealed:
    """Safe cells newly shown with their numbers: by the move itself or by deduction."""

    cells: tuple[tuple[int, int, int], ...]
    """``(r, c, number)`` triples."""
    cause: str
    """``"move"`` or ``"deduction"``."""
    audience: int | None = PUBLIC


@dataclass(frozen=True, slots=True)
class MineShown:
    cell: Cell
    seat: int
    claim: Claim
    audience: int | None = PUBLIC


@dataclass(frozen=True, slots=True)
class TurnChanged:
    to_move: int
    audience: int | None = PUBLIC


@dataclass(frozen=True, slots=True)
class GameEnded:
    """The end: outcome, final scores, and every secret (layout, salt, both seats' wrong marks)."""

    outcome: Outcome
    scores: tuple[int, int]
    mines: tuple[Cell, ...]
    salt: str
    wrong_marks: tuple[tuple[Cell, ...], tuple[Cell, ...]]
    audience: int | None = PUBLIC


Event = MovePlayed | WrongMarkPlaced | CellsRevealed | MineShown | TurnChanged | GameEnded


def visible_to(event: Event, viewer: int) -> bool:
    """Whether ``viewer`` (0, 1, or 2 for spectators) may receive ``event``."""
    return event.audience is None or event.audience == viewer


def event_to_data(event: Event) -> dict[str, Any]:
    """Plain data for the wire: ``{"t": "move_played", ...}`` with cells as ``[r, c]`` lists."""
    data = asdict(event)
    data.pop("audience")
    if isinstance(event, GameEnded):
        data["outcome"] = event.outcome.to_data()
    return {"t": _EVENT_TAGS[type(event)], **_lists(data)}


_EVENT_TAGS: dict[type, str] = {
    MovePlayed: "move_played",
    WrongMarkPlaced: "wrong_mark_placed",
    CellsRevealed: "cells_revealed",
    MineShown: "mine_shown",
    TurnChanged: "turn_changed",
    GameEnded: "game_ended",
}


def _lists(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, Enum):
        return value.value
    return value

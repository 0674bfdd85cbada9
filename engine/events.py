"""What a move did, as frozen events, each addressed to everybody or to one seat.

The shell never has to work out what is secret: an event with ``audience=None`` may go to
anyone; an event with ``audience=s`` goes to seat ``s`` only. A wrong mark is the only thing
that produces a private event (:class:`WrongMarkPlaced`); its public twin is a
:class:`MovePlayed` whose ``cell`` is ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
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
CLEARED = "cleared"
"""Classic: every safe cell is open; the player wins (``winner`` 0)."""
EXPLODED = "exploded"
"""Classic: a mine was opened; the game is lost (``winner`` None)."""
ABORTED = "aborted"
"""Called off before every seat had moved: no result (``winner`` None), never rated."""
ABANDONED = "abandoned"
"""A seat's opponent left and it claimed the game: its win, or a draw (``winner`` None)."""
TERMINATIONS = (ALL_MINES, RESIGNATION, TIMEOUT, CLEARED, EXPLODED, ABORTED, ABANDONED)


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


@dataclass(frozen=True, slots=True)
class FlagToggled:
    """Classic: a flag put on (``flagged``) or taken off a hidden cell."""

    cell: Cell
    flagged: bool
    audience: int | None = PUBLIC


@dataclass(frozen=True, slots=True)
class ClassicEnded:
    """Classic: the end, and what it publishes: the layout, the fatal mine (a loss), the flags
    that were wrong, and the seed the layout was drawn from (to check the commitment)."""

    outcome: Outcome
    fatal: Cell | None
    mines: tuple[Cell, ...]
    wrong_flags: tuple[Cell, ...]
    seed: str
    audience: int | None = PUBLIC


Event = MovePlayed | WrongMarkPlaced | CellsRevealed | MineShown | TurnChanged | GameEnded | FlagToggled | ClassicEnded


def visible_to(event: Event, viewer: int) -> bool:
    """Whether ``viewer`` (0, 1, or 2 for spectators) may receive ``event``."""
    return event.audience is None or event.audience == viewer


def event_to_data(event: Event) -> dict[str, Any]:
    """Plain data for the wire: ``{"t": "move_played", ...}`` with cells as ``[r, c]`` lists.

    The audience is not part of it (the shell sends each event only to whom it is addressed;
    :func:`event_from_data` takes it back as an argument). One small encoder per event type
    (:data:`_ENCODERS`, beside the decoders) rather than a generic walk: it runs for every
    event of every move.
    """
    return _ENCODERS[type(event)](event)


def event_from_data(data: dict[str, Any], audience: int | None = PUBLIC) -> Event:
    """Inverse of :func:`event_to_data` (``audience`` as the event had it); raises
    ``ValueError`` on anything else."""
    try:
        decode = _DECODERS[data["t"]]
        return decode(data, audience)
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError(f"not an event: {data!r}") from exc


def _cell(value: Any) -> Cell:
    return (value[0], value[1])


def _cells(values: Any) -> tuple[Cell, ...]:
    return tuple((r, c) for r, c in values)


_DECODERS: dict[str, Any] = {
    "move_played": lambda d, a: MovePlayed(d["number"], d["seat"], Action(d["action"]),
                                           None if d["cell"] is None else _cell(d["cell"]),
                                           Verdict(d["verdict"]), d["points"], d["auto_revealed"], a),
    "wrong_mark_placed": lambda d, a: WrongMarkPlaced(d["seat"], _cell(d["cell"]), a),
    "cells_revealed": lambda d, a: CellsRevealed(tuple((r, c, n) for r, c, n in d["cells"]), d["cause"], a),
    "mine_shown": lambda d, a: MineShown(_cell(d["cell"]), d["seat"], Claim(d["claim"]), a),
    "turn_changed": lambda d, a: TurnChanged(d["to_move"], a),
    "flag_toggled": lambda d, a: FlagToggled(_cell(d["cell"]), bool(d["flagged"]), a),
    "classic_ended": lambda d, a: ClassicEnded(Outcome.from_data(d["outcome"]),
                                               None if d["fatal"] is None else _cell(d["fatal"]),
                                               _cells(d["mines"]), _cells(d["wrong_flags"]), d["seed"], a),
    "game_ended": lambda d, a: GameEnded(Outcome.from_data(d["outcome"]), (d["scores"][0], d["scores"][1]),
                                         _cells(d["mines"]), d["salt"],
                                         (_cells(d["wrong_marks"][0]), _cells(d["wrong_marks"][1])), a),
}

_ENCODERS: dict[type, Any] = {
    MovePlayed: lambda e: {"t": "move_played", "number": e.number, "seat": e.seat, "action": e.action.value,
                           "cell": None if e.cell is None else [e.cell[0], e.cell[1]],
                           "verdict": e.verdict.value, "points": e.points, "auto_revealed": e.auto_revealed},
    WrongMarkPlaced: lambda e: {"t": "wrong_mark_placed", "seat": e.seat, "cell": [e.cell[0], e.cell[1]]},
    CellsRevealed: lambda e: {"t": "cells_revealed", "cells": [[r, c, n] for r, c, n in e.cells], "cause": e.cause},
    MineShown: lambda e: {"t": "mine_shown", "cell": [e.cell[0], e.cell[1]], "seat": e.seat, "claim": e.claim.value},
    TurnChanged: lambda e: {"t": "turn_changed", "to_move": e.to_move},
    FlagToggled: lambda e: {"t": "flag_toggled", "cell": [e.cell[0], e.cell[1]], "flagged": e.flagged},
    ClassicEnded: lambda e: {"t": "classic_ended", "outcome": e.outcome.to_data(),
                             "fatal": None if e.fatal is None else [e.fatal[0], e.fatal[1]],
                             "mines": [[r, c] for r, c in e.mines], "wrong_flags": [[r, c] for r, c in e.wrong_flags],
                             "seed": e.seed},
    GameEnded: lambda e: {"t": "game_ended", "outcome": e.outcome.to_data(), "scores": [e.scores[0], e.scores[1]],
                          "mines": [[r, c] for r, c in e.mines], "salt": e.salt,
                          "wrong_marks": [[[r, c] for r, c in marks] for marks in e.wrong_marks]},
}

"""The one error the engine raises for a move it refuses."""

from __future__ import annotations

from enum import StrEnum


class IllegalCode(StrEnum):
    """Machine-readable reason a move was refused. The shell maps these to wire errors."""

    GAME_OVER = "game_over"
    NOT_YOUR_TURN = "not_your_turn"
    NOT_A_SEAT = "not_a_seat"
    OUT_OF_RANGE = "out_of_range"
    CELL_NOT_HIDDEN = "cell_not_hidden"
    NOT_A_MOVE = "not_a_move"
    CELL_FLAGGED = "cell_flagged"
    """Classic: a flagged cell is not opened (take the flag away first)."""
    CHORD_NOT_SATISFIED = "chord_not_satisfied"
    """Classic: a chord needs an open number with exactly that many flags around it."""
    TOO_LATE_TO_ABORT = "too_late_to_abort"
    """Every seat has moved: resign instead."""


class IllegalMove(Exception):
    """A well-formed move that breaks a rule. The game is left exactly as it was.

    ``code`` is an :class:`IllegalCode`; the message names the seat and the cell.
    """

    def __init__(self, code: IllegalCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"IllegalMove({self.code.value!r}, {self.message!r})"

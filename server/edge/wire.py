"""Client frames → typed messages → engine moves, exactly once, at the edge. Never raises.

Two encodings arrive, with one rule each for what a number and a cell may be:

- **msgpack** maps on the programmatic websocket (:func:`parse_msgpack`, documented in
  docs/PROTOCOL.md): typed values. A version is an integer (never a string, a float or a
  boolean); a cell is ``[r, c]`` of integers and nothing else.
- **htmx JSON** on the browser websocket (:func:`parse_browser`): the fields of the game form,
  which are always strings: ``v`` decimal digits, ``cell`` ``"r-c"``, ``mode``, ``a`` for
  the buttons that are not cells, and ``goto`` (a cell name typed in the "go to cell" field). A cell click is not a move until it is confirmed (the
  selection cycle lives on the server), so the browser's vocabulary is clicks and commands.

Both build engine moves with :func:`cell_move` (one table from action names to moves). Bad
input becomes a :class:`BadMessage` with a machine-readable ``code``; raw dicts never travel
further than this module.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import msgpack

from engine import Move, parse_cell_name
from engine.moves import CELL_MOVES

MAX_COORD = 1000
"""Coordinates beyond this are refused here (the engine refuses cells off its board)."""
MAX_VERSION = 2**53 - 1
"""Versions are below this (they count commits), also in JSON, which has no larger exact integer."""
MAX_DIGITS = 15


@dataclass(frozen=True, slots=True)
class BadMessage:
    code: str
    """``malformed`` (not decodable), ``not_a_map``, ``unknown_type``, ``bad_field``."""
    message: str


# ---------------------------------------------------------------------- the shared rules


def version_value(value: Any) -> int | None:
    """A version from a typed field: an int in ``0..MAX_VERSION`` (``bool`` is not an int here)."""
    return value if type(value) is int and 0 <= value <= MAX_VERSION else None


def coordinate_value(value: Any) -> int | None:
    """A coordinate from a typed field: an int within ``±MAX_COORD``."""
    return value if type(value) is int and -MAX_COORD <= value <= MAX_COORD else None


def digits_value(text: Any, top: int) -> int | None:
    """A number from a form field: ASCII decimal digits only, at most ``top``."""
    if not isinstance(text, str) or not 0 < len(text) <= MAX_DIGITS or not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    return value if value <= top else None


def cell_move(action: Any, cell: tuple[int, int]) -> Move | None:
    """The engine move ``action`` names on ``cell`` (``None`` for an unknown action)."""
    make = CELL_MOVES.get(action) if isinstance(action, str) else None
    return make(cell) if make is not None else None


# ---------------------------------------------------------------------- the programmatic websocket


@dataclass(frozen=True, slots=True)
class MoveMessage:
    v: int
    move: Move


@dataclass(frozen=True, slots=True)
class ResignMessage:
    v: int | None = None
    """Checked like a move's version when present (a stale resignation is refused)."""


@dataclass(frozen=True, slots=True)
class AbortMessage:
    v: int | None = None
    """Checked like a move's version when present."""


@dataclass(frozen=True, slots=True)
class ClaimMessage:
    draw: bool
    """The opponent left: claim a draw (``True``) or the win."""


@dataclass(frozen=True, slots=True)
class RematchMessage:
    """After the end: offer a rematch, or accept the opponent's offer (``rematch``), or decline
    it or withdraw one's own (``decline_rematch``): the socket's form of the two HTTP calls."""

    decline: bool


ClientMessage = MoveMessage | ResignMessage | AbortMessage | ClaimMessage | RematchMessage
TYPES = ("move", "resign", "abort", "claim", "rematch", "decline_rematch")


def parse_msgpack(frame: bytes | str) -> ClientMessage | BadMessage:
    if isinstance(frame, str):
        return BadMessage("malformed", "the programmatic websocket takes binary msgpack frames")
    try:
        data = msgpack.unpackb(frame, raw=False, strict_map_key=False)
    except Exception as exc:  # msgpack raises several unrelated types on garbage
        return BadMessage("malformed", f"not msgpack: {type(exc).__name__}")
    return parse_data(data)


def parse_data(data: Any) -> ClientMessage | BadMessage:
    """A decoded msgpack frame (any value) → a message."""
    if not isinstance(data, dict):
        return BadMessage("not_a_map", "a frame must be a map with a \"t\" key")
    kind = data.get("t")
    if kind == "move":
        v = version_value(data.get("v"))
        if v is None:
            return BadMessage("bad_field", "a move needs \"v\", the version you saw (an integer)")
        cell = _typed_cell(data.get("cell"))
        if cell is None:
            return BadMessage("bad_field", "\"cell\" must be [row, column], two integers")
        move = cell_move(data.get("action"), cell)
        if move is None:
            return BadMessage("bad_field", f"\"action\" must be one of {sorted(CELL_MOVES)}")
        return MoveMessage(v, move)
    if kind in ("resign", "abort"):
        if "v" not in data or data["v"] is None:
            v = None
        else:
            v = version_value(data["v"])
            if v is None:
                return BadMessage("bad_field", "\"v\" must be the version you saw (an integer), or left out")
        return ResignMessage(v) if kind == "resign" else AbortMessage(v)
    if kind == "claim":
        result = data.get("result")
        if result not in ("win", "draw"):
            return BadMessage("bad_field", "\"result\" must be \"win\" or \"draw\"")
        return ClaimMessage(result == "draw")
    if kind in ("rematch", "decline_rematch"):
        return RematchMessage(kind == "decline_rematch")
    return BadMessage("unknown_type", f"unknown message type {kind!r}; expected one of {list(TYPES)}")


def _typed_cell(value: Any) -> tuple[int, int] | None:
    if type(value) is not list or len(value) != 2:
        return None
    r, c = coordinate_value(value[0]), coordinate_value(value[1])
    return None if r is None or c is None else (r, c)


# ---------------------------------------------------------------------- the browser websocket

MODES = ("select", "explore", "mark", "reveal", "flag")
COMMANDS = ("confirm", "clear", "resign", "resign-yes", "resign-no", "abort", "claim-win", "claim-draw")


@dataclass(frozen=True, slots=True)
class CellClick:
    cell: tuple[int, int]
    mode: str
    """The duel: ``select`` (the selection cycle) or ``explore``/``mark`` (quick mode: move at
    once); the classic game: ``reveal`` or ``flag``."""
    v: int | None


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    """One of :data:`COMMANDS`."""
    v: int | None


@dataclass(frozen=True, slots=True)
class GoTo:
    """The "go to cell" field: focus that cell (the keyboard's way across the board)."""

    cell: tuple[int, int] | None
    """``None``: the text names no cell (the field's words are the player's: ``K11``, `` f6 ``)."""
    text: str


BrowserMessage = CellClick | Command | GoTo
MAX_NAME = 8


def parse_browser(frame: str | bytes) -> BrowserMessage | BadMessage:
    """One frame of the page (the form's fields as JSON, plus htmx's ``HEADERS``) → a message."""
    try:
        data = json.loads(frame)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return BadMessage("malformed", "not JSON")
    if not isinstance(data, dict):
        return BadMessage("not_a_map", "expected a JSON object")
    v = digits_value(data.get("v"), MAX_VERSION)
    if v is None and data.get("v") is not None:  # the page's own field is digits; anything else is not it
        return BadMessage("bad_field", "v must be the version the page shows (decimal digits)")
    if "cell" in data:
        cell = _form_cell(data["cell"])
        if cell is None:
            return BadMessage("bad_field", "cell must be \"row-column\"")
        mode = data.get("mode", "select")
        if mode not in MODES:
            return BadMessage("bad_field", f"mode must be one of {', '.join(MODES)}")
        return CellClick(cell, mode, v)
    if "goto" in data:
        text = data["goto"]
        if not isinstance(text, str) or len(text) > MAX_NAME:
            return BadMessage("bad_field", "goto must be a cell name such as \"f6\"")
        return GoTo(_named_cell(text), text)
    action = data.get("a")
    if action in COMMANDS:
        return Command(action, v)
    return BadMessage("unknown_type", "expected a cell or a command")


def _form_cell(value: Any) -> tuple[int, int] | None:
    if not isinstance(value, str) or len(value) > 2 * MAX_DIGITS + 1:
        return None
    parts = value.split("-")
    if len(parts) != 2:
        return None
    r, c = digits_value(parts[0], MAX_COORD), digits_value(parts[1], MAX_COORD)
    return None if r is None or c is None else (r, c)


def _named_cell(text: str) -> tuple[int, int] | None:
    """A cell name as players type it (any case, spaces around); ``None`` for anything else."""
    if not text.isascii():
        return None
    try:
        return parse_cell_name(text.strip().lower())
    except ValueError:
        return None

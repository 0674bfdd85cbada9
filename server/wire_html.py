"""What the browser sends on its websocket, parsed once into typed values. Never raises.

The htmx ws extension sends the fields of the game form as a JSON object plus ``HEADERS``:
``v`` (the room version the page shows), ``mode`` (the quick-mode radio: ``select``,
``explore`` or ``mark``) and the pressed button's name/value: ``cell=r-c`` for a board cell,
or ``a=<command>`` for the other buttons. Everything else is ignored.

This vocabulary differs from :mod:`server.wire` (whole moves) because the browser's
selection cycle lives on the server: a cell click is not a move until it is confirmed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MODES = ("select", "explore", "mark")
COMMANDS = ("confirm", "clear", "resign", "resign-yes", "resign-no")
MAX_COORD = 99


@dataclass(frozen=True, slots=True)
class CellClick:
    cell: tuple[int, int]
    mode: str
    """``select`` (the selection cycle) or ``explore``/``mark`` (quick mode: move at once)."""
    v: int | None


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    """One of :data:`COMMANDS`."""
    v: int | None


@dataclass(frozen=True, slots=True)
class BadFrame:
    code: str
    message: str


BrowserMessage = CellClick | Command


def parse(frame: str | bytes) -> BrowserMessage | BadFrame:
    """One websocket frame from the page → a message, or :class:`BadFrame` saying why not."""
    try:
        data = json.loads(frame)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return BadFrame("malformed", "not JSON")
    if not isinstance(data, dict):
        return BadFrame("not_a_map", "expected a JSON object")
    v = _int(data.get("v"))
    if "cell" in data:
        cell = _cell(data.get("cell"))
        if cell is None:
            return BadFrame("bad_field", "cell must be \"row-column\"")
        mode = data.get("mode")
        return CellClick(cell, mode if mode in MODES else "select", v)
    action = data.get("a")
    if action in COMMANDS:
        return Command(action, v)
    return BadFrame("unknown_type", "expected a cell or a command")


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 2**53 else None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 15:
        return int(value)
    return None


def _cell(value: Any) -> tuple[int, int] | None:
    if not isinstance(value, str) or len(value) > 7:
        return None
    parts = value.split("-")
    if len(parts) != 2:
        return None
    r, c = _int(parts[0]), _int(parts[1])
    if r is None or c is None or r > MAX_COORD or c > MAX_COORD:
        return None
    return (r, c)

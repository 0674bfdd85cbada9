"""Client frames → typed messages, exactly once, at the edge. Never raises on bad input.

Two encodings arrive: msgpack maps on the programmatic websocket (:func:`parse_msgpack`) and
the htmx ws extension's JSON objects (form fields plus ``HEADERS``) on the browser websocket
(:func:`parse_json`). Both give a :class:`ClientMessage` or a :class:`BadMessage` carrying a
machine-readable ``code``. Raw dicts never travel further than this module.

Accepted fields (both encodings): ``t`` ("move" | "resign"; "move" is assumed when absent and a
``cell`` is present), ``v`` (int or digit string: the version the sender saw), ``action``
("explore" | "mark"), ``cell`` (``[r, c]``, or the string ``"r-c"`` from a browser form).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import msgpack

MAX_COORD = 1000
"""Coordinates beyond this are refused here (the engine refuses cells off its board)."""


@dataclass(frozen=True, slots=True)
class MoveMessage:
    v: int
    action: str
    """``"explore"`` or ``"mark"``."""
    cell: tuple[int, int]


@dataclass(frozen=True, slots=True)
class ResignMessage:
    v: int | None = None


@dataclass(frozen=True, slots=True)
class BadMessage:
    code: str
    """``malformed`` (not decodable), ``not_a_map``, ``unknown_type``, ``bad_field``."""
    message: str


ClientMessage = MoveMessage | ResignMessage


def parse_msgpack(frame: bytes | str) -> ClientMessage | BadMessage:
    if isinstance(frame, str):
        return BadMessage("malformed", "the programmatic websocket takes binary msgpack frames")
    try:
        data = msgpack.unpackb(frame, raw=False, strict_map_key=False)
    except Exception as exc:  # msgpack raises several unrelated types on garbage
        return BadMessage("malformed", f"not msgpack: {type(exc).__name__}")
    return parse_data(data)


def parse_json(frame: bytes | str) -> ClientMessage | BadMessage:
    try:
        data = json.loads(frame)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        return BadMessage("malformed", f"not JSON: {type(exc).__name__}")
    return parse_data(data)


def parse_data(data: Any) -> ClientMessage | BadMessage:
    """Decoded frame (any value) → a message."""
    if not isinstance(data, dict):
        return BadMessage("not_a_map", "a frame must be a map with a \"t\" key")
    kind = data.get("t", "move" if "cell" in data else None)
    if kind == "move":
        v = _int(data.get("v"))
        if v is None:
            return BadMessage("bad_field", "a move needs \"v\", the version you saw")
        action = data.get("action")
        if action not in ("explore", "mark"):
            return BadMessage("bad_field", "\"action\" must be \"explore\" or \"mark\"")
        cell = _cell(data.get("cell"))
        if cell is None:
            return BadMessage("bad_field", "\"cell\" must be [row, column] (or \"row-column\")")
        return MoveMessage(v, action, cell)
    if kind == "resign":
        return ResignMessage(_int(data.get("v")))
    return BadMessage("unknown_type", f"unknown message type {kind!r}; expected \"move\" or \"resign\"")


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -(2**53) < value < 2**53 else None
    if isinstance(value, str) and value.isdigit() and len(value) <= 15:
        return int(value)
    return None


def _cell(value: Any) -> tuple[int, int] | None:
    if isinstance(value, str):
        parts = value.split("-")
        if len(parts) != 2:
            return None
        r, c = _int(parts[0]), _int(parts[1])
    elif isinstance(value, (list, tuple)) and len(value) == 2:
        r, c = _int(value[0]), _int(value[1])
    else:
        return None
    if r is None or c is None or not (-MAX_COORD <= r <= MAX_COORD and -MAX_COORD <= c <= MAX_COORD):
        return None
    return (r, c)

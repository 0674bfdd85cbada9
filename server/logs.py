"""Structured logs: one line per event, ``key=value`` pairs, never a secret.

``event(log, "move_committed", room=..., player=..., v=...)`` writes
``event=move_committed room=abc player=p1 v=7``. Values are quoted when they contain spaces
or quotes, so a line always splits back into its fields. Callers pass ids and codes only: no
tokens, no layouts, no salts (the room's stored state is never logged).
"""

from __future__ import annotations

import json
import logging
from typing import Any

FORBIDDEN_KEYS = frozenset({"token", "salt", "mines", "layout", "secret", "state"})


def _value(value: Any) -> str:
    """Bare when plain; otherwise a JSON string (control characters and quotes escaped)."""
    text = str(value)
    if text and all(ch.isprintable() and not ch.isspace() and ch not in "\"'=\\" for ch in text):
        return text
    return json.dumps(text)


def format_event(name: str, /, **fields: Any) -> str:
    """The line for an event; raises ``ValueError`` for a field that names a secret."""
    bad = FORBIDDEN_KEYS.intersection(fields)
    if bad:
        raise ValueError(f"refusing to log secret fields {sorted(bad)}")
    return " ".join([f"event={_value(name)}", *(f"{k}={_value(v)}" for k, v in fields.items() if v is not None)])


def event(log: logging.Logger, name: str, /, level: int = logging.INFO, **fields: Any) -> None:
    if log.isEnabledFor(level):
        log.log(level, format_event(name, **fields))


def configure(level: str = "info") -> None:
    """Plain ``time level logger message`` lines on stderr; messages are already key=value."""
    logging.basicConfig(
        level=level.upper(),
        format="ts=%(asctime)s level=%(levelname)s logger=%(name)s %(message)s",
    )

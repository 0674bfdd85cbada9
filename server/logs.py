"""Structured logs: one line per event, ``key=value`` pairs, never a secret.

``event(log, "move_committed", room=..., player=..., v=...)`` writes
``event=move_committed room=abc player=p1 v=7``. Values are quoted when they contain spaces
or quotes, so a line always splits back into its fields. Callers pass ids and codes only: no
tokens, no layouts, no salts (the room's stored state is never logged).
"""

from __future__ import annotations

import json
import logging
import re
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


_TOKEN = re.compile(r"((?:^|[?&\s])" + "".join(f"(?:{ch}|%{ord(ch):02x})" for ch in "token") + r"=)[^&\s\"']+",
                    re.IGNORECASE)
"""A ``token`` query parameter, its name spelled plainly or with any letter percent-encoded
(``?%74oken=`` authenticates too: the query's names are decoded before they are read)."""
_BEARER = re.compile(r"(bearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` with token query parameters and bearer credentials replaced by ``[redacted]``."""
    return _BEARER.sub(r"\1[redacted]", _TOKEN.sub(r"\1[redacted]", text))


class RedactFilter(logging.Filter):
    """Scrubs credentials from any record, including other libraries' (uvicorn logs every
    request's path with its query string, and clients may pass ``?token=`` there).

    The record keeps its shape where it can: its string arguments are redacted one by one, so
    a formatter that reads ``record.args`` itself (uvicorn's access formatter unpacks the
    client, method, path, version and status) still finds them. Only a credential that is in
    no argument makes the message one redacted string with no arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: leave it to the handler to complain
            return True
        clean = redact(message)
        if clean == message:
            return True
        if isinstance(record.args, tuple):
            args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
            try:
                redacted_args = logging.LogRecord.getMessage(_with(record, args))
            except Exception:
                redacted_args = None
            if redacted_args is not None and redact(redacted_args) == redacted_args:
                record.args = args
                return True
        record.msg, record.args = clean, None
        return True


def _with(record: logging.LogRecord, args: tuple[Any, ...]) -> logging.LogRecord:
    copy = logging.makeLogRecord(record.__dict__)
    copy.args = args
    return copy


def configure(level: str = "info") -> None:
    """``ts=... level=... logger=... event=...`` lines on stderr, credentials redacted from
    every handler (ours and uvicorn's). Idempotent."""
    logging.basicConfig(
        level=level.upper(),
        format="ts=%(asctime)s.%(msecs)03d level=%(levelname)s logger=%(name)s %(message)s",
        datefmt="%Y-%m-%dT%H:%M:%S",
    )
    logging.getLogger("mineduel").setLevel(level.upper())
    loggers = [logging.getLogger(), *(logging.getLogger(n) for n in ("uvicorn", "uvicorn.error", "uvicorn.access"))]
    for logger in loggers:
        for handler in logger.handlers:
            if not any(isinstance(f, RedactFilter) for f in handler.filters):
                handler.addFilter(RedactFilter())

"""Request headers that list weighted choices (RFC 9110 §12.4.2): ``Accept-Language`` and
``Accept-Encoding`` are each a comma-separated list of tokens with an optional ``;q=`` weight.
One parser for both (the language negotiation and the static assets' gzip): nothing installed
parses them (Starlette's ``GZipMiddleware`` looks for the substring "gzip")."""

from __future__ import annotations

MAX_CHARS = 512
MAX_ITEMS = 20
"""Only so much of a header is read: a client gets no more say by sending more."""


def weighted(header: str) -> list[tuple[str, float]]:
    """The ``(token, q)`` pairs of ``header`` in the order given, each token lower-cased (both
    headers' tokens are case-insensitive); ``q`` 1 when not given, 0 (not acceptable) when it is
    not a number, so that garbage never turns a choice on. Empty items are left out."""
    pairs: list[tuple[str, float]] = []
    for part in header[:MAX_CHARS].split(",")[:MAX_ITEMS]:
        token, *params = part.split(";")
        token = token.strip().lower()
        if not token:
            continue
        q = 1.0
        for param in params:
            key, _eq, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        pairs.append((token, q))
    return pairs

"""Names for the guests tests make: display names are unique on a server (whatever their
case), and the suite's servers outlive a test, so every test guest gets a fresh one."""

from __future__ import annotations

import itertools
import secrets

_RUN = secrets.token_hex(2)
_COUNT = itertools.count(1)


def unique(name: str) -> str:
    """``name`` plus a suffix no other guest of this test run has (``Anna-3f0a7``)."""
    return f"{name}-{_RUN}{next(_COUNT)}"

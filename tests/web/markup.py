"""Pieces of HTML found in a page or a frame, for the tests that read markup without a browser."""

from __future__ import annotations

import re


def section(html: str, element_id: str) -> str:
    """The element with ``element_id``, to its matching closing tag."""
    match = re.search(rf'<(\w+)[^>]*\bid="{re.escape(element_id)}"', html)
    assert match, f"no #{element_id}"
    tag, depth = match.group(1), 0
    for found in re.finditer(rf"<(/?){tag}\b[^>]*>", html[match.start():]):
        depth += -1 if found.group(1) else 1
        if depth == 0:
            return html[match.start():match.start() + found.end()]
    raise AssertionError(f"#{element_id} is not closed")

"""What a browser frame is made of: the room page's areas by id, the marks a snapshot carries,
and the out-of-band marker of htmx HTTP answers.

A websocket frame is a run of top-level elements with stable ids (:data:`AREAS`); the htmx ws
extension swaps each one out-of-band by id, most of them with idiomorph's ``morph`` (their
macros say ``hx-swap-oob="morph"``): the element on the page is kept and updated, so focus and
live regions survive the frame. A snapshot starts with :data:`SNAPSHOT_MARK`; a
finished game's snapshot brackets the areas that depend on the replay step shown with
:data:`REPLAY_MARK` and :data:`REPLAY_END`, so a page that keeps its step drops them
(:func:`keeping_step`).
"""

from __future__ import annotations

import re

AREAS = ("status", "players", "board", "mines-left", "moves", "fair", "endgame", "notice", "hb", "seen-v", "selection",
         "abort", "claim", "toast", "sound")
"""The ids of the dynamic areas of a room page (``spectators`` is sent by presence frames;
``title`` by snapshots and updates, into the page's ``<title>``; ``sound`` is empty but in
the update of a sound page's turn, :mod:`.sound`)."""

SNAPSHOT_MARK = "<!--snapshot-->"
"""First bytes of every snapshot frame: lets a browser connection tell a snapshot (which
resets its selection) from an update without parsing HTML."""
REPLAY_MARK, REPLAY_END = "<!--replay-->", "<!--/replay-->"
"""Around the areas of a finished game's snapshot that depend on the replay step shown."""
REPLAYED = ("board", "mines-left", "moves", "endgame")


def keeping_step(snapshot: str) -> str:
    """A finished game's snapshot for a page that already shows the end, at the replay step
    it shows (from its URL, or stepped to since): without the step-dependent areas. Any other
    frame is returned as it is."""
    start = snapshot.find(REPLAY_MARK)
    if start < 0:
        return snapshot
    return snapshot[:start] + snapshot[snapshot.index(REPLAY_END, start) + len(REPLAY_END):]


_SWAP_NAMED = re.compile(r"<[a-z]+ [^>]*\bhx-swap-oob=")
"""A start tag that names its out-of-band swap."""


def oob(element: str) -> str:
    """``element`` marked for an out-of-band swap by id (htmx HTTP responses need the marker;
    websocket frames do not: the ws extension swaps every top-level element by id). An element
    that names its swap already (``hx-swap-oob="morph"``: most macros') is left as it is."""
    element = str(element)
    if _SWAP_NAMED.match(element):
        return element
    return re.sub(r"^<([a-z]+) ", r'<\1 hx-swap-oob="true" ', element, count=1)


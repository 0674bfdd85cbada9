"""What each element of a classic (solo) game's page says, as plain values.

Pure, like :mod:`server.web.view_model`: everything comes from the room and its
``ClassicView`` (the same for the player and spectators: nothing in a classic game is
private), times are passed in. The Jinja2 macros of ``web/templates/_solo.html`` decide the
markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import cell_name
from engine.classic_view import FATAL, FLAG, HIDDEN, MINE, WRONG_FLAG, ClassicView
from engine.events import CLEARED, EXPLODED

from ..core.room import Room, Status

MODES = ("reveal", "flag")


@dataclass(frozen=True, slots=True)
class SoloCell:
    r: int
    c: int
    css: str
    label: str
    text: str = ""
    playable: bool = False
    """A button that sends ``cell=r-c``: a hidden cell, or an open number (a chord)."""

    @property
    def id(self) -> str:
        return f"cell-{self.r}-{self.c}"

    @property
    def value(self) -> str:
        return f"{self.r}-{self.c}"


def solo_cell(view: ClassicView, r: int, c: int, playing: bool) -> SoloCell:
    ch = view.rows[r][c]
    name = cell_name((r, c))
    last = (r, c) in view.last_opened
    if ch.isdigit():
        n = int(ch)
        css = f"cell open n{n}" + (" auto" if last else "")
        return SoloCell(r, c, css, f"{name}, {n}" + (", chord" if n and playing else ""), ch if n else "",
                        playing and n > 0)
    if ch == FLAG:
        won = view.outcome is not None and view.outcome.termination == CLEARED
        return SoloCell(r, c, "cell hidden flag" + (" found" if won else ""), f"{name}, flagged", "", playing)
    if ch == MINE:
        return SoloCell(r, c, "cell mine unclaimed", f"{name}, mine")
    if ch == FATAL:
        return SoloCell(r, c, "cell mine fatal", f"{name}, the mine that went off")
    if ch == WRONG_FLAG:
        return SoloCell(r, c, "cell hidden flag wrong-flag", f"{name}, flagged but safe")
    assert ch == HIDDEN, ch
    return SoloCell(r, c, "cell hidden", f"{name}, hidden", "", playing)


def solo_cells(view: ClassicView, playing: bool) -> list[SoloCell]:
    return [solo_cell(view, r, c, playing) for r in range(view.height) for c in range(view.width)]


def timer_text(ms: int | None, final: bool) -> str:
    """Whole seconds while the game runs (``0`` before the first click); two decimals at the end."""
    if ms is None:
        return "0"
    if final:
        return f"{ms / 1000:.2f}"
    return str(ms // 1000)


@dataclass(frozen=True, slots=True)
class SoloStatus:
    text: str
    css: str
    """``ready``, ``playing``, ``won``, ``lost``, ``watching``."""


def solo_status(room: Room, viewer: int, name: str) -> SoloStatus:
    view: Any = room.view(viewer)
    outcome = view.outcome
    player = viewer == 0
    if outcome is None:
        if room.started_ms is None:
            return SoloStatus("Click any cell to start: the first click is always safe."
                              if player else f"{name} has not started yet.", "ready")
        return SoloStatus("Clear every safe cell." if player else f"{name} is playing.",
                          "playing" if player else "watching")
    if outcome.termination == CLEARED:
        return SoloStatus("Cleared — you win!" if player else f"{name} cleared the board.", "won")
    if outcome.termination == EXPLODED:
        return SoloStatus("Boom — a mine went off." if player else f"{name} hit a mine.", "lost")
    return SoloStatus("Given up." if player else f"{name} gave up.", "lost")


@dataclass(frozen=True, slots=True)
class SoloStats:
    """The end screen's figures."""

    time: str
    three_bv: int
    bv_per_s: str
    efficiency: str
    clicks: tuple[int, int, int]
    won: bool

    @property
    def total_clicks(self) -> int:
        return sum(self.clicks)


def solo_stats(room: Room) -> SoloStats | None:
    view: Any = room.view(0)
    if view.outcome is None or view.three_bv is None:
        return None
    elapsed = room.elapsed_ms(room.ended_ms or 0) or 0
    seconds = max(elapsed, 1) / 1000
    return SoloStats(timer_text(elapsed, True), view.three_bv, f"{view.three_bv / seconds:.2f}",
                     f"{100 * view.three_bv / max(sum(view.clicks), 1):.0f} %", view.clicks,
                     view.outcome.termination == CLEARED)


def playing(room: Room, viewer: int) -> bool:
    return viewer == 0 and room.status is Status.PLAYING


def board_label(view: ClassicView) -> str:
    return f"Board, {view.width} by {view.height}, {view.total_mines} mines"

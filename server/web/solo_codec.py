"""HTML for a classic (solo) game: its page's areas and its live frames.

The ``"html"`` codec (:class:`server.web.html_codec.HtmlCodec`) hands classic rooms to
:class:`SoloHtml`. Same principles as the duel's: pure rendering (the time is passed in or
read once), one top-level element per area with a stable id, frames swapped out-of-band by
id, a snapshot carrying every area. An update redraws only the cells that changed (a cascade
that opens hundreds of cells is one frame), the counter, the status and the version.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from markupsafe import Markup

from engine import Event

from ..core.room import Room, Status
from .i18n import _, ngettext
from .reconnect import delay_ms
from .solo_view import (
    board_label,
    playing,
    preset_name,
    solo_cell,
    solo_cells,
    solo_stats,
    solo_status,
    timer_text,
)
from .template_env import RoomMacros
from .view_model import display_name

SNAPSHOT_MARK = "<!--snapshot-->"


@dataclass(frozen=True, slots=True)
class Restart:
    """A new game with the same settings (the restart and "play again" forms)."""

    width: int
    height: int
    mines: int
    no_guess: bool
    preset: str

    @property
    def mode(self) -> str:
        return "no-guess" if self.no_guess else "classic"


def restart_of(room: Room) -> Restart:
    s = room.game.settings
    return Restart(s["width"], s["height"], s["mines"], s["no_guess"], s["preset"])


def title_of(room: Room) -> str:
    s = room.game.settings
    size = preset_name(s["preset"]) if s["preset"] != "custom" else ngettext(
        "%(width)d×%(height)d, %(num)d mine", "%(width)d×%(height)d, %(num)d mines", s["mines"]
    ) % {"width": s["width"], "height": s["height"], "num": s["mines"]}
    return size + (" · " + _("no guessing") if s["no_guess"] else "")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class SoloHtml(RoomMacros):
    @property
    def m(self) -> Any:
        """The macros of ``_solo.html``."""
        return self.macros("_solo.html")

    @property
    def shared(self) -> Any:
        """The macros both pages share (notice, heartbeat, version, spectators)."""
        return self.macros("_room.html")

    def areas(self, room: Room, viewer: int, at_ms: int | None = None) -> dict[str, Markup]:
        view: Any = room.view(viewer)
        now = now_ms() if at_ms is None else at_ms
        name = display_name(room.players[0].name) if room.players[0] else _("The player")
        can_play = playing(room, viewer)
        stats = solo_stats(room)  # the end screen's, with its "Play again" (then no Restart beside the board)
        m = self.m
        return {
            "status": m.status(solo_status(room, viewer, name)),
            "notice": self.shared.notice(""),
            "hb": self.shared.heartbeat(),
            "reconnect": self.shared.reconnect(0, delay_ms(0)),  # a snapshot resets the count
            "seen-v": self.shared.seen_version(room.version),
            "board": m.board(solo_cells(view, can_play), view, can_play, board_label(view)),
            "counter": m.counter(view.mines_left),
            "timer": self.timer(room, now),
            "endgame": m.endgame(stats, room.id, restart_of(room), viewer == 0),
            "restart-area": m.restart_area(restart_of(room) if viewer == 0 and stats is None else None),
            "fair": m.fair(view),
        }

    def timer(self, room: Room, now: int) -> Markup:
        over = room.status is Status.OVER
        return self.m.timer(timer_text(room.elapsed_ms(now), over), room.started_ms is not None and not over)

    def snapshot(self, room: Room, viewer: int) -> str:
        return SNAPSHOT_MARK + "".join(self.areas(room, viewer).values())

    def focus(self, room: Room, viewer: int, cell: tuple[int, int]) -> str:
        """Cell ``cell`` again with ``autofocus``: the frame that showed this page's move
        swapped the focused button out (``BrowserConn.refocus``), so focus follows the cell."""
        look = solo_cell(room.view(viewer), *cell, playing(room, viewer))
        return str(self.m.cell(replace(look, autofocus=True)))

    def update(self, old: Room, new: Room, viewer: int, events: Sequence[Event]) -> str:
        if new.status is Status.OVER or old.status is not new.status or old.players != new.players:
            return self.snapshot(new, viewer)  # the end, a restart's link: the whole picture
        a, b = old.view(viewer), new.view(viewer)
        change = new.game.diff(a, b)
        can_play = playing(new, viewer)
        name = display_name(new.players[0].name) if new.players[0] else _("The player")
        out = [self.m.cell(solo_cell(b, r, c, can_play)) for r, c, _ch in change.cells]
        if "flags" in change.changed:
            out.append(self.m.counter(b.mines_left))
        if old.started_ms is None:
            out.append(self.m.status(solo_status(new, viewer, name)))
            out.append(self.timer(new, now_ms()))
        out.append(self.shared.seen_version(new.version))
        return "".join(str(x) for x in out)

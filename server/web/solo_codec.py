"""HTML for a classic (solo) game: its page's areas and its live frames.

The ``"html"`` codec (:class:`server.web.html_codec.HtmlCodec`) hands classic rooms to
:class:`SoloHtml`. Same principles as the duel's: pure rendering (the time is passed in or
read once), one top-level element per area with a stable id, frames swapped out-of-band by
id, a snapshot carrying every area. An update redraws only the cells that changed (a cascade
that opens hundreds of cells is one frame), the counter, the status and the version.

A finished game's page shows a replay step (:meth:`SoloHtml.replay`: the board and the counter
after ``at`` moves, and the duel's replay bar, inside the end screen); its snapshot brackets
those areas with the replay marks, so a page that shows a step of its own keeps it
(:func:`server.web.html_frames.keeping_step`), as a duel's does.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from markupsafe import Markup

from engine import Event

from ..core.room import Room, Status
from .end_view import ReplayLook, clamp_step
from .html_frames import REPLAY_END, REPLAY_MARK, SNAPSHOT_MARK
from .i18n import _, ngettext
from .reconnect import delay_ms
from .solo_view import (
    board_label,
    moved_cell,
    playing,
    preset_name,
    replay_cells,
    solo_cell,
    solo_cells,
    solo_stats,
    solo_status,
    step_text,
    timer_text,
)
from .template_env import RoomMacros
from .view_model import display_name

REPLAYED = ("board", "counter", "endgame")
"""The areas of a finished classic game's page that depend on the replay step shown (the
replay bar is inside ``endgame``)."""


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


def tab_title(room: Room, viewer: int) -> str:
    """The tab's title without the site's name: "Anna · Beginner", led by the result once the
    game is over ("Cleared — you win! · …"), as a duel's title is by its status (an outside
    probe: a finished classic game's title never said how it ended)."""
    head = solo_status(room, viewer, player_name(room)).text if room.status is Status.OVER else None
    return " \u00b7 ".join(part for part in (head, player_name(room), title_of(room)) if part)


def player_name(room: Room) -> str:
    """The player's name as the page says it."""
    return display_name(room.players[0].name) if room.players[0] else _("The player")


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

    def areas(self, room: Room, viewer: int, at_ms: int | None = None, at: int | None = None) -> dict[str, Markup]:
        """Every area of the page, by id. ``at``: a finished game's replay step to show (the
        final position when ``None``)."""
        view: Any = room.view(viewer)
        now = now_ms() if at_ms is None else at_ms
        can_play = playing(room, viewer)
        stats = solo_stats(room)  # the end screen's, with its "Play again" (then no Restart beside the board)
        m = self.m
        if room.status is Status.OVER:
            step = self.replay(room, len(room.game.log) if at is None else at)
        else:
            step = {"board": m.board(solo_cells(view, can_play), view, can_play, board_label(view)),
                    "counter": m.counter(view.mines_left)}
        return {
            "status": m.status(solo_status(room, viewer, player_name(room))),
            "notice": self.shared.notice(""),
            "hb": self.shared.heartbeat(),
            "reconnect": self.shared.reconnect(0, delay_ms(0)),  # a snapshot resets the count
            "seen-v": self.shared.seen_version(room.version),
            "board": step["board"],
            "counter": step["counter"],
            "timer": self.timer(room, now),
            "endgame": m.endgame(stats, room.id, restart_of(room), viewer == 0, step.get("replay")),
            "restart-area": m.restart_area(restart_of(room) if viewer == 0 and stats is None else None),
            "fair": m.fair(view),
            "title": self.shared.title(f"{tab_title(room, viewer)} \u00b7 MineDuel"),
        }

    def replay(self, room: Room, at: int) -> dict[str, Any]:
        """A finished game's replay step ``at`` (clamped to the game): its ``board``, ``counter``
        and ``replay`` bar (elements swapped by id) and ``look`` (the :class:`ReplayLook`).
        Raises ``ValueError`` before the end (``Classic.position``): nothing of the layout
        shows while the game is on."""
        log = room.game.log
        at = clamp_step(at, len(log))
        view: Any = room.game.position(at)
        look = ReplayLook(room.id, at, len(log), None, step_text(log, at, player_name(room)))
        return {
            "board": self.m.board(replay_cells(view, moved_cell(log, at)), view, False, board_label(view)),
            "counter": self.m.counter(view.mines_left),
            "replay": self.shared.replay(look),
            "look": look,
        }

    def timer(self, room: Room, now: int) -> Markup:
        over = room.status is Status.OVER
        return self.m.timer(timer_text(room.elapsed_ms(now), over), room.started_ms is not None and not over)

    def snapshot(self, room: Room, viewer: int) -> str:
        """Every area; a finished game's step-dependent ones (:data:`REPLAYED`) between
        :data:`REPLAY_MARK` and :data:`REPLAY_END`, so a page at a step of its own keeps it."""
        parts = self.areas(room, viewer)
        if room.status is not Status.OVER:
            return SNAPSHOT_MARK + "".join(parts.values())
        rest = "".join(v for k, v in parts.items() if k not in REPLAYED)
        return f"{SNAPSHOT_MARK}{rest}{REPLAY_MARK}{''.join(parts[k] for k in REPLAYED)}{REPLAY_END}"

    def focus(self, room: Room, viewer: int, cell: tuple[int, int], goto: bool = False) -> str:
        """Cell ``cell`` again with ``autofocus`` (keyboard focus goes there); ``goto``: the "go
        to cell" field asked for it, and comes back empty."""
        look = solo_cell(room.view(viewer), *cell, playing(room, viewer))
        return str(self.m.cell(replace(look, autofocus=True))) + (str(self.shared.goto_field()) if goto else "")

    def update(self, old: Room, new: Room, viewer: int, events: Sequence[Event]) -> str:
        if new.status is Status.OVER or old.status is not new.status or old.players != new.players:
            return self.snapshot(new, viewer)  # the end, a restart's link: the whole picture
        a, b = old.view(viewer), new.view(viewer)
        change = new.game.diff(a, b)
        can_play = playing(new, viewer)
        out = [self.m.cell(solo_cell(b, r, c, can_play)) for r, c, _ch in change.cells]
        if "flags" in change.changed:
            out.append(self.m.counter(b.mines_left))
        if old.started_ms is None:
            out.append(self.m.status(solo_status(new, viewer, player_name(new))))
            out.append(self.timer(new, now_ms()))
        out.append(self.shared.seen_version(new.version))
        return "".join(str(x) for x in out)

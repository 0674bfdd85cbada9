"""What each element of a classic (solo) game's page says, as plain values.

Pure, like :mod:`server.web.view_model`: everything comes from the room and its
``ClassicView`` (the same for the player and spectators: nothing in a classic game is
private), times are passed in. The Jinja2 macros of ``web/templates/_solo.html`` decide the
markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from engine import cell_name
from engine.classic import three_bv
from engine.classic_view import FATAL, FLAG, HIDDEN, MINE, WRONG_FLAG, ClassicView
from engine.events import CLEARED, EXPLODED
from engine.geometry import Cell
from engine.moves import Chord, Flag, Move, Resign, Reveal

from ..core.room import Room, Status
from .i18n import N_, _, ngettext, number, percent

MODES = ("reveal", "flag")
PRESET_NAMES = {"beginner": N_("Beginner"), "intermediate": N_("Intermediate"), "expert": N_("Expert"),
                "custom": N_("Custom")}
MODE_NAMES = {"classic": N_("classic"), "no-guess": N_("no guessing")}
"""English names of the boards and leaderboard modes (marked for the catalogs), translated
where shown: :func:`preset_name`, :func:`mode_name`."""


def preset_name(preset: str) -> str:
    """``Expert``: a board preset's name in the reader's language."""
    return _(PRESET_NAMES[preset]) if preset in PRESET_NAMES else preset.title()


def mode_name(mode: str) -> str:
    """``classic`` or ``no guessing``: a leaderboard mode in the reader's language."""
    return _(MODE_NAMES[mode]) if mode in MODE_NAMES else mode


@dataclass(frozen=True, slots=True)
class SoloCell:
    r: int
    c: int
    css: str
    label: str
    text: str = ""
    playable: bool = False
    """A button that sends ``cell=r-c``: a hidden cell, or an open number (a chord)."""
    autofocus: bool = False
    """Keyboard focus goes here once it is swapped in (the cell this page just played)."""

    @property
    def id(self) -> str:
        return f"cell-{self.r}-{self.c}"

    @property
    def value(self) -> str:
        return f"{self.r}-{self.c}"


def solo_cell(view: ClassicView, r: int, c: int, playing: bool, layout: frozenset[Cell] = frozenset()) -> SoloCell:
    """The look of cell ``(r, c)``. ``layout``: the mines of a replay step before the end (the
    layout is public once the game is over, but that step's board does not show it yet): a
    hidden mine then shows faintly, a flag on a safe cell as wrong, as the final board shows them."""
    ch = view.rows[r][c]
    name = cell_name((r, c))
    if ch == FLAG and layout and (r, c) not in layout:
        ch = WRONG_FLAG
    last = (r, c) in view.last_opened
    if ch.isdigit():
        n = int(ch)
        css = f"cell open n{n}" + (" auto" if last else "")
        label = f"{name}, {n}" + (", " + _("chord") if n and playing else "")
        return SoloCell(r, c, css, label, ch if n else "", playing and n > 0)
    if ch == FLAG:
        won = view.outcome is not None and view.outcome.termination == CLEARED
        return SoloCell(r, c, "cell hidden flag" + (" found" if won else ""), _("%(cell)s, flagged") % {"cell": name}, "", playing)
    if ch == MINE:
        return SoloCell(r, c, "cell mine unclaimed", _("%(cell)s, mine") % {"cell": name})
    if ch == FATAL:
        return SoloCell(r, c, "cell mine fatal", _("%(cell)s, a mine that went off") % {"cell": name})
    if ch == WRONG_FLAG:
        return SoloCell(r, c, "cell hidden flag wrong-flag", _("%(cell)s, flagged but safe") % {"cell": name})
    assert ch == HIDDEN, ch
    if (r, c) in layout:
        return SoloCell(r, c, "cell hidden ghost-mine", _("%(cell)s, hidden mine") % {"cell": name})
    return SoloCell(r, c, "cell hidden", _("%(cell)s, hidden") % {"cell": name}, "", playing)


def solo_cells(view: ClassicView, playing: bool) -> list[SoloCell]:
    return [solo_cell(view, r, c, playing) for r in range(view.height) for c in range(view.width)]


# ---------------------------------------------------------------------- a finished game's replay


def replay_cells(view: ClassicView, moved: Cell | None) -> list[SoloCell]:
    """The board of a replay step (``Classic.position``): before the end with the layout shown
    faintly (:func:`solo_cell`), the final step as the final board; ``moved``, the cell of the
    move that led to the step, outlined and named "last move" (a flag changes no other cell)."""
    layout = frozenset(view.mines or ()) if view.outcome is None else frozenset()
    cells = [solo_cell(view, r, c, False, layout) for r in range(view.height) for c in range(view.width)]
    if moved is None:
        return cells
    i = moved[0] * view.width + moved[1]
    cells[i] = replace(cells[i], css=cells[i].css + " last", label=", ".join((cells[i].label, _("last move"))))
    return cells


STEP_TEXTS = {
    "reveal": N_("%(number)d. reveal %(cell)s"),
    "flag": N_("%(number)d. flag %(cell)s"),
    "unflag": N_("%(number)d. unflag %(cell)s"),
    "chord": N_("%(number)d. chord %(cell)s"),
}
"""How a classic game's replay words the move that led to a step, by kind (marked for the
catalogs, translated where shown: :func:`step_text`)."""


def step_text(log: Sequence[tuple[int, Move]], at: int, name: str) -> str:
    """What led to replay step ``at`` of a classic game with move log ``log``, in words: ``The
    start``, ``3. reveal e5``, ``4. flag d2`` or ``5. unflag d2`` (a flag move toggles: it put
    a flag on when the cell's flag moves so far are odd), ``6. chord c3``, or ``Anna gave up.``"""
    if at == 0:
        return _("The start")
    move = log[at - 1][1]
    if isinstance(move, Resign):
        return _("%(name)s gave up.") % {"name": name}
    return _(STEP_TEXTS[move_kind(log, at)]) % {"number": at, "cell": cell_name(move.cell)}  # type: ignore[union-attr]


def move_kind(log: Sequence[tuple[int, Move]], at: int) -> str:
    """``reveal``, ``flag``, ``unflag`` or ``chord``: the cell move ``log[at - 1]``."""
    move = log[at - 1][1]
    if isinstance(move, Flag):
        flags = sum(1 for _seat, m in log[:at] if isinstance(m, Flag) and m.cell == move.cell)
        return "flag" if flags % 2 else "unflag"
    if isinstance(move, Reveal):
        return "reveal"
    if isinstance(move, Chord):
        return "chord"
    raise ValueError(f"not a classic cell move: {move!r}")


def moved_cell(log: Sequence[tuple[int, Move]], at: int) -> Cell | None:
    """The cell of the move that led to replay step ``at`` (none at the start, nor for giving up)."""
    move = log[at - 1][1] if at else None
    return move.cell if isinstance(move, (Reveal, Flag, Chord)) else None


def timer_text(ms: int | None, final: bool) -> str:
    """Whole seconds while the game runs (``0`` before the first click: the page's timer moves
    with the heartbeat, once a second); at the end the time to the hundredth, cut as a
    stopwatch cuts it (``2.209`` s reads ``2.20``, German ``2,20``), as RULES.md shows it. The
    leaderboards rank the same hundredths (:func:`server.store.results.ranks`): two times that
    read the same share a rank."""
    if ms is None:
        return "0"
    if final:
        return number(ms // 10 / 100, 2)
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
    who = {"name": name}
    if outcome is None:
        if room.started_ms is None:
            return SoloStatus(_("Click any cell to start: the first click is always safe.")
                              if player else _("%(name)s has not started yet.") % who, "ready")
        return SoloStatus(_("Clear every safe cell.") if player else _("%(name)s is playing.") % who,
                          "playing" if player else "watching")
    if outcome.termination == CLEARED:
        return SoloStatus(_("Cleared — you win!") if player else _("%(name)s cleared the board.") % who, "won")
    if outcome.termination == EXPLODED:
        went_off = sum(row.count(FATAL) for row in view.rows)  # a chord may open more than one
        if player:
            return SoloStatus(ngettext("Boom — a mine went off.", "Boom — %(num)d mines went off.", went_off)
                              % {"num": went_off}, "lost")
        return SoloStatus(ngettext("%(name)s hit a mine.", "%(name)s hit %(num)d mines.", went_off)
                          % {**who, "num": went_off}, "lost")
    return SoloStatus(_("Given up.") if player else _("%(name)s gave up.") % who, "lost")


@dataclass(frozen=True, slots=True)
class SoloStats:
    """The end screen's figures."""

    time: str
    three_bv: int
    bv_per_s: str
    efficiency: str
    """3BV per click as a percentage, ``80%`` (German ``80\u00a0%``)."""
    clicks: tuple[int, int, int]
    won: bool
    solved_bv: int = 0
    """The 3BV the game's opened cells had done (all of it in a won game)."""

    @property
    def total_clicks(self) -> int:
        return sum(self.clicks)


def solo_stats(room: Room) -> SoloStats | None:
    view: Any = room.view(0)
    if view.outcome is None or view.three_bv is None:
        return None
    elapsed = room.elapsed_ms(room.ended_ms or 0) or 0
    won = view.outcome.termination == CLEARED
    solved = view.three_bv if won else three_bv(view.width, view.height, view.mines, room.game.opened)
    rate = number(view.three_bv / elapsed * 1000, 2) if elapsed else "–"  # a first click's win took no time
    return SoloStats(timer_text(elapsed, True), view.three_bv, rate,
                     percent(view.three_bv / max(sum(view.clicks), 1)), view.clicks, won, solved)


def playing(room: Room, viewer: int) -> bool:
    return viewer == 0 and room.status is Status.PLAYING


def board_label(view: ClassicView) -> str:
    return ngettext("Board, %(width)d by %(height)d, %(num)d mine", "Board, %(width)d by %(height)d, %(num)d mines",
                    view.total_mines) % {"width": view.width, "height": view.height, "num": view.total_mines}

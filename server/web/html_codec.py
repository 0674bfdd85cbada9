"""The browser's "html" codec: rooms and views rendered into HTML fragments, nothing else.

Pure rendering: no I/O; the only outside fact read is the wall clock, for the time left on a
game clock (``now_ms`` arguments; the Codec methods, which have none, read it themselves).
What each element says comes from :mod:`server.web.view_model`; the Jinja2 macros in
``web/templates/_room.html`` decide the markup. Pages and websocket frames use the same
macros, so a live page and a reloaded one are byte-for-byte the same HTML.

Every dynamic part of a room page is an element with a stable ``id`` (see :data:`AREAS`). A
websocket frame is a run of such top-level elements; the htmx ws extension swaps each one
out-of-band by ``id``. A snapshot frame carries every area; an update frame only the changed
cells, the player cards, the status, the mines counter, the new move-list lines (prepended
with ``hx-swap-oob="afterbegin:#moves"``, and again in a new ``#toast``) and the version input.
Both carry the tab's title as ``<div hx-swap-oob="innerHTML:title">`` (the ws extension drops
a ``<title>`` in a frame: docs/ARCHITECTURE.md, "The tab's title").

Secrets: everything comes from ``room.view(viewer)``; the only per-viewer facts are the
viewer's own wrong marks, which the engine puts in that seat's view alone.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from engine import SPECTATOR, Event, Explore, Mark, MoveLine, cell_name

from ..core.room import Room, Status
from ..store.analyses import StoredAnalysis
from ..store.messages import Attendance
from . import i18n, reconnect
from .end_view import ReplayLook, fair_look, rematch_offer_look
from .i18n import N_, _
from .odds_view import odds_look, overlay
from .presence_view import ClaimLook, abortable, away_text
from .rating_labels import RatingLabels
from .solo_codec import SoloHtml
from .solo_view import mode_name, preset_name
from .status_view import (
    clock_looks,
    outcome_text,
    player_looks,
    status_look,
    tab_title,
    time_control_text,
)
from .view_model import board_looks, cell_look, move_text, player_names, score_text

WEB_DIR = Path(__file__).resolve().parent.parent.parent / "web"
TEMPLATES_DIR = WEB_DIR / "templates"

OTHER_LAYERS_SAY = (
    N_("service interrupted: the game store is unreachable, so moves are not played; "
       "a fresh board follows when it is back"),
)
"""Messages other layers hand to :meth:`HtmlCodec.error` in English (``server.outage``; the
JSON and msgpack edges keep them English), marked here so the page shows them translated."""

SNAPSHOT_MARK = "<!--snapshot-->"
"""First bytes of every snapshot frame: lets a browser connection tell a snapshot (which
resets its selection) from an update without parsing HTML."""
REPLAY_MARK, REPLAY_END = "<!--replay-->", "<!--/replay-->"
"""Around the areas of a finished game's snapshot that depend on the replay step shown."""
REPLAYED = ("board", "mines-left", "moves", "endgame")


def make_env(templates: Path = TEMPLATES_DIR) -> Environment:
    """The one Jinja2 environment of the browser edge (autoescape on for every template)."""
    env = Environment(
        loader=FileSystemLoader(str(templates)),
        autoescape=select_autoescape(["html", "xml"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.globals["asset"] = lambda path: f"/static/{path}"  # pages.py installs the versioned one
    env.filters["signed"] = score_text
    env.globals.update(time_control=time_control_text, preset_name=preset_name, mode_name=mode_name)
    i18n.install(env)
    return env


# ---------------------------------------------------------------------- the codec


class HtmlCodec:
    """The ``"html"`` codec of :mod:`server.fanout`: HTML fragments swapped by id."""

    name = "html"

    def __init__(self, env: Environment | None = None, labels: RatingLabels | None = None) -> None:
        self.env = env or make_env()
        self.labels = labels or RatingLabels()
        """The ratings shown beside the players' names of rated rooms, from memory (the pages and
        sockets read them; a frame never does)."""
        self._macros: Any = None
        self.solo = SoloHtml(self.env)
        """Classic (solo) rooms are rendered by :class:`server.web.solo_codec.SoloHtml`."""

    @property
    def m(self) -> Any:
        """The macros of ``_room.html`` (loaded once)."""
        if self._macros is None:
            self._macros = self.env.get_template("_room.html").module
        return self._macros

    # ------------------------------------------------------------------ areas

    def areas(self, room: Room, viewer: int, now_ms: int | None = None, at: int | None = None,
              analysis: StoredAnalysis | None = None, odds: bool = False, odds_failed: bool = False,
              fresh: Sequence[MoveLine] = (), follow: bool = False) -> dict[str, Markup]:
        """Every dynamic element of the room page for ``viewer``, by id.

        ``at``: for a finished game, show the replay position after ``at`` moves instead of
        the final board. ``analysis``, ``odds``, ``odds_failed``: see :meth:`replay`.
        ``fresh``: the move lines this frame brings news of (the toast; none on a page).
        ``follow``: the rematch's link takes the page there by itself (see :meth:`update`).
        """
        now = _now_ms() if now_ms is None else now_ms
        view = room.view(viewer)
        names = player_names(room)
        over = room.status is Status.OVER
        playable = viewer in (0, 1) and room.status is Status.PLAYING
        m = self.m
        out = {
            "status": m.status(status_look(room, viewer), room.id, viewer),
            "players": m.players(player_looks(room, viewer, now, self.labels.of(room))),
        }
        if over:
            # a finished game: the final board (or a replay position) and the replay bar
            parts = self.replay(room, len(room.game.log) if at is None else at, analysis, odds, odds_failed)
            out.update({k: parts[k] for k in ("board", "mines-left", "moves")})
            end = {
                "room_id": room.id,
                "rematch": room.rematch,
                "follow": follow and room.rematch is not None,
                "seated": viewer in (0, 1),
                "offer": rematch_offer_look(room, viewer),
                "replay": parts["look"],
                "names": names,
                "odds": parts.get("odds"),
            }
            out["endgame"] = m.endgame(end)
            out["rematch-area"] = m.rematch_area(end)
        else:
            out.update({
                "board": m.board(board_looks(view, names, playable=playable), view.width, playable, over),
                "mines-left": m.mines_left(view.mines_left, view.total_mines),
                "moves": m.moves([move_text(line, names) for line in reversed(view.moves)]),
                "endgame": m.endgame(None),
            })
        out.update({
            "fair": m.fair(fair_look(view)),
            "notice": m.notice(""),
            "hb": m.heartbeat(),
            "reconnect": m.reconnect(0, reconnect.delay_ms(0)),  # a snapshot resets the count
            "seen-v": m.seen_version(room.version),
            "selection": m.selection(None, playable, False),
            "abort": m.abort(abortable(room, viewer)),
            "claim": m.claim(None),
            "toast": self.toast(room, fresh),
            "sound": m.sound(),
        })
        return out

    def toast(self, room: Room, lines: Sequence[MoveLine]) -> Markup:
        """The ``toast`` element: what the move lines ``lines`` (of one viewer's view) did."""
        names = player_names(room)
        return self.m.toast([move_text(line, names) for line in lines])

    def selection_panel(self, panel: dict[str, str] | None, playable: bool, confirming_resign: bool = False) -> str:
        """Only the selection panel (``panel``: ``{"name": "f6", "action": "explore"}`` or ``None``)."""
        return str(self.m.selection(panel, playable, confirming_resign))

    def replay(self, room: Room, at: int, analysis: StoredAnalysis | None = None, odds: bool = False,
               odds_failed: bool = False) -> dict[str, Any]:
        """The board, move list and replay bar of a finished game after ``at`` log entries
        (clamped to the game; ``look`` is the :class:`ReplayLook`; the others are elements
        swapped by id). Raises ``ValueError`` before the end.

        A duel also gets its ``odds`` element (:mod:`server.web.odds_view`): from ``analysis``
        (the game's stored analysis), else one that loads itself (or, ``odds_failed``, says it
        could not be made); ``odds``: the board shows the overlay (with ``analysis``)."""
        log = room.game.log
        at = max(0, min(at, len(log)))
        view = room.game.position(at)
        names = player_names(room)
        line, _number = self._step_line(room, at, names)
        shown = len(view.moves)
        final = room.view(SPECTATOR)
        look = ReplayLook(room.id, at, len(log), view.scores, line, odds)
        m = self.m
        cells = board_looks(view, names, playable=False, end="final" if at == len(log) else "replay")
        out: dict[str, Any] = {}
        if room.kind == "duel":
            out["odds"] = self.odds(room, at, analysis, odds, odds_failed)
            if odds and analysis is not None:
                cells = overlay(cells, analysis, at)
        return {
            **out,
            "board": m.board(cells, view.width, False, True),
            # the move list as it stood after move ``at``, newest (the current one) first
            "moves": m.moves([move_text(x, names) for x in reversed(final.moves[:shown])],
                             shown if at < len(log) else None),
            "mines-left": m.mines_left(view.mines_left, view.total_mines),
            "replay": m.replay(look, names),
            "look": look,
        }

    def odds(self, room: Room, at: int, analysis: StoredAnalysis | None, on: bool = False,
             failed: bool = False) -> Markup:
        """Only the ``odds`` element of a finished duel's replay step ``at`` (clamped): no replay
        of the game is needed for it (see :meth:`replay`)."""
        at = max(0, min(at, len(room.game.log)))
        names = player_names(room)
        line, number = self._step_line(room, at, names)
        return self.m.odds(odds_look(room.id, at, on, analysis, names, number,
                                     line if at else _("The start: no move yet."), failed=failed))

    @staticmethod
    def _step_line(room: Room, at: int, names: Sequence[str | None]) -> tuple[str, int | None]:
        """What led to replay step ``at`` in words (the move-list line, or the outcome after a
        resignation, a timeout...), and the move-list number of that line when it was an
        explore or a mark (each adds one line: the lines so far are the plays so far)."""
        log = room.game.log
        if at == 0:
            return _("The start"), None
        final = room.view(SPECTATOR)
        if isinstance(log[at - 1][1], (Explore, Mark)):
            shown = sum(1 for _, move in log[:at] if isinstance(move, (Explore, Mark)))
            return move_text(final.moves[shown - 1], names).text, shown
        # anything else ends the game: the last step, whose scores are the final ones
        return (outcome_text(final.outcome, final.scores, names, SPECTATOR) if final.outcome else ""), None

    # ------------------------------------------------------------------ Codec

    def snapshot(self, room: Room, viewer: int, fresh: Sequence[MoveLine] = (), follow: bool = False) -> str:
        """Every area, and the tab's title. ``fresh``, ``follow``: see :meth:`areas` (an update
        that is a snapshot: the end of the game, the rematch linked). A finished game's step-dependent areas
        (:data:`REPLAYED`) stand between :data:`REPLAY_MARK` and :data:`REPLAY_END`, then its
        rematch area alone again, so a page that already shows the end can keep its step
        (:func:`keeping_step`)."""
        if room.kind == "classic":
            return self.solo.snapshot(room, viewer)
        parts = self.areas(room, viewer, fresh=fresh, follow=follow)
        title = str(self.m.title(tab_title(room, viewer)))
        if room.status is not Status.OVER:
            return SNAPSHOT_MARK + "".join(parts.values()) + title
        rest = "".join(v for k, v in parts.items() if k not in REPLAYED and k != "rematch-area")
        replayed = "".join(parts[k] for k in REPLAYED)
        return f"{SNAPSHOT_MARK}{rest}{title}{REPLAY_MARK}{replayed}{REPLAY_END}{parts['rematch-area']}"

    def update(self, old: Room, new: Room, viewer: int, events: Sequence[Event]) -> str:
        if new.kind == "classic":
            return self.solo.update(old, new, viewer, events)
        if (
            old.status is not Status.PLAYING
            or new.status is not Status.PLAYING
            or old.players != new.players
            or old.commitment != new.commitment
        ):
            # joins, the end, rematch offers: rare, so the whole picture
            return self.snapshot(new, viewer, _fresh(old, new, viewer), follow=_follows(old, new, viewer))
        a, b = old.view(viewer), new.view(viewer)
        change = new.game.diff(a, b)
        if "moves" in change.changed:
            return self.snapshot(new, viewer, _fresh(old, new, viewer))
        names = player_names(new)
        m = self.m
        out = [
            m.cell(cell_look(b, r, c, names, playable=viewer in (0, 1)))
            for r, c, _ch in change.cells
        ]
        out.append(m.players(player_looks(new, viewer, _now_ms(), self.labels.of(new))))
        out.append(m.status(status_look(new, viewer), new.id, viewer))
        if b.mines_left != a.mines_left:
            out.append(m.mines_left(b.mines_left, b.total_mines))
        if change.moves:
            lines = [move_text(line, names) for line in reversed(change.moves)]
            out.append(m.moves_prepend(lines))
            out.append(self.toast(new, change.moves))
        out.append(m.title(tab_title(new, viewer)))
        out.append(m.notice(""))  # a notice about the board before ("wait for their move") no longer holds
        if viewer in (0, 1):
            out.append(m.seen_version(new.version))
            if abortable(old, viewer) != abortable(new, viewer):
                out.append(m.abort(abortable(new, viewer)))
        return "".join(out)

    def players(self, room: Room, viewer: int) -> str:
        """Only the player cards (a connection's refresh once its room's ratings are read)."""
        return str(self.m.players(player_looks(room, viewer, _now_ms(), self.labels.of(room))))

    def presence(self, room: Room, attendance: Attendance) -> str:
        if room.kind == "classic":
            return str(self.m.spectators(attendance.spectators))
        return str(self.m.spectators(attendance.spectators)) + str(self.m.away(away_text(room, attendance)))

    def error(self, code: str, message: str, v: int | None = None) -> str:
        """The page keeps its version in ``#seen-v`` (snapshots and updates set it): ``v`` adds nothing here."""
        out = str(self.m.notice(_(message) if message else "", "error"))
        if code == "unavailable":  # Redis is unreachable: the banner too (see heartbeat)
            out += str(self.m.heartbeat(True))
        return out

    # ------------------------------------------------------------------ per connection

    def notice(self, message: str, kind: str = "info") -> str:
        return str(self.m.notice(message, kind))

    def heartbeat(self, room: Room | None = None, now_ms: int | None = None, interrupted: bool = False) -> str:
        """The heartbeat element (restarts the "connection lost" countdown), plus the clocks
        at ``now_ms`` when ``room`` has a running one. ``interrupted``: the server cannot reach
        its store; the element then shows the "service interrupted" banner at once."""
        out = str(self.m.heartbeat(interrupted))
        if room is not None and room.kind == "classic" and room.started_ms is not None and room.ended_ms is None:
            out += str(self.solo.timer(room, _now_ms() if now_ms is None else now_ms))
        if room is not None and room.clock is not None:
            looks = clock_looks(room, _now_ms() if now_ms is None else now_ms)
            if looks:
                out += "".join(str(self.m.clock(look)) for look in looks)
        return out

    def claim(self, look: ClaimLook | None) -> str:
        """What this player may do about an opponent who left (``None``: the area empty)."""
        return str(self.m.claim(look))

    def selection(
        self,
        room: Room,
        viewer: int,
        cells: Iterable[tuple[int, int]],
        selected: tuple[tuple[int, int], str] | None,
        *,
        focus: tuple[int, int] | None = None,
        confirming_resign: bool = False,
    ) -> str:
        """One connection's selection: the given cells redrawn (with the selection on the
        selected one, ``autofocus`` on ``focus``) and the selection panel."""
        view = room.view(viewer)
        names = player_names(room)
        playable = viewer in (0, 1) and room.status is Status.PLAYING
        out = []
        for cell in dict.fromkeys(cells):
            sel = selected[1] if selected is not None and selected[0] == cell else None
            out.append(self.m.cell(cell_look(view, *cell, names, playable=playable, selected=sel,
                                             autofocus=cell == focus)))
        panel = None
        if selected is not None:
            panel = {"name": cell_name(selected[0]), "action": selected[1]}
        out.append(self.m.selection(panel, playable, confirming_resign))
        return "".join(str(x) for x in out)

    def focus(self, room: Room, viewer: int, cell: tuple[int, int], selected: tuple[tuple[int, int], str] | None,
              goto: bool = False) -> str:
        """Cell ``cell`` again with ``autofocus`` (keyboard focus goes there), as ``viewer``
        sees it with this connection's ``selected``; ``goto``: and the "go to cell" field empty."""
        view = room.view(viewer)
        playable = viewer in (0, 1) and room.status is Status.PLAYING
        sel = selected[1] if selected is not None and selected[0] == cell else None
        out = str(self.m.cell(cell_look(view, *cell, player_names(room), playable=playable, selected=sel,
                                        autofocus=True)))
        return out + (str(self.m.goto_field()) if goto else "")


def keeping_step(snapshot: str) -> str:
    """A finished game's snapshot for a page that already shows the end, at the replay step
    it shows (from its URL, or stepped to since): without the step-dependent areas. Any other
    frame is returned as it is."""
    start = snapshot.find(REPLAY_MARK)
    if start < 0:
        return snapshot
    return snapshot[:start] + snapshot[snapshot.index(REPLAY_END, start) + len(REPLAY_END):]


def _follows(old: Room, new: Room, viewer: int) -> bool:
    """Whether ``viewer``'s page goes to the rematch by itself with this update: the one that
    links it, to the seat that offered it. Why only then: the player who accepted is taken
    there by the answer to their form, spectators choose (the link stays), and a page loaded
    later (a finished game looked at again) must stay where it is."""
    return old.rematch is None and new.rematch is not None and old.rematch_offer == viewer


def _fresh(old: Room, new: Room, viewer: int) -> Sequence[MoveLine]:
    """The move lines ``new`` adds to ``old``, as ``viewer``'s view words them."""
    return new.view(viewer).moves[len(old.view(viewer).moves):]


def oob(element: str) -> str:
    """``element`` marked for an out-of-band swap by id (htmx HTTP responses need the marker;
    websocket frames do not: the ws extension swaps every top-level element by id)."""
    return re.sub(r"^<([a-z]+) ", r'<\1 hx-swap-oob="true" ', str(element), count=1)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


AREAS = ("status", "players", "board", "mines-left", "moves", "fair", "endgame", "notice", "hb", "seen-v", "selection",
         "abort", "claim", "toast", "sound")
"""The ids of the dynamic areas of a room page (``spectators`` is sent by presence frames;
``title`` by snapshots and updates, into the page's ``<title>``; ``sound`` is empty but in
the update of a sound page's turn, :mod:`.sound`)."""

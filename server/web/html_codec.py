"""The browser's "html" codec: rooms and views rendered into HTML fragments, nothing else.

Pure rendering: no I/O; the only outside fact read is the wall clock, for the time left on a
game clock (``now_ms`` arguments; the Codec methods, which have none, read it themselves).
What each element says comes from :mod:`server.web.view_model`; the Jinja2 macros in
``web/templates/_room.html`` decide the markup. Pages and websocket frames use the same
macros, so a live page and a reloaded one are byte-for-byte the same HTML.

Every dynamic part of a room page is an element with a stable ``id`` (:mod:`.html_frames`). A
websocket frame is a run of such top-level elements; the htmx ws extension swaps each one
out-of-band by ``id`` (most by morphing the element on the page: the macros' ``hx-swap-oob="morph"``). A snapshot frame carries every area; an update frame only the changed
cells, the player cards, the status, the mines counter, the new move-list lines (prepended
with ``hx-swap-oob="afterbegin:#moves"``, and again in a new ``#toast``) and the version input.
Both carry the tab's title as ``<div hx-swap-oob="innerHTML:title">`` (the ws extension drops
a ``<title>`` in a frame: docs/ARCHITECTURE.md, "The tab's title").

A finished game's replay steps are :mod:`.replay_html`'s, one connection's own elements (its
selection, focus, notices) :mod:`.connection_html`'s, the Jinja2 environment
:mod:`.template_env`'s.

Secrets: everything comes from ``room.view(viewer)``; the only per-viewer facts are the
viewer's own wrong marks, which the engine puts in that seat's view alone.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from jinja2 import Environment
from markupsafe import Markup

from engine import Event, MoveLine

from ..core.room import Room, Status
from ..store.analyses import StoredAnalysis
from ..store.messages import Attendance
from . import reconnect
from .connection_html import ConnectionHtml
from .end_view import fair_look, rematch_offer_look
from .html_frames import REPLAY_END, REPLAY_MARK, REPLAYED, SNAPSHOT_MARK
from .i18n import N_, _
from .presence_view import abortable
from .rating_labels import RatingLabels
from .replay_html import odds_element, replay_parts
from .solo_codec import SoloHtml
from .status_view import clock_looks, player_looks, status_look, tab_title
from .view_model import board_looks, cell_look, move_text, player_names, seat_names

OTHER_LAYERS_SAY = (
    N_("service interrupted: the game store is unreachable, so moves are not played; "
       "a fresh board follows when it is back"),
)
"""Messages other layers hand to :meth:`HtmlCodec.error` in English (``server.outage``; the
JSON and msgpack edges keep them English), marked here so the page shows them translated."""

# ---------------------------------------------------------------------- the codec


class HtmlCodec(ConnectionHtml):
    """The ``"html"`` codec of :mod:`server.fanout`: HTML fragments swapped by id (and, as a
    :class:`ConnectionHtml`, one connection's own elements)."""

    name = "html"

    def __init__(self, env: Environment | None = None, labels: RatingLabels | None = None) -> None:
        super().__init__(env)
        self.labels = labels or RatingLabels()
        """The ratings shown beside the players' names of rated rooms, from memory (the pages and
        sockets read them; a frame never does)."""
        self.solo = SoloHtml(self.env)
        """Classic (solo) rooms are rendered by :class:`server.web.solo_codec.SoloHtml`."""

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
            played = bool(view.moves)  # no move made (aborted, resigned at once): nothing to replay or weigh
            end = {
                "room_id": room.id,
                "rematch": room.rematch,
                "follow": follow and room.rematch is not None,
                "seated": viewer in (0, 1),
                "offer": rematch_offer_look(room, viewer),
                "replay": parts["look"] if played else None,
                "names": seat_names(names),
                "odds": parts.get("odds") if played else None,
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

    def replay(self, room: Room, at: int, analysis: StoredAnalysis | None = None, odds: bool = False,
               odds_failed: bool = False) -> dict[str, Any]:
        """A finished game's replay step: a duel's (:func:`server.web.replay_html.replay_parts`)
        or a classic game's (:meth:`SoloHtml.replay`: no odds)."""
        if room.kind == "classic":
            return self.solo.replay(room, at)
        return replay_parts(self.m, room, at, analysis, odds, odds_failed)

    def odds(self, room: Room, at: int, analysis: StoredAnalysis | None, on: bool = False,
             failed: bool = False) -> Markup:
        """A finished duel's odds element (:func:`server.web.replay_html.odds_element`)."""
        return odds_element(self.m, room, at, analysis, on, failed)

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

    def focus(self, room: Room, viewer: int, cell: tuple[int, int], selected: tuple[tuple[int, int], str] | None,
              goto: bool = False) -> str:
        """:meth:`ConnectionHtml.focus`, or a classic game's (:meth:`SoloHtml.focus`)."""
        if room.kind == "classic":
            return self.solo.focus(room, viewer, cell, goto)
        return super().focus(room, viewer, cell, selected, goto)

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
        """The spectator count. Who has left is each page's heartbeat's to say (:meth:`away`),
        once the seat has been away for the grace: a reload said "has left" for a moment."""
        return str(self.m.spectators(attendance.spectators))

    def away(self, text: str) -> str:
        """The away note (:func:`~server.web.presence_view.away_text`) as its element."""
        return str(self.m.away(text))

    def error(self, code: str, message: str, v: int | None = None) -> str:
        """The page keeps its version in ``#seen-v`` (snapshots and updates set it): ``v`` adds nothing here."""
        out = self.notice(_(message) if message else "", "error")
        if code == "unavailable":  # Redis is unreachable: the banner too (see heartbeat)
            out += str(self.m.heartbeat(True))
        return out

    # ------------------------------------------------------------------ per connection

    def heartbeat(self, room: Room | None = None, now_ms: int | None = None, interrupted: bool = False) -> str:
        """The heartbeat element (restarts the "connection lost" countdown), plus the clocks
        at ``now_ms`` when ``room`` has a running one, each with its "low time" live region
        (words once the clock is low, the same every second: announced once). ``interrupted``: the server cannot reach
        its store; the element then shows the "service interrupted" banner at once."""
        out = str(self.m.heartbeat(interrupted))
        if room is not None and room.kind == "classic" and room.started_ms is not None and room.ended_ms is None:
            out += str(self.solo.timer(room, _now_ms() if now_ms is None else now_ms))
        if room is not None and room.clock is not None:
            looks = clock_looks(room, _now_ms() if now_ms is None else now_ms)
            if looks:
                out += "".join(str(self.m.clock(look)) + str(self.m.low_time(look)) for look in looks)
        return out


def _follows(old: Room, new: Room, viewer: int) -> bool:
    """Whether ``viewer``'s page goes to the rematch by itself with this update: the one that
    links it, to the seat that offered it. Why only then: the player who accepted is taken
    there by the answer to their form, spectators choose (the link stays), and a page loaded
    later (a finished game looked at again) must stay where it is."""
    return old.rematch is None and new.rematch is not None and old.rematch_offer == viewer


def _fresh(old: Room, new: Room, viewer: int) -> Sequence[MoveLine]:
    """The move lines ``new`` adds to ``old``, as ``viewer``'s view words them."""
    return new.view(viewer).moves[len(old.view(viewer).moves):]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


"""One browser connection to a room: its outbox (:class:`BrowserConn`: the hub's frames, this
page's selection, notices, the step of a replay it shows) and what its clicks do
(:class:`Session`: select, go to a cell, move, resign, abort, claim).

The socket itself, its heartbeat and its close codes are :mod:`server.edge.ws_browser`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine import SPECTATOR, Abort, Resign
from engine.encoding import HIDDEN, OWN_WRONG_MARK

from ..core.commands import Claim, Play, Refused
from ..core.room import Player, Room, Status
from ..store.service import RoomRefused
from ..web.html_codec import HtmlCodec
from ..web.html_frames import REPLAY_MARK, SNAPSHOT_MARK, keeping_step
from ..web.i18n import _
from ..web.view_model import player_names, seat_name
from . import wire
from .outbox import Outbox
from .refusals import refusal_notice

Cell = tuple[int, int]


class BrowserConn(Outbox):
    """An :class:`Outbox` that also holds this connection's selection.

    A snapshot resets the selection (it redraws every cell without one); an update that
    redraws the selected cell means the cell is no longer hidden, so the selection is dropped
    and the panel redrawn.
    """

    __slots__ = ("selected", "asking_resign", "claim_shown", "away_shown", "html", "labels_shown", "shows_end", "refocus",
                 "latest")

    def __init__(self, html: HtmlCodec, *args: Any, latest: Callable[[], Room | None] = lambda: None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.html = html
        self.latest = latest
        """The room as the hub last heard it (what a frame passing through was rendered from)."""
        self.refocus: Cell | None = None
        """The cell this page just played: right after the hub's frame that redraws it, the cell
        again with autofocus, so the keyboard goes on from there. A cell that had the focus
        keeps it anyway (frames morph it in place); this brings it from Confirm (clicked, or
        Alt+C), which the move leaves disabled."""
        self.selected: tuple[Cell, str] | None = None
        self.asking_resign = False
        self.claim_shown = False
        """The heartbeat showed the claim area (an opponent left): it clears it once they are back."""
        self.away_shown: str | None = None
        """The away note the heartbeat last sent (``None``: none yet; the page had its own)."""
        self.labels_shown: tuple[str | None, ...] = ()
        """The ratings beside the names as this page last got them (``server.web.rating_labels``)."""
        self.shows_end = False
        """The page shows the finished game, at a replay step of its own: a snapshot then leaves
        the step's areas as they are (:func:`~server.web.html_frames.keeping_step`)."""

    def push(self, frame: str) -> bool:
        """Queue one of this connection's own frames (selection, notices, heartbeats)."""
        return super().send(frame)

    def send(self, frame: str | bytes) -> bool:
        """The hub's frames: queue, then keep the selection consistent with them."""
        if isinstance(frame, str) and frame.startswith(SNAPSHOT_MARK) and REPLAY_MARK in frame:
            frame = keeping_step(frame) if self.shows_end else frame
            self.shows_end = True
        if not super().send(frame):
            return False
        if isinstance(frame, str):
            if frame.startswith(SNAPSHOT_MARK):
                self.selected, self.asking_resign = None, False
            elif self.selected is not None:
                (r, c), _action = self.selected
                if f'id="cell-{r}-{c}"' in frame:
                    self.selected = None
                    super().send(self.html.selection_panel(None, True, self.asking_resign))
            if self.refocus is not None and 'id="cell-%d-%d"' % self.refocus in frame:
                cell, self.refocus = self.refocus, None
                room = self.latest()
                if room is not None and room.status is Status.PLAYING:
                    super().send(self.html.focus(room, self.viewer, cell, self.selected))
        return True


class Session:
    """One browser connection's handling of its messages (the loop lives in :func:`browser_socket`)."""

    def __init__(self, conn: BrowserConn, player: Player | None, room_id: str, state: Any, html: HtmlCodec) -> None:
        self.conn = conn
        self.player = player
        self.room_id = room_id
        self.rooms = state.rooms
        self.hub = state.hub
        self.html = html

    # ------------------------------------------------------------------ sending

    def notice(self, message: str, kind: str = "info") -> None:
        self.conn.push(self.html.notice(message, kind))

    def redraw(self, room: Room, cells: list[Cell], focus: Cell | None = None) -> None:
        conn = self.conn
        self.conn.push(self.html.selection(room, conn.viewer, cells, conn.selected, focus=focus,
                                           confirming_resign=conn.asking_resign))

    # ------------------------------------------------------------------ messages

    async def handle(self, msg: wire.BrowserMessage, started: float) -> None:
        if self.conn.viewer == SPECTATOR:
            self.notice(_("You are watching this game; only its two players can move."))
            return
        if isinstance(msg, wire.GoTo):
            await self.goto(msg)
            return
        if isinstance(msg, wire.CellClick):
            if msg.mode == "select":
                await self.select(msg.cell)
            else:
                await self.move(msg.cell, msg.mode, msg.v, started)
            return
        name = msg.name
        if name == "confirm":
            if self.conn.selected is None:
                self.notice(_("Select a cell first: click a hidden cell once to explore it, twice to mark it."))
                return
            cell, action = self.conn.selected
            await self.move(cell, action, msg.v, started)
        elif name == "clear":
            old = self.conn.selected
            self.conn.selected = None
            self.redraw(await self.rooms.latest(self.room_id), [old[0]] if old else [])
        elif name in ("resign", "resign-no"):
            self.conn.asking_resign = name == "resign"
            self.redraw(await self.rooms.latest(self.room_id), [])
        elif name == "resign-yes":
            self.conn.asking_resign = False
            await self.play(Resign(), msg.v, started, None)
        elif name == "abort":
            await self.play(Abort(), msg.v, started, None)
        elif name in ("claim-win", "claim-draw"):
            await self.claim(name == "claim-draw")

    async def claim(self, draw: bool) -> None:
        """Claim the game (a win, or a draw) because the opponent left."""
        seat = self.conn.viewer
        away = await self.hub.presence.away_since(self.room_id, 1 - seat)
        try:
            await self.rooms.act(self.room_id, self.player, Claim(draw, away))
        except RoomRefused as exc:
            self.refused(exc, None)

    async def select(self, cell: Cell) -> None:
        conn = self.conn
        room = await self.rooms.latest(self.room_id)
        if room.status is not Status.PLAYING:
            self.notice(_("The game is not running.") if room.status is Status.OVER else
                        _("Waiting for the second player to join."))
            return
        if not _hidden(room, conn.viewer, cell):
            self.notice(_("That cell is already open."))
            return
        old = conn.selected
        if old is not None and old[0] == cell:
            conn.selected = (cell, "mark") if old[1] == "explore" else None
        else:
            conn.selected = (cell, "explore")
        conn.asking_resign = False
        self.redraw(room, [cell] + ([old[0]] if old is not None and old[0] != cell else []), focus=cell)

    async def goto(self, msg: wire.GoTo) -> None:
        """Focus the named cell (the keyboard's way across the board); the selection stays."""
        room = await self.rooms.latest(self.room_id)
        self.conn.push(goto_frame(self.html, room, self.conn.viewer, msg, self.conn.selected))

    async def move(self, cell: Cell, action: str, seen: int | None, started: float) -> None:
        move = wire.cell_move(action, cell)
        if move is None:
            self.notice(_("The server did not understand that click; please reload the page."), "error")
            return
        old = self.conn.selected
        self.conn.refocus = cell  # the frame that shows the move brings focus back to the cell
        room = await self.play(move, seen, started, cell)
        if room is None:
            self.conn.refocus = None
            return
        newer = self.hub.room(self.room_id)
        if newer is not None and newer.version > room.version:
            room = newer  # later versions reached this page while the move was being committed
        self.conn.selected = None
        self.conn.asking_resign = False
        self.redraw(room, [old[0]] if old is not None and old[0] != cell else [])
        self.notice("")

    async def play(self, move: Any, seen: int | None, started: float, cell: Cell | None) -> Room | None:
        """Play ``move`` for this page's player; the room after it, or ``None`` if it was
        refused (the page then got a notice saying why, and a fresh board when it was stale)."""
        conn = self.conn
        if seen is None:
            conn.version = None
            self.hub.send_snapshot(conn, await self.rooms.latest(self.room_id))
            self.notice(_("Your page did not say which board it showed, so that was not played. "
                          "Here is the current board."), "error")
            return None
        try:
            return await self.rooms.act(self.room_id, self.player, Play(move), seen, started)
        except RoomRefused as exc:
            self.refused(exc, cell)
            return None

    def refused(self, exc: RoomRefused, cell: Cell | None) -> None:
        """A notice saying why the room refused this page's action."""
        code, room = exc.code, exc.room
        if code is Refused.STALE:
            if room is not None:
                self.hub.send_snapshot(self.conn, room)
            self.notice(refusal_notice(code))
        elif code is Refused.TIME_OUT:
            self.notice(refusal_notice(code), "error")
        elif code is Refused.NOT_PLAYING:
            self.notice(refusal_notice(code))
        elif code is Refused.NOT_YOUR_TURN and room is not None:
            to_move = room.view(self.conn.viewer).to_move
            who = seat_name(player_names(room), to_move) if to_move is not None else _("your opponent")
            kept = " " + _("Your selection is kept.") if self.conn.selected is not None else ""
            self.notice(_("It is %(name)s\u2019s turn \u2014 wait for their move.") % {"name": who} + kept)
        elif code is Refused.CELL_NOT_HIDDEN and room is not None:
            old = self.conn.selected
            self.conn.selected = None
            self.redraw(room, [old[0]] if old else [])
            self.notice(refusal_notice(code))
        elif code is Refused.GAME_OVER:
            self.notice(refusal_notice(code))
        else:
            self.notice(refusal_notice(code, exc.message), "error")


def _hidden(room: Room, viewer: int, cell: Cell) -> bool:
    view = room.view(viewer)
    r, c = cell
    return 0 <= r < view.height and 0 <= c < view.width and view.rows[r][c] in (HIDDEN, OWN_WRONG_MARK)


def goto_frame(html: HtmlCodec, room: Room, viewer: int, msg: wire.GoTo,
               selected: tuple[Cell, str] | None = None) -> str:
    """The answer to the "go to cell" field (a duel's page and a classic game's): the named
    cell with the focus, or a notice saying why not; either way the field comes back empty (a
    name typed next was appended to the refused one) and a notice of an earlier try goes."""
    if room.status is not Status.PLAYING:
        return html.notice(_("The game is not running.") if room.status is Status.OVER else
                           _("Waiting for the second player to join.")) + html.goto_field()
    view = room.view(viewer)
    cell = msg.cell
    if cell is None or not (0 <= cell[0] < view.height and 0 <= cell[1] < view.width):
        text = _("There is no cell %(name)s: type a letter and a number, such as f6.") % {"name": msg.text}
        return html.notice(text) + html.goto_field()
    return html.focus(room, viewer, cell, selected, goto=True) + html.notice("")

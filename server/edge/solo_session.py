"""A classic (solo) game's page: its clicks become moves, at once.

A click on a hidden cell opens it (``mode=reveal``, the default) or toggles its flag
(``mode=flag``: right clicks need JavaScript, which the site does not write); a click on an
open number chords. There is no selection step: the player plays fast, and so a click is not
checked against the version the page showed (``seen_version=None``): a solo board changes only
by its player's own clicks, and a click whose cell another click has opened meanwhile is
refused as already open, changing nothing.
"""

from __future__ import annotations

from typing import Any

from engine import Chord, Flag, Reveal
from engine.classic_view import FLAG

from ..core.commands import Play, Refused
from ..core.room import Player
from ..store.service import RoomRefused
from ..web.html_codec import HtmlCodec
from ..web.i18n import N_, _
from . import wire
from .browser_session import goto_frame
from .refusals import NOTICES

HINTS = {Refused.CELL_NOT_HIDDEN, Refused.CELL_FLAGGED, Refused.CHORD_NOT_SATISFIED, Refused.GAME_OVER}
"""Refusals that are a hint about the board (an "info" notice), not an error."""


class SoloSession:
    def __init__(self, conn: Any, player: Player | None, room_id: str, state: Any, html: HtmlCodec,
                 source: str | None = None) -> None:
        self.conn = conn
        self.source = source
        """The page's address: what a no-guess first click's share of the board worker is counted by."""
        self.player = player
        self.room_id = room_id
        self.rooms = state.rooms
        self.html = html

    def notice(self, message: str, kind: str = "info") -> None:
        """``message`` (English, marked) in the reader's language; an unknown one as it is."""
        self.conn.push(self.html.notice(_(message) if message else "", kind))

    async def handle(self, msg: wire.BrowserMessage, started: float) -> None:
        if self.conn.viewer != 0:
            self.notice(N_("You are watching this game; only its player can play."))
            return
        if isinstance(msg, wire.GoTo):
            self.conn.push(goto_frame(self.html, await self.rooms.latest(self.room_id), 0, msg))
            return
        if not isinstance(msg, wire.CellClick):
            return  # no buttons but cells (and the "go to cell" field) on a solo page
        room = await self.rooms.latest(self.room_id)
        view = room.view(0)
        r, c = msg.cell
        if not (0 <= r < view.height and 0 <= c < view.width):
            self.notice(NOTICES[Refused.OUT_OF_RANGE], "error")
            return
        ch = view.rows[r][c]
        if ch.isdigit():
            move: Any = Chord(msg.cell)
        elif msg.mode == "flag":
            move = Flag(msg.cell)
        elif ch == FLAG:
            self.notice(NOTICES[Refused.CELL_FLAGGED])  # (what the engine would refuse, said before asking)
            return
        else:
            move = Reveal(msg.cell)
        try:  # the frame that shows the move morphs the cell in place: a focused cell stays focused
            await self.rooms.act(self.room_id, self.player, Play(move), None, started, source=self.source)
        except RoomRefused as exc:
            self.notice(NOTICES.get(exc.code, exc.message), "info" if exc.code in HINTS else "error")
            return
        self.notice("")

"""What one browser connection is sent besides the fan-out's frames: its selection and focus,
its notices, the claim area, the selection panel, a move's toast.

These are for one socket (:mod:`server.edge.browser_session`), never shared between viewers:
a selection is one page's, a notice answers one page's click. Pure rendering with the room
page's macros; :class:`server.web.html_codec.HtmlCodec` is one of these too.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from jinja2 import Environment
from markupsafe import Markup

from engine import MoveLine, cell_name

from ..core.room import Room, Status
from .presence_view import ClaimLook
from .template_env import RoomMacros
from .view_model import cell_look, move_text, player_names


class ConnectionHtml(RoomMacros):
    """One connection's elements (a base of :class:`~server.web.html_codec.HtmlCodec`)."""

    def __init__(self, env: Environment | None = None) -> None:
        super().__init__(env)
        self._notice_keys = itertools.count(1)
        """Keys of the notices' elements: each message is a new element inside the kept
        ``#notice`` live region (morphed), so it is announced and fades out again even when the
        same words come twice."""

    def toast(self, room: Room, lines: Sequence[MoveLine]) -> Markup:
        """The ``toast`` element: what the move lines ``lines`` (of one viewer's view) did."""
        names = player_names(room)
        return self.m.toast([move_text(line, names) for line in lines])

    def selection_panel(self, panel: dict[str, str] | None, playable: bool, confirming_resign: bool = False) -> str:
        """Only the selection panel (``panel``: ``{"name": "f6", "action": "explore"}`` or ``None``)."""
        return str(self.m.selection(panel, playable, confirming_resign))

    def goto_field(self) -> str:
        """The "go to cell" field, empty."""
        return str(self.m.goto_field())

    def notice(self, message: str, kind: str = "info") -> str:
        """The ``notice`` element saying ``message`` (empty: none)."""
        return str(self.m.notice(message, kind, next(self._notice_keys) if message else ""))

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
        return out + (self.goto_field() if goto else "")

"""A finished duel's replay step as room-page elements: the board, the move list, the mines
counter and the replay bar after ``at`` log entries, and its odds element (a classic game's
step is :meth:`server.web.solo_codec.SoloHtml.replay`, with the same replay bar).

Pure rendering with the room page's macros (``m``: :class:`server.web.template_env.RoomMacros`);
the page (``/g/{id}?at=N``), the htmx steps (``/g/{id}/replay``, ``/g/{id}/odds``) and a finished
game's snapshot all come from here. Only finished games are replayed: every position shown is
public then.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from engine import SPECTATOR, Explore, Mark

from ..core.room import Room
from ..store.analyses import StoredAnalysis
from .end_view import ReplayLook, clamp_step
from .i18n import _
from .odds_view import odds_look, overlay
from .status_view import leaver_of, outcome_text
from .view_model import board_looks, move_text, player_names, seat_names


def replay_parts(m: Any, room: Room, at: int, analysis: StoredAnalysis | None = None, odds: bool = False,
                 odds_failed: bool = False) -> dict[str, Any]:
    """The board, move list and replay bar of a finished game after ``at`` log entries
    (clamped to the game; ``look`` is the :class:`ReplayLook`; the others are elements
    swapped by id). Raises ``ValueError`` before the end.

    A duel also gets its ``odds`` element (:mod:`server.web.odds_view`): from ``analysis``
    (the game's stored analysis), else one that loads itself (or, ``odds_failed``, says it
    could not be made); ``odds``: the board shows the overlay (with ``analysis``)."""
    log = room.game.log
    at = clamp_step(at, len(log))
    view = room.game.position(at)
    names = player_names(room)
    line, _number = step_line(room, at, names)
    shown = len(view.moves)
    final = room.view(SPECTATOR)
    look = ReplayLook(room.id, at, len(log), view.scores, line, odds)
    cells = board_looks(view, names, playable=False, end="final" if at == len(log) else "replay")
    out: dict[str, Any] = {}
    if room.kind == "duel":
        out["odds"] = odds_element(m, room, at, analysis, odds, odds_failed)
        if odds and analysis is not None:
            cells = overlay(cells, analysis, at)
    return {
        **out,
        "board": m.board(cells, view.width, False, True),
        # the move list as it stood after move ``at``, newest (the current one) first
        "moves": m.moves([move_text(x, names) for x in reversed(final.moves[:shown])],
                         shown if at < len(log) else None),
        "mines-left": m.mines_left(view.mines_left, view.total_mines),
        "replay": m.replay(look, seat_names(names)),
        "look": look,
    }


def odds_element(m: Any, room: Room, at: int, analysis: StoredAnalysis | None, on: bool = False,
                 failed: bool = False) -> Markup:
    """Only the ``odds`` element of a finished duel's replay step ``at`` (clamped): no replay
    of the game is needed for it (see :func:`replay_parts`)."""
    at = clamp_step(at, len(room.game.log))
    names = player_names(room)
    line, number = step_line(room, at, names)
    return m.odds(odds_look(room.id, at, on, analysis, names, number,
                            line if at else _("The start: no move yet."), failed=failed))


def step_line(room: Room, at: int, names: Sequence[str | None]) -> tuple[str, int | None]:
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
    return (outcome_text(final.outcome, final.scores, names, SPECTATOR, leaver_of(room)) if final.outcome else ""), None

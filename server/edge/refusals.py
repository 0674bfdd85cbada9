"""What a refused action says to a person in the browser: one sentence per refusal code.

The room core refuses with a code (:class:`~server.core.commands.Refused`) and an English
message for the JSON and msgpack edges; a page shows the reader a sentence in their language
instead. Every code has one here, so no refusal reaches a German page in English (a test
holds the table to the enum). The sentences are English msgids, marked for the catalogs and
translated where they are shown (:func:`refusal_notice`).
"""

from __future__ import annotations

from ..core.commands import Refused
from ..web.i18n import N_, _

NOTICES: dict[Refused, str] = {
    Refused.STALE: N_("The board changed before your move arrived, so it was not played. "
                      "Here is the current board \u2014 have another look."),
    Refused.NOT_SEATED: N_("Only the game\u2019s players can do that."),
    Refused.NOT_PLAYING: N_("Waiting for the second player to join."),
    Refused.ROOM_FULL: N_("Both seats of this game are taken."),
    Refused.NOT_OVER: N_("That is only possible once the game is over."),
    Refused.TIME_OUT: N_("Your time ran out before the move arrived."),
    Refused.OPPONENT_PRESENT: N_("Your opponent is still connected: a game can be claimed only after they "
                                "have been away for a while."),
    Refused.NO_OFFER: N_("There is no rematch offer to answer."),
    Refused.GAME_OVER: N_("The game is over."),
    Refused.NOT_YOUR_TURN: N_("It is not your turn \u2014 wait for your opponent\u2019s move."),
    Refused.NOT_A_SEAT: N_("That is not a seat of this game."),
    Refused.OUT_OF_RANGE: N_("That cell is not on the board."),
    Refused.CELL_NOT_HIDDEN: N_("That cell is already open."),
    Refused.NOT_A_MOVE: N_("That is not a move of this game."),
    Refused.CELL_FLAGGED: N_("That cell has a flag: switch to flag mode to take it away."),
    Refused.CHORD_NOT_SATISFIED: N_("A number opens its neighbours only when exactly that many flags are around it."),
    Refused.TOO_LATE_TO_ABORT: N_("Both players have moved: the game can no longer be aborted (you can resign)."),
    Refused.UNKNOWN_ROOM: N_("This game no longer exists."),
    Refused.BUSY: N_("The game is busy right now; please try again."),
    Refused.BOARD_PENDING: N_("One of your boards is still being made; click again once it is there."),
}
"""English, marked for the catalogs; shown through :func:`refusal_notice`."""


def refusal_notice(code: Refused | str, message: str = "") -> str:
    """The sentence for refusal ``code`` in the language of the render in progress
    (``message``, the core's own English, only for a code this table does not know)."""
    try:
        return _(NOTICES[Refused(code)])
    except (KeyError, ValueError):
        return message

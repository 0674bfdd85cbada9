"""What a finished game's page says besides its board: the fairness check, the replay bar and
the rematch offer (plain values)."""

from __future__ import annotations

from dataclasses import dataclass

from engine import View, cell_name, verify

from ..core.rematch import accepts_rematch
from ..core.room import Room
from .i18n import _
from .view_model import display_name

# ---------------------------------------------------------------------- the fairness check and the replay


@dataclass(frozen=True, slots=True)
class FairLook:
    commitment: str
    salt: str | None
    verified: bool | None
    """``None`` while the game is on (nothing to check yet)."""
    mines: str = ""


def fair_look(view: View) -> FairLook:
    if view.salt is None or view.mines is None:
        return FairLook(view.commitment, None, None)
    ok = verify(view.commitment, view.width, view.height, view.mines, view.salt)
    return FairLook(view.commitment, view.salt, ok, " ".join(cell_name(m) for m in view.mines))


def clamp_step(at: int, total: int) -> int:
    """Replay step ``at`` of a game of ``total`` log entries, within ``0..total``: a step
    before the start is the start, one past the end the final position."""
    return max(0, min(at, total))


@dataclass(frozen=True, slots=True)
class ReplayLook:
    """The replay bar of a finished game (a duel's or a classic game's): where the step shown
    stands and what led to it."""

    room_id: str
    at: int
    """Moves applied (0 = the start); ``total`` = the final position."""
    total: int
    scores: tuple[int, int] | None
    """The duel's score at the step; ``None`` for a classic game (it has none)."""
    line: str
    """The move that led to step ``at``, in words ("The start" at 0)."""
    odds: bool = False
    """The odds overlay is on: the steps keep it on."""

    @property
    def first(self) -> bool:
        return self.at == 0

    @property
    def last(self) -> bool:
        return self.at >= self.total

    def href(self, at: int) -> str:
        """Step ``at``'s fragments (the htmx GET)."""
        return f"/g/{self.room_id}/replay?at={clamp_step(at, self.total)}" + ("&odds=1" if self.odds else "")

    def page_href(self, at: int) -> str:
        """Step ``at``'s page: the link's target without htmx, and the URL htmx pushes."""
        return f"/g/{self.room_id}?at={clamp_step(at, self.total)}" + ("&odds=1" if self.odds else "")


@dataclass(frozen=True, slots=True)
class OfferLook:
    state: str | None
    """``theirs`` (the viewer may accept or decline), ``mine`` (waiting for the answer),
    ``declined`` (the last offer was declined or withdrawn) or ``None``."""
    by: str = ""
    """Who offered (its name)."""
    to: str = ""
    """Who is asked (its name)."""
    text: str = ""
    instant: bool = False
    """A rematch needs nobody's answer (the opponent is a computer): "Play again"."""


def rematch_offer_look(room: Room, viewer: int) -> OfferLook:
    """What the end screen says about a rematch offer, for ``viewer``."""
    names = [display_name(p.name) if p else "" for p in room.players]
    offer, declined = room.rematch_offer, room.rematch_declined
    instant = viewer in (0, 1) and accepts_rematch(room, viewer) and offer is None
    if offer is not None:
        state = "mine" if offer == viewer else "theirs"
        return OfferLook(state, names[offer], names[1 - offer] if len(names) > 1 else "")
    if declined is not None:
        text = _("You declined the rematch.") if declined == viewer else \
            _("%(name)s declined the rematch.") % {"name": names[declined]}
        return OfferLook("declined", text=text, instant=instant)
    return OfferLook(None, instant=instant)



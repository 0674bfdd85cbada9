"""What the odds part of a finished duel's replay says, as plain values (the HTML view model of
the post-game analysis, :mod:`server.store.analyses`; the macro ``odds`` in
``web/templates/_room.html`` decides the markup).

Pure: it reads a :class:`~server.store.analyses.StoredAnalysis` (figures rounded once to
floats) and formats them; :func:`engine.analysis.percent_code` is the one way a probability is
rounded, so the page and the API's floats always agree, and :func:`chance_text` writes it in the
reader's language (:func:`server.web.i18n.percent`: ``41%``, German ``41 %``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine import cell_name
from engine.analysis import LESS_THAN_1, MORE_THAN_99, NOT_HIDDEN, percent_code

from ..store.analyses import StoredAnalysis
from .i18n import MINUS, _, number, percent
from .view_model import CellLook, action_word, seat_name


def signed(x: float) -> str:
    """Points to one decimal with a sign, in the reader's language (:func:`~server.web.i18n.number`):
    ``+0.8``, ``−1.3`` (a real minus sign), ``±0.0``; German ``+0,8``."""
    text = number(x, 1)
    if text == number(0, 1):
        return "\u00b1" + text
    return text if text.startswith(MINUS) else "+" + text


def code_text(code: int) -> str:
    """A :func:`engine.analysis.percent_code` as the reader writes it: ``41%``, ``<1%``,
    ``>99%``; German ``41\u00a0%``, ``<1\u00a0%``."""
    if code == LESS_THAN_1:
        return "<" + percent(0.01)
    if code == MORE_THAN_99:
        return ">" + percent(0.99)
    return percent(code / 100)


def chance_text(p: float) -> str:
    """A probability as people read it (:func:`engine.analysis.percent`'s rounding, the reader's
    way of writing a percentage): ``0%`` and ``100%`` only when exact."""
    return code_text(percent_code(p))


@dataclass(frozen=True, slots=True)
class MoveOddsLook:
    """The figures of the move that led to the replay step shown."""

    who: str
    action: str
    """``explore`` or ``mark``."""
    where: str
    chance_label: str
    chance: str
    """The chosen cell's mine chance (for a mark: the chance it was right), e.g. ``41%``."""
    best_label: str
    best: str
    """The best cell's for that action: the lowest mine chance, or the highest for a mark."""
    verdict: str
    """``certain``, ``safest`` or ``risky: 41% vs 0% available``."""
    fortune: str | None
    points: str
    expected: str
    css: str
    """``certain``, ``safest`` or ``risky``."""


@dataclass(frozen=True, slots=True)
class PlayerOddsLook:
    seat: int
    name: str
    moves: int
    safest: str
    """Share of moves that took the least risk available, ``82%`` (German ``82\u00a0%``; ``–``
    without moves)."""
    excess: str
    """Mean risk taken above the least available, in percentage points, ``4.1%`` (``4,1\u00a0%``)."""
    luck: str
    """Points scored minus the points the moves were worth on average, ``+1.5``."""


@dataclass(frozen=True, slots=True)
class OddsLook:
    room_id: str
    at: int
    on: bool
    """The board shows the overlay."""
    pending: bool = False
    """Not worked out yet: the element loads itself (htmx ``load``) from the replay step."""
    failed: bool = False
    move: MoveOddsLook | None = None
    note: str = ""
    """What led to this step when it was no explore or mark (the start, a resignation...)."""
    whose: str = ""
    """Whose odds the overlay shows."""
    players: tuple[PlayerOddsLook, ...] = ()

    def href(self, on: bool) -> str:
        return f"/g/{self.room_id}/replay?at={self.at}" + ("&odds=1" if on else "")

    @property
    def load_href(self) -> str:
        """Where a pending element gets itself: the element alone (no replay of the game)."""
        return f"/g/{self.room_id}/odds?at={self.at}" + ("&odds=1" if self.on else "")

    def page_href(self, on: bool) -> str:
        return f"/g/{self.room_id}?at={self.at}" + ("&odds=1" if on else "")


def move_look(data: dict, names: Sequence[str | None]) -> MoveOddsLook:
    """The look of one move's figures (an item of ``StoredAnalysis.moves``)."""
    explore = data["action"] == "explore"
    css = "certain" if data["certain"] else "safest" if data["safest"] else "risky"
    best = chance_text(data["p_min"] if explore else data["p_max"])
    return MoveOddsLook(
        who=seat_name(names, data["seat"]),
        action=action_word(data["action"]),
        where=cell_name(tuple(data["cell"])),
        chance_label=_("mine chance") if explore else _("chance the mark was right"),
        chance=chance_text(data["p_mine"]),
        best_label=_("safest cell") if explore else _("likeliest mine"),
        best=best,
        verdict=verdict_text(css, chance_text(data["p_mine"]), best),
        fortune=None if data["fortune"] is None else _("lucky") if data["fortune"] == "lucky" else _("unlucky"),
        points=signed(data["points"]),
        expected=signed(data["expected_points"]),
        css=css,
    )


def verdict_text(css: str, chance: str, best: str) -> str:
    """The engine's verdict (``MoveOdds.verdict``) in the reader's words: ``certain``,
    ``safest`` or ``risky: 41% vs 0% available``."""
    if css == "certain":
        return _("certain")
    if css == "safest":
        return _("safest")
    return _("risky: %(chance)s vs %(best)s available") % {"chance": chance, "best": best}


def player_looks(analysis: StoredAnalysis, names: Sequence[str | None]) -> tuple[PlayerOddsLook, ...]:
    out = []
    for data in analysis.players:
        share, excess = data["safest_share"], data["excess_risk"]
        out.append(PlayerOddsLook(
            seat=data["seat"],
            name=seat_name(names, data["seat"]),
            moves=data["moves"],
            safest="\u2013" if share is None else percent(share),
            excess="\u2013" if excess is None else percent(excess, 1),
            luck=signed(data["luck"]),
        ))
    return tuple(out)


def odds_look(room_id: str, at: int, on: bool, analysis: StoredAnalysis | None, names: Sequence[str | None],
              move_number: int | None, note: str, *, failed: bool = False) -> OddsLook:
    """The odds element at replay step ``at``: ``move_number`` is the move-list number of the
    explore or mark that led to it (``None``: the start, or a resignation... said by
    ``note``). ``analysis`` ``None``: still to come (``failed``: it could not be made)."""
    if analysis is None:
        return OddsLook(room_id, at, on, pending=not failed, failed=failed)
    found = analysis.move(move_number) if move_number is not None else None
    step = analysis.step(at)
    if step is None:
        whose = ""
    elif step[0] is None:
        whose = _("what everybody knew at the end")
    else:
        whose = _("the odds %(name)s had for the next move") % {"name": seat_name(names, step[0])}
    return OddsLook(room_id, at, on, move=move_look(found, names) if found is not None else None, note=note,
                    whose=whose, players=player_looks(analysis, names))


def tint(code: int) -> str:
    """The overlay's class for a :func:`engine.analysis.percent_code`."""
    if code == 0:
        return "odds-safe"
    if code == 100:
        return "odds-mine"
    if code == LESS_THAN_1:
        return "odds-t1"
    if code == MORE_THAN_99:
        return "odds-t10"
    return f"odds-t{max(1, min(10, -(-code // 10)))}"


def overlay(cells: list[CellLook], analysis: StoredAnalysis, at: int) -> list[CellLook]:
    """``cells`` (the board row by row) with every hidden cell of replay step ``at`` tinted by
    its mine chance: a class, the chance in its label (screen readers) and as the text shown on
    hover or focus; proven safe cells and proven mines say so."""
    step = analysis.step(at)
    if step is None:
        return cells
    _seat, codes = step
    out = []
    for look, code in zip(cells, codes, strict=False):
        if code == NOT_HIDDEN:
            out.append(look)
            continue
        text = code_text(code)
        said = _("proven safe") if code == 0 else _("proven mine") if code == 100 else \
            _("%(chance)s mine") % {"chance": text}
        out.append(replace(look, css=f"{look.css} odds {tint(code)}", label=f"{look.label}, {said}", odds=text))
    return out

"""What each element of a room page says, as plain values: the HTML view model (its small
words, move lines and cells; :mod:`.status_view` says the status, players and clocks,
:mod:`.end_view` the fairness check, replay and rematch offer, :mod:`.presence_view` who left
and what may be done about it).

Pure: no I/O, no templates; the only outside fact read is the time, passed in as ``now_ms``.
Python decides *what* each element says (classes, labels, texts: :class:`CellLook`,
:func:`move_text`, :func:`status_look`...); the Jinja2 macros in ``web/templates/_room.html``
decide the markup (:mod:`server.web.html_codec`). Everything comes from ``room.view(viewer)``:
the only per-viewer facts are the viewer's own wrong marks, which the engine puts in that
seat's view alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine import MoveLine, View, cell_name
from engine.encoding import CHAR_CLAIMS, HIDDEN, OWN_WRONG_MARK, UNCLAIMED_MINE
from engine.rules import Claim, Ruleset, Verdict

from ..core.computer import NAMES as COMPUTER_STORED_NAMES
from ..core.room import Room
from .i18n import MINUS, N_, _, ngettext, pgettext

COMPUTER_NAMES = {1: N_("Computer (easy)"), 2: N_("Computer (medium)"), 3: N_("Computer (strong)")}
"""A computer's name per level, as pages show it (translated where shown); the English is the
name it is stored under (:data:`server.core.computer.NAMES`)."""
_COMPUTER_LEVELS = {name: int(level) for level, name in COMPUTER_STORED_NAMES.items()}


# ---------------------------------------------------------------------- small words


def score_text(points: int) -> str:
    """A score: ``12``, ``0``, ``−4`` (a real minus sign). The one way a single score is
    written (cards, their labels, the replay bar, results, lists)."""
    return f"{MINUS}{-points}" if points < 0 else str(points)


def score_pair_text(first: int, second: int) -> str:
    """Two scores side by side, ``12 : −4`` (no-break spaces around the colon): the one way a
    game's score is written (results, the replay bar, the lobby, players' lists)."""
    return f"{score_text(first)}\u00a0:\u00a0{score_text(second)}"


def points_text(points: int) -> str:
    """``+4``, ``−3`` (a real minus sign), ``±0``."""
    if points > 0:
        return f"+{points}"
    if points < 0:
        return f"{MINUS}{-points}"
    return "\u00b10"


def ruleset_label(name: str) -> str:
    """"Brettspielnetz rules" or "Coan rules", as pages name a ruleset."""
    return _("Brettspielnetz rules") if name == "brettspielnetz" else _("Coan rules")


def rule_points(rules: Ruleset) -> dict[str, Any]:
    """A ruleset's points as pages say them (the game page's "How to play", ``/rules``), from
    the ruleset itself: ``hit``, ``wrong``, ``table`` (each mark's in turn, or the one value of
    a flat table), ``explore_scores``."""
    table = rules.mark_table
    return {"hit": points_text(rules.hit_points), "wrong": points_text(rules.wrong_mark_points),
            "table": points_text(table[0]) if len(set(table)) == 1 else ", ".join(points_text(p) for p in table),
            "explore_scores": rules.explore_scores}


def display_name(name: str) -> str:
    """A player's name as pages show it: a person's as registered, a computer's from its level
    in the reader's language ("Computer (mittel)"). A computer is known by its stored name,
    which no person may take (``server.edge.guests.reserved_names``), so lists that keep only names
    (the lobby's rows, game summaries) show it right too; what is stored, and what the JSON API
    says, stays the English name. Every name rendered into HTML goes through here."""
    level = _COMPUTER_LEVELS.get(name)
    return name if level is None else _(COMPUTER_NAMES[level])


def seat_name(names: Sequence[str | None], seat: int) -> str:
    """The name of ``seat`` as shown (:func:`display_name`; "Player 1" for an open seat)."""
    name = names[seat]
    return display_name(name) if name else (_("Player 1") if seat == 0 else _("Player 2"))


def seat_names(names: Sequence[str | None]) -> tuple[str, str]:
    """Both seats' names as shown (:func:`seat_name`)."""
    return seat_name(names, 0), seat_name(names, 1)


def initial(name: str | None) -> str:
    """The first letter of a name, for the small badge on claimed mines."""
    for ch in name or "":
        if ch.isalnum():
            return ch.upper()
    return "?"


@dataclass(frozen=True, slots=True)
class MoveText:
    """One move-list line as words: ``7. Anna mark d9 Gut! +4``."""

    number: int
    seat: int
    who: str
    action: str
    where: str
    """The cell name, or ``?`` for somebody else's wrong mark."""
    verdict: str
    points: str
    auto: int
    css: str

    @property
    def text(self) -> str:
        base = f"{self.number}. {self.who} {self.action} {self.where} {self.verdict} {self.points}"
        return base + (f" \u00b7 {revealed_text(self.auto)}" if self.auto else "")


def revealed_text(n: int) -> str:
    """``3 revealed``: the cells a move's deduction opened."""
    return ngettext("%(num)d revealed", "%(num)d revealed", n) % {"num": n}


def action_word(action: str) -> str:
    """A move's action as the move list says it (``explore``, ``mark``); the verdicts "Gut!",
    "Autsch!", "Blubb!" are the game's own words in every language."""
    return pgettext("move list", "explore") if action == "explore" else pgettext("move list", "mark")


_VERDICT_CSS = {Verdict.GUT: "gut", Verdict.AUTSCH: "autsch", Verdict.BLUBB: "blubb"}


def move_text(line: MoveLine, names: Sequence[str | None]) -> MoveText:
    return MoveText(
        number=line.number,
        seat=line.seat,
        who=seat_name(names, line.seat),
        action=action_word(line.action.value),
        where=cell_name(line.cell) if line.cell is not None else "?",
        verdict=line.verdict.value,
        points=points_text(line.points),
        auto=line.auto_revealed,
        css=f"p{line.seat} {_VERDICT_CSS[line.verdict]}",
    )


# ---------------------------------------------------------------------- cells


@dataclass(frozen=True, slots=True)
class CellLook:
    """Everything the ``cell`` macro needs for one board cell."""

    r: int
    c: int
    css: str
    label: str
    text: str = ""
    """The digit shown (empty for 0 and for non-number cells)."""
    badge: str = ""
    """A claimer's initial on marked/hit mines and wrong marks shown at the end."""
    playable: bool = False
    """A hidden cell the viewer may click (a button that sends ``cell=r-c``); any other cell is
    an inert button (``aria-disabled``, out of the Tab order), not a disabled one, so a cell
    that had the focus keeps it when it opens or the game ends."""
    autofocus: bool = False
    """Keyboard focus goes here when the element is swapped in."""
    selected: bool = False
    """Selected by this connection (its look and label; Alt+C confirms it)."""
    odds: str = ""
    """A replay's odds overlay: the cell's mine chance (``41 %``), shown on hover or focus
    (server/web/odds_view.py); the cell is then focusable."""

    @property
    def id(self) -> str:
        return f"cell-{self.r}-{self.c}"

    @property
    def value(self) -> str:
        return f"{self.r}-{self.c}"


SELECT_EXPLORE, SELECT_MARK = "explore", "mark"


def cell_look(
    view: View,
    r: int,
    c: int,
    names: Sequence[str | None],
    *,
    playable: bool,
    selected: str | None = None,
    autofocus: bool = False,
    end: str | None = None,
) -> CellLook:
    """The look of cell ``(r, c)`` in ``view``.

    ``playable``: the viewer holds a seat in a running game (hidden cells become buttons).
    ``selected``: this connection's selection on the cell (``"explore"``/``"mark"``).
    ``end``: what a finished game publishes, for its final board (``"final"``: every wrong
    mark, the numbers of never-opened cells) or a replay position (``"replay"``: the hidden
    mines faintly, the wrong marks made so far). ``None`` while the game is on.
    """
    ch = view.rows[r][c]
    name = cell_name((r, c))
    classes = ["cell"]
    text, badge = "", ""
    said: list[str] = []
    """What the label adds after the cell's description (joined with commas)."""
    hidden = ch in (HIDDEN, OWN_WRONG_MARK)
    ghosts = end is not None
    mines = set(view.mines) if ghosts and view.mines is not None else None

    if ch.isdigit():
        n = int(ch)
        classes += ["open", f"n{n}"]
        text = ch if n else ""
        label = f"{name}, {n}"
    elif ch in CHAR_CLAIMS:
        seat, claim = CHAR_CLAIMS[ch]
        who = seat_name(names, seat)
        badge = initial(who)
        if claim is Claim.MARKED:
            classes += ["mine", "marked", f"p{seat}"]
            label = _("%(cell)s, mine marked by %(name)s") % {"cell": name, "name": who}
        else:
            classes += ["mine", "hit", f"p{seat}"]
            label = _("%(cell)s, mine hit by %(name)s") % {"cell": name, "name": who}
    elif ch == UNCLAIMED_MINE:
        classes += ["mine", "unclaimed"]
        label = _("%(cell)s, mine") % {"cell": name}
    elif mines is not None and (r, c) in mines:
        classes += ["hidden", "ghost-mine"]
        label = _("%(cell)s, hidden mine") % {"cell": name}
    elif mines is not None and end == "final":
        # a safe cell nobody opened, shown with its number once the game is over
        n = view.neighbour_mines((r, c))
        classes += ["ghost", f"n{n}"]
        text = str(n) if n else ""
        label = _("%(cell)s, %(number)d, never opened") % {"cell": name, "number": n}
    else:
        classes.append("hidden")
        label = _("%(cell)s, hidden") % {"cell": name}
        if ch == OWN_WRONG_MARK:
            classes.append("wrong-own")
            said.append(_("your wrong mark"))

    if ghosts and ch not in CHAR_CLAIMS:
        # the end publishes every wrong mark, also on cells opened later
        for seat in (0, 1):
            if (r, c) in view.wrong_marks[seat]:
                who = seat_name(names, seat)
                classes += ["wrong", f"p{seat}"]
                badge = initial(who)
                said.append(_("wrong mark by %(name)s") % {"name": who})

    if (r, c) in view.last_opened:
        last_cell = view.moves[-1].cell if view.moves else None
        if (r, c) == last_cell:
            classes.append("last")
            said.append(_("last move"))
        elif end != "final":  # at the very end deduction often opens everything: no flood of colour
            classes.append("auto")
            said.append(_("revealed by deduction"))

    playable = playable and hidden and not ghosts
    is_selected = playable and selected in (SELECT_EXPLORE, SELECT_MARK)
    if is_selected:
        classes.append(f"sel-{selected}")
        said.append(_("selected to explore") if selected == SELECT_EXPLORE else _("selected to mark"))
    if said:
        label = ", ".join([label, *said])
    return CellLook(r, c, " ".join(classes), label, text, badge, playable, autofocus, is_selected)


def board_looks(view: View, names: Sequence[str | None], *, playable: bool, end: str | None = None) -> list[CellLook]:
    return [
        cell_look(view, r, c, names, playable=playable, end=end)
        for r in range(view.height)
        for c in range(view.width)
    ]


def player_names(room: Room) -> tuple[str | None, str | None]:
    """The seats' names as stored (``None``: open); :func:`seat_name` shows them. Stored, not
    translated: the lobby keeps them in rows read once for readers of every language."""
    return (
        room.players[0].name if room.players[0] else None,
        room.players[1].name if room.players[1] else None,
    )

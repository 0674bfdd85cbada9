"""Per-viewer views of a duel, and the difference between two of them.

There are three viewer classes: seat 0, seat 1 and spectators (``SPECTATOR`` = 2). This
module is the one place that decides what each may see, so the server can render a view
without knowing any rule:

- everybody sees revealed numbers, visible mines with who claimed them and how, scores,
  the move list (a wrong mark's cell only for its author), and the commitment;
- a seat also sees its own wrong marks (``x`` on the board, and in ``wrong_marks``);
- once the game is over everybody sees everything: every mine (``*`` where unclaimed),
  both seats' wrong marks, and the salt.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from .encoding import CLAIM_CHARS, HIDDEN, OWN_WRONG_MARK, changed_cells
from .events import Outcome
from .geometry import Cell, geometry
from .rules import Action, Verdict

if TYPE_CHECKING:
    from .duel import Duel

SEAT0, SEAT1, SPECTATOR = 0, 1, 2
VIEWERS = (SEAT0, SEAT1, SPECTATOR)


@dataclass(frozen=True, slots=True)
class MoveLine:
    """A move-list line as one viewer sees it: ``cell`` is ``None`` for others' wrong marks."""

    number: int
    seat: int
    action: Action
    cell: Cell | None
    verdict: Verdict
    points: int
    auto_revealed: int

    def to_data(self) -> list[Any]:
        cell = list(self.cell) if self.cell is not None else None
        # ``._value_``: the member's value without the ``value`` property, a Python-level
        # descriptor on CPython 3.11 (~1.5k instructions a read; every frame's new lines)
        return [self.number, self.seat, self.action._value_, cell, self.verdict._value_, self.points,
                self.auto_revealed]

    @classmethod
    def from_data(cls, data: list[Any]) -> "MoveLine":
        number, seat, action, cell, verdict, points, auto = data
        return cls(number, seat, Action(action), tuple(cell) if cell is not None else None,  # type: ignore[arg-type]
                   Verdict(verdict), points, auto)


@dataclass(frozen=True, slots=True)
class View:
    """Everything one viewer may see, as plain values. Equal views render identically."""

    viewer: int
    ruleset: str
    width: int
    height: int
    total_mines: int
    rows: tuple[str, ...]
    """One string per row in the :mod:`engine.encoding` alphabet."""
    scores: tuple[int, int]
    phase: str
    to_move: int | None
    """The seat to move, ``None`` once the game is over."""
    outcome: Outcome | None
    moves: tuple[MoveLine, ...]
    wrong_marks: tuple[tuple[Cell, ...], tuple[Cell, ...]]
    """Per seat; only the viewer's own before the end, both after."""
    last_opened: tuple[Cell, ...]
    """Cells opened by the last move and its auto-reveal (for highlighting)."""
    commitment: str
    salt: str | None = None
    """Published only once the game is over."""
    mines: tuple[Cell, ...] | None = None
    """The whole layout, published only once the game is over."""

    @property
    def mines_left(self) -> int:
        """Mines not yet visible."""
        visible = sum(1 for row in self.rows for ch in row if ch in _CLAIMED)
        return self.total_mines - visible

    def char(self, cell: Cell) -> str:
        return self.rows[cell[0]][cell[1]]

    def neighbour_mines(self, cell: Cell) -> int:
        """How many mines of the published layout lie around ``cell``: the number a safe cell
        that nobody opened would have shown. Raises ``ValueError`` before the layout is
        published (the end of the game)."""
        if self.mines is None:
            raise ValueError("the layout is published only once the game is over")
        return sum(1 for n in geometry(self.width, self.height).neighbours(cell) if n in self.mines)

    def to_data(self) -> dict[str, Any]:
        """Plain data (str, int, list, dict, None) with exact round-trip through :meth:`from_data`."""
        return {f.name: _encode(f.name, getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "View":
        return cls(
            viewer=data["viewer"],
            ruleset=data["ruleset"],
            width=data["width"],
            height=data["height"],
            total_mines=data["total_mines"],
            rows=tuple(data["rows"]),
            scores=(data["scores"][0], data["scores"][1]),
            phase=data["phase"],
            to_move=data["to_move"],
            outcome=Outcome.from_data(data["outcome"]) if data["outcome"] is not None else None,
            moves=tuple(MoveLine.from_data(m) for m in data["moves"]),
            wrong_marks=(_cells(data["wrong_marks"][0]), _cells(data["wrong_marks"][1])),
            last_opened=_cells(data["last_opened"]),
            commitment=data["commitment"],
            salt=data["salt"],
            mines=_cells(data["mines"]) if data["mines"] is not None else None,
        )


_CLAIMED = frozenset(ch for table in CLAIM_CHARS for ch in table.values())
_BLUBB = Verdict.BLUBB


def _encode(name: str, value: Any) -> Any:
    """One :class:`View` field as plain data (shared by whole views and diffs)."""
    if value is None:
        return None
    if name == "outcome":
        return value.to_data()
    if name == "moves":
        return [m.to_data() for m in value]
    if name == "wrong_marks":
        return [[list(c) for c in w] for w in value]
    if name in ("last_opened", "mines"):
        return [list(c) for c in value]
    if name in ("rows", "scores"):
        return list(value)
    return value


def _cells(items: list[Any]) -> tuple[Cell, ...]:
    return tuple((r, c) for r, c in items)


def _move_lines(duel: "Duel", viewer: int, over: bool) -> tuple[MoveLine, ...]:
    """The move list for ``viewer``: a wrong mark's cell is hidden from everyone but its
    author until the game is over. ``hidden`` has bit ``s`` set if seat ``s``'s are hidden."""
    hidden = 0 if over else (0b11 & ~(1 << viewer))

    def line(ln: Any) -> MoveLine:
        hide = ln.verdict is Verdict.BLUBB and (hidden >> ln.seat) & 1
        return MoveLine(ln.number, ln.seat, ln.action, None if hide else ln.cell, ln.verdict, ln.points,
                        ln.auto_revealed)

    # converted once per line (engine/memo.py): successive views share their MoveLine objects,
    # which also makes diff's comparison of move lists identity checks
    return duel.memo.get(duel.lines, ("moves", hidden), line)


def public_rows(duel: "Duel") -> tuple[str, ...]:
    """The board as everybody sees it: numbers, claimed mines and, once the game is over,
    every unclaimed mine. A seat's view adds its own wrong marks to these rows; pass them to
    :func:`view_of` to render several viewers' views of one duel without painting it again."""
    return tuple(duel.board_rows(unclaimed_mines=duel.outcome is not None))


def view_of(duel: "Duel", viewer: int, public: tuple[str, ...] | None = None) -> View:
    """The view of ``viewer`` (0, 1 or :data:`SPECTATOR`); raises ``ValueError`` for others.

    ``public``: :func:`public_rows` of this same duel, if the caller has it already."""
    if viewer not in VIEWERS:
        raise ValueError(f"viewer must be 0, 1 or {SPECTATOR}, not {viewer!r}")
    over = duel.outcome is not None
    setup = duel.setup
    shown_marks = tuple(
        tuple(sorted(marks)) if over or seat == viewer else () for seat, marks in enumerate(duel.wrong_marks)
    )
    rows = public if public is not None else public_rows(duel)
    if viewer != SPECTATOR and duel.wrong_marks[viewer]:
        rows = _with_own_wrong_marks(rows, duel.wrong_marks[viewer], setup.width)
    moves = _move_lines(duel, viewer, over)
    return View(
        viewer=viewer,
        ruleset=setup.ruleset,
        width=setup.width,
        height=setup.height,
        total_mines=setup.total_mines,
        rows=rows,
        scores=(duel.scores[0], duel.scores[1]),
        phase=duel.phase._value_,  # (see MoveLine.to_data)
        to_move=None if over else duel.to_move,
        outcome=duel.outcome,
        moves=moves,
        wrong_marks=(shown_marks[0], shown_marks[1]),
        last_opened=duel.last_opened,
        commitment=duel.commitment,
        salt=setup.salt if over else None,
        mines=tuple(sorted(setup.mines)) if over else None,
    )


def _with_own_wrong_marks(rows: tuple[str, ...], marks: set[Cell], width: int) -> tuple[str, ...]:
    """``rows`` with the seat's own wrong marks shown. A wrong mark is never on a mine, so only
    a number can cover it (the cell was revealed later): it shows where the cell is hidden."""
    grid = list(rows)
    for r, c in marks:
        if 0 <= r < len(grid) and 0 <= c < width and grid[r][c] == HIDDEN:
            grid[r] = grid[r][:c] + OWN_WRONG_MARK + grid[r][c + 1:]
    return tuple(grid)


@dataclass(frozen=True, slots=True)
class ViewDiff:
    """What changed between two views of the same viewer, for small live updates.

    ``cells`` lists every cell to redraw with its new character: those whose character changed
    and those whose highlight (``last_opened``) changed. ``changed`` maps the names of other
    :class:`View` fields that changed to their new values; ``moves`` holds appended lines,
    unless earlier lines changed too (at the end, when wrong marks' cells become public):
    then ``changed["moves"]`` holds the whole new list.
    """

    cells: tuple[tuple[int, int, str], ...]
    changed: dict[str, Any] = field(default_factory=dict)
    moves: tuple[MoveLine, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.cells or self.changed or self.moves)

    def to_data(self) -> dict[str, Any]:
        return {
            "cells": [list(c) for c in self.cells],
            "changed": {name: _encode(name, value) for name, value in self.changed.items()},
            "moves": [m.to_data() for m in self.moves],
        }


_DIFFED = ("scores", "phase", "to_move", "outcome", "wrong_marks", "last_opened", "salt", "mines")


def diff(old: View, new: View) -> ViewDiff:
    """The :class:`ViewDiff` that turns ``old`` into ``new`` (same viewer, same game, later)."""
    if (old.viewer, old.commitment) != (new.viewer, new.commitment):
        raise ValueError("views of different viewers or games")
    cells = changed_cells(old.rows, new.rows, new.width, old.last_opened, new.last_opened)
    changed = {name: getattr(new, name) for name in _DIFFED if getattr(new, name) != getattr(old, name)}
    if new.moves[: len(old.moves)] == old.moves:
        return ViewDiff(cells, changed, new.moves[len(old.moves):])
    # The end of the game rewrites earlier lines (wrong marks' cells become public): resend all.
    return ViewDiff(cells, {**changed, "moves": new.moves})


def diff_of_move(old: "Duel", new: "Duel", viewer: int) -> ViewDiff | None:
    """``diff(view_of(old, viewer), view_of(new, viewer))`` for ``new``, ``old`` plus one move
    while the game is on, worked out from what the move showed instead of from the two views;
    ``None`` where it cannot tell that cheaply (the game over in either, ``new`` not ``old``
    plus one move-list line, a viewer not of :data:`VIEWERS`): then diff the views.

    Why: the update frames need only the difference; making the new view (a View of 16
    fields and the viewer's move list) and comparing it with the old one field by field and
    row by row was ~175k instructions a move, two thirds of a frame (bench/path.py, explore
    moves: one viewer class). The move tells which cells changed: those it showed and those
    the previous move showed (``last_opened``, highlighted), and the mover's own wrong mark.
    Its dumb twin is that diff of the two views (tests/engine/test_duel_properties.py).
    """
    found = _move_change(old, new, viewer)
    if found is None:
        return None
    cells, changed, line, hide = found
    moved = MoveLine(line.number, line.seat, line.action, None if hide else line.cell, line.verdict, line.points,
                     line.auto_revealed)
    return ViewDiff(tuple(cells), changed, (moved,))


def diff_data_of_move(old: "Duel", new: "Duel", viewer: int) -> dict[str, Any] | None:
    """``diff_of_move(old, new, viewer).to_data()``, made without the ViewDiff and MoveLine
    objects (frozen dataclasses: ~11k instructions to make a MoveLine, ~40k for the three
    objects and their plain form a frame, against ~10k for the plain data itself)."""
    found = _move_change(old, new, viewer)
    if found is None:
        return None
    cells, changed, line, hide = found
    cell = line.cell
    return {
        "cells": [[r, c, ch] for r, c, ch in cells],
        "changed": {name: _encode(name, value) for name, value in changed.items()},
        "moves": [[line.number, line.seat, line.action._value_, None if hide else [cell[0], cell[1]],
                   line.verdict._value_, line.points, line.auto_revealed]],
    }


def _move_change(old: "Duel", new: "Duel", viewer: int) -> tuple[list, dict[str, Any], Any, bool] | None:
    """What :func:`diff_of_move` reports, as (cells, changed fields, the new move-list line,
    whether its cell is hidden from ``viewer``); ``None`` when it cannot tell."""
    if new.outcome is not None or old.outcome is not None or viewer not in VIEWERS:
        return None
    lines, before = new.lines, old.lines
    if len(lines) != len(before) + 1 or (before and lines[-2] is not before[-1]):
        return None
    line = lines[-1]
    shown = new.last_opened
    touched = {*old.last_opened, *shown}
    blubb = line.verdict is _BLUBB
    own = None  # the viewer's wrong marks, when this move added one
    if blubb and line.seat == viewer and line.cell not in old.wrong_marks[viewer]:
        own = new.wrong_marks[viewer]
        touched.add(line.cell)
    rows = new.public_rows()
    marks = new.wrong_marks[viewer] if viewer != SPECTATOR else ()
    cells = []
    for r, c in sorted(touched):
        ch = rows[r][c]
        if ch == HIDDEN and (r, c) in marks:
            ch = OWN_WRONG_MARK
        cells.append((r, c, ch))
    changed: dict[str, Any] = {}
    scores = new.scores
    if scores != old.scores:
        changed["scores"] = (scores[0], scores[1])
    if new.to_move != old.to_move:
        changed["to_move"] = new.to_move
    if own is not None:
        mine = tuple(sorted(own))
        changed["wrong_marks"] = (mine, ()) if viewer == SEAT0 else ((), mine)
    if shown != old.last_opened:
        changed["last_opened"] = shown
    return cells, changed, line, blubb and line.seat != viewer


def patch(old: View, change: ViewDiff) -> View:
    """Apply a :class:`ViewDiff` to the view it was made from: ``patch(a, diff(a, b)) == b``.

    Clients that keep a view (the Python client, bots, tests) use this on each update.
    """
    rows = [list(row) for row in old.rows]
    for r, c, ch in change.cells:
        rows[r][c] = ch
    changed = dict(change.changed)
    moves = changed.pop("moves", old.moves) + change.moves
    return replace(old, rows=tuple("".join(row) for row in rows), moves=moves, **changed)


def patch_data(old: View, change: dict[str, Any]) -> View:
    """:func:`patch` for a diff in plain-data form (``ViewDiff.to_data()``), as it comes off the wire."""
    changed = View.from_data({**old.to_data(), **change["changed"]})
    cells = tuple((r, c, ch) for r, c, ch in change["cells"])
    moves = tuple(MoveLine.from_data(m) for m in change["moves"])
    return patch(old, ViewDiff(cells, {k: getattr(changed, k) for k in change["changed"]}, moves))

"""Classic single-player Minesweeper (RULES.md, "Classic") as a state machine that never
touches I/O: the second :class:`~engine.game.Game` the room server hosts.

The layout does not exist until the first click: :meth:`Classic.new` draws a secret seed
(and publishes a commitment to it), and the first :class:`Reveal` draws the mines from that
seed with :func:`generate`, never in the 3×3 block around the clicked cell, so the first
click always opens a cascade. With ``no_guess`` the layout is one that the exact deduction
clears from the first click without a guess (:mod:`engine.no_guess`). The seed is published
at the end, so anyone can draw the layout again and check it.

Moves: :class:`Reveal` (left click), :class:`Flag` (right click: toggles, no ``?``),
:class:`Chord` (on an open number with as many flags around it: opens the other hidden
neighbours; a wrong flag there lets a mine open, which loses), :class:`Resign` (give up).
A refused move raises :class:`IllegalMove` and changes nothing. The player wins when every
safe cell is open (flags are not required).

>>> import random
>>> game = Classic.new(9, 9, 10, random.Random(1))
>>> events = game.apply(0, Reveal((4, 4)))
>>> game.view(0).rows[4][4]
'0'
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .classic_view import (
    FATAL,
    FLAG,
    HIDDEN,
    MINE,
    WRONG_FLAG,
    ClassicDiff,
    ClassicView,
    diff,
)
from .errors import IllegalCode, IllegalMove
from .events import (
    CLEARED,
    EXPLODED,
    RESIGNATION,
    CellsRevealed,
    ClassicEnded,
    Event,
    FlagToggled,
    Outcome,
)
from .geometry import Cell, Geometry, geometry
from .moves import (
    Chord,
    Flag,
    Move,
    Resign,
    Reveal,
    move_from_data,
    move_name,
    move_to_data,
)
from .parts import SnapshotParts
from .view import SPECTATOR

SNAPSHOT_FORMAT = 1
SEED_BYTES = 16
LAYOUT_VERSION = "mineduel-classic-v1"
"""Names the commitment's text and the layout drawn from a seed (``generate`` and
:mod:`engine.no_guess`): a change to either that changes a seed's layout must bump it, or the
seeds of earlier games would no longer verify (``tests/engine/test_classic.py`` pins layouts)."""
PRESETS: dict[str, tuple[int, int, int]] = {
    "beginner": (9, 9, 10),
    "intermediate": (16, 16, 40),
    "expert": (30, 16, 99),
}
"""Name → (width, height, mines)."""
MIN_SIDE, MAX_WIDTH, MAX_HEIGHT = 5, 60, 40
_DIGITS = "012345678"


NO_GUESS_SHARE = 5
NO_GUESS_WORK = 150_000
"""A no-guess board takes at most one mine per ``NO_GUESS_SHARE`` cells, or on a small board up
to ``NO_GUESS_WORK`` ÷ cells (:func:`most_mines`). Why: the layout's search (at the first click,
in the server's board worker) costs about cells × mines once draws stop succeeding, above a
fifth of a large board's cells: measured 1.2 s on 60×40 at 30 %, 3.6 s at 40 %, 2.8 s at 67 %,
while every board the rule allows took at most about 0.2 s (60×40/480, 25×25/240, 30×16/312;
docs/PERFORMANCE.md). Every preset passes (Expert: 99 of 312)."""


class BadBoard(ValueError):
    """A board RULES.md does not allow, with what broke the rule for an edge to say in its own
    words: ``problem`` is ``"size"`` (``MIN_SIDE..MAX_WIDTH`` wide, ``MIN_SIDE..MAX_HEIGHT``
    high) or ``"mines"`` (``1..most_mines`` for ``width`` × ``height``, fewer for a ``no_guess``
    board); the message says it in English."""

    def __init__(self, problem: str, width: int, height: int, no_guess: bool = False) -> None:
        self.problem, self.width, self.height, self.no_guess = problem, width, height, no_guess
        self.most_mines = most_mines(width, height, no_guess)
        if problem == "size":
            super().__init__(f"a board is {MIN_SIDE}..{MAX_WIDTH} wide and {MIN_SIDE}..{MAX_HEIGHT} high")
        else:
            super().__init__(f"a {'no-guess ' if no_guess else ''}{width}x{height} board takes 1..{self.most_mines} mines")


def check_size(width: int, height: int, count: int, no_guess: bool = False) -> None:
    """Raises ``ValueError`` unless RULES.md allows the board: 5..60 wide, 5..40 high,
    1..W·H−9 mines, for a ``no_guess`` board fewer on large boards (:func:`most_mines`;
    :class:`BadBoard` for integers out of those bounds).

    >>> check_size(60, 40, 481, no_guess=True)
    Traceback (most recent call last):
    ...
    engine.classic.BadBoard: a no-guess 60x40 board takes 1..480 mines
    """
    for name, value in (("width", width), ("height", height), ("mines", count)):
        if type(value) is not int:
            raise ValueError(f"{name} must be an integer")
    if not (MIN_SIDE <= width <= MAX_WIDTH and MIN_SIDE <= height <= MAX_HEIGHT):
        raise BadBoard("size", width, height, no_guess)
    if not 1 <= count <= most_mines(width, height, no_guess):
        raise BadBoard("mines", width, height, no_guess)


def most_mines(width: int, height: int, no_guess: bool = False) -> int:
    """The most mines a board takes: the first click and its neighbours stay free (RULES.md);
    a ``no_guess`` board's layout must also be cheap to search (:data:`NO_GUESS_WORK`).

    >>> most_mines(30, 16), most_mines(30, 16, no_guess=True), most_mines(60, 40, no_guess=True)
    (471, 312, 480)
    """
    cells = width * height
    if no_guess:
        return min(cells - 9, max(cells // NO_GUESS_SHARE, NO_GUESS_WORK // cells))
    return cells - 9


def preset_of(width: int, height: int, count: int) -> str:
    """The preset these dimensions are, or ``"custom"``."""
    return next((name for name, size in PRESETS.items() if size == (width, height, count)), "custom")


def generate(width: int, height: int, count: int, first_click: Cell, rng: Any, no_guess: bool = False
             ) -> frozenset[Cell]:
    """A layout of ``count`` mines outside the 3×3 block around ``first_click`` (so the first
    click opens a cascade), drawn with ``rng`` (``random.Random``-like); with ``no_guess``
    one that the exact deduction clears from the first click (:mod:`engine.no_guess`).

    >>> mines = generate(9, 9, 10, (0, 0), random.Random(2))
    >>> len(mines), (0, 0) in mines, (1, 1) in mines
    (10, False, False)
    """
    check_size(width, height, count)  # not the no-guess budget: a game made before it still plays
    geo = geometry(width, height)
    if not geo.contains(first_click):
        raise ValueError(f"the first click {first_click!r} is not on the board")
    if no_guess:
        from .no_guess import no_guess_layout  # the search lives apart: it is long

        return frozenset(no_guess_layout(width, height, count, first_click, rng))
    block = set(geo.block(first_click))
    candidates = [cell for cell in geo.cells if cell not in block]
    return frozenset(rng.sample(candidates, count))


def numbers_of(geo: Geometry, mines: frozenset[Cell]) -> dict[Cell, int]:
    """Every safe cell's number."""
    return {cell: sum(1 for n in geo.neighbours(cell) if n in mines) for cell in geo.cells if cell not in mines}


def three_bv(width: int, height: int, mines: Iterable[Cell], opened: Collection[Cell] | None = None) -> int:
    """The least number of left clicks that clears the board: one per region of connected
    zeros (its flood opens the region and its border), plus one per safe number that borders
    no zero. With ``opened`` (the cells a game has opened), the part of it done: a region once
    one of its zeros is open, a lone number once it is open (a lost game's "solved 3BV").

    >>> three_bv(5, 5, [(0, 0)])
    1
    >>> three_bv(5, 5, [(2, 2)])  # every other cell is a 0 or borders one: one click
    1
    >>> three_bv(5, 5, [(1, 1), (1, 3), (3, 1), (3, 3)])  # no 0 at all: one click per safe cell
    21
    >>> three_bv(5, 5, [(1, 1), (1, 3), (3, 1), (3, 3)], opened=[(0, 0), (2, 2)])
    2
    >>> three_bv(5, 5, [(0, 0)], opened=[(0, 1)])  # a number on the region's border: not the region
    0
    """
    geo = geometry(width, height)
    mine_set = frozenset(mines)
    numbers = numbers_of(geo, mine_set)
    opened_set = None if opened is None else frozenset(opened)

    def done(cells: Iterable[Cell]) -> bool:
        return opened_set is None or not opened_set.isdisjoint(cells)

    clicks = 0
    flooded: set[Cell] = set()
    for cell, n in numbers.items():
        if n == 0 and cell not in flooded:
            region = _flood(geo, numbers, cell)
            flooded |= region
            clicks += done(c for c in region if numbers[c] == 0)
    return clicks + sum(1 for cell in numbers if cell not in flooded and done((cell,)))


def _flood(geo: Geometry, numbers: dict[Cell, int], start: Cell, flags: Collection[Cell] = ()) -> set[Cell]:
    """Cells a click on safe ``start`` opens: it, and if it is a 0, its neighbours, on
    through every 0 reached (mines are never in ``numbers``). A flagged cell is neither opened
    nor passed through, as in every Minesweeper: a ring of flags stops the flood."""
    opened = {start}
    todo = [start] if numbers[start] == 0 else []
    while todo:
        for n in geo.neighbours(todo.pop()):
            if n not in opened and n not in flags:
                opened.add(n)
                if numbers[n] == 0:
                    todo.append(n)
    return opened


@dataclass(frozen=True, slots=True)
class ClassicSetup:
    width: int
    height: int
    count: int
    no_guess: bool
    seed: str
    """Hex; secret until the end. The layout is ``generate(..., random.Random(int(seed, 16)))``."""


def commitment_of(setup: ClassicSetup) -> str:
    text = f"{LAYOUT_VERSION}:{setup.width}x{setup.height}:{setup.count}:{int(setup.no_guess)}:{setup.seed}"
    return hashlib.sha256(text.encode()).hexdigest()


class Classic:
    """One classic game. Mutable, but only through :meth:`apply`, which is all-or-nothing."""

    kind = "classic"
    seats = 1
    viewers = (0, SPECTATOR)
    to_move = 0

    def __init__(self, setup: ClassicSetup) -> None:
        check_size(setup.width, setup.height, setup.count)
        self.setup = setup
        self.geo = geometry(setup.width, setup.height)
        self.commitment = commitment_of(setup)
        self.mines: frozenset[Cell] | None = None
        self.numbers: dict[Cell, int] = {}  # every safe cell's number, once the mines are placed
        self.opened: set[Cell] = set()
        self.flags: set[Cell] = set()
        self.outcome: Outcome | None = None
        self.fatal: Cell | None = None
        self.clicks = [0, 0, 0]
        self.log: list[tuple[int, Move]] = []
        self.last_opened: tuple[Cell, ...] = ()
        self._fixed: dict[str, Any] = {"format": SNAPSHOT_FORMAT, "width": setup.width, "height": setup.height,
                                       "count": setup.count, "no_guess": setup.no_guess, "seed": setup.seed}

    @classmethod
    def new(cls, width: int, height: int, count: int, rng: Any, no_guess: bool = False) -> "Classic":
        """A game whose layout will be drawn at the first click from a seed drawn now (a board
        :func:`check_size` allows: a ``no_guess`` one within the search's budget)."""
        check_size(width, height, count, no_guess)
        return cls(ClassicSetup(width, height, count, no_guess, rng.randbytes(SEED_BYTES).hex()))

    @classmethod
    def replay(cls, setup: ClassicSetup, log: Iterable[tuple[int, Move]]) -> "Classic":
        game = cls(setup)
        for seat, move in log:
            game.apply(seat, move)
        return game

    # ------------------------------------------------------------------ queries

    @property
    def settings(self) -> dict[str, Any]:
        s = self.setup
        return {"width": s.width, "height": s.height, "mines": s.count, "no_guess": s.no_guess,
                "preset": preset_of(s.width, s.height, s.count)}

    @property
    def safe_cells(self) -> int:
        return self.setup.width * self.setup.height - self.setup.count

    def is_hidden(self, cell: Cell) -> bool:
        return cell not in self.opened

    @property
    def every_seat_moved(self) -> bool:
        """The one seat has moved (a classic game is not aborted, it is resigned)."""
        return bool(self.log)

    @property
    def started(self) -> bool:
        """The first click that opens a cell has come: it placed the mines, and the timer runs
        from it (RULES.md: "from the first click"; flags before it mark nothing, and an outside
        probe's flag before the first reveal started the timer early)."""
        return self.mines is not None

    def costly(self, move: Move) -> bool:
        """Applying ``move`` may take long (it draws a no-guess layout): the shell has
        :meth:`prepared` run off its event loop."""
        return self.mines is None and self.setup.no_guess and isinstance(move, Reveal)

    def prepared(self, move: Move) -> "Classic":
        """A copy with the layout drawn for ``move``, the first click, if it is one (what
        :meth:`apply` would draw: the seed decides); else ``self``."""
        if self.mines is not None or not isinstance(move, Reveal):
            return self
        try:
            self._check(0, move)
        except IllegalMove:
            return self
        game = self.copy()
        game._place(move.cell)
        return game

    # ------------------------------------------------------------------ the move

    def apply(self, seat: int, move: Move) -> list[Event]:
        """Apply the player's ``move`` and return its events; raises :class:`IllegalMove`
        (and changes nothing) if the game is over, ``seat`` is not 0, the move is not a
        classic move, the cell is off the board, or the move does not fit the cell."""
        self._check(seat, move)
        self.log.append((seat, move))
        if isinstance(move, Resign):
            return self._end(Outcome(RESIGNATION, None), None)
        if isinstance(move, Flag):
            self.clicks[1] += 1
            flagged = move.cell not in self.flags
            if flagged:
                self.flags.add(move.cell)
            else:
                self.flags.discard(move.cell)
            self.last_opened = ()
            return [FlagToggled(move.cell, flagged)]
        if isinstance(move, Reveal):
            self.clicks[0] += 1
            if self.mines is None:
                self._place(move.cell)
            return self._open([move.cell])
        self.clicks[2] += 1
        return self._open([n for n in self.geo.neighbours(move.cell) if n not in self.opened and n not in self.flags])

    def _check(self, seat: int, move: Move) -> None:
        if not isinstance(move, (Reveal, Flag, Chord, Resign)):
            raise IllegalMove(IllegalCode.NOT_A_MOVE, f"a classic game has no {move_name(move)!r} move "
                                                      "(its moves: reveal, flag, chord, resign)")
        if self.outcome is not None:
            raise IllegalMove(IllegalCode.GAME_OVER, "the game is over")
        if seat != 0:
            raise IllegalMove(IllegalCode.NOT_A_SEAT, f"a classic game has one seat, 0, not {seat!r}")
        if isinstance(move, Resign):
            return
        cell = move.cell
        if not self.geo.contains(cell):
            raise IllegalMove(IllegalCode.OUT_OF_RANGE, f"cell {cell!r} is not on the board")
        if isinstance(move, Chord):
            number = self.numbers.get(cell) if cell in self.opened else None
            if not number:
                raise IllegalMove(IllegalCode.CHORD_NOT_SATISFIED, f"cell {cell!r} is not an open number")
            flags = sum(1 for n in self.geo.neighbours(cell) if n in self.flags)
            if flags != number:
                raise IllegalMove(IllegalCode.CHORD_NOT_SATISFIED,
                                  f"cell {cell!r} shows {number} but has {flags} flags around it")
            return
        if cell in self.opened:
            raise IllegalMove(IllegalCode.CELL_NOT_HIDDEN, f"cell {cell!r} is open")
        if isinstance(move, Reveal) and cell in self.flags:
            raise IllegalMove(IllegalCode.CELL_FLAGGED, f"cell {cell!r} has a flag: take it away first")

    def _place(self, first_click: Cell) -> None:
        s = self.setup
        self.mines = generate(s.width, s.height, s.count, first_click, random.Random(int(s.seed, 16)), s.no_guess)
        self.numbers = numbers_of(self.geo, self.mines)

    def _open(self, cells: Sequence[Cell]) -> list[Event]:
        """Open ``cells`` (a reveal's one, or a chord's neighbours): a mine loses, else each
        floods; the last safe cell wins."""
        mines = self.mines or frozenset()
        hit = sorted(c for c in cells if c in mines)
        if hit:
            self.last_opened = tuple(hit)
            return self._end(Outcome(EXPLODED, None), hit[0])
        opened: list[Cell] = []
        for cell in cells:
            if cell not in self.opened:
                for c in sorted(_flood(self.geo, self.numbers, cell, self.flags)):
                    if c not in self.opened:
                        self.opened.add(c)
                        opened.append(c)
        self.last_opened = tuple(opened)
        events: list[Event] = [CellsRevealed(tuple((r, c, self.numbers[(r, c)]) for r, c in opened), "move")]
        if len(self.opened) == self.safe_cells:
            events += self._end(Outcome(CLEARED, 0), None)
        return events

    def _end(self, outcome: Outcome, fatal: Cell | None) -> list[Event]:
        """The one place the game ends; the layout and the seed are published here."""
        self.outcome, self.fatal = outcome, fatal
        mines = self.mines or frozenset()
        wrong = tuple(sorted(c for c in self.flags if c not in mines)) if self.mines is not None else ()
        return [ClassicEnded(outcome, fatal, tuple(sorted(mines)), wrong, self.setup.seed)]

    # ------------------------------------------------------------------ views

    def board_rows(self) -> tuple[str, ...]:
        """The board everybody sees (see :mod:`engine.classic_view` for the characters)."""
        width, height = self.setup.width, self.setup.height
        grid = [HIDDEN] * (width * height)
        for r, c in self.flags:
            grid[r * width + c] = FLAG
        if self.outcome is not None and self.mines is not None:
            won = self.outcome.termination == CLEARED
            for r, c in self.mines:
                grid[r * width + c] = FLAG if won or (r, c) in self.flags else MINE
            for r, c in self.flags:
                if (r, c) not in self.mines:
                    grid[r * width + c] = WRONG_FLAG
            if self.fatal is not None:  # every mine the losing click opened: a chord may open several
                for r, c in self.last_opened or (self.fatal,):
                    grid[r * width + c] = FATAL
        numbers = self.numbers
        for r, c in self.opened:
            grid[r * width + c] = _DIGITS[numbers[(r, c)]]
        return tuple("".join(grid[i : i + width]) for i in range(0, width * height, width))

    def view(self, viewer: int) -> ClassicView:
        """What the player (0) or a spectator sees: the same board; the layout, the seed and
        the 3BV only once the game is over."""
        over = self.outcome is not None
        mines = tuple(sorted(self.mines)) if over and self.mines is not None else None
        s = self.setup
        return ClassicView(
            viewer=viewer, width=s.width, height=s.height, total_mines=s.count, no_guess=s.no_guess,
            rows=self.board_rows(), phase="over" if over else "playing", outcome=self.outcome, flags=len(self.flags),
            clicks=(self.clicks[0], self.clicks[1], self.clicks[2]), last_opened=self.last_opened,
            commitment=self.commitment, seed=s.seed if over else None, mines=mines,
            three_bv=three_bv(s.width, s.height, mines) if mines is not None else None,
        )

    def view_class(self, viewer: int) -> int:
        """Everybody sees the spectators' view: nothing in a classic game is private."""
        return SPECTATOR

    @staticmethod
    def diff(old: ClassicView, new: ClassicView) -> ClassicDiff:
        return diff(old, new)

    def copy(self) -> "Classic":
        new = Classic.__new__(Classic)
        new.setup, new.geo, new.commitment, new._fixed = self.setup, self.geo, self.commitment, self._fixed
        new.mines, new.numbers = self.mines, self.numbers  # never mutated once placed
        new.opened, new.flags = set(self.opened), set(self.flags)
        new.outcome, new.fatal, new.clicks = self.outcome, self.fatal, list(self.clicks)
        new.log, new.last_opened = list(self.log), self.last_opened
        return new

    # ------------------------------------------------------------------ plain data

    def snapshot(self) -> dict[str, Any]:
        parts = self.snapshot_parts()
        return {**parts.fixed, **parts.changing, **{k: list(v) for k, v in parts.appended.items()}}

    def snapshot_parts(self) -> SnapshotParts:
        return SnapshotParts(
            self._fixed,
            {
                "mines": [list(m) for m in sorted(self.mines)] if self.mines is not None else None,
                "opened": sorted([list(c) for c in self.opened]),
                "flags": sorted([list(c) for c in self.flags]),
                "outcome": self.outcome.to_data() if self.outcome else None,
                "fatal": list(self.fatal) if self.fatal is not None else None,
                "clicks": list(self.clicks),
                "last_opened": [list(c) for c in self.last_opened],
            },
            {"log": tuple([seat, *move_to_data(move)] for seat, move in self.log)},
        )

    @classmethod
    def from_snapshot(cls, data: dict[str, Any], previous: Any = None) -> "Classic":
        """Inverse of :meth:`snapshot`; raises ``ValueError`` on malformed data."""
        try:
            if data["format"] != SNAPSHOT_FORMAT:
                raise ValueError(f"unknown snapshot format {data['format']!r}")
            game = cls(ClassicSetup(data["width"], data["height"], data["count"], bool(data["no_guess"]),
                                    data["seed"]))
            if data["mines"] is not None:
                game.mines = frozenset((r, c) for r, c in data["mines"])
                game.numbers = numbers_of(game.geo, game.mines)
            game.opened = {(r, c) for r, c in data["opened"]}
            game.flags = {(r, c) for r, c in data["flags"]}
            game.outcome = Outcome.from_data(data["outcome"]) if data["outcome"] is not None else None
            game.fatal = tuple(data["fatal"]) if data["fatal"] is not None else None  # type: ignore[assignment]
            game.clicks = [int(x) for x in data["clicks"]]
            game.log = [(entry[0], move_from_data(entry[1:])) for entry in data["log"]]
            game.last_opened = tuple((r, c) for r, c in data["last_opened"])
        except (KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"malformed classic snapshot: {exc!r}") from exc
        return game

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Classic) and self.snapshot() == other.snapshot()

    def __repr__(self) -> str:
        s = self.setup
        return f"<Classic {s.width}x{s.height}/{s.count} opened={len(self.opened)} outcome={self.outcome}>"

    # ------------------------------------------------------------------ the end

    def record(self) -> dict[str, Any]:
        """The public record of a finished game (``ValueError`` before the end)."""
        if self.outcome is None:
            raise ValueError("the record is published when the game is over")
        s = self.setup
        mines = sorted(self.mines) if self.mines is not None else []
        return {
            "width": s.width, "height": s.height, "count": s.count, "no_guess": s.no_guess, "seed": s.seed,
            "moves": [[seat, *move_to_data(move)] for seat, move in self.log],
            "outcome": self.outcome.to_data(),
            "mines": [list(m) for m in mines],
            "three_bv": three_bv(s.width, s.height, mines) if self.mines is not None else None,
            "clicks": list(self.clicks),
            "commitment": self.commitment,
        }

    def position(self, at: int) -> ClassicView:
        """The replay of a finished game after its first ``at`` moves, with the layout shown.
        Replayed on the layout the game has (a no-guess layout's search took seconds on a large
        board: every replay step would have run it again, on the server's event loop)."""
        if self.outcome is None:
            raise ValueError("replays are for finished games")
        if not 0 <= at <= len(self.log):
            raise ValueError(f"step {at} is not in 0..{len(self.log)}")
        if at == len(self.log):
            return self.view(SPECTATOR)
        past = Classic(self.setup)
        past.mines, past.numbers = self.mines, self.numbers  # the layout as drawn, never searched again
        for seat, move in self.log[:at]:
            past.apply(seat, move)
        return replace(past.view(SPECTATOR), mines=tuple(sorted(self.mines or ())), seed=self.setup.seed)

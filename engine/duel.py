"""The two-player Minesweeper duel of RULES.md as a state machine that never touches I/O.

``Duel.apply(seat, move)`` is the whole surface the server needs: it validates the move
against every rule *before* changing anything (so a refused move leaves the game exactly as
it was), then applies it and returns the events. ``view(viewer)`` gives what a seat or a
spectator may see, ``snapshot()``/``from_snapshot()`` a plain-data form with exact round-trip.

Phases: a duel is created ``PLAYING`` (both seats exist from the start; waiting for an
opponent is the room's business, not the rules') and becomes ``OVER`` in exactly one place,
:meth:`Duel._end`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from . import deduce
from .commitment import SALT_BYTES, commitment
from .encoding import CHAR_CLAIMS, CLAIM_CHARS, HIDDEN, UNCLAIMED_MINE
from .errors import IllegalCode, IllegalMove
from .events import (
    ABANDONED,
    ABORTED,
    ALL_MINES,
    RESIGNATION,
    TIMEOUT,
    CellsRevealed,
    Event,
    GameEnded,
    MineShown,
    MovePlayed,
    Outcome,
    TurnChanged,
    WrongMarkPlaced,
)
from .geometry import Cell, Geometry, geometry
from .memo import PrefixMemo
from .moves import (
    Abort,
    ClaimAbandoned,
    Explore,
    Mark,
    Move,
    Resign,
    Timeout,
    move_from_data,
    move_name,
    move_to_data,
)
from .parts import SnapshotParts
from .rules import (
    DEFAULT_RULESET,
    DUEL_HEIGHT,
    DUEL_MINES,
    DUEL_WIDTH,
    RULESETS,
    Action,
    Claim,
    Ruleset,
    Verdict,
)
from .view import (  # view.py knows Duel only as a type
    SPECTATOR,
    VIEWERS,
    MoveLine,
    diff,
    diff_data_of_move,
    diff_of_move,
    public_rows,
    view_of,
)

if TYPE_CHECKING:
    from .view import View, ViewDiff

SNAPSHOT_FORMAT = 1
_DIGITS = "012345678"  # a number 0..8 as its board character (indexing beats str() in the painter)
SEATS = (0, 1)


class Phase(StrEnum):
    PLAYING = "playing"
    OVER = "over"


class Rng(Protocol):
    """What the engine needs from a random source: ``random.Random`` or ``random.SystemRandom``."""

    def sample(self, population: Sequence[Cell], k: int) -> list[Cell]: ...
    def randbytes(self, n: int) -> bytes: ...
    def randrange(self, stop: int) -> int: ...


@dataclass(frozen=True, slots=True)
class Setup:
    """Everything fixed at the start: enough, with the move log, to replay the game."""

    ruleset: str
    width: int
    height: int
    mines: frozenset[Cell]
    salt: str
    first: int

    @property
    def total_mines(self) -> int:
        return len(self.mines)


def draw_setup(rng: Rng, ruleset: str = DEFAULT_RULESET, first: int | None = None) -> Setup:
    """A fresh 11x11 duel: 15 mines uniformly among the cells outside the centre's 3x3 block.

    The server passes ``random.SystemRandom()``; tests pass a seeded ``random.Random``.
    """
    geo = geometry(DUEL_WIDTH, DUEL_HEIGHT)
    opening = set(geo.block(geo.centre))
    candidates = [cell for cell in geo.cells if cell not in opening]
    mines = frozenset(rng.sample(candidates, DUEL_MINES))
    salt = rng.randbytes(SALT_BYTES).hex()
    if first is None:
        first = rng.randrange(2)
    return Setup(ruleset, DUEL_WIDTH, DUEL_HEIGHT, mines, salt, first)


@dataclass(frozen=True, slots=True)
class Line:
    """A move-list line with full knowledge; views hide ``cell`` of others' wrong marks."""

    number: int
    seat: int
    action: Action
    cell: Cell
    verdict: Verdict
    points: int
    auto_revealed: int


T = TypeVar("T")
_STORED_LINES, _STORED_LOG = "stored lines", "stored log"  # memo variants of the snapshot's lists


def _line_data(ln: Line) -> list[Any]:
    # ``._value_``: an enum member's value without the ``value`` property (a Python-level
    # descriptor on CPython 3.11: ~1.5k instructions a read, several per move)
    return [ln.number, ln.seat, ln.action._value_, *ln.cell, ln.verdict._value_, ln.points, ln.auto_revealed]


def _log_data(entry: tuple[int, Move]) -> list[Any]:
    seat, move = entry
    return [seat, *move_to_data(move)]


def _line_from_data(data: list[Any]) -> Line:
    n, seat, a, r, c, v, p, auto = data
    return Line(n, seat, Action(a), (r, c), Verdict(v), p, auto)


def _log_from_data(data: list[Any]) -> tuple[int, Move]:
    return (data[0], move_from_data(data[1:]))


def _decode_appended(stored: list[Any], before: list[T] | None, memo: PrefixMemo[Any, Any], variant: str,
                     encode: Callable[[T], Any], decode: Callable[[Any], T]) -> list[T]:
    """An append-only list from its stored form.

    With ``before`` (the same list at an earlier version of the game, whose duel shares
    ``memo``), the items whose stored form ``stored`` repeats are reused, only the rest are
    decoded, and the new list's stored form goes into ``memo`` under ``variant`` (what
    ``memo.get`` would compute: the known prefix plus the new items encoded), so the next
    version's decode and snapshot start from it. Without, every item is decoded.
    """
    if before is None:
        return [decode(x) for x in stored]
    known = memo.get(before, variant, encode)
    reused = len(known) if len(known) <= len(stored) and known == tuple(stored[: len(known)]) else 0
    items = before[:reused] + [decode(x) for x in stored[reused:]]
    memo.seed(items, variant, known[:reused] + tuple(encode(x) for x in items[reused:]))
    return items


class Duel:
    """One duel. Mutable, but only through :meth:`apply`, which is all-or-nothing.

    The first :class:`~engine.game.Game`: the room server hosts it through that protocol
    (``kind``, ``seats``, ``viewers``, :meth:`apply`, :meth:`copy`, :meth:`view`, :meth:`diff`,
    :meth:`snapshot`/:meth:`from_snapshot`, :meth:`record`, :meth:`position`).
    """

    kind = "duel"
    seats = 2
    viewers = VIEWERS

    def __init__(self, setup: Setup) -> None:
        if setup.ruleset not in RULESETS:
            raise ValueError(f"unknown ruleset {setup.ruleset!r}")
        if setup.first not in SEATS:
            raise ValueError(f"first seat must be 0 or 1, not {setup.first!r}")
        self.setup = setup
        self.rules: Ruleset = RULESETS[setup.ruleset]
        self.geo: Geometry = geometry(setup.width, setup.height)
        if not all(self.geo.contains(m) for m in setup.mines):
            raise ValueError("mine outside the board")
        centre = self.geo.centre
        if centre in setup.mines:
            raise ValueError("the centre must be safe")
        self.commitment = commitment(setup.width, setup.height, setup.mines, setup.salt)
        self.phase = Phase.PLAYING
        self.outcome: Outcome | None = None
        self.to_move = setup.first
        self.scores = [0, 0]
        self.numbers: dict[Cell, int] = {centre: self._count(centre)}
        self.claims: dict[Cell, tuple[int, Claim]] = {}
        self.wrong_marks: tuple[set[Cell], set[Cell]] = (set(), set())
        self.lines: list[Line] = []
        self.log: list[tuple[int, Move]] = []
        self.last_opened: tuple[Cell, ...] = ()
        self._public: tuple[str, ...] | None = None  # public_rows(), painted once per state
        self._painted: tuple[str, ...] | None = None  # the version's before the move being applied
        self.memo: PrefixMemo[Any, Any] = PrefixMemo(limit=64)
        """Derived forms of ``lines`` and ``log`` (views' move lists, the stored form), converted
        once per item; not game state. Shared by the copies of this duel (they share those
        items), so it lives exactly as long as the game's objects do."""
        self.reveal_cache = deduce.RevealCache(components=0)
        """The deduction auto-reveal's solved positions (engine/reveal_cache.py), so each move
        re-solves only what it changed; not game state. Shared like ``memo``.

        No store of solved components: a duel hardly ever asks for one again (200 explore
        games, 10,160 auto-reveals: 3 of 5,552 components found in the store), and the store
        kept each one alive past its position, to be freed when the store was cleared, its
        memory cold by then (docs/PERFORMANCE.md, tenth session)."""
        self._solved = None
        """The reveal cache's solved position of this duel's last auto-reveal (``None``: not
        known, e.g. decoded): the next one extends it (``RevealCache.extend``). Not game
        state; copies share it (positions are immutable)."""
        self._fixed: dict[str, Any] = {
            "format": SNAPSHOT_FORMAT,
            "ruleset": setup.ruleset,
            "width": setup.width,
            "height": setup.height,
            "mines": [list(m) for m in sorted(setup.mines)],
            "salt": setup.salt,
            "first": setup.first,
        }
        """The part of every snapshot that never changes in a game (shared, never mutated)."""

    # ------------------------------------------------------------------ construction

    def _same_game(self) -> "Duel":
        """A duel of this game with no state yet (:meth:`from_snapshot` fills it): what never
        changes in a game (setup, rules, geometry, the commitment), the memo and the reveal cache
        are shared."""
        new = Duel.__new__(Duel)
        new.setup, new.rules, new.geo = self.setup, self.rules, self.geo
        new.commitment, new.memo, new.reveal_cache = self.commitment, self.memo, self.reveal_cache
        new._fixed = self._fixed
        new._solved = new._painted = None
        return new

    def copy(self) -> "Duel":
        """An independent copy: applying a move to it leaves this duel untouched.

        Cheaper than the snapshot round-trip (which costs as much as a move): the containers
        of the state are copied one level deep; everything inside them (cells, lines, moves,
        the setup) is immutable, and what never changes in a game is shared.
        """
        new = self._same_game()
        new.phase, new.outcome, new.to_move = self.phase, self.outcome, self.to_move
        new.scores = self.scores.copy()
        new.numbers = self.numbers.copy()
        new.claims = self.claims.copy()
        new.wrong_marks = (self.wrong_marks[0].copy(), self.wrong_marks[1].copy())
        new.lines = self.lines.copy()
        new.log = self.log.copy()
        new.last_opened = self.last_opened
        new._public = self._public
        new._solved = self._solved
        return new

    @classmethod
    def new(cls, rng: Rng, ruleset: str = DEFAULT_RULESET, first: int | None = None) -> "Duel":
        return cls(draw_setup(rng, ruleset, first))

    @classmethod
    def replay(cls, setup: Setup, log: Iterable[tuple[int, Move]]) -> "Duel":
        """Rebuild a game from its setup and move log (raises ``IllegalMove`` on a bad log)."""
        duel = cls(setup)
        for seat, move in log:
            duel.apply(seat, move)
        return duel

    # ------------------------------------------------------------------ queries

    @property
    def settings(self) -> dict[str, Any]:
        """The public choices this game was created with."""
        return {"ruleset": self.setup.ruleset}

    @property
    def hidden_mines(self) -> frozenset[Cell]:
        return frozenset(m for m in self.setup.mines if m not in self.claims)

    def is_hidden(self, cell: Cell) -> bool:
        """Hidden in the public view: neither revealed nor a visible mine."""
        return cell not in self.numbers and cell not in self.claims

    def _count(self, cell: Cell) -> int:
        mines = self.setup.mines
        return sum(1 for n in self.geo.neighbours(cell) if n in mines)

    # ------------------------------------------------------------------ the move

    def apply(self, seat: int, move: Move) -> list[Event]:
        """Apply ``seat``'s ``move`` and return its events.

        Raises :class:`IllegalMove` (and changes nothing) if the game is over, ``seat`` is not
        0 or 1, it is not that seat's turn (resigning is allowed on either turn), the cell is
        off the board or not hidden.
        """
        self._check(seat, move)
        self._painted, self._public = self._public, None
        self.log.append((seat, move))
        match move:
            case Resign():
                return self._end(Outcome(RESIGNATION, 1 - seat))
            case Timeout():
                return self._end(Outcome(TIMEOUT, 1 - seat))
            case Abort():
                return self._end(Outcome(ABORTED, None))
            case ClaimAbandoned(draw):
                return self._end(Outcome(ABANDONED, None if draw else seat))
            case Explore(cell):
                return self._play(seat, Action.EXPLORE, cell)
            case Mark(cell):
                return self._play(seat, Action.MARK, cell)
        raise AssertionError("unreachable: _check accepts only moves")

    def _check(self, seat: int, move: Move) -> None:
        if not isinstance(move, (Explore, Mark, Resign, Timeout, Abort, ClaimAbandoned)):
            raise IllegalMove(IllegalCode.NOT_A_MOVE, f"a duel has no {move_name(move)!r} move "
                                                      "(its moves: explore, mark, resign, abort, claim)")
        if self.phase is Phase.OVER:
            raise IllegalMove(IllegalCode.GAME_OVER, "the game is over")
        if seat not in SEATS:
            raise IllegalMove(IllegalCode.NOT_A_SEAT, f"seat must be 0 or 1, not {seat!r}")
        if isinstance(move, Abort) and self.every_seat_moved:
            raise IllegalMove(IllegalCode.TOO_LATE_TO_ABORT, "both seats have moved: the game can no longer be aborted")
        if isinstance(move, (Resign, Abort, ClaimAbandoned)):
            return
        if seat != self.to_move:
            raise IllegalMove(IllegalCode.NOT_YOUR_TURN, f"seat {seat} moved on seat {self.to_move}'s turn")
        if isinstance(move, Timeout):
            return
        if not self.geo.contains(move.cell):
            raise IllegalMove(IllegalCode.OUT_OF_RANGE, f"cell {move.cell!r} is not on the board")
        if not self.is_hidden(move.cell):
            raise IllegalMove(IllegalCode.CELL_NOT_HIDDEN, f"cell {move.cell!r} is not hidden")

    @property
    def every_seat_moved(self) -> bool:
        """Whether both seats have made a move of their own (then the game can no longer be aborted)."""
        # seats alternate strictly and a move that is not a play ends the game: the first two
        # log entries tell
        return len(self.log) >= len(SEATS) and all(isinstance(m, (Explore, Mark)) for _, m in self.log[:len(SEATS)])

    @property
    def started(self) -> bool:
        """The first move has been made (the Game protocol asks: a duel's time is its clock's)."""
        return bool(self.log)

    def _play(self, seat: int, action: Action, cell: Cell) -> list[Event]:
        cell = self.geo.own(cell)  # the key of numbers or claims (Geometry.own says why)
        rules = self.rules
        events: list[Event] = []
        is_mine = cell in self.setup.mines
        public_cell: Cell | None = cell
        opened: list[Cell] = [cell]
        if action is Action.EXPLORE and is_mine:
            verdict, points = Verdict.AUTSCH, rules.hit_points
            self.claims[cell] = (seat, Claim.HIT)
            events.append(MineShown(cell, seat, Claim.HIT))
        elif action is Action.EXPLORE:
            number = self._count(cell)
            visible = sum(1 for n in self.geo.neighbours(cell) if n in self.claims)
            verdict, points = Verdict.GUT, rules.explore_points(number, visible)
            self.numbers[cell] = number
            events.append(CellsRevealed(((*cell, number),), "move"))
        elif is_mine:
            self.claims[cell] = (seat, Claim.MARKED)
            verdict, points = Verdict.GUT, rules.mark_points(len(self.claims))
            events.append(MineShown(cell, seat, Claim.MARKED))
        else:
            verdict, points = Verdict.BLUBB, rules.wrong_mark_points
            self.wrong_marks[seat].add(cell)
            public_cell, opened = None, []
            events.append(WrongMarkPlaced(seat, cell, audience=seat))
        self.scores[seat] += points

        if verdict is Verdict.BLUBB:
            auto = {}
        elif action is Action.EXPLORE and not is_mine:
            auto = self._auto_reveal((cell, number), None)
        else:
            auto = self._auto_reveal(None, cell)
        if auto:
            events.append(CellsRevealed(tuple((*c, n) for c, n in sorted(auto.items())), "deduction"))
        self.last_opened = (*opened, *sorted(auto))
        line = Line(len(self.lines) + 1, seat, action, cell, verdict, points, len(auto))
        self.lines.append(line)
        events.insert(0, MovePlayed(line.number, seat, action, public_cell, verdict, points, len(auto)))

        if len(self.claims) == self.setup.total_mines:
            a, b = self.scores
            events += self._end(Outcome(ALL_MINES, None if a == b else (0 if a > b else 1)))
        else:
            self.to_move = 1 - seat
            events.append(TurnChanged(self.to_move))
            if public_cell is None:  # a wrong mark shows nothing
                self._public = self._painted
            elif self._painted is not None:
                self._public = self._repaint(self._painted, cell, auto)
        return events

    def _repaint(self, rows: tuple[str, ...], cell: Cell, auto: dict[Cell, int]) -> tuple[str, ...]:
        """The public rows of the version before this move, with the cells it showed painted
        (``cell``, a number or a claim, and the auto-revealed numbers): what
        :func:`engine.view.public_rows` paints from scratch while the game is on.

        Why: painting the board from every number and claim (a loop over up to 121 cells)
        was ~75k instructions per move (bench/path.py: the stored form paints it, the three
        views reuse it); a move shows one cell and what the auto-reveal opened."""
        grid = list(rows)
        number = self.numbers.get(cell)
        r, c = cell
        row = grid[r]
        if number is not None:
            ch = _DIGITS[number]
        else:
            seat, claim = self.claims[cell]
            ch = CLAIM_CHARS[seat][claim]
        grid[r] = row[:c] + ch + row[c + 1:]
        for (r, c), number in auto.items():
            row = grid[r]
            grid[r] = row[:c] + _DIGITS[number] + row[c + 1:]
        return tuple(grid)

    def _auto_reveal(self, number: tuple[Cell, int] | None, mine: Cell | None) -> dict[Cell, int]:
        """Deduction auto-reveal (RULES.md): public information only, never private marks.

        A wrong mark changes no public information, so after one the set of revealable cells
        is the same as before (already revealed); the caller skips the call then.

        ``numbers`` and ``claims`` only ever grow, at their ends: the position extends the one
        solved for the last auto-reveal (``_solved``) by the cells it revealed and this move's
        ``number`` (a ``(cell, value)``) or ``mine`` (a cell), and the reveal cache is told so
        (``RevealCache.extend``: ``deduce.revealable``'s answer) instead of comparing everything with
        its positions.
        """
        setup = self.setup
        self._solved, found = self.reveal_cache.extend(
            self._solved, number, mine, setup.width, setup.height, setup.total_mines, self.numbers, self.claims.keys()
        )
        self.numbers.update(found)
        return found

    def _end(self, outcome: Outcome) -> list[Event]:
        """The one place the phase becomes OVER; everything secret is published here."""
        self.phase = Phase.OVER
        self.outcome = outcome
        return [
            GameEnded(
                outcome,
                (self.scores[0], self.scores[1]),
                tuple(sorted(self.setup.mines)),
                self.setup.salt,
                (tuple(sorted(self.wrong_marks[0])), tuple(sorted(self.wrong_marks[1]))),
            )
        ]

    # ------------------------------------------------------------------ plain data

    def snapshot(self) -> dict[str, Any]:
        """Plain data (str, int, list, dict) with exact round-trip through :meth:`from_snapshot`.

        The board is one string per row (``.`` hidden, digits, ``A``/``B`` marked and ``a``/``b``
        hit by seat 0/1) so a stored room stays small. Parts of it are shared with the game's
        other snapshots: do not mutate it.
        """
        parts = self.snapshot_parts()
        return {**parts.fixed, **parts.changing, **{key: list(items) for key, items in parts.appended.items()}}

    def snapshot_parts(self) -> SnapshotParts:
        """:meth:`snapshot` in three parts, so that a writer can store a version at the cost of
        what changed (``server/store/stored_form.py``): ``fixed`` is the same dict object for
        every version of the game, ``appended`` holds the append-only lists (each version's
        tuple extends the previous one's with the same item objects, converted once per item:
        engine/memo.py), ``changing`` the rest."""
        return SnapshotParts(
            self._fixed,
            {
                "phase": self.phase._value_,  # (see _line_data)
                "outcome": self.outcome.to_data() if self.outcome else None,
                "to_move": self.to_move,
                "scores": list(self.scores),
                "board": list(self.public_rows()) if self.outcome is None else self.board_rows(),  # painted once
                "wrong_marks": [[list(c) for c in sorted(w)] for w in self.wrong_marks],
                "last_opened": [list(c) for c in self.last_opened],
            },
            {
                "lines": self.memo.get(self.lines, _STORED_LINES, _line_data),
                "log": self.memo.get(self.log, _STORED_LOG, _log_data),
            },
        )

    def board_rows(self, unclaimed_mines: bool = False) -> list[str]:
        """The board one string per row, painted from the cells that show something (not by
        testing every cell): a number wins over a claim, a claim over an unclaimed mine
        (painted only when asked: the views once the game is over), all else hidden.

        The one painter of the board: the stored snapshot and every view
        (:func:`engine.view.view_of` overlays a seat's own wrong marks) use it.
        """
        width, height = self.setup.width, self.setup.height
        grid = [HIDDEN] * (width * height)
        if unclaimed_mines:
            for r, c in self.setup.mines:
                if 0 <= r < height and 0 <= c < width:
                    grid[r * width + c] = UNCLAIMED_MINE
        for (r, c), (seat, claim) in self.claims.items():
            grid[r * width + c] = CLAIM_CHARS[seat][claim]
        for (r, c), number in self.numbers.items():
            grid[r * width + c] = _DIGITS[number]
        return ["".join(grid[i : i + width]) for i in range(0, width * height, width)]

    @classmethod
    def from_snapshot(cls, data: dict[str, Any], previous: "Duel | None" = None) -> "Duel":
        """Inverse of :meth:`snapshot`; raises ``ValueError`` on malformed data.

        ``previous``, an earlier version of the same game (a server process's cached one, when
        another process committed the move), makes decoding cost what was added since: its
        setup, commitment and move-list and log items are reused where ``data`` repeats them,
        and the new duel shares its memo (so views convert only the new lines too). The result
        is the same as without it; a ``previous`` of another game is simply not used.
        """
        try:
            if data["format"] != SNAPSHOT_FORMAT:
                raise ValueError(f"unknown snapshot format {data['format']!r}")
            setup = Setup(
                data["ruleset"], data["width"], data["height"],
                frozenset((r, c) for r, c in data["mines"]), data["salt"], data["first"],
            )
            if previous is not None and previous.setup == setup:
                duel = previous._same_game()
            else:
                duel, previous = cls(setup), None
            duel.phase = Phase(data["phase"])
            duel.outcome = Outcome.from_data(data["outcome"]) if data["outcome"] is not None else None
            duel.to_move = data["to_move"]
            duel.scores = [int(x) for x in data["scores"]]
            duel.numbers, duel.claims = {}, {}
            board, cells = data["board"], duel.geo.cells  # the board's own tuples (Geometry.own)
            if len(board) != setup.height or any(len(row) != setup.width for row in board):
                raise ValueError(f"board rows do not make a {setup.width}x{setup.height} board")
            for r, row in enumerate(board):
                for c, ch in enumerate(row):
                    if ch.isdigit():
                        duel.numbers[cells[r * setup.width + c]] = int(ch)
                    elif ch != HIDDEN:
                        duel.claims[cells[r * setup.width + c]] = CHAR_CLAIMS[ch]
            duel.wrong_marks = tuple({(r, c) for r, c in w} for w in data["wrong_marks"])  # type: ignore[assignment]
            duel.lines = _decode_appended(data["lines"], previous.lines if previous else None, duel.memo,
                                          _STORED_LINES, _line_data, _line_from_data)
            duel.log = _decode_appended(data["log"], previous.log if previous else None, duel.memo,
                                        _STORED_LOG, _log_data, _log_from_data)
            duel.last_opened = tuple((r, c) for r, c in data["last_opened"])
            duel._public = None
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed duel snapshot: {exc!r}") from exc
        return duel

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duel) and self.snapshot() == other.snapshot()

    def __repr__(self) -> str:
        return f"<Duel {self.setup.ruleset} {self.phase.value} moves={len(self.log)} scores={self.scores}>"

    # ------------------------------------------------------------------ views

    def public_rows(self) -> tuple[str, ...]:
        """The board as everybody sees it (:func:`engine.view.public_rows`), painted once per
        state: the three views of one version start from it."""
        if self._public is None:
            self._public = public_rows(self)
        return self._public

    def view(self, viewer: int) -> "View":
        """What seat 0, seat 1 or a spectator (2) may see; see :mod:`engine.view`."""
        return view_of(self, viewer, self.public_rows())

    def costly(self, move: Move) -> bool:
        """Nothing a duel does takes long (the Game protocol asks)."""
        return False

    def prepared(self, move: Move) -> "Duel":
        """Nothing to do ahead (the Game protocol asks)."""
        return self

    def view_class(self, viewer: int) -> int:
        """Whose view ``viewer`` sees, but for its ``viewer`` field: a seat's only private
        knowledge is its own wrong marks, so a seat without any sees what the spectators see.
        A seat with some is a class of its own after the end too: the end publishes them
        (``wrong_marks``), but only their author's board draws them where they stay hidden.
        Renderers use it to render once for all viewers of one class."""
        if viewer != SPECTATOR and not self.wrong_marks[viewer]:
            return SPECTATOR
        return viewer

    @staticmethod
    def diff(old: "View", new: "View") -> "ViewDiff":
        """What changed between two views of one viewer (:func:`engine.view.diff`)."""
        return diff(old, new)

    def diff_since(self, previous: "Duel", viewer: int) -> "ViewDiff":
        """``diff(previous.view(viewer), self.view(viewer))``, worked out from what the last
        move showed when ``self`` is ``previous`` plus that move and the game is on
        (:func:`engine.view.diff_of_move`; a renderer that needs only the difference need not
        make the views)."""
        change = diff_of_move(previous, self, viewer)
        return change if change is not None else diff(previous.view(viewer), self.view(viewer))

    def diff_data_since(self, previous: "Duel", viewer: int) -> dict[str, Any]:
        """``self.diff_since(previous, viewer).to_data()``, made without the intermediate
        objects when it can (:func:`engine.view.diff_data_of_move`)."""
        data = diff_data_of_move(previous, self, viewer)
        return data if data is not None else diff(previous.view(viewer), self.view(viewer)).to_data()

    def record(self) -> dict[str, Any]:
        """The public record of a finished game: setup, every move, the move list, the result
        and the secrets the end publishes (so anyone can replay it and check the commitment).
        Raises ``ValueError`` while the game is on (it would publish the layout)."""
        if self.outcome is None:
            raise ValueError("the record is published when the game is over")
        s = self.setup
        return {
            "ruleset": s.ruleset,
            "width": s.width,
            "height": s.height,
            "first": s.first,
            "moves": [[seat, *move_to_data(move)] for seat, move in self.log],
            "lines": [m.to_data() for m in self.view(VIEWERS[-1]).moves],
            "outcome": self.outcome.to_data(),
            "scores": list(self.scores),
            "mines": [list(m) for m in sorted(s.mines)],
            "salt": s.salt,
            "commitment": self.commitment,
        }

    def position(self, at: int) -> "View":
        """The replay of a finished game after its first ``at`` log entries (0 = the start),
        as everybody may see it then: the public board of that moment, with what the end
        published (the whole layout, every wrong mark made so far, every move's cell).

        Raises ``ValueError`` while the game is on, or for ``at`` outside ``0..len(log)``.
        """
        if self.outcome is None:
            raise ValueError("replays are for finished games")
        if not 0 <= at <= len(self.log):
            raise ValueError(f"step {at} is not in 0..{len(self.log)}")
        spectator = VIEWERS[-1]
        if at == len(self.log):
            return self.view(spectator)
        past = Duel.replay(self.setup, self.log[:at])
        marks = tuple(tuple(sorted(m)) for m in past.wrong_marks)
        lines = tuple(MoveLine(ln.number, ln.seat, ln.action, ln.cell, ln.verdict, ln.points, ln.auto_revealed)
                      for ln in past.lines)
        return replace(past.view(spectator), mines=tuple(sorted(self.setup.mines)),
                       wrong_marks=(marks[0], marks[1]), moves=lines)

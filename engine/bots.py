"""Computer opponents: three levels that play a duel seat from that seat's view alone.

A bot is given a :class:`~engine.view.View` (public information plus its own wrong marks)
and returns a move for the normal move path; it never sees the layout, and this module
imports nothing that holds one (``tests/engine/test_bots.py`` checks both). Pure and
deterministic: the caller passes the random source that breaks ties and makes the easy
level's choices.

- **easy** (:data:`Level.EASY`) plays like a casual player: the single-number rule only
  (one look at each number), an obvious mine marked only sometimes, a random obvious-safe
  cell, and a random guess now and then even when it knows a safe cell.
- **medium** (:data:`Level.MEDIUM`): exact deduction (:func:`engine.deduce.analyze`): a
  certain mine is marked first (marks are where the points are), then a certain-safe cell is
  explored, then the cell least likely to hold a mine. :func:`choose_move` (the benchmarks',
  the load tests' and the security tests' bot) is this level.
- **strong** (:data:`Level.STRONG`): certain mines first too; otherwise it scores every
  certain-safe cell, a few explore guesses and a few mark guesses by the points the move is
  expected to bring minus what it is expected to hand the opponent (:func:`_explore_value`,
  :func:`_mark_value`, :func:`_handed_over`). A mark guess is a deliberate risk of a wrong
  mark ("Blubb!"): it pays on a likely mine, and it passes the turn without revealing
  anything when every explore would give the opponent marks.

Own wrong marks (``x``) are safe cells the bot knows of privately (RULES.md: its author may
explore or mark such a cell again); every level counts them as safe and never marks one again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache
from random import Random

from .deduce import Analysis, analyze
from .encoding import CHAR_CLAIMS, HIDDEN, OWN_WRONG_MARK
from .geometry import Cell, Geometry, geometry
from .moves import Explore, Mark
from .rules import RULESETS, Ruleset
from .view import View

BotMove = Explore | Mark


class Level(IntEnum):
    """How well a bot plays; the value is what a room's settings store."""

    EASY = 1
    MEDIUM = 2
    STRONG = 3


LEVELS: dict[int, str] = {level.value: level.name.lower() for level in Level}
"""Level number -> name, e.g. for a room's settings form."""

EASY_MARK_CHANCE = 0.5
"""How often the easy bot marks an obvious mine when it sees one (a casual player forgets)."""
EASY_GUESS_CHANCE = 0.25
"""How often the easy bot guesses a random hidden cell although it knows a safe one."""
STRONG_EXPLORE_GUESSES = 4
"""How many uncertain cells the strong bot weighs as explores (the best by a cheap score):
each costs up to nine analyses, one per number the cell could show."""
STRONG_MARK_GUESSES = 3
"""How many uncertain cells the strong bot weighs as marks (the likeliest mines)."""
STRONG_NUMBER_FLOOR = 0.005
"""The strong bot leaves out numbers a cell shows this rarely (see :func:`_likely_extra`)."""


# ---------------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------------


def bot_move(view: View, level: int, rng: Random) -> BotMove:
    """The move of the given ``level`` for the seat whose ``view`` this is.

    Raises ``ValueError`` for an unknown level, a finished game or a view whose viewer is not
    the seat to move (a spectator's view included). The move is always legal in the game the
    view was taken from: its cell is hidden there.
    """
    player = _PLAYERS.get(level) if isinstance(level, int) and not isinstance(level, bool) else None
    if player is None:
        raise ValueError(f"unknown bot level {level!r}; levels are {LEVELS}")
    if view.to_move is None:
        raise ValueError("the game is over")
    if view.viewer != view.to_move:
        raise ValueError(f"viewer {view.viewer} asked for a move on seat {view.to_move}'s turn")
    return player(view, rng)


def choose_move(view: View, rng: Random) -> BotMove:
    """The medium bot's move (kept for the benchmarks and tests that play with it)."""
    return bot_move(view, Level.MEDIUM, rng)


def public_position(view: View) -> tuple[dict[Cell, int], list[Cell]]:
    """``(numbers, visible_mines)`` as :mod:`engine.deduce` wants them, read off a view's rows."""
    numbers: dict[Cell, int] = {}
    mines: list[Cell] = []
    for r, row in enumerate(view.rows):
        for c, ch in enumerate(row):
            if ch.isdigit():
                numbers[(r, c)] = int(ch)
            elif ch in CHAR_CLAIMS:
                mines.append((r, c))
    return numbers, mines


def hidden_cells(view: View) -> list[Cell]:
    """Cells a move may target: hidden in the public view (own wrong marks included)."""
    return [
        (r, c) for r, row in enumerate(view.rows) for c, ch in enumerate(row) if ch in (HIDDEN, OWN_WRONG_MARK)
    ]


def own_safe_cells(view: View) -> frozenset[Cell]:
    """The viewer's own wrong marks still hidden: safe, though only the viewer knows it."""
    return frozenset((r, c) for r, row in enumerate(view.rows) for c, ch in enumerate(row) if ch == OWN_WRONG_MARK)


# ---------------------------------------------------------------------------------------------
# Easy: one look at each number
# ---------------------------------------------------------------------------------------------


def _easy(view: View, rng: Random) -> BotMove:
    """Mark an obvious mine half the time, else usually explore an obvious-safe cell, else
    guess: any hidden cell not known to be a mine (marking is the only move left when every
    hidden cell is one)."""
    mines, safe = _obvious(view)
    if mines and rng.random() < EASY_MARK_CHANCE:
        return Mark(rng.choice(sorted(mines)))
    if safe and rng.random() >= EASY_GUESS_CHANCE:
        return Explore(rng.choice(sorted(safe)))
    guesses = [cell for cell in hidden_cells(view) if cell not in mines]
    if guesses:
        return Explore(rng.choice(guesses))
    return Mark(rng.choice(sorted(mines)))


def _obvious(view: View) -> tuple[set[Cell], set[Cell]]:
    """``(mines, safe)`` by the single-number rule, one pass: a number whose visible mines
    already make it up has safe hidden neighbours; one that needs every hidden neighbour has
    mines there. Own wrong marks are safe. What a casual player sees at a glance: exact, but
    blind to anything that takes two numbers or the mine count."""
    numbers, visible = public_position(view)
    geo = geometry(view.width, view.height)
    claimed = set(visible)
    safe = set(own_safe_cells(view))
    mines: set[Cell] = set()
    for cell, number in numbers.items():
        around = geo.neighbours(cell)
        unknown = [n for n in around if view.char(n) == HIDDEN]
        need = number - sum(1 for n in around if n in claimed)
        if need == 0:
            safe.update(unknown)
        elif need == len(unknown):
            mines.update(unknown)
    return mines, safe


# ---------------------------------------------------------------------------------------------
# Medium and strong: exact deduction
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Position:
    """What the deducing levels know: the public position, its exact analysis, own safe cells."""

    geo: Geometry
    total_mines: int
    numbers: dict[Cell, int]
    mines: tuple[Cell, ...]
    analysis: Analysis
    safe: frozenset[Cell]
    """Every hidden cell the bot knows to be safe: proved by public information, or its own
    wrong mark."""
    rules: Ruleset
    own_safe: frozenset[Cell] = frozenset()
    """Its own wrong marks: the analyses count only the layouts that leave them empty, so what
    they prove counts too (a number whose other hidden neighbour must then be the mine)."""

    @classmethod
    def read(cls, view: View) -> _Position:
        numbers, mines = public_position(view)
        own = own_safe_cells(view)
        analysis = analyze(view.width, view.height, view.total_mines, numbers, mines, own)
        return cls(geometry(view.width, view.height), view.total_mines, numbers, tuple(mines), analysis,
                   analysis.safe | own, RULESETS[view.ruleset], own)

    def after(self, cell: Cell, number: int | None) -> Analysis | None:
        """The analysis once ``cell`` shows ``number`` (``None``: once it is a visible mine),
        or ``None`` if no consistent layout allows that."""
        geo = self.geo
        numbers, mines = self.numbers, self.mines
        try:
            if number is None:
                return analyze(geo.width, geo.height, self.total_mines, numbers, (*mines, cell), self.own_safe)
            return analyze(geo.width, geo.height, self.total_mines, {**numbers, cell: number}, mines, self.own_safe)
        except ValueError:
            return None


def _certain_mark(position: _Position, rng: Random) -> Mark | None:
    """A certain mine to mark, if there is one: a mark scores more than any explore is likely
    to, and marking it reveals nothing new (the consistent layouts stay the same)."""
    if position.analysis.mines:
        return Mark(rng.choice(sorted(position.analysis.mines)))
    return None


def _medium(view: View, rng: Random) -> BotMove:
    """Certain mines, then certain-safe cells, then the lowest mine probability."""
    position = _Position.read(view)
    mark = _certain_mark(position, rng)
    if mark is not None:
        return mark
    if position.safe:
        return Explore(rng.choice(sorted(position.safe)))
    probabilities = position.analysis.probabilities
    lowest = min(probabilities.values())
    return Explore(rng.choice(sorted(c for c, p in probabilities.items() if p == lowest)))


def _strong(view: View, rng: Random) -> BotMove:
    """Certain mines first; otherwise the best-valued of the certain-safe cells and a few
    guesses (explores of the cells safest by a cheap score, marks of the likeliest mines)."""
    position = _Position.read(view)
    mark = _certain_mark(position, rng)
    if mark is not None:
        return mark
    scored = _strong_candidates(position, rng)
    best = max(value for value, _ in scored)
    return rng.choice([move for value, move in scored if value >= best - 1e-9])


def _strong_candidates(position: _Position, rng: Random) -> list[tuple[float, BotMove]]:
    """``(value, move)`` for every move the strong bot weighs."""
    analysis, safe = position.analysis, position.safe
    uncertain = [c for c in sorted(analysis.probabilities) if c not in safe and c not in analysis.mines]
    rng.shuffle(uncertain)  # ties in the cheap scores below fall at random
    scale = _Scale(position, analysis)
    explore_guesses = sorted(uncertain, key=scale.face, reverse=True)[:STRONG_EXPLORE_GUESSES]
    mark_guesses = sorted(uncertain, key=analysis.probabilities.__getitem__, reverse=True)[:STRONG_MARK_GUESSES]
    hit_after: dict[Cell, Analysis | None] = {}
    scored: list[tuple[float, BotMove]] = []
    for cell in sorted(safe) + explore_guesses:
        scored.append((_explore_value(position, cell, hit_after), Explore(cell)))
    for cell in mark_guesses:
        scored.append((_mark_value(position, cell, hit_after, scale), Mark(cell)))
    return scored


def _explore_value(position: _Position, cell: Cell, hit_after: dict[Cell, Analysis | None]) -> float:
    """What exploring ``cell`` is worth to the bot: its expected points minus what it is
    expected to hand the opponent, over what the cell may turn out to be.

    Why these terms: explore points are one per hidden neighbouring mine (``brettspielnetz``;
    none in ``coan``), a hit costs ``hit_points``; and the number the cell shows (with the
    free auto-reveal it sets off) may prove hidden cells to be mines, which the opponent
    marks on the very next turn. Each number the cell can show is tried with an exact
    analysis, weighted by its share of the consistent layouts, and the position it leaves is
    scored by :func:`_handed_over`. A hit is scored the same way (a visible mine is public
    information too), so among guesses the one whose failure gives away least wins.
    """
    rules = position.rules
    p = 0.0 if cell in position.safe else position.analysis.probabilities[cell]
    value = 0.0
    if p < 1:
        value += (1 - p) * _safe_explore_value(position, cell)
    if p > 0:
        after = _hit_after(position, cell, hit_after)
        if after is not None:
            value += p * (rules.hit_points - _handed_over(position, after, len(position.mines) + 1))
    return value


def _safe_explore_value(position: _Position, cell: Cell) -> float:
    """The explore's value given that ``cell`` is safe, over the numbers it may show (the
    likely ones: see :func:`_likely_extra`)."""
    rules = position.rules
    claimed = set(position.mines)
    around = position.geo.neighbours(cell)
    visible = sum(1 for n in around if n in claimed)
    probabilities, safe = position.analysis.probabilities, position.safe
    near = [probabilities[n] for n in around if n in probabilities and n not in safe]
    outcomes: list[tuple[int, float]] = []
    for extras in (_likely_extra(near), range(len(near) + 1)):
        for extra in extras:
            after = position.after(cell, visible + extra)
            if after is not None:
                gain = rules.explore_points(visible + extra, visible) - _handed_over(position, after, len(position.mines))
                outcomes.append((after.layouts, gain))
        if outcomes:
            break
    total = sum(layouts for layouts, _ in outcomes)
    return sum(layouts / total * gain for layouts, gain in outcomes)


def _likely_extra(probabilities: list[float]) -> list[int]:
    """How many of the cells with these mine probabilities may plausibly hold a mine: the
    counts whose chance is at least :data:`STRONG_NUMBER_FLOOR` were the cells independent.

    Why: each number tried costs an exact analysis, and a cell in open ground could show any
    of nine; its neighbours are nearly independent there, and where they are not (cells that
    share a number) the exact analysis refuses the impossible counts anyway. The counts left
    out carry little weight; the exact weights of the ones tried are renormalised.
    """
    chances = [1.0]
    for p in probabilities:
        chances = [a * (1 - p) + b * p for a, b in zip([*chances, 0.0], [0.0, *chances])]
    return [k for k, chance in enumerate(chances) if chance >= STRONG_NUMBER_FLOOR]


def _mark_value(position: _Position, cell: Cell, hit_after: dict[Cell, Analysis | None], scale: _Scale) -> float:
    """What marking an uncertain ``cell`` is worth: the mark's points if it holds a mine (the
    position then is the same as after a hit), else the wrong mark's cost while the opponent
    faces the unchanged position (a wrong mark reveals nothing). It pays on a likely mine, or
    as a pass when every explore would hand the opponent more than the wrong mark costs. Never
    repeated on one cell: a wrong mark makes the cell one of the bot's safe ones."""
    rules = position.rules
    p = position.analysis.probabilities[cell]
    value = (1 - p) * (rules.wrong_mark_points - scale.best_face())
    after = _hit_after(position, cell, hit_after)
    if after is not None:
        k = len(position.mines) + 1
        value += p * (rules.mark_points(k) - _handed_over(position, after, k))
    return value


def _hit_after(position: _Position, cell: Cell, cache: dict[Cell, Analysis | None]) -> Analysis | None:
    """The analysis once ``cell`` is a visible mine (shared by the explore and the mark)."""
    if cell not in cache:
        cache[cell] = position.after(cell, None)
    return cache[cell]


def _handed_over(position: _Position, after: Analysis, visible: int) -> float:
    """What the position ``after`` the bot's move (``visible`` mines visible) is worth to the
    opponent, who moves next, relative to the bot.

    The certain mines in it are marked in turn, the opponent first: the opponent gains the
    1st, 3rd, ... and the bot the 2nd, 4th, ... (the mark table by slot). Then whoever is to
    move faces what is left (the auto-reveal has opened its determined cells): the opponent
    after an even number of marks, the bot after an odd one. That player's best one-move
    expectation (:meth:`_Scale.best_face`) counts for them: a safe cell to explore is worth
    its points, having to guess costs. One ply, cheap, and it catches the bot's two big
    mistakes: opening a number that proves mines, and leaving itself the guess.
    """
    rules = position.rules
    certain = len(after.mines)
    marks = [rules.mark_points(k) for k in range(visible + 1, visible + certain + 1)]
    net = sum(marks[0::2]) - sum(marks[1::2])
    if visible + certain >= position.total_mines:
        return net  # the game ends with those marks
    face = _Scale(position, after).best_face()
    return net + (face if certain % 2 == 0 else -face)


class _Scale:
    """Cheap one-move values in one analysed position, for the player to move there."""

    __slots__ = ("_best", "_near", "_open", "analysis", "rules")

    def __init__(self, position: _Position, analysis: Analysis) -> None:
        self.rules = position.rules
        self.analysis = analysis
        self._near = _neighbour_indices(position.geo.width, position.geo.height)
        self._open: list[float] | None = None
        self._best: float | None = None

    def face(self, cell: Cell) -> float:
        """Exploring ``cell``: a hit costs ``hit_points``; a safe cell scores about the sum of
        its hidden neighbours' mine probabilities (certain mines left out: they will be marked
        first). Not conditioned on the cell being safe: the exact value needs an analysis per
        number the cell may show, kept for the bot's own candidates."""
        p = self.analysis.probabilities[cell]
        value = p * self.rules.hit_points
        if self.rules.explore_scores and p < 1:
            if self._open is None:
                self._open = self._open_probabilities()
            r, c = cell
            value += (1 - p) * sum(map(self._open.__getitem__, self._near[r][c]))
        return value

    def best_face(self) -> float:
        """The best :meth:`face` over the cells the player to move may explore: every hidden
        cell but the certain mines and the cells the auto-reveal opens."""
        if self._best is None:
            analysis = self.analysis
            shut = analysis.mines | analysis.revealable.keys()
            values = [self.face(c) for c in analysis.probabilities if c not in shut]
            self._best = max(values, default=0.0)
        return self._best

    def _open_probabilities(self) -> list[float]:
        """Mine probability by cell index ``r * width + c``: 0 for every cell that is not
        hidden or is a certain mine (neither scores an explore)."""
        out = [0.0] * (len(self._near) * len(self._near[0]))
        width = len(self._near[0])
        for (r, c), p in self.analysis.probabilities.items():
            if p < 1:
                out[r * width + c] = p
        return out


@lru_cache(maxsize=8)
def _neighbour_indices(width: int, height: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Per row and column, the indices ``r * width + c`` of the cell's neighbours."""
    geo = geometry(width, height)
    return tuple(
        tuple(tuple(nr * width + nc for nr, nc in geo.neighbours((r, c))) for c in range(width))
        for r in range(height)
    )


_PLAYERS: dict[int, Callable[[View, Random], BotMove]] = {
    Level.EASY: _easy,
    Level.MEDIUM: _medium,
    Level.STRONG: _strong,
}
"""One function per level; a lookup miss is an unknown level."""

"""Post-game analysis of a duel: how risky each move was, what the safest choice would have
been, and how much of each player's score was luck.

Pure and deterministic: :func:`analyze_game` replays a game from its setup and move log and,
before every log entry, analyses the position exactly (:func:`engine.deduce.analyze`) with
what the player to move knew then: the public board (numbers, visible mines, the board size
and the mine count) plus that player's own wrong marks, which its author knows are safe
cells (RULES.md: only the author sees them). Each layout consistent with that knowledge
weighs the same. Nothing here reads the layout except to replay the game and to say whether
a guess went well.

Per move (explore or mark, in move-list order, :class:`MoveOdds`):

- ``p_mine``: the chance the chosen cell held a mine (for a mark: the chance it was right);
- ``p_min`` / ``p_max``: the lowest / highest mine chance of any hidden cell then;
- the *risk* of the move is the chance it goes wrong: ``p_mine`` for an explore, ``1 - p_mine``
  for a mark; the least risk available is ``p_min`` for an explore, ``1 - p_max`` for a mark
  (the same action on the best cell). ``safest``: the move took the least risk available;
  ``certain``: it took none; ``fortune``: how a guess turned out (``lucky``, ``unlucky``), none
  for a move whose outcome was sure either way (risk 0 or 1: no luck in it);
- ``expected_points``: what the move was worth on average under the ruleset
  (:mod:`engine.rules`): an explore ``p·hit + Σ_y P(x safe and y a mine)`` over the hidden
  neighbours ``y`` of the cell ``x`` (a safe cell scores its neighbouring mines not yet
  visible; ``brettspielnetz`` only), a mark ``p·mark(k) + (1 − p)·wrong mark`` with ``k`` the
  visible mines after it. The pair term is exact: ``P(y | x safe)`` comes from one more
  analysis with ``x`` known safe;
- ``luck``: the points scored minus ``expected_points``.

Per player (:class:`PlayerOdds`): the share of moves that took the least risk available, the
mean risk taken above it, and the sum of luck. Per replay step (:class:`StepOdds`): the mine
chance of every hidden cell for the player to move then (public knowledge once the game is
over), for the replay's overlay.

Everything is exact (ints and :class:`~fractions.Fraction`); :meth:`GameAnalysis.to_data`
rounds each figure once to a float.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .deduce import analyze
from .duel import Duel, Setup
from .geometry import Cell
from .moves import Explore, Mark, Move
from .rules import RULESETS, Action

__all__ = ["GameAnalysis", "MoveOdds", "PlayerOdds", "StepOdds", "analyze_game", "percent", "percent_code",
           "percent_text"]

NOT_HIDDEN = -1
""":meth:`StepOdds.codes` of a cell that is not hidden (a number or a visible mine)."""


LESS_THAN_1 = 101
""":func:`percent_code` of a chance above 0 that would round to 0 %."""
MORE_THAN_99 = 102
""":func:`percent_code` of a chance below 1 that would round to 100 %."""


def percent_code(p: Fraction | float) -> int:
    """A probability in whole percent, from its float (the exact value rounded once, so the
    float in the data and the text on a page always agree): 0 and 100 only when exact,
    :data:`LESS_THAN_1` and :data:`MORE_THAN_99` for what would round to them."""
    if p == 0:
        return 0
    if p == 1:
        return 100
    return _inexact_code(float(p))


def _inexact_code(p: float) -> int:
    whole = round(p * 100)
    if whole < 1:
        return LESS_THAN_1
    if whole > 99:
        return MORE_THAN_99
    return whole


def percent_text(code: int) -> str:
    """``"41 %"``, ``"<1 %"``, ``">99 %"`` for a :func:`percent_code`."""
    if code == LESS_THAN_1:
        return "<1 %"
    if code == MORE_THAN_99:
        return ">99 %"
    return f"{code} %"


def percent(p: Fraction | float) -> str:
    """A probability as people read it: ``"41 %"``; ``"0 %"`` and ``"100 %"`` only when exact,
    ``"<1 %"`` and ``">99 %"`` for what would round to them."""
    return percent_text(percent_code(p))


@dataclass(frozen=True, slots=True)
class StepOdds:
    """The odds at one replay step (after that many log entries)."""

    seat: int | None
    """Whose knowledge: the seat to move then; ``None`` once the game is over (public)."""
    layouts: int
    """Consistent layouts with that knowledge."""
    mine_layouts: dict[Cell, int]
    """Every cell hidden in the public view: in how many of them it holds a mine."""

    def probability(self, cell: Cell) -> Fraction:
        return Fraction(self.mine_layouts[cell], self.layouts)

    def codes(self, width: int, height: int) -> list[int]:
        """Row by row, each cell's :func:`percent_code`, or :data:`NOT_HIDDEN`."""
        found = self.mine_layouts
        total = self.layouts
        codes = {n: 0 if n == 0 else 100 if n == total else _inexact_code(n / total)  # int / int: rounded once
                 for n in set(found.values())}
        return [codes[found[(r, c)]] if (r, c) in found else NOT_HIDDEN for r in range(height) for c in range(width)]


@dataclass(frozen=True, slots=True)
class MoveOdds:
    """One explore or mark, judged with what its mover knew."""

    number: int
    """Its number in the move list (1, 2, ...)."""
    step: int
    """Its index in the log: the position it was played on is replay step ``step``."""
    seat: int
    action: Action
    cell: Cell
    mine: bool
    """The cell held a mine."""
    p_mine: Fraction
    p_min: Fraction
    p_max: Fraction
    expected_points: Fraction
    points: int

    @property
    def explore(self) -> bool:
        return self.action is Action.EXPLORE

    @property
    def p_best(self) -> Fraction:
        """The mine chance of the best cell for this action: the lowest for an explore, the
        highest for a mark."""
        return self.p_min if self.explore else self.p_max

    @property
    def risk(self) -> Fraction:
        """The chance the move goes wrong (a hit, a wrong mark)."""
        return self.p_mine if self.explore else 1 - self.p_mine

    @property
    def best_risk(self) -> Fraction:
        return self.p_min if self.explore else 1 - self.p_max

    @property
    def excess_risk(self) -> Fraction:
        return self.risk - self.best_risk

    @property
    def safest(self) -> bool:
        return self.risk == self.best_risk

    @property
    def certain(self) -> bool:
        return self.risk == 0

    @property
    def luck(self) -> Fraction:
        return self.points - self.expected_points

    @property
    def went_well(self) -> bool:
        """An explore of a safe cell, or a mark of a mine."""
        return self.mine is not self.explore

    @property
    def verdict(self) -> str:
        """``certain``, ``safest`` or ``risky: 41 % vs 0 % available`` (the cell's mine chance
        against the best cell's for this action)."""
        if self.certain:
            return "certain"
        if self.safest:
            return "safest"
        return f"risky: {percent(self.p_mine)} vs {percent(self.p_best)} available"

    @property
    def foregone(self) -> bool:
        """Its outcome was sure before it was played: certain to go well (risk 0) or certain to
        go wrong (risk 1, e.g. a mark on a cell proven safe). No luck either way."""
        return self.risk in (0, 1)

    @property
    def fortune(self) -> str | None:
        """How a guess turned out: ``lucky`` or ``unlucky``; ``None`` when it was no guess
        (:attr:`foregone`: luck cannot explain an outcome that was sure)."""
        if self.foregone:
            return None
        return "lucky" if self.went_well else "unlucky"

    def to_data(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "seat": self.seat,
            "action": self.action.value,
            "cell": list(self.cell),
            "p_mine": float(self.p_mine),
            "p_min": float(self.p_min),
            "p_max": float(self.p_max),
            "safest": self.safest,
            "certain": self.certain,
            "verdict": self.verdict,
            "fortune": self.fortune,
            "expected_points": float(self.expected_points),
            "points": self.points,
        }


@dataclass(frozen=True, slots=True)
class PlayerOdds:
    """One seat's summary over its explores and marks."""

    seat: int
    moves: int
    safest: int
    """Moves that took the least risk available."""
    excess_risk: Fraction | None
    """Mean risk taken above the least available (``None`` without moves)."""
    luck: Fraction
    """Points scored minus the points the moves were worth on average."""

    @property
    def safest_share(self) -> Fraction | None:
        return Fraction(self.safest, self.moves) if self.moves else None

    @classmethod
    def of(cls, seat: int, moves: Iterable[MoveOdds]) -> "PlayerOdds":
        mine = [m for m in moves if m.seat == seat]
        excess = sum((m.excess_risk for m in mine), Fraction(0)) / len(mine) if mine else None
        return cls(seat, len(mine), sum(1 for m in mine if m.safest), excess,
                   sum((m.luck for m in mine), Fraction(0)))

    def to_data(self) -> dict[str, Any]:
        share = self.safest_share
        return {
            "seat": self.seat,
            "moves": self.moves,
            "safest_share": None if share is None else float(share),
            "excess_risk": None if self.excess_risk is None else float(self.excess_risk),
            "luck": float(self.luck),
        }


@dataclass(frozen=True, slots=True)
class GameAnalysis:
    width: int
    height: int
    moves: tuple[MoveOdds, ...]
    players: tuple[PlayerOdds, PlayerOdds]
    steps: tuple[StepOdds, ...]
    """One per replay step: ``steps[i]`` is the position after ``i`` log entries."""

    def move_at(self, step: int) -> MoveOdds | None:
        """The move that led to replay step ``step`` (log entry ``step - 1``), if it was an
        explore or a mark."""
        for move in self.moves:
            if move.step == step - 1:
                return move
        return None

    def to_data(self) -> dict[str, Any]:
        """Plain data, every exact figure rounded once to a float:
        ``{"moves": [...], "players": [...]}`` (docs/PROTOCOL.md, "Analysis")."""
        return {"moves": [m.to_data() for m in self.moves], "players": [p.to_data() for p in self.players]}

    def steps_data(self) -> list[list[Any]]:
        """Per replay step ``[seat or None, percent codes row by row]`` (:meth:`StepOdds.codes`)."""
        return [[s.seat, s.codes(self.width, self.height)] for s in self.steps]


def analyze_game(setup: Setup, log: Sequence[tuple[int, Move]]) -> GameAnalysis:
    """The analysis of the game ``setup`` + ``log`` (any log the duel accepts, finished or
    not: the server only asks once the game is over). Raises ``IllegalMove`` on a bad log."""
    duel = Duel(setup)
    rules = RULESETS[setup.ruleset]
    width, height, total = setup.width, setup.height, setup.total_mines
    neighbours = duel.geo.neighbours
    moves: list[MoveOdds] = []
    steps: list[StepOdds] = []
    for step, (seat, move) in enumerate(log):
        mover = duel.to_move
        known = [c for c in duel.wrong_marks[mover] if duel.is_hidden(c)]
        now = analyze(width, height, total, duel.numbers, duel.claims.keys(), known_safe=known)
        counts, layouts = now.mine_layouts, now.layouts
        steps.append(StepOdds(mover, layouts, counts))
        if not isinstance(move, (Explore, Mark)):
            duel.apply(seat, move)
            continue
        cell = move.cell
        n = counts[cell]
        p = Fraction(n, layouts)
        if isinstance(move, Explore):
            action = Action.EXPLORE
            expected = p * rules.hit_points
            if rules.explore_scores and n < layouts:
                around = [y for y in neighbours(cell) if y in counts]
                if n == 0:  # safe in every layout: no condition to add
                    expected += Fraction(sum(counts[y] for y in around), layouts)
                else:  # P(x safe and y a mine) = P(x safe) · P(y a mine | x safe)
                    given = analyze(width, height, total, duel.numbers, duel.claims.keys(),
                                    known_safe=[*known, cell])
                    after = given.mine_layouts
                    expected += (1 - p) * Fraction(sum(after[y] for y in around), given.layouts)
        else:
            action = Action.MARK
            k = len(duel.claims) + 1
            expected = p * rules.mark_points(k) + (1 - p) * rules.wrong_mark_points
        duel.apply(seat, move)
        line = duel.lines[-1]
        low, high = min(counts.values()), max(counts.values())
        moves.append(MoveOdds(line.number, step, seat, action, cell, cell in setup.mines, p,
                              Fraction(low, layouts), Fraction(high, layouts), expected, line.points))
    public = analyze(width, height, total, duel.numbers, duel.claims.keys()) if duel.outcome is not None else None
    if public is not None:
        steps.append(StepOdds(None, public.layouts, public.mine_layouts))
    else:
        mover = duel.to_move
        known = [c for c in duel.wrong_marks[mover] if duel.is_hidden(c)]
        now = analyze(width, height, total, duel.numbers, duel.claims.keys(), known_safe=known)
        steps.append(StepOdds(mover, now.layouts, now.mine_layouts))
    return GameAnalysis(width, height, tuple(moves), (PlayerOdds.of(0, moves), PlayerOdds.of(1, moves)), tuple(steps))

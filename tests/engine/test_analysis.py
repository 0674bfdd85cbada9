"""engine.analysis: every figure of a move against an exact brute-force count over the layouts
its mover could not tell apart, on small seeded games; the summaries, the overlay and the
data form on full-size bot games."""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Duel, Explore, Mark, Resign, Setup
from engine.analysis import (
    MORE_THAN_99,
    NOT_HIDDEN,
    GameAnalysis,
    MoveOdds,
    analyze_game,
    percent,
    percent_code,
)
from engine.bots import bot_move
from engine.rules import RULESETS, Action

# ---------------------------------------------------------------------------------------------
# The reference: enumerate every layout the mover cannot tell from the true one
# ---------------------------------------------------------------------------------------------


def around(duel: Duel, cell):
    return duel.geo.neighbours(cell)


def mover_layouts(duel: Duel, seat: int | None) -> tuple[list, list[frozenset]]:
    """The hidden cells of the public board, and every set of mines on them that fits every
    shown number, the mine count, and leaves ``seat``'s own wrong marks empty (``None``:
    public knowledge)."""
    hidden = [c for c in duel.geo.cells if duel.is_hidden(c)]
    left = duel.setup.total_mines - len(duel.claims)
    out = []
    for combo in itertools.combinations(hidden, left):
        mines = frozenset(combo) | frozenset(duel.claims)
        if seat is not None and mines & duel.wrong_marks[seat]:
            continue
        if all(sum(y in mines for y in around(duel, x)) == n for x, n in duel.numbers.items()):
            out.append(frozenset(combo))
    return hidden, out


def reference(setup: Setup, log) -> tuple[list[dict], list[list[int]]]:
    """Per explore/mark: its figures by enumeration; per replay step: the percent codes."""
    rules = RULESETS[setup.ruleset]
    duel = Duel(setup)
    moves, steps = [], []
    for seat, move in log:
        mover = duel.to_move
        hidden, layouts = mover_layouts(duel, mover)
        count = {c: sum(c in lay for lay in layouts) for c in hidden}
        steps.append([percent_code(Fraction(count[(r, c)], len(layouts))) if (r, c) in count else NOT_HIDDEN
                      for r in range(setup.height) for c in range(setup.width)])
        if isinstance(move, (Explore, Mark)):
            cell = move.cell
            worth = Fraction(0)
            for lay in layouts:
                if isinstance(move, Explore):
                    if cell in lay:
                        worth += rules.hit_points
                    else:
                        visible = sum(y in duel.claims for y in around(duel, cell))
                        number = visible + sum(y in lay for y in around(duel, cell))
                        worth += rules.explore_points(number, visible)
                else:
                    worth += rules.mark_points(len(duel.claims) + 1) if cell in lay else rules.wrong_mark_points
            moves.append({"seat": seat, "cell": cell, "p_mine": Fraction(count[cell], len(layouts)),
                          "p_min": Fraction(min(count.values()), len(layouts)),
                          "p_max": Fraction(max(count.values()), len(layouts)),
                          "expected": worth / len(layouts)})
        duel.apply(seat, move)
        if isinstance(move, (Explore, Mark)):
            moves[-1]["points"] = duel.lines[-1].points
            moves[-1]["number"] = duel.lines[-1].number
    hidden, layouts = mover_layouts(duel, None) if duel.outcome is not None else mover_layouts(duel, duel.to_move)
    count = {c: sum(c in lay for lay in layouts) for c in hidden}
    steps.append([percent_code(Fraction(count[(r, c)], len(layouts))) if (r, c) in count else NOT_HIDDEN
                  for r in range(setup.height) for c in range(setup.width)])
    return moves, steps


# ---------------------------------------------------------------------------------------------
# Small seeded games
# ---------------------------------------------------------------------------------------------


@st.composite
def small_games(draw):
    """A small board, a layout, and a random game on it: explores and marks of any hidden
    cell (so hits and wrong marks, also on cells marked wrongly before), to the end or to a
    resignation."""
    width = draw(st.integers(3, 5))
    height = draw(st.integers(3, 4))
    centre = (height // 2, width // 2)
    cells = [(r, c) for r in range(height) for c in range(width) if (r, c) != centre]
    rng = random.Random(draw(st.integers(0, 2**32)))
    mines = frozenset(rng.sample(cells, draw(st.integers(1, min(4, len(cells) - 1)))))
    setup = Setup(draw(st.sampled_from(sorted(RULESETS))), width, height, mines, "00", draw(st.integers(0, 1)))
    duel = Duel(setup)
    stop = draw(st.integers(1, 40))
    while duel.outcome is None:
        seat = duel.to_move
        if len(duel.log) >= stop:
            duel.apply(rng.randrange(2), Resign())
            break
        cell = rng.choice([c for c in duel.geo.cells if duel.is_hidden(c)])
        duel.apply(seat, Mark(cell) if rng.random() < 0.35 else Explore(cell))
    return setup, list(duel.log)


def check_against_reference(setup: Setup, log) -> GameAnalysis:
    result = analyze_game(setup, log)
    moves, steps = reference(setup, log)
    assert len(result.moves) == len(moves)
    for got, want in zip(result.moves, moves, strict=True):
        assert (got.seat, got.cell, got.number, got.points) == (want["seat"], want["cell"], want["number"], want["points"])
        assert got.p_mine == want["p_mine"]
        assert got.p_min == want["p_min"]
        assert got.p_max == want["p_max"]
        assert got.expected_points == want["expected"]
        assert got.luck == got.points - want["expected"]
        assert got.mine == (got.cell in setup.mines)
    assert [s.codes(setup.width, setup.height) for s in result.steps] == steps
    return result


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_games())
def test_every_figure_matches_an_exact_count_of_the_movers_layouts(game):
    check_against_reference(*game)


def test_a_wrong_mark_is_a_safe_cell_to_its_author_only():
    """4x3, mines at (0, 0) and (0, 3); the centre (1, 2) shows 0. Seat 0 marks (2, 0)
    wrongly; then seat 1 explores: for seat 1, (2, 0) is still a possible mine; for seat 0,
    on its next move, it is safe."""
    setup = Setup("brettspielnetz", 4, 3, frozenset({(0, 0), (0, 3)}), "00", 0)
    log = [(0, Mark((2, 0))), (1, Explore((2, 3))), (0, Explore((2, 1)))]
    result = check_against_reference(setup, log)
    before_1, before_2 = result.steps[1], result.steps[2]
    assert before_1.seat == 1 and before_1.mine_layouts[(2, 0)] > 0
    assert before_2.seat == 0 and before_2.mine_layouts[(2, 0)] == 0
    assert result.moves[2].p_min == 0  # seat 0 had a known safe cell


# ---------------------------------------------------------------------------------------------
# Full-size bot games
# ---------------------------------------------------------------------------------------------


def bot_game(seed: int, levels: tuple[int, int] = (1, 3), ruleset: str = "brettspielnetz") -> Duel:
    rng = random.Random(seed)
    duel = Duel.new(rng, ruleset, first=seed % 2)
    while duel.outcome is None:
        seat = duel.to_move
        duel.apply(seat, bot_move(duel.view(seat), levels[seat], rng))
    return duel


@pytest.mark.parametrize("seed,ruleset", [(1, "brettspielnetz"), (2, "coan"), (7, "brettspielnetz")])
def test_full_games_add_up(seed, ruleset):
    duel = bot_game(seed, ruleset=ruleset)
    result = analyze_game(duel.setup, duel.log)
    assert [(m.number, m.seat, m.action.value, m.cell, m.points) for m in result.moves] == [
        (ln.number, ln.seat, ln.action.value, ln.cell, ln.points) for ln in duel.lines]
    assert len(result.steps) == len(duel.log) + 1
    assert result.steps[-1].seat is None  # over: public odds
    for m in result.moves:
        assert 0 <= m.p_min <= m.p_mine <= m.p_max <= 1
        assert m.certain <= m.safest
        assert (m.verdict == "certain") == m.certain
        assert m.excess_risk >= 0
        assert result.move_at(m.step + 1) is m
        assert m.fortune is None if m.risk in (0, 1) else m.fortune in ("lucky", "unlucky")
    for seat, player in enumerate(result.players):
        mine = [m for m in result.moves if m.seat == seat]
        assert player.moves == len(mine)
        assert player.luck == sum(m.points for m in mine) - sum(m.expected_points for m in mine)
        assert player.safest_share == Fraction(sum(m.safest for m in mine), len(mine))
    assert all(0 <= x <= MORE_THAN_99 or x == NOT_HIDDEN for s in result.steps for x in s.codes(11, 11))
    # the strong bot (seat 1) makes deliberate wrong marks: until that cell opens, each of its
    # own moves had a cell it knew to be safe
    for m in result.moves:
        if m.seat == 1 and any(w.seat == 1 and w.action is Action.MARK and not w.mine and w.step < m.step
                               and result.steps[m.step].mine_layouts.get(w.cell) is not None
                               for w in result.moves):
            assert m.p_min == 0
    assert analyze_game(duel.setup, duel.log) == result  # deterministic


def test_data_form_is_the_api_shape_and_json():
    duel = bot_game(3)
    data = analyze_game(duel.setup, duel.log).to_data()
    assert set(data) == {"moves", "players"}
    keys = {"number", "seat", "action", "cell", "p_mine", "p_min", "p_max", "safest", "certain", "verdict",
            "fortune", "expected_points", "points"}
    assert all(set(m) == keys for m in data["moves"])
    assert all(isinstance(m["p_mine"], float) and isinstance(m["expected_points"], float) for m in data["moves"])
    assert [set(p) for p in data["players"]] == [{"seat", "moves", "safest_share", "excess_risk", "luck"}] * 2
    assert json.loads(json.dumps(data)) == data


def test_a_resigned_game_ends_with_public_odds_and_no_moves_is_fine():
    setup = Duel.new(random.Random(5), first=0).setup
    result = analyze_game(setup, [(1, Resign())])
    assert result.moves == () and len(result.steps) == 2
    assert result.steps[0].seat == 0 and result.steps[1].seat is None
    assert result.players[0].safest_share is None and result.players[0].excess_risk is None
    assert result.to_data()["players"][0] == {"seat": 0, "moves": 0, "safest_share": None, "excess_risk": None,
                                              "luck": 0.0}


# ---------------------------------------------------------------------------------------------
# Words
# ---------------------------------------------------------------------------------------------


def test_percent_never_rounds_to_certainty():
    assert [percent(Fraction(x)) for x in (0, 1, Fraction(1, 1000), Fraction(999, 1000), Fraction(41, 100))] == [
        "0 %", "100 %", "<1 %", ">99 %", "41 %"]
    assert [percent_code(Fraction(x)) for x in (0, 1, Fraction(1, 10**6), Fraction(10**6 - 1, 10**6),
                                                Fraction(1, 3))] == [0, 100, 101, 102, 33]
    assert percent(Fraction(3, 200)) == percent(3 / 200)  # the page formats the float the data holds


def odds(action: Action, p: Fraction, low: Fraction, high: Fraction, mine: bool) -> MoveOdds:
    return MoveOdds(1, 0, 0, action, (0, 0), mine, p, low, high, Fraction(0), 0)


def test_verdicts():
    e = Action.EXPLORE
    assert odds(e, Fraction(0), Fraction(0), Fraction(1, 2), False).verdict == "certain"
    risky = odds(e, Fraction(41, 100), Fraction(0), Fraction(1, 2), False)
    assert (risky.verdict, risky.fortune) == ("risky: 41 % vs 0 % available", "lucky")
    forced = odds(e, Fraction(1, 3), Fraction(1, 3), Fraction(1, 2), True)
    assert (forced.verdict, forced.fortune) == ("safest", "unlucky")
    mark = odds(Action.MARK, Fraction(1, 2), Fraction(0), Fraction(9, 10), False)
    assert (mark.verdict, mark.fortune, mark.risk, mark.excess_risk) == (
        "risky: 50 % vs 90 % available", "unlucky", Fraction(1, 2), Fraction(2, 5))
    assert odds(Action.MARK, Fraction(1), Fraction(0), Fraction(1), True).verdict == "certain"


def test_a_move_sure_to_go_wrong_was_no_bad_luck():
    """Only a guess has a fortune: a mark on a cell proven safe (0 % chance of being right) or
    an explore of a proven mine went wrong for certain, which no luck explains."""
    wrong_mark = odds(Action.MARK, Fraction(0), Fraction(0), Fraction(13, 100), False)
    assert (wrong_mark.verdict, wrong_mark.risk, wrong_mark.fortune) == ("risky: 0 % vs 13 % available", 1, None)
    assert wrong_mark.to_data()["fortune"] is None
    hit = odds(Action.EXPLORE, Fraction(1), Fraction(0), Fraction(1), True)
    assert (hit.verdict, hit.fortune) == ("risky: 100 % vs 0 % available", None)
    unsure = odds(Action.MARK, Fraction(1, 100), Fraction(0), Fraction(13, 100), False)
    assert unsure.fortune == "unlucky"  # a 1 % chance is still a guess

"""Tests for engine.deduce: exact deduction against a brute-force reference, and named
positions for each kind of deduction."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.deduce import Analysis, analyze, revealable

REPO = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------------------------
# Brute-force reference: enumerate every layout
# ---------------------------------------------------------------------------------------------


def bf_neighbours(width, height, cell):
    r, c = cell
    return [
        (rr, cc)
        for rr in (r - 1, r, r + 1)
        for cc in (c - 1, c, c + 1)
        if (rr, cc) != (r, c) and 0 <= rr < height and 0 <= cc < width
    ]


def bf_layouts(width, height, total, numbers, visible, known_safe=()):
    """The hidden cells, and every consistent layout as a bitmask over them (bit k: the k-th
    hidden cell holds a mine), by trying every way to place the mines left. With
    ``known_safe``, only the layouts that leave those hidden cells empty."""
    visible = set(visible)
    hidden = [
        (r, c)
        for r in range(height)
        for c in range(width)
        if (r, c) not in numbers and (r, c) not in visible
    ]
    checks = []  # per number: (mask of its hidden neighbours, mines they must hold)
    for cell, value in numbers.items():
        around = bf_neighbours(width, height, cell)
        mask = sum(1 << k for k, x in enumerate(hidden) if x in around)
        checks.append((mask, value - sum(y in visible for y in around)))
    empty = sum(1 << k for k, x in enumerate(hidden) if x in set(known_safe))
    layouts = []
    for combo in itertools.combinations([1 << k for k in range(len(hidden))], total - len(visible)):
        placed = sum(combo)
        if not placed & empty and all((placed & mask).bit_count() == need for mask, need in checks):
            layouts.append(placed)
    return hidden, layouts


def bf_analysis(width, height, total, numbers, visible, known_safe=()):
    """(safe, mines, revealable, layout count, exact probabilities) by enumeration."""
    hidden, layouts = bf_layouts(width, height, total, numbers, visible, known_safe)
    assert layouts, "reference position must be consistent"
    visible = set(visible)
    mine_count = {x: sum(lay >> k & 1 for lay in layouts) for k, x in enumerate(hidden)}
    safe = frozenset(x for x in hidden if mine_count[x] == 0)
    mines = frozenset(x for x in hidden if mine_count[x] == len(layouts))
    reveal = {}
    for x in safe:
        around = bf_neighbours(width, height, x)
        mask = sum(1 << k for k, y in enumerate(hidden) if y in around)
        seen = sum(y in visible for y in around)
        counts = {seen + (lay & mask).bit_count() for lay in layouts}
        if len(counts) == 1:
            reveal[x] = counts.pop()
    probs = {x: Fraction(n, len(layouts)) for x, n in mine_count.items()}
    return safe, mines, reveal, len(layouts), probs


def assert_matches_brute_force(width, height, total, numbers, visible, known_safe=()):
    safe, mines, reveal, n, probs = bf_analysis(width, height, total, numbers, visible, known_safe)
    a = analyze(width, height, total, numbers, visible, known_safe=known_safe)
    assert a.safe == safe
    assert a.mines == mines
    assert a.revealable == reveal
    assert a.layouts == n
    assert a.exact_probabilities == probs
    assert a.probabilities == {x: float(p) for x, p in probs.items()}
    if not known_safe:
        assert revealable(width, height, total, numbers, visible) == reveal


# ---------------------------------------------------------------------------------------------
# Random positions from true layouts
# ---------------------------------------------------------------------------------------------

MAX_LAYOUT_CANDIDATES = 10000  # keep the brute force cheap: bound on C(hidden, mines to place)


def cheap_enough(width, height, mines, shown, seen, order):
    """Reveal cells (or make mines visible) in ``order`` until brute force is cheap."""
    hidden = [x for x in order if x not in shown and x not in seen]
    while comb(len(hidden), len(mines) - len(seen)) > MAX_LAYOUT_CANDIDATES:
        x = hidden.pop()
        (seen if x in mines else shown).add(x)
    numbers = {x: sum(y in mines for y in bf_neighbours(width, height, x)) for x in shown}
    return width, height, len(mines), numbers, sorted(seen)


@st.composite
def scattered_positions(draw, max_cells=25, max_side=6):
    """A position from a real layout: any safe cells revealed with their true numbers, any
    mines visible."""
    width = draw(st.integers(1, max_side))
    height = draw(st.integers(1, min(max_side, max_cells // width)))
    cells = [(r, c) for r in range(height) for c in range(width)]
    mines = draw(st.sets(st.sampled_from(cells), max_size=len(cells)))
    safe_cells = [x for x in cells if x not in mines]
    shown = draw(st.sets(st.sampled_from(safe_cells), max_size=len(safe_cells))) if safe_cells else set()
    seen = draw(st.sets(st.sampled_from(sorted(mines)), max_size=len(mines))) if mines else set()
    return cheap_enough(width, height, mines, shown, seen, draw(st.permutations(cells)))


@st.composite
def played_positions(draw, max_cells=25, max_side=6):
    """A position as play makes them: revealed cells grow from one opening, so hidden cells
    sit on a frontier of numbers; a few mines visible, and maybe an untouched interior."""
    width = draw(st.integers(2, max_side))
    height = draw(st.integers(2, min(max_side, max_cells // width)))
    cells = draw(st.permutations([(r, c) for r in range(height) for c in range(width)]))
    n_mines = draw(st.integers(1, max(1, len(cells) * 2 // 5)))
    mines = set(cells[:n_mines])
    safe_cells = cells[n_mines:]
    shown = {safe_cells[0]}
    for _ in range(draw(st.integers(0, len(safe_cells) - 1))):
        grow = [x for x in safe_cells if x not in shown]
        near = [x for x in grow if any(y in shown for y in bf_neighbours(width, height, x))]
        shown.add((near or grow)[draw(st.integers(0, len(near or grow) - 1))])
    seen = set(draw(st.sets(st.sampled_from(sorted(mines)), max_size=3)))
    return cheap_enough(width, height, mines, shown, seen, draw(st.permutations(cells)))


@st.composite
def striped_positions(draw, max_cells=25, max_side=6):
    """Numbers on every other (or third) row or column, hidden cells between them, like the
    stress position: long chains of overlapping numbers, several components, an interior."""
    width = draw(st.integers(2, max_side))
    height = draw(st.integers(2, min(max_side, max_cells // width)))
    cells = draw(st.permutations([(r, c) for r in range(height) for c in range(width)]))
    mines = set(cells[: draw(st.integers(1, max(1, len(cells) * 2 // 5)))])
    period = draw(st.integers(2, 3))
    axis = draw(st.integers(0, 1))
    holes = set(draw(st.lists(st.sampled_from(cells), max_size=4)))
    shown = {x for x in cells if x[axis] % period == 0 and x not in mines and x not in holes}
    seen = set(draw(st.sets(st.sampled_from(sorted(mines)), max_size=2)))
    return cheap_enough(width, height, mines, shown, seen, cells)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scattered_positions())
def test_matches_brute_force_on_scattered_positions(pos):
    assert_matches_brute_force(*pos)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(played_positions())
def test_matches_brute_force_on_played_positions(pos):
    assert_matches_brute_force(*pos)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(striped_positions())
def test_matches_brute_force_on_striped_positions(pos):
    assert_matches_brute_force(*pos)


# ---------------------------------------------------------------------------------------------
# Known-safe cells (a duel player's own wrong marks)
# ---------------------------------------------------------------------------------------------


@st.composite
def positions_with_known_safe(draw):
    """A position of any of the three kinds, and hidden cells one consistent layout leaves
    empty (some of them; maybe cells that show a number too, which are safe anyway)."""
    kind = draw(st.sampled_from([scattered_positions, played_positions, striped_positions]))
    width, height, total, numbers, visible = draw(kind())
    hidden, layouts = bf_layouts(width, height, total, numbers, visible)
    layout = layouts[draw(st.integers(0, len(layouts) - 1))]
    empty = [x for k, x in enumerate(hidden) if not layout >> k & 1]
    known = draw(st.lists(st.sampled_from(empty), unique=True)) if empty else []
    if numbers and draw(st.booleans()):
        known.append(draw(st.sampled_from(sorted(numbers))))
    return width, height, total, numbers, visible, known


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions_with_known_safe())
def test_known_safe_matches_brute_force(pos):
    assert_matches_brute_force(*pos)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_known_safe_raises_exactly_when_no_layout_leaves_them_empty(data):
    """Any hidden cells declared safe: ValueError iff no consistent layout leaves them empty."""
    width, height, total, numbers, visible = data.draw(played_positions(max_cells=16, max_side=4))
    hidden = bf_layouts(width, height, total, numbers, visible)[0]
    known = data.draw(st.sets(st.sampled_from(hidden), max_size=len(hidden))) if hidden else set()
    if bf_layouts(width, height, total, numbers, visible, known)[1]:
        assert_matches_brute_force(width, height, total, numbers, visible, sorted(known))
    else:
        with pytest.raises(ValueError):
            analyze(width, height, total, numbers, visible, known_safe=known)


def test_known_safe_cells_stay_hidden_and_shift_the_odds():
    # a 1 at (0, 0) on 2x2 with one mine: three places, one of them known safe leaves two
    a = analyze(2, 2, 1, {(0, 0): 1}, [], known_safe=[(1, 1)])
    assert a.exact_probabilities == {(0, 1): Fraction(1, 2), (1, 0): Fraction(1, 2), (1, 1): 0}
    assert (1, 1) in a.safe and a.layouts == 2
    assert a.revealable == {(1, 1): 1}  # it sees the mine wherever it is
    assert analyze(2, 2, 1, {(0, 0): 1}, [], known_safe=[]) == analyze(2, 2, 1, {(0, 0): 1}, [])


@pytest.mark.parametrize(
    "known",
    [
        pytest.param([(0, 1)], id="a-visible-mine"),
        pytest.param([(5, 5)], id="off-board"),
        pytest.param([(0,)], id="not-a-cell"),
        pytest.param([(1, 0), (1, 1), (0, 2), (1, 2)], id="no-room-for-the-mine"),
    ],
)
def test_bad_known_safe_cells_raise_value_error(known):
    with pytest.raises(ValueError):
        analyze(3, 2, 2, {(0, 0): 2}, [(0, 1)], known_safe=known)


# ---------------------------------------------------------------------------------------------
# Basic API
# ---------------------------------------------------------------------------------------------


def test_docstring_examples():
    import doctest

    import engine.deduce

    result = doctest.testmod(engine.deduce)
    assert result.attempted > 0 and result.failed == 0


def test_analysis_is_frozen_dataclass():
    a = analyze(3, 1, 1, {(0, 0): 1}, [])
    assert isinstance(a, Analysis)
    with pytest.raises(AttributeError):
        a.layouts = 2  # type: ignore[misc]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_arbitrary_numbers_raise_exactly_when_no_layout_exists(data):
    """Numbers not taken from a layout: ValueError iff brute force finds no layout."""
    width = data.draw(st.integers(1, 4))
    height = data.draw(st.integers(1, 4))
    cells = [(r, c) for r in range(height) for c in range(width)]
    shown = data.draw(st.sets(st.sampled_from(cells), max_size=len(cells)))
    numbers = {x: data.draw(st.integers(0, len(bf_neighbours(width, height, x)))) for x in shown}
    rest = [x for x in cells if x not in shown]
    visible = data.draw(st.sets(st.sampled_from(rest), max_size=len(rest))) if rest else set()
    total = data.draw(st.integers(len(visible), len(cells) - len(shown)))
    if bf_layouts(width, height, total, numbers, visible)[1]:
        assert_matches_brute_force(width, height, total, numbers, sorted(visible))
    else:
        with pytest.raises(ValueError):
            analyze(width, height, total, numbers, visible)
        with pytest.raises(ValueError):
            revealable(width, height, total, numbers, visible)


# ---------------------------------------------------------------------------------------------
# Hand-made positions, one per kind of deduction
# ---------------------------------------------------------------------------------------------


def picture(*rows):
    """A position drawn as text: ``*`` hidden mine, ``.`` hidden safe cell, ``X`` visible mine,
    ``o`` revealed safe cell (its number is computed from the layout). The total is the
    layout's mine count. Returns (width, height, total, numbers, visible)."""
    height, width = len(rows), len(rows[0])
    mines = {(r, c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch in "*X"}
    numbers = {
        (r, c): sum(y in mines for y in bf_neighbours(width, height, (r, c)))
        for r, row in enumerate(rows)
        for c, ch in enumerate(row)
        if ch == "o"
    }
    visible = sorted((r, c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch == "X")
    return width, height, len(mines), numbers, visible


def test_local_subset_rule_one_two_pattern():
    # (1,0) shows 1 and sees {A, B}; (1,1) shows 2 and sees {A, B, C}: C is the mine.
    pos = picture(
        "*.*.",
        "oo..",
        "oooo",
    )
    assert pos[3][(1, 0)] == 1 and pos[3][(1, 1)] == 2
    a = analyze(*pos)
    assert a.mines == {(0, 2)}
    assert a.exact_probabilities[(0, 0)] == a.exact_probabilities[(0, 1)] == Fraction(1, 2)
    assert {(0, 3), (1, 2), (1, 3)} <= a.safe
    # (0,3) and (1,3) see C and D only among unknowns: 1. (1,2) also sees B: undetermined.
    assert a.revealable == {(0, 3): 1, (1, 3): 1}
    assert_matches_brute_force(*pos)


def test_global_count_makes_the_interior_safe_and_determined():
    # One mine in total, and the corner 1 says it is among its three hidden neighbours:
    # every other cell is safe; those not touching the corner trio show 0.
    pos = picture(
        "o....",
        ".*...",
        ".....",
        ".....",
        ".....",
    )
    a = analyze(*pos)
    trio = {(0, 1), (1, 0), (1, 1)}
    assert a.mines == set()
    assert a.safe == {(r, c) for r in range(5) for c in range(5)} - trio - {(0, 0)}
    touching_trio = {(0, 2), (1, 2), (2, 0), (2, 1), (2, 2)}
    assert a.revealable == {x: 0 for x in a.safe - touching_trio}
    assert all(a.exact_probabilities[x] == Fraction(1, 3) for x in trio)
    assert_matches_brute_force(*pos)


def test_global_count_when_all_remaining_mines_are_on_the_frontier():
    # Each corner 1 needs one mine among its three hidden neighbours and only two mines are
    # hidden: the interior is empty, so it is safe, and where it touches neither corner trio
    # its number is known (1 next to the visible mine, else 0).
    pos = picture(
        "o*...",
        ".....",
        "....X",
        ".....",
        "...*o",
    )
    a = analyze(*pos)
    trios = {(0, 1), (1, 0), (1, 1), (3, 3), (3, 4), (4, 3)}
    interior = {(r, c) for r in range(5) for c in range(5)} - trios - {(0, 0), (4, 4), (2, 4)}
    assert a.mines == set()
    assert a.safe == interior
    assert a.revealable[(0, 4)] == 0
    assert a.revealable[(1, 4)] == 1
    assert a.revealable[(1, 3)] == 1
    assert (2, 2) not in a.revealable  # touches both trios
    assert (2, 3) not in a.revealable  # touches the lower trio
    assert_matches_brute_force(*pos)


def test_safe_cell_with_fixed_number_although_its_neighbours_are_unknown():
    # (1,1) is safe by the 0; the 1 at (0,1) puts exactly one mine on (0,2)/(1,2), both
    # neighbours of (1,1): its number is 1 whichever it is.
    pos = picture(
        "oo.",
        "o.*",
    )
    a = analyze(*pos)
    assert a.exact_probabilities[(0, 2)] == a.exact_probabilities[(1, 2)] == Fraction(1, 2)
    assert a.revealable == {(1, 1): 1}
    assert_matches_brute_force(*pos)


def test_safe_cell_with_fixed_number_from_two_uncertain_groups():
    # (0,1) sees uncertain cells constrained by different numbers; their mines still always
    # add up to the same count around it.
    pos = picture(
        "..*",
        "o.o",
        "*o.",
    )
    a = analyze(*pos)
    assert (0, 1) in a.revealable
    uncertain = [y for y in bf_neighbours(3, 3, (0, 1)) if 0 < a.exact_probabilities.get(y, 0) < 1]
    assert len(uncertain) >= 2
    assert_matches_brute_force(*pos)


def test_safe_cell_with_fixed_number_across_two_components():
    # (1,1) is safe; all six of its unknown neighbours are uncertain and split between two
    # independent groups of numbers. Only the total mine count ties the groups together, and
    # it makes their mines around (1,1) add up to 3 in every layout.
    pos = picture(
        "..*.o",
        "o..o.",
        "o**oo",
        "o.**o",
    )
    a = analyze(*pos)
    assert a.revealable == {(1, 1): 3, (1, 4): 0}
    around = [y for y in bf_neighbours(5, 4, (1, 1)) if y in a.exact_probabilities]
    assert all(0 < a.exact_probabilities[y] < 1 for y in around) and len(around) == 6
    assert_matches_brute_force(*pos)


def test_safe_cell_with_fixed_number_from_frontier_and_interior():
    # (1,0) sees the interior cell (0,0), which touches no number, and (0,1)/(1,1)/(2,1) on
    # the frontier. Of the two layouts one has mines on (0,0) and (1,1), the other on (0,1)
    # and (2,1): (1,0) shows 2 either way.
    pos = picture(
        "*.o",
        ".**",
        "o.o",
    )
    a = analyze(*pos)
    assert a.exact_probabilities[(0, 0)] == Fraction(1, 2)
    assert a.revealable == {(1, 0): 2}
    assert_matches_brute_force(*pos)


def test_a_zero_does_not_flood():
    pos = picture(
        ".....",
        ".....",
        "..o..",
        ".....",
        "*...*",
    )
    assert pos[3] == {(2, 2): 0}
    a = analyze(*pos)
    ring = {(r, c) for r in (1, 2, 3) for c in (1, 2, 3)} - {(2, 2)}
    assert a.safe == ring
    assert a.revealable == {}
    assert_matches_brute_force(*pos)


def test_duel_start_position_reveals_nothing():
    assert revealable(11, 11, 15, {(5, 5): 0}, []) == {}
    a = analyze(11, 11, 15, {(5, 5): 0}, [])
    ring = {(r, c) for r in (4, 5, 6) for c in (4, 5, 6)} - {(5, 5)}
    assert a.safe == ring
    assert a.mines == set()
    assert a.revealable == {}
    assert a.layouts == comb(112, 15)
    assert all(a.exact_probabilities[x] == Fraction(15, 112) for x in a.exact_probabilities.keys() - ring)
    assert sum(a.exact_probabilities.values()) == 15


def test_certain_hidden_mines_are_never_revealed():
    pos = picture(
        "o*.",
        "oo.",
        "...",
    )
    a = analyze(*pos)
    assert (0, 1) in a.mines
    assert (0, 1) not in a.revealable
    assert (0, 1) not in revealable(*pos)
    assert_matches_brute_force(*pos)


def test_visible_mines_count_in_numbers_and_total():
    pos = picture(
        "X.o",
        "...",
        "...",
    )
    # (0,2) shows 0: its neighbours are safe; the only mine is the visible one.
    a = analyze(*pos)
    assert a.layouts == 1
    assert a.mines == set()
    assert a.revealable[(0, 1)] == 1
    assert a.revealable[(2, 2)] == 0
    assert_matches_brute_force(*pos)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param((3, 3, 1, {(1, 1): 2}, []), id="number-needs-more-than-total"),
        pytest.param((3, 3, 0, {(1, 1): 1}, []), id="number-with-no-mines-left"),
        pytest.param((2, 1, 1, {(0, 0): 0}, [(0, 1)]), id="zero-beside-visible-mine"),
        pytest.param((2, 1, 1, {(0, 0): 0, (0, 1): 0}, []), id="mine-cannot-be-placed"),
        pytest.param((3, 1, 1, {(0, 0): 1, (0, 2): 0}, []), id="contradicting-numbers"),
        pytest.param((3, 1, 2, {(0, 0): 1, (0, 2): 1}, []), id="subset-contradiction"),
        pytest.param((3, 3, 1, {(3, 0): 0}, []), id="number-off-board"),
        pytest.param((3, 3, 1, {(0, -1): 0}, []), id="negative-coordinate"),
        pytest.param((3, 3, 1, {}, [(0, 3)]), id="visible-mine-off-board"),
        pytest.param((3, 3, 1, {(0, 0): 1}, [(0, 0)]), id="both-number-and-mine"),
        pytest.param((3, 3, 1, {}, [(0, 0), (1, 1)]), id="more-visible-mines-than-total"),
        pytest.param((3, 3, 9, {(0, 0): 3}, []), id="more-mines-than-hidden-cells"),
        pytest.param((3, 3, -1, {}, []), id="negative-total"),
        pytest.param((3, 3, 1, {(1, 1): 9}, []), id="number-nine"),
        pytest.param((3, 3, 1, {(1, 1): -1}, []), id="negative-number"),
        pytest.param((0, 3, 0, {}, []), id="empty-board"),
        pytest.param((3, 3, 1, {(1,): 0}, []), id="not-a-cell"),
    ],
)
def test_inconsistent_input_raises_value_error(args):
    with pytest.raises(ValueError):
        analyze(*args)
    with pytest.raises(ValueError):
        revealable(*args)


def test_duplicate_visible_mines_count_once():
    assert analyze(3, 1, 1, {(0, 0): 1}, [(0, 1), (0, 1)]).layouts == 1


# ---------------------------------------------------------------------------------------------
# The stress position
# ---------------------------------------------------------------------------------------------


def stress_position_path() -> Path:
    in_repo = REPO / "bench" / "positions" / "stress-21x10-75.json"
    if in_repo.exists():
        return in_repo
    return REPO.parent / "shared" / "positions" / "stress-21x10-75.json"


def load_position(path: Path):
    data = json.loads(path.read_text())
    numbers = {(r, c): n for r, c, n in data["numbers"]}
    visible = [tuple(x) for x in data["visible_mines"]]
    return data["width"], data["height"], data["total_mines"], numbers, visible


def test_stress_position_is_consistent():
    width, height, total, numbers, visible = load_position(stress_position_path())
    a = analyze(width, height, total, numbers, visible)
    hidden = width * height - len(numbers) - len(visible)
    assert len(a.exact_probabilities) == hidden
    assert sum(a.exact_probabilities.values()) == total - len(visible)
    assert sum(a.mine_layouts.values()) == (total - len(visible)) * a.layouts
    assert all(a.exact_probabilities[x] == 0 for x in a.safe)
    assert all(a.exact_probabilities[x] == 1 for x in a.mines)
    assert a.revealable.keys() <= a.safe
    assert revealable(width, height, total, numbers, visible) == a.revealable

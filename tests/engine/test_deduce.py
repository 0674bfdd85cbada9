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


def bf_layouts(width, height, total, numbers, visible):
    """Every consistent layout, as the frozenset of hidden mine cells."""
    visible = set(visible)
    hidden = [
        (r, c)
        for r in range(height)
        for c in range(width)
        if (r, c) not in numbers and (r, c) not in visible
    ]
    out = []
    for combo in itertools.combinations(hidden, total - len(visible)):
        placed = set(combo) | visible
        if all(
            sum(n in placed for n in bf_neighbours(width, height, cell)) == v
            for cell, v in numbers.items()
        ):
            out.append(frozenset(combo))
    return hidden, out


def bf_analysis(width, height, total, numbers, visible):
    """(safe, mines, revealable, layouts, exact probabilities) by enumeration."""
    hidden, layouts = bf_layouts(width, height, total, numbers, visible)
    assert layouts, "reference position must be consistent"
    n = len(layouts)
    visible = set(visible)
    safe = frozenset(x for x in hidden if all(x not in lay for lay in layouts))
    mines = frozenset(x for x in hidden if all(x in lay for lay in layouts))
    reveal = {}
    for x in safe:
        counts = {
            sum(1 for y in bf_neighbours(width, height, x) if y in lay or y in visible)
            for lay in layouts
        }
        if len(counts) == 1:
            reveal[x] = counts.pop()
    probs = {x: Fraction(sum(x in lay for lay in layouts), n) for x in hidden}
    return safe, mines, reveal, n, probs


def assert_matches_brute_force(width, height, total, numbers, visible):
    safe, mines, reveal, n, probs = bf_analysis(width, height, total, numbers, visible)
    a = analyze(width, height, total, numbers, visible)
    assert a.safe == safe
    assert a.mines == mines
    assert a.revealable == reveal
    assert a.layouts == n
    assert a.exact_probabilities == probs
    assert a.probabilities == {x: float(p) for x, p in probs.items()}
    assert revealable(width, height, total, numbers, visible) == reveal


# ---------------------------------------------------------------------------------------------
# Random positions from true layouts
# ---------------------------------------------------------------------------------------------

MAX_LAYOUT_CANDIDATES = 3000  # keep the brute force cheap: C(hidden, mines to place) bound


@st.composite
def positions(draw, max_cells=25, max_side=6):
    """A position reached from a real layout: some safe cells revealed with their true
    numbers, some mines visible; revealed until brute force is cheap."""
    width = draw(st.integers(1, max_side))
    height = draw(st.integers(1, min(max_side, max_cells // width)))
    cells = [(r, c) for r in range(height) for c in range(width)]
    mines = draw(st.sets(st.sampled_from(cells), max_size=len(cells)))
    safe_cells = [x for x in cells if x not in mines]
    shown = draw(st.sets(st.sampled_from(safe_cells), max_size=len(safe_cells))) if safe_cells else set()
    seen = draw(st.sets(st.sampled_from(sorted(mines)), max_size=len(mines))) if mines else set()
    order = draw(st.permutations(cells))
    hidden = [x for x in cells if x not in shown and x not in seen]
    for x in order:
        if comb(len(hidden), len(mines) - len(seen)) <= MAX_LAYOUT_CANDIDATES:
            break
        if x in hidden:
            hidden.remove(x)
            (seen if x in mines else shown).add(x)
    numbers = {
        x: sum(y in mines for y in bf_neighbours(width, height, x)) for x in shown
    }
    return width, height, len(mines), numbers, sorted(seen)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions())
def test_matches_brute_force_on_random_positions(pos):
    assert_matches_brute_force(*pos)


# ---------------------------------------------------------------------------------------------
# Basic API
# ---------------------------------------------------------------------------------------------


def test_analysis_is_frozen_dataclass():
    a = analyze(3, 1, 1, {(0, 0): 1}, [])
    assert isinstance(a, Analysis)
    with pytest.raises(AttributeError):
        a.layouts = 2  # type: ignore[misc]


def test_duel_start_position_reveals_nothing():
    assert revealable(11, 11, 15, {(5, 5): 0}, []) == {}
    a = analyze(11, 11, 15, {(5, 5): 0}, [])
    ring = {(r, c) for r in (4, 5, 6) for c in (4, 5, 6)} - {(5, 5)}
    assert a.safe == ring
    assert a.revealable == {}
    assert a.layouts == comb(112, 15)
    assert sum(a.exact_probabilities.values()) == 15

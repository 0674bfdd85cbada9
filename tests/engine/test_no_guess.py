"""Tests for engine.no_guess: generated layouts against an independent solver loop, the fast
check against the plain exact loop, determinism, bounds and errors."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.deduce import analyze
from engine.no_guess import (
    GenerationStats,
    clears_without_guessing,
    no_guess_layout,
    solve_stats,
)

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PRESETS = {"beginner": (9, 9, 10), "intermediate": (16, 16, 40), "expert": (30, 16, 99)}


# ---------------------------------------------------------------------------------------------
# The independent reference: the acceptance rule as RULES.md words it, nothing else
# ---------------------------------------------------------------------------------------------


def neighbours(width, height, cell):
    r, c = cell
    return [
        (rr, cc)
        for rr in (r - 1, r, r + 1)
        for cc in (c - 1, c, c + 1)
        if (rr, cc) != (r, c) and 0 <= rr < height and 0 <= cc < width
    ]


def plain_clear(width, height, mines, first_click):
    """Play the board by the rule: open the first click with the classic flood, then open
    every cell ``analyze`` proves safe (numbers shown, no visible mines, the total), flood
    included, until nothing is provably safe.  Returns the numbers shown at the end; asserts
    that no mine is ever opened."""
    mines = frozenset(mines)
    numbers: dict = {}

    def open_cell(cell):
        stack = [cell]
        while stack:
            x = stack.pop()
            if x in numbers:
                continue
            assert x not in mines, f"opened a mine at {x}"
            n = numbers[x] = sum(y in mines for y in neighbours(width, height, x))
            if n == 0:
                stack.extend(y for y in neighbours(width, height, x) if y not in numbers)

    open_cell(first_click)
    while len(numbers) < width * height - len(mines):
        safe = analyze(width, height, len(mines), numbers, []).safe
        if not safe:
            break
        for x in sorted(safe):
            open_cell(x)
    return numbers


def plain_accepts(width, height, mines, first_click):
    return len(plain_clear(width, height, mines, first_click)) == width * height - len(frozenset(mines))


def check_generated(width, height, count, first_click, mines):
    """Everything a generated layout must satisfy."""
    assert isinstance(mines, frozenset)
    assert len(mines) == count
    assert all(0 <= r < height and 0 <= c < width for r, c in mines)
    fr, fc = first_click
    assert not any(abs(r - fr) <= 1 and abs(c - fc) <= 1 for r, c in mines), "a mine in the first block"
    numbers = plain_clear(width, height, mines, first_click)
    assert numbers[first_click] == 0  # the first click opens a cascade
    # a win: every safe cell open, no mine opened (plain_clear asserts the latter)
    assert len(numbers) == width * height - count
    assert set(numbers) | mines == {(r, c) for r in range(height) for c in range(width)}


class OnlyFour:
    """An rng exposing only the four methods the generator may use."""

    def __init__(self, seed):
        self._r = random.Random(seed)
        self.random = self._r.random
        self.randrange = self._r.randrange
        self.sample = self._r.sample
        self.shuffle = self._r.shuffle


# ---------------------------------------------------------------------------------------------
# Generated layouts
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_presets_are_won_by_the_plain_loop(preset):
    width, height, count = PRESETS[preset]
    rng = random.Random(f"preset-{preset}")
    clicks = [(0, 0), (height - 1, width - 1), (0, width // 2), (height // 2, width // 2)]
    clicks += [(rng.randrange(height), rng.randrange(width)) for _ in range(4)]
    for redraws in (None, 0):  # as shipped (draws first), and repairs only
        stats = GenerationStats()
        for k, click in enumerate(clicks):
            rng = random.Random(f"{preset}-{k}")
            mines = no_guess_layout(width, height, count, click, rng, redraws=redraws, stats=stats)
            check_generated(width, height, count, click, mines)
        assert stats.rejected == 0
        assert stats.drawn == (len(clicks) if redraws is None else 0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    width=st.integers(5, 60),
    height=st.integers(5, 40),
    density=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
    redraws=st.sampled_from([None, 0, 3]),
    data=st.data(),
)
def test_custom_boards(width, height, density, seed, redraws, data):
    first = (data.draw(st.integers(0, height - 1)), data.draw(st.integers(0, width - 1)))
    block = sum(1 for dr in (-1, 0, 1) for dc in (-1, 0, 1)
                if 0 <= first[0] + dr < height and 0 <= first[1] + dc < width)
    free = width * height - block
    count = min(free, max(1, round(density * free)))
    stats = GenerationStats()
    try:
        mines = no_guess_layout(width, height, count, first, OnlyFour(seed), redraws=redraws, stats=stats)
    except ValueError:
        # Documented: only near-full boards may exhaust the budget.
        assert count > 0.8 * free, (width, height, count, first, seed)
        return
    check_generated(width, height, count, first, mines)
    assert stats.rejected == 0


@pytest.mark.parametrize(
    "width, height, count",
    [(60, 40, 480), (5, 5, 16), (30, 16, 200), (8, 8, 40), (40, 5, 60), (5, 40, 60)],
)
def test_large_and_dense_custom_boards(width, height, count):
    first = (height // 2, width // 3)
    stats = GenerationStats()
    rng = random.Random(f"{width}x{height}/{count}")
    mines = no_guess_layout(width, height, count, first, rng, redraws=0, stats=stats)
    check_generated(width, height, count, first, mines)
    assert stats.rejected == 0


def test_repairs_happen_and_escalate():
    """Dense boards need repairs, including the fallbacks (sets at random, the whole unknown
    area, certain mines walling the unknown cells off); the result still passes."""
    stats = GenerationStats()
    for seed in range(6):
        mines = no_guess_layout(30, 16, 300, (8, 15), random.Random(seed), redraws=0, stats=stats)
        check_generated(30, 16, 300, (8, 15), mines)
    assert stats.perturbations > 6 * 10
    assert stats.rejected == 0
    assert 0 <= stats.rolled_back and 0 < stats.kept <= stats.perturbations * 30 * 16


def test_full_board_and_empty_board():
    # every cell outside the block a mine: the block's numbers and the count settle it
    mines = no_guess_layout(5, 5, 16, (2, 2), random.Random(0))
    check_generated(5, 5, 16, (2, 2), mines)
    assert no_guess_layout(6, 5, 0, (0, 0), random.Random(0)) == frozenset()
    corner = no_guess_layout(5, 5, 21, (0, 0), random.Random(0))
    check_generated(5, 5, 21, (0, 0), corner)


def test_deterministic_given_the_seed():
    for width, height, count in [*PRESETS.values(), (40, 25, 250)]:
        click = (height // 2, 1)
        a = no_guess_layout(width, height, count, click, OnlyFour(5))
        b = no_guess_layout(width, height, count, click, OnlyFour(5))
        c = no_guess_layout(width, height, count, click, random.Random(5))
        assert a == b == c
    d = {no_guess_layout(30, 16, 99, (0, 0), random.Random(s)) for s in range(5)}
    assert len(d) == 5
    assert no_guess_layout(30, 16, 99, (0, 0), random.Random(1), choose="random") == no_guess_layout(
        30, 16, 99, (0, 0), random.Random(1), choose="random"
    )


def test_draws_are_rejection_sampling():
    """The draw phase is plain rejection sampling: the first of the rng's uniform layouts
    (``rng.sample`` over the cells outside the block, row by row) that the plain loop
    accepts, so every accepted layout is equally likely."""
    for width, height, count, seed in [(9, 9, 10, 1), (16, 16, 40, 2), (30, 16, 99, 3), (12, 7, 20, 4)]:
        click = (height // 2, width // 2)
        free = [(r, c) for r in range(height) for c in range(width)
                if max(abs(r - click[0]), abs(c - click[1])) > 1]
        ref = random.Random(seed)
        while True:
            mines = frozenset(ref.sample(free, count))
            if plain_accepts(width, height, mines, click):
                break
        stats = GenerationStats()
        assert no_guess_layout(width, height, count, click, random.Random(seed), stats=stats) == mines
        assert stats.drawn == 1 and stats.attempts == 0


def test_draws_are_uniform_on_a_tiny_board():
    """Every accepted layout of a tiny board comes out about equally often."""
    free = [(r, c) for r in range(5) for c in range(5) if max(abs(r - 2), abs(c - 2)) > 1]
    accepted = {
        frozenset(m)
        for m in itertools.combinations(free, 2)
        if plain_accepts(5, 5, m, (2, 2))
    }
    rng = random.Random(11)
    counts = dict.fromkeys(accepted, 0)
    n = 40 * len(accepted)
    for _ in range(n):
        counts[no_guess_layout(5, 5, 2, (2, 2), rng)] += 1
    assert set(counts) == accepted
    assert min(counts.values()) > 15 and max(counts.values()) < 70  # mean 40, sd ~6.3


def test_choose_random_also_works():
    for seed in range(3):
        mines = no_guess_layout(30, 16, 130, (3, 3), random.Random(seed), choose="random", redraws=0)
        check_generated(30, 16, 130, (3, 3), mines)


# ---------------------------------------------------------------------------------------------
# clears_without_guessing against the plain loop
# ---------------------------------------------------------------------------------------------


def random_layout(rng, width, height, count, first, keep_block_clear):
    cells = [(r, c) for r in range(height) for c in range(width) if (r, c) != first]
    if keep_block_clear:
        cells = [(r, c) for r, c in cells if max(abs(r - first[0]), abs(c - first[1])) > 1]
    return rng.sample(cells, min(count, len(cells)))


def test_fast_check_equals_plain_loop_on_many_layouts():
    rng = random.Random(2024)
    outcomes = {True: 0, False: 0}
    for _ in range(400):
        width, height = rng.randrange(5, 17), rng.randrange(5, 13)
        first = (rng.randrange(height), rng.randrange(width))
        count = rng.randrange(1, width * height // 4)
        mines = random_layout(rng, width, height, count, first, rng.random() < 0.9)
        got = clears_without_guessing(width, height, mines, first)
        assert got == plain_accepts(width, height, mines, first), (width, height, sorted(mines), first)
        assert solve_stats(width, height, mines, first, local_rules=False)["cleared"] == got
        outcomes[got] += 1
    assert outcomes[True] >= 50 and outcomes[False] >= 50, outcomes


def test_fast_check_equals_plain_loop_on_expert():
    rng = random.Random(99)
    outcomes = {True: 0, False: 0}
    for k in range(30):
        first = (rng.randrange(16), rng.randrange(30))
        if k % 3 == 0:  # some accepted ones for sure
            mines = no_guess_layout(30, 16, 99, first, rng)
        else:
            mines = random_layout(rng, 30, 16, 99, first, True)
        got = clears_without_guessing(30, 16, mines, first)
        assert got == plain_accepts(30, 16, mines, first)
        outcomes[got] += 1
    assert outcomes[True] >= 10 and outcomes[False] >= 5, outcomes


@PROPERTY
@given(
    width=st.integers(5, 12),
    height=st.integers(5, 10),
    density=st.floats(0.02, 0.45),
    clear_block=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_fast_check_equals_plain_loop_property(width, height, density, clear_block, seed):
    rng = random.Random(seed)
    first = (rng.randrange(height), rng.randrange(width))
    mines = random_layout(rng, width, height, max(1, round(density * width * height)), first, clear_block)
    assert clears_without_guessing(width, height, mines, first) == plain_accepts(width, height, mines, first)


def test_named_positions():
    # a 50/50 on the top edge: {(0, 0), (0, 3)} and {(0, 1), (0, 4)} look the same
    assert not clears_without_guessing(5, 5, {(0, 0), (0, 3)}, (2, 2))
    assert not plain_accepts(5, 5, {(0, 0), (0, 3)}, (2, 2))
    # the local rules get stuck; the exact deduction settles it
    stats = solve_stats(5, 5, {(0, 1), (2, 0), (4, 1)}, (2, 2))
    assert stats["cleared"] and stats["exact_calls"] == 1
    # mines in the first click's block are allowed: the click then shows a number
    assert clears_without_guessing(5, 5, {(1, 1)}, (0, 0)) == plain_accepts(5, 5, {(1, 1)}, (0, 0))
    # no mines at all: the first click opens everything
    assert clears_without_guessing(7, 5, [], (3, 3))
    # every cell but the click a mine: nothing to open after it
    every = [(r, c) for r in range(5) for c in range(5) if (r, c) != (0, 0)]
    assert clears_without_guessing(5, 5, every, (0, 0))


# ---------------------------------------------------------------------------------------------
# Errors and bounds
# ---------------------------------------------------------------------------------------------


def test_errors():
    rng = random.Random(0)
    with pytest.raises(ValueError):
        no_guess_layout(9, 9, 73, (4, 4), rng)  # 72 cells outside the block
    with pytest.raises(ValueError):
        no_guess_layout(9, 9, -1, (4, 4), rng)
    with pytest.raises(ValueError):
        no_guess_layout(9, 9, 10, (9, 0), rng)
    with pytest.raises(ValueError):
        no_guess_layout(0, 9, 10, (0, 0), rng)
    with pytest.raises(ValueError):
        no_guess_layout(9, 9, 10, (4, 4), rng, choose="best")
    with pytest.raises(ValueError):
        no_guess_layout(9, 9, 10, (4, 4), rng, max_attempts=0)
    with pytest.raises(ValueError):
        no_guess_layout(9, 9, 10, (4, 4), rng, redraws=-1)
    with pytest.raises(ValueError):
        clears_without_guessing(5, 5, {(2, 2)}, (2, 2))  # a mine on the first click
    with pytest.raises(ValueError):
        clears_without_guessing(5, 5, {(5, 2)}, (2, 2))
    with pytest.raises(ValueError):
        clears_without_guessing(5, 5, set(), [2, 2])  # not a tuple


def test_budget_is_a_bound():
    """With no repairs allowed, a board that needs one raises after max_attempts layouts."""
    stats = GenerationStats()
    with pytest.raises(ValueError):
        no_guess_layout(30, 16, 200, (8, 15), random.Random(3), redraws=5, max_attempts=2, max_perturbations=0,
                        stats=stats)
    assert stats.draws == 5 and stats.drawn == 0 and stats.attempts == 2 and stats.perturbations == 0

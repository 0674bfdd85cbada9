"""engine/reveal_cache.py: the cached, incremental auto-reveal always equals the uncached
``revealable`` (and brute force where it is cheap), on sequences of positions as games make
them, on branching games sharing one cache, with tiny limits (eviction), and on inconsistent
input.  Its helpers are each checked against a dumb twin."""

from __future__ import annotations

import itertools
import random
from math import comb

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Duel, Explore, IllegalMove, Mark
from engine import component as cm
from engine import restriction as rs
from engine import reveal_cache as rc
from engine.deduce import RevealCache, revealable

from .test_deduce import bf_analysis, bf_layouts, bf_neighbours

SLOW_CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
               HealthCheck.function_scoped_fixture]  # (the fixture below is the same for every example)


def slow(n):
    return settings(max_examples=n, deadline=None, suppress_health_check=SLOW_CHECKS)
BRUTE_FORCE_LIMIT = 6000  # compare with brute force when C(hidden, mines to place) is at most this


def check(cache, width, height, total, numbers, visible, brute=True):
    """The cached answer equals the uncached one (same items, same order) and, where cheap,
    brute force; returns it."""
    want = revealable(width, height, total, numbers, visible)
    got = revealable(width, height, total, numbers, visible, cache=cache)
    assert got == want
    assert list(got) == list(want)
    hidden = width * height - len(numbers) - len(set(visible))
    if brute and comb(hidden, total - len(set(visible))) <= BRUTE_FORCE_LIMIT:
        assert got == bf_analysis(width, height, total, numbers, visible)[2]
    return got


# ---------------------------------------------------------------------------------------------
# Games on small boards, against brute force
# ---------------------------------------------------------------------------------------------


@st.composite
def small_games(draw, max_cells=25, max_side=6):
    """A layout and a move order: (width, height, mines, moves), a move being (cell, mark?)."""
    width = draw(st.integers(2, max_side))
    height = draw(st.integers(2, min(max_side, max_cells // width)))
    cells = [(r, c) for r in range(height) for c in range(width)]
    mines = set(draw(st.sets(st.sampled_from(cells), min_size=1, max_size=max(1, len(cells) // 3))))
    order = draw(st.permutations(cells))
    marks = draw(st.lists(st.booleans(), min_size=len(cells), max_size=len(cells)))
    apply_reveal = draw(st.lists(st.booleans(), min_size=len(cells), max_size=len(cells)))
    return width, height, mines, list(zip(order, marks, apply_reveal))


def number_at(width, height, mines, cell):
    return sum(y in mines for y in bf_neighbours(width, height, cell))


def play_small(width, height, mines, moves):
    """Positions as a duel makes them: a start cell, then explores (a mine becomes visible)
    and marks (a wrong mark changes nothing public, so no position); after a move the
    reference auto-reveal is applied, or now and then not (the next position then extends one
    whose revealable cells are still hidden).  Yields (numbers, visible) after each move."""
    numbers: dict = {}
    visible: list = []
    total = len(mines)
    for cell, mark, apply_reveal in moves:
        if cell in numbers or cell in visible:
            continue
        if cell in mines:
            visible.append(cell)
        elif mark and numbers:
            continue  # a wrong mark: nothing public changed
        else:
            numbers[cell] = number_at(width, height, mines, cell)
        yield numbers, visible
        if apply_reveal:
            numbers.update(revealable(width, height, total, numbers, visible))


@pytest.fixture(params=["solutions", "bitsets"])
def component_pass(request, monkeypatch):
    """Run a test with components solved by carrying their solutions (the usual way) and by
    the bitset pass (what components with many solutions get)."""
    if request.param == "bitsets":
        monkeypatch.setattr(cm, "_SOLUTIONS", 0)
    return request.param


@slow(400)
@given(game=small_games())
def test_small_games_match_brute_force(game, component_pass):
    width, height, mines, moves = game
    cache = RevealCache()
    for numbers, visible in play_small(width, height, mines, moves):
        check(cache, width, height, len(mines), numbers, visible)
    assert cache.stats["extended"] > 0 or len(moves) < 3 or cache.stats["fresh"] >= 1


@slow(200)
@given(small_games(), st.data())
def test_small_games_branching_share_one_cache(game, data):
    """From positions of a game, two different moves on two copies, both asked with the one
    cache in either order, and the game going on from one of them."""
    width, height, mines, moves = game
    total = len(mines)
    cache = RevealCache()
    for numbers, visible in play_small(width, height, mines, moves):
        check(cache, width, height, total, numbers, visible)
        hidden = [(r, c) for r in range(height) for c in range(width) if (r, c) not in numbers and (r, c) not in visible]
        if len(hidden) < 2 or not data.draw(st.booleans()):
            continue
        a, b = data.draw(st.lists(st.sampled_from(hidden), min_size=2, max_size=2, unique=True))
        branches = []
        for x in (a, b):
            n2, v2 = dict(numbers), list(visible)
            if x in mines:
                v2.append(x)
            else:
                n2[x] = number_at(width, height, mines, x)
            branches.append((n2, v2))
        if data.draw(st.booleans()):
            branches.reverse()
        for n2, v2 in branches + branches[:1]:
            check(cache, width, height, total, n2, v2)


@slow(200)
@given(small_games(), st.integers(1, 3), st.integers(0, 3))
def test_tiny_limits_stay_exact(game, states, components):
    """Eviction: with room for one or two positions and components (or none), still the same
    answers."""
    width, height, mines, moves = game
    cache = RevealCache(states=states, components=components)
    for numbers, visible in play_small(width, height, mines, moves):
        check(cache, width, height, len(mines), numbers, visible)
        assert len(cache) <= states and len(cache._comps) <= components


@slow(150)
@given(st.lists(small_games(max_cells=16, max_side=4), min_size=1, max_size=3), st.randoms(use_true_random=False))
def test_positions_in_any_order_share_one_cache(games, rnd):
    """Positions of several games (boards of different sizes, totals), shuffled, through one
    cache: parents are found or not, repeated positions answered again, never mixed up."""
    cache = RevealCache(states=4)
    asked = []
    for width, height, mines, moves in games:
        for numbers, visible in play_small(width, height, mines, moves):
            asked.append((width, height, len(mines), dict(numbers), list(visible)))
    rnd.shuffle(asked)
    for pos in asked + asked[: len(asked) // 2]:
        check(cache, *pos)


@slow(150)
@given(game=small_games(max_cells=64, max_side=8))
def test_larger_boards_match_uncached(game, component_pass):
    """Boards up to 8x8 (brute force where still cheap): wider frontiers, several components,
    verdicts that need the whole board."""
    width, height, mines, moves = game
    cache = RevealCache()
    for numbers, visible in play_small(width, height, mines, moves):
        check(cache, width, height, len(mines), numbers, visible)


# A game (found by a random search) where a safe cell's number is fixed only by the total
# mine count across two components, and a later move far from it changes that: the cell must be
# decided again although nothing around it changed.
GLOBAL_GAME = (
    5, 7, {(0, 3), (1, 0), (1, 1), (2, 2), (3, 1), (3, 2), (4, 0), (5, 4)},
    [((5, 3), 0, 1), ((1, 2), 1, 1), ((1, 3), 0, 0), ((3, 1), 0, 1), ((4, 4), 0, 1), ((2, 2), 0, 1),
     ((1, 4), 0, 1), ((2, 0), 0, 1), ((3, 3), 1, 1), ((6, 3), 1, 0), ((3, 2), 1, 1), ((0, 2), 1, 1),
     ((2, 1), 0, 1), ((5, 2), 0, 1), ((0, 1), 0, 0), ((6, 1), 0, 1), ((5, 4), 0, 1), ((3, 4), 1, 0),
     ((0, 0), 1, 0), ((4, 2), 1, 1), ((6, 4), 0, 1), ((0, 3), 0, 1), ((3, 0), 0, 1), ((6, 2), 0, 1),
     ((1, 0), 1, 1), ((4, 1), 0, 1), ((2, 4), 1, 0), ((5, 0), 0, 0), ((6, 0), 0, 1), ((0, 4), 1, 1),
     ((1, 1), 1, 1), ((2, 3), 0, 0), ((5, 1), 0, 1), ((4, 0), 0, 1), ((4, 3), 0, 1)],
)


def test_a_verdict_that_needed_the_whole_board_is_decided_again():
    width, height, mines, moves = GLOBAL_GAME
    cache = RevealCache()
    needed_whole_board = 0
    for numbers, visible in play_small(width, height, mines, [(c, bool(m), bool(a)) for c, m, a in moves]):
        check(cache, width, height, len(mines), numbers, visible)
        needed_whole_board += cache._states[-1].global_dep != 0
    assert needed_whole_board


@slow(200)
@given(small_games(), st.data())
def test_a_changed_number_is_never_taken_for_the_cached_one(game, data):
    """The same cells in the same order as a cached position, one number changed (a caller
    that is not a duel may do that): the cache must not reuse the position."""
    width, height, mines, moves = game
    cache = RevealCache()
    for numbers, visible in play_small(width, height, mines, moves):
        check(cache, width, height, len(mines), numbers, visible)
        if not numbers:
            continue
        cell = data.draw(st.sampled_from(sorted(numbers)))
        changed = {x: (v + data.draw(st.integers(1, 8))) % 9 if x == cell else v for x, v in numbers.items()}
        try:
            want = revealable(width, height, len(mines), changed, visible)
        except ValueError:
            with pytest.raises(ValueError):
                revealable(width, height, len(mines), changed, visible, cache=cache)
        else:
            assert revealable(width, height, len(mines), changed, visible, cache=cache) == want
        check(cache, width, height, len(mines), numbers, visible)


def test_a_new_number_the_parent_already_revealed_adds_no_constraint():
    # The 1 at (0, 0) sees (0, 1) and (1, 0)..(1, 1); revealed cells enter as numbers again.
    cache = RevealCache()
    pos = (3, 2, 1, {(0, 0): 0, (0, 1): 1, (1, 0): 0}, [])
    first = check(cache, *pos)
    assert first == {(1, 1): 1}
    numbers = {**pos[3], **first}
    assert check(cache, 3, 2, 1, numbers, []) == {}
    assert cache.stats["extended"] == 1


# ---------------------------------------------------------------------------------------------
# Inconsistent input
# ---------------------------------------------------------------------------------------------


@slow(300)
@given(st.data())
def test_arbitrary_numbers_raise_exactly_as_uncached(data):
    """Numbers not from a layout, as extensions of a consistent position in the cache:
    ValueError iff the uncached path raises it (iff no layout exists), the same answer
    otherwise; and the cache still answers its earlier position afterwards."""
    width = data.draw(st.integers(1, 4))
    height = data.draw(st.integers(1, 4))
    cells = [(r, c) for r in range(height) for c in range(width)]
    mines = data.draw(st.sets(st.sampled_from(cells), max_size=len(cells)))
    shown = data.draw(st.sets(st.sampled_from([x for x in cells if x not in mines] or cells), max_size=len(cells)))
    shown -= mines
    base = {x: number_at(width, height, mines, x) for x in shown}
    seen = sorted(data.draw(st.sets(st.sampled_from(sorted(mines)), max_size=len(mines)))) if mines else []
    cache = RevealCache()
    check(cache, width, height, len(mines), base, seen)
    rest = [x for x in cells if x not in base]
    extra = data.draw(st.sets(st.sampled_from(rest), max_size=3)) if rest else set()
    numbers = dict(base)
    for x in extra:
        numbers[x] = data.draw(st.integers(0, len(bf_neighbours(width, height, x))))
    visible = sorted(set(seen) | data.draw(st.sets(st.sampled_from(rest), max_size=2)) if rest else seen)
    total = data.draw(st.integers(len(mines) - 1, len(mines) + 1))
    try:
        want = revealable(width, height, total, numbers, visible)
    except ValueError:
        with pytest.raises(ValueError):
            revealable(width, height, total, numbers, visible, cache=cache)
    else:
        assert revealable(width, height, total, numbers, visible, cache=cache) == want
        if bf_layouts(width, height, total, numbers, visible)[1]:
            assert want == bf_analysis(width, height, total, numbers, visible)[2]
    check(cache, width, height, len(mines), base, seen)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param((3, 3, 1, {(1, 1): 2}, []), id="number-needs-more-than-total"),
        pytest.param((2, 1, 1, {(0, 0): 0}, [(0, 1)]), id="zero-beside-visible-mine"),
        pytest.param((3, 3, 1, {(3, 0): 0}, []), id="number-off-board"),
        pytest.param((3, 3, 1, {}, [(0, 3)]), id="visible-mine-off-board"),
        pytest.param((3, 3, 1, {(0, 0): 1}, [(0, 0)]), id="both-number-and-mine"),
        pytest.param((3, 3, 1, {}, [(0, 0), (1, 1)]), id="more-visible-mines-than-total"),
        pytest.param((3, 3, 9, {(0, 0): 3}, []), id="more-mines-than-hidden-cells"),
        pytest.param((3, 3, -1, {}, []), id="negative-total"),
        pytest.param((3, 3, 1, {(1, 1): 9}, []), id="number-nine"),
        pytest.param((3, 3, 1, {(1, 1): True}, []), id="bool-number"),
        pytest.param((0, 3, 0, {}, []), id="empty-board"),
        pytest.param((3, 3, 1, {(1,): 0}, []), id="not-a-cell"),
        pytest.param((3, 3, 1, {}, [[0, 0]]), id="list-cell"),
    ],
)
def test_invalid_input_raises_value_error_from_a_fresh_or_a_warm_cache(args):
    width, height = args[0], args[1]
    with pytest.raises(ValueError):
        revealable(*args)
    with pytest.raises(ValueError):
        revealable(*args, cache=RevealCache())
    warm = RevealCache()
    if width > 0 and height > 0:
        revealable(width, height, 1, {}, [], cache=warm)
        revealable(width, height, args[2] if isinstance(args[2], int) and args[2] >= 0 else 1, {}, [], cache=warm)
    with pytest.raises(ValueError):
        revealable(*args, cache=warm)


def test_bad_limits():
    with pytest.raises(ValueError):
        RevealCache(states=0)
    with pytest.raises(ValueError):
        RevealCache(components=-1)


# ---------------------------------------------------------------------------------------------
# Full duel games
# ---------------------------------------------------------------------------------------------


def duel_positions(seed, moves=400):
    """(numbers, visible) of every auto-reveal of a random 11x11/15 duel, as the duel asks
    (``RevealCache.extend``)."""
    rng = random.Random(seed)
    duel = Duel.new(rng, "brettspielnetz", first=0)
    asked = []
    real = RevealCache.extend

    def spy(cache, base, number, mine, width, height, total, numbers, visible):
        asked.append((dict(numbers), list(visible)))
        return real(cache, base, number, mine, width, height, total, numbers, visible)

    RevealCache.extend = spy
    try:
        for _ in range(moves):
            if duel.outcome is not None:
                break
            hidden = [(r, c) for r in range(11) for c in range(11) if duel.is_hidden((r, c))]
            cell = rng.choice(hidden)
            try:
                duel.apply(duel.to_move, Mark(cell) if rng.random() < 0.4 else Explore(cell))
            except IllegalMove:
                pass
    finally:
        RevealCache.extend = real
    return duel, asked


@pytest.mark.parametrize("seed", range(12))
def test_duel_games_match_uncached(seed, component_pass):
    duel, asked = duel_positions(seed)
    assert asked
    cache = RevealCache()
    for numbers, visible in asked:
        check(cache, 11, 11, 15, numbers, visible, brute=False)
    assert cache.stats["extended"] == len(asked) - 1  # each position extends the one before
    # and the duel's own cache, fed by the game itself, saw the same positions
    assert duel.reveal_cache.stats["extended"] == len(asked) - 1


def test_bot_games_match_uncached():
    """Games where every move is deduction-aware (the bench's bot: certain mines marked,
    certain-safe cells explored), so reveals and component changes are frequent."""
    from engine.bots import choose_move

    for seed in range(3):
        rng = random.Random(seed)
        duel = Duel.new(rng, "coan", first=0)
        cache = RevealCache()
        while duel.outcome is None:
            move = choose_move(duel.view(duel.to_move), rng)
            before = (dict(duel.numbers), list(duel.claims))
            duel.apply(duel.to_move, move)
            numbers = dict(duel.numbers)
            for cell in duel.last_opened[1:]:
                del numbers[cell]  # the position the auto-reveal was asked about
            if isinstance(move, Mark) and move.cell not in duel.claims:
                continue  # a wrong mark: no auto-reveal
            assert before[0].items() <= numbers.items()
            check(cache, 11, 11, 15, numbers, list(duel.claims), brute=False)


def test_duel_copies_and_decoded_versions_share_the_cache_and_branch_exactly():
    """Two different moves applied to two copies of one position (as the server's copies
    and the versions another process decodes with ``from_snapshot(data, previous)``): one
    cache, answers equal to the uncached auto-reveal, and the games go on."""
    rng = random.Random(7)
    duel = Duel.new(rng, "brettspielnetz", first=0)
    checked = 0
    for _ in range(60):
        if duel.outcome is not None:
            break
        data = duel.snapshot()
        copies = [Duel.from_snapshot(data, duel), Duel.from_snapshot(data, duel)]
        assert all(c.reveal_cache is duel.reveal_cache for c in copies)
        hidden = [(r, c) for r in range(11) for c in range(11) if duel.is_hidden((r, c))]
        if len(hidden) < 2:
            break
        a, b = rng.sample(hidden, 2)
        for copy, cell in zip(copies, (a, b)):
            before = dict(copy.numbers), list(copy.claims)
            move = Mark(cell) if cell in duel.setup.mines and rng.random() < 0.5 else Explore(cell)
            copy.apply(copy.to_move, move)
            numbers = dict(copy.numbers)
            for opened in copy.last_opened[1:]:
                del numbers[opened]
            want = revealable(11, 11, 15, numbers, list(copy.claims))
            assert {c: copy.numbers[c] for c in copy.last_opened[1:]} == want
            checked += 1
            assert before[0].items() <= copy.numbers.items()
        duel = copies[rng.randrange(2)]
    assert checked > 20
    # the start position is never asked: the first two moves (one per copy) are solved from
    # scratch, every later one from the position it extends
    assert duel.reveal_cache.stats["fresh"] == 2
    assert duel.reveal_cache.stats["extended"] == checked - 2


@pytest.mark.parametrize("kind", ["random", "explore", "bot"])
def test_the_duels_own_auto_reveal_matches_uncached(kind, component_pass):
    """Through ``RevealCache.extend`` (the duel names what each position adds): every
    auto-reveal of whole games equals the uncached answer for the position it was asked on,
    also for copies that branch and versions decoded from snapshots, which go on from there."""
    from engine.bots import choose_move

    for seed in range(3):
        rng = random.Random(f"{kind}-{seed}")
        duel = Duel.new(rng, "brettspielnetz", first=0)
        for step in range(400):
            if duel.outcome is not None:
                break
            if step % 7 == 3:  # a copy made before the move, whose own move differs
                other = duel.copy()
                hidden = [c for c in other.geo.cells if other.is_hidden(c)]
                other.apply(other.to_move, Explore(rng.choice(hidden)))
            if step % 11 == 5:
                duel = Duel.from_snapshot(duel.snapshot(), duel if step % 2 else None)
            if kind == "bot":
                move = choose_move(duel.view(duel.to_move), rng)
            else:
                hidden = [c for c in duel.geo.cells if duel.is_hidden(c)]
                cell = rng.choice(hidden)
                move = Mark(cell) if kind == "random" and rng.random() < 0.4 else Explore(cell)
            duel.apply(duel.to_move, move)
            if isinstance(move, Mark) and move.cell not in duel.claims:
                continue  # a wrong mark: no auto-reveal
            numbers = dict(duel.numbers)
            for cell in duel.last_opened[1:]:
                del numbers[cell]
            want = revealable(11, 11, 15, numbers, list(duel.claims))
            assert {c: duel.numbers[c] for c in duel.last_opened[1:]} == want


def test_an_extension_whose_account_does_not_add_up_is_solved_as_ever():
    cache = RevealCache()
    numbers = {(5, 5): 1, (5, 4): 1}
    base, _ = cache.extend(None, None, None, 11, 11, 15, numbers, [])
    more = {**numbers, (0, 0): 0, (0, 1): 0}  # two new numbers, but the account names one
    state, found = cache.extend(base, ((0, 0), 0), None, 11, 11, 15, more, [])
    assert found == revealable(11, 11, 15, more, [])
    assert state.numbers == more
    with pytest.raises(ValueError):  # a bad new number is refused as ever
        cache.extend(state, ((1, 1), 9), None, 11, 11, 15, {**more, (1, 1): 9}, [])
    with pytest.raises(ValueError):
        cache.extend(state, None, (12, 0), 11, 11, 15, more, [(12, 0)])


# ---------------------------------------------------------------------------------------------
# The helpers and their dumb twins
# ---------------------------------------------------------------------------------------------


def bits_of(x):
    return {i for i in range(x.bit_length()) if x >> i & 1}


@given(st.integers(0, 2**12 - 1), st.integers(0, 2**12 - 1), st.integers(0, 12))
def test_conv_and_smear_are_sumsets(a, b, n):
    assert bits_of(rc._conv(a, b)) == {i + j for i in bits_of(a) for j in bits_of(b)}
    assert bits_of(rc._smear(a, n)) == {i + j for i in bits_of(a) for j in range(n + 1)}


@given(st.integers(1, 7), st.integers(1, 7), st.data())
def test_dilate_is_the_cells_and_their_neighbours(width, height, data):
    mask = data.draw(st.integers(0, 2 ** (width * height) - 1))
    want = 0
    for i in bits_of(mask):
        r, c = divmod(i, width)
        want |= 1 << i
        for rr, cc in bf_neighbours(width, height, (r, c)):
            want |= 1 << (rr * width + cc)
    assert rc._dilate(rc._shifts(width, height), mask) == want


@given(st.lists(st.integers(1, 2**6 - 1), max_size=4), st.integers(-1, 14), st.integers(0, 10))
def test_combine_matches_enumeration(feasible, rem, nint):
    """Each component's mine counts used by some consistent combination, and the interior's."""
    combos = [
        ms for ms in itertools.product(*[sorted(bits_of(f)) for f in feasible])
        if 0 <= rem - sum(ms) <= nint
    ]
    if not combos:
        with pytest.raises(ValueError):
            rc._combine(feasible, rem, nint)
        return
    allowed, int_kset = rc._combine(list(feasible), rem, nint)
    assert [bits_of(a) for a in allowed] == [{ms[k] for ms in combos} for k in range(len(feasible))]
    assert bits_of(int_kset) == {rem - sum(ms) for ms in combos}


@given(st.lists(st.integers(1, 2**7 - 1), min_size=1, max_size=4), st.integers(-1, 1), st.integers(-1, 1),
       st.booleans())
def test_combine_at_the_edge_of_the_free_case(feasible, drem, dint, fixed_first):
    """_combine's shortcut (every count allowed when the components' most mines fit and their
    fewest leave no more than the interior holds) at its boundary and one step past it on
    either side, against enumeration."""
    if fixed_first:
        feasible = [1 << 3, *feasible]  # a component of one possible count shifts the sums
    lo = sum((f & -f).bit_length() - 1 for f in feasible)
    hi = sum(f.bit_length() - 1 for f in feasible)
    rem = hi + drem
    nint = max(0, rem - lo + dint)
    test_combine_matches_enumeration.hypothesis.inner_test(feasible, rem, nint)


@st.composite
def components(draw):
    """Connected constraints (need, mask) over a few cells, as the solver keeps them."""
    ncells = draw(st.integers(2, 9))
    cons = {}
    for _ in range(draw(st.integers(1, 5))):
        mask = draw(st.integers(1, 2**ncells - 1))
        if mask.bit_count() >= 2:
            cons[mask] = draw(st.integers(1, mask.bit_count() - 1))
    if not cons:
        cons[3] = 1
    # keep the part linked to the first constraint
    linked = dict([next(iter(cons.items()))])
    grown = True
    while grown:
        grown = False
        union = 0
        for m in linked:
            union |= m
        for m, need in cons.items():
            if m not in linked and m & union:
                linked[m] = need
                grown = True
    return tuple(sorted((need, m) for m, need in linked.items()))


def component_layouts(cons):
    union = 0
    for _, m in cons:
        union |= m
    cells = sorted(bits_of(union))
    out = []
    for chosen in itertools.product((0, 1), repeat=len(cells)):
        lay = sum(1 << c for c, x in zip(cells, chosen) if x)
        if all((lay & m).bit_count() == need for need, m in cons):
            out.append(lay)
    return out


@slow(300)
@given(components(), st.data())
def test_component_against_its_layouts(cons, data):
    """Feasible mine counts, per allowed set the boxes' possible counts and safe cells, and what
    a set of seen cells adds: against every layout of the component."""
    layouts = component_layouts(cons)
    if not layouts:
        with pytest.raises(ValueError):
            cm._Comp(cons)
        with pytest.raises(ValueError):
            cm._Comp(cons, limit=0)
        return
    # None: as the cache builds them (two constraints in closed form); 0: the bitset pass
    comp = cm._Comp(cons, limit=data.draw(st.sampled_from([None, 0, 1, 64])))
    check_component(comp, layouts, data)


def check_component(comp, layouts, data):
    """``comp`` against every layout of its cells: feasible counts, per allowed set the boxes'
    counts, safe cells, and what a set of seen cells adds."""
    assert bits_of(comp.feasible) == {lay.bit_count() for lay in layouts}
    union = comp.mask
    assert sum(comp.box_masks) == union and all(m for m in comp.box_masks)
    allowed = sum(1 << m for m in data.draw(st.sets(st.sampled_from(sorted(bits_of(comp.feasible))), min_size=1)))
    ok = [lay for lay in layouts if allowed >> lay.bit_count() & 1]
    rest = comp.rest(allowed)
    assert comp.rest(allowed) is rest
    for bm, kset in zip(comp.box_masks, rest.ksets):
        assert bits_of(kset) == {(lay & bm).bit_count() for lay in ok}
    assert rest.safe == sum(1 << c for c in bits_of(union) if all(not lay >> c & 1 for lay in ok))
    w = data.draw(st.integers(1, union)) & union
    if not w:
        return
    values = {}  # mine count -> counts seen
    for lay in ok:
        values.setdefault(lay.bit_count(), set()).add((lay & w).bit_count())
    got = rest.seen(w)
    if got is rs._VARY:
        # some box is seen in part and holds, in some allowed layout, some but not all of its mines
        assert any(
            0 < (bm & w).bit_count() < bm.bit_count() and kset & ((1 << bm.bit_count()) - 2)
            for bm, kset in zip(comp.box_masks, rest.ksets)
        )
        return
    const, contrib = (got, []) if isinstance(got, int) else got
    if not contrib:
        assert values and all(v == {const} for v in values.values())
        return
    func = rest.func(comp, w)
    # func reads a component's solutions directly (stopping at the first difference): the same
    # as the forward pass of minmax, which serves the bitset components
    spans = {m: span for m, span in comp.minmax(dict(contrib)).items() if allowed >> m & 1}
    if any(lo != hi for lo, hi in spans.values()):
        assert func is rs._VARY
    else:
        assert func == {m: lo for m, (lo, _) in spans.items()}
    if any(len(v) > 1 for v in values.values()):
        assert func is rs._VARY
    else:
        assert func == {m: v.pop() - const for m, v in values.items()}


@st.composite
def derivations(draw):
    """What ``_derive`` is given: one or two solved components (on cells 0-8 and 9-17), cells of
    theirs gone since (safe or a mine, as in one of their layouts), and the new constraints:
    theirs reduced by the gone cells, and new ones over their remaining cells and up to three
    new cells (18-20), with needs from a layout (or, now and then, any need)."""
    olds, layout = [], 0
    for k in range(draw(st.integers(1, 2))):
        cons = tuple(sorted((need, m << 9 * k) for need, m in draw(components())))
        lays = component_layouts(cons)
        if not lays:
            cons = ((1, 3 << 9 * k),)
            lays = component_layouts(cons)
        olds.append(cons)
        layout |= draw(st.sampled_from(lays))
    cells = 0
    for cons in olds:
        for _, m in cons:
            cells |= m
    gone = sum(1 << i for i in draw(st.sets(st.sampled_from(sorted(bits_of(cells))), max_size=3)))
    fresh = draw(st.integers(0, 7)) << 18
    layout |= fresh if draw(st.booleans()) else draw(st.integers(0, 7)) << 18 & fresh
    unknown = (cells & ~gone) | fresh
    new = {}
    for cons in olds:
        for need, m in cons:
            if m & ~gone:
                new[m & ~gone] = need - (m & gone & layout).bit_count()
    for _ in range(draw(st.integers(0, 3))):
        m = draw(st.integers(1, unknown)) & unknown if unknown else 0
        if m and m.bit_count() <= 8 and m not in new:  # (one need per mask, as the cache keeps them)
            new[m] = (m & layout).bit_count() if draw(st.integers(0, 5)) else draw(st.integers(0, m.bit_count()))
    return olds, tuple(sorted((need, m) for m, need in new.items())), unknown, gone & layout


@slow(400)
@given(case=derivations(), data=st.data())
def test_a_derived_component_against_its_layouts(case, data, monkeypatch):
    """_derive (a component from the parent's ones it grew from) against every layout of the new
    constraints, as test_component_against_its_layouts checks components solved from scratch."""
    olds, cons, unknown, mines = case
    if any(len(c) > 2 for c in olds):
        assert cm._derive([cm._Comp(c, limit=0) for c in olds], cons, unknown, mines) is None  # no solutions kept
    monkeypatch.setattr(cm, "_SOLUTIONS", 10**6)  # (else None also when they are many)
    comp = cm._derive([cm._Comp(c) for c in olds], cons, unknown, mines)
    if not cons:
        return
    layouts = component_layouts(cons)
    if comp is None:
        assert not layouts
        return
    union = 0
    for _, m in cons:
        union |= m
    assert comp.mask == union and comp.cons == cons and comp.sols is not None
    check_component(comp, layouts, data)


class _Allowed:
    def __init__(self, allowed):
        self.allowed = allowed


@given(
    st.lists(st.tuples(st.integers(1, 2**5 - 1), st.booleans(), st.lists(st.integers(0, 4), min_size=6, max_size=6)),
             min_size=1, max_size=4),
    st.integers(0, 12), st.integers(0, 9), st.sampled_from(["none", "whole", "part"]), st.integers(1, 8),
)
def test_varying_count_matches_enumeration(spec, rem, nint, interior, wi):
    """The sum several varying parts add, over every combination of their allowed mine counts
    that leaves 0..nint mines to the interior: one value or None."""
    parts = [(None, _Allowed(allowed)) for allowed, _, _ in spec]
    funcs = {pi: {m: row[m] for m in bits_of(allowed)} for pi, (allowed, touched, row) in enumerate(spec) if touched}
    if interior == "whole":
        int_row = {r: r for r in range(nint + 1)}
    elif interior == "part":
        int_row = {r: (wi if r else 0) for r in range(nint + 1)}  # (a test stand-in for {0: 0, nint: w})
    else:
        int_row = None
    sums = set()
    for ms in itertools.product(*[sorted(bits_of(a)) for a, _, _ in spec]):
        r = rem - sum(ms)
        if 0 <= r <= nint:
            sums.add(sum(funcs[pi][m] for pi, m in enumerate(ms) if pi in funcs) + (int_row[r] if int_row else 0))
    got = rc._varying_count(funcs, int_row, parts, rem, nint)
    assert got == (sums.pop() if len(sums) == 1 else None)

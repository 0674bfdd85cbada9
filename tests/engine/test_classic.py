"""Classic Minesweeper (RULES.md, "Classic"), a test per rule, plus 3BV against a brute-force
shortest click search and the usual engine properties (refusals change nothing, exact
round-trips, nothing secret in a view before the end)."""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace
from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Chord, Flag, IllegalCode, IllegalMove, Mark, Resign, Reveal, event_from_data, event_to_data
from engine.classic import (
    LAYOUT_VERSION,
    PRESETS,
    Classic,
    ClassicSetup,
    check_size,
    generate,
    numbers_of,
    preset_of,
    three_bv,
)
from engine.classic_view import ClassicView, patch_data
from engine.events import CLEARED, EXPLODED, RESIGNATION, ClassicEnded
from engine.game import restore
from engine.geometry import geometry

SEED = "ab" * 16


def game_with(width: int, height: int, mines: set[tuple[int, int]], first: tuple[int, int]) -> Classic:
    """A game whose layout is ``mines`` (placed as the first click would), before that click."""
    game = Classic(ClassicSetup(width, height, len(mines), False, SEED))
    game.mines = frozenset(mines)
    game.numbers = numbers_of(game.geo, game.mines)
    return game


def unchanged(game: Classic, move, code: IllegalCode) -> None:
    before = game.snapshot()
    with pytest.raises(IllegalMove) as refused:
        game.apply(0, move)
    assert refused.value.code is code
    assert game.snapshot() == before


# ---------------------------------------------------------------------- set-up


def test_presets_and_custom_sizes() -> None:
    assert PRESETS == {"beginner": (9, 9, 10), "intermediate": (16, 16, 40), "expert": (30, 16, 99)}
    assert [preset_of(*size) for size in PRESETS.values()] == list(PRESETS)
    assert preset_of(10, 10, 10) == "custom"
    check_size(5, 5, 16) and check_size(60, 40, 60 * 40 - 9)  # the bounds themselves are fine
    for bad in ((4, 9, 10), (61, 9, 10), (9, 41, 10), (9, 9, 0), (9, 9, 73), (9.0, 9, 10), (9, 9, True)):
        with pytest.raises(ValueError):
            check_size(*bad)  # type: ignore[arg-type]


@settings(max_examples=400, deadline=None)
@given(st.integers(5, 30), st.integers(5, 20), st.data(), st.integers(0, 2**32))
def test_the_first_click_is_never_a_mine_and_always_opens_a_cascade(width, height, data, seed) -> None:
    count = data.draw(st.integers(1, width * height - 9))
    first = (data.draw(st.integers(0, height - 1)), data.draw(st.integers(0, width - 1)))
    game = Classic.new(width, height, count, random.Random(seed))
    assert game.mines is None  # nothing is placed before the first click
    game.apply(0, Reveal(first))
    assert len(game.mines) == count
    assert not set(geometry(width, height).block(first)) & game.mines
    assert game.numbers[first] == 0 and game.outcome is None or len(game.opened) == game.safe_cells
    assert set(geometry(width, height).block(first)) <= game.opened  # the cascade opened the block at least


def test_the_layout_is_drawn_from_the_seed_and_the_first_click() -> None:
    setup = ClassicSetup(16, 16, 40, False, SEED)
    a, b = Classic(setup), Classic(setup)
    a.apply(0, Reveal((3, 3)))
    b.apply(0, Reveal((3, 3)))
    assert a.mines == b.mines == generate(16, 16, 40, (3, 3), random.Random(int(SEED, 16)))


# ---------------------------------------------------------------------- reveal, flag, chord

#   0 1 2 3 4        after the first click at (0, 0):
# 0 . . . . .        0 0 0 0 0
# 1 . . . . .        0 0 1 1 1
# 2 . . . * .        0 1 2 . .
# 3 . . * . .        1 2 . . .
# 4 * . . . .        . . . . .
LAYOUT = {(2, 3), (3, 2), (4, 0)}


def test_a_zero_floods_its_connected_zeros_and_their_bordering_numbers() -> None:
    game = game_with(5, 5, LAYOUT, (0, 0))
    events = game.apply(0, Reveal((0, 0)))
    numbers = numbers_of(game.geo, game.mines)
    expected = set()
    todo, seen = [(0, 0)], {(0, 0)}
    while todo:  # the dumb twin: a plain breadth-first flood
        cell = todo.pop()
        expected.add(cell)
        if numbers[cell] == 0:
            for n in game.geo.neighbours(cell):
                if n not in seen and n not in game.mines:
                    seen.add(n)
                    todo.append(n)
    assert game.opened == expected
    assert {(r, c) for r, c, _n in events[0].cells} == expected
    assert all(numbers[(r, c)] == n for r, c, n in events[0].cells)


def test_a_ring_of_flags_stops_the_flood() -> None:
    """A flagged cell is neither opened nor passed through: flags around a 0 keep the board
    beyond them hidden, as in every Minesweeper (here 16 zeros lie beyond the ring)."""
    game = game_with(9, 9, {(8, 8)}, (4, 4))
    ring = [n for n in game.geo.neighbours((4, 4))]
    for cell in ring:
        game.apply(0, Flag(cell))
    events = game.apply(0, Reveal((4, 4)))
    assert game.opened == {(4, 4)} and [(r, c) for r, c, _ in events[0].cells] == [(4, 4)]
    assert all(game.view(0).char(cell) == "F" for cell in ring)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_flood_never_passes_a_flag(data) -> None:
    width, height = data.draw(st.integers(5, 9)), data.draw(st.integers(5, 9))
    cells = [(r, c) for r in range(height) for c in range(width)]
    mines = set(data.draw(st.lists(st.sampled_from(cells), min_size=1, max_size=6, unique=True)))
    safe = [c for c in cells if c not in mines]
    flags = set(data.draw(st.lists(st.sampled_from(cells), max_size=12, unique=True)))
    start = data.draw(st.sampled_from(safe))
    flags.discard(start)
    game = game_with(width, height, mines, start)
    for cell in sorted(flags):
        game.apply(0, Flag(cell))
    game.apply(0, Reveal(start))
    numbers = numbers_of(game.geo, game.mines)
    expected, todo = {start}, [start] if numbers[start] == 0 else []
    while todo:  # the dumb twin: breadth-first, never into a flag
        for n in game.geo.neighbours(todo.pop()):
            if n not in expected and n not in flags:
                expected.add(n)
                if numbers[n] == 0:
                    todo.append(n)
    assert game.opened == expected and not (game.opened & flags)


def test_a_number_shows_alone_and_a_mine_loses_at_once() -> None:
    game = game_with(5, 5, LAYOUT, (0, 0))
    game.apply(0, Reveal((0, 0)))
    events = game.apply(0, Reveal((4, 1)))  # a 2: it opens alone
    assert [(r, c) for r, c, _ in events[0].cells] == [(4, 1)] and game.outcome is None
    events = game.apply(0, Reveal((4, 0)))
    end = events[-1]
    assert isinstance(end, ClassicEnded) and end.outcome.termination == EXPLODED and end.fatal == (4, 0)
    assert game.outcome.winner is None


def test_flags_toggle_without_a_question_mark_and_the_counter_is_mines_minus_flags() -> None:
    game = game_with(5, 5, LAYOUT, (0, 0))
    for cell in ((1, 1), (4, 4), (0, 0)):  # wrong flags: not checked until the end
        game.apply(0, Flag(cell))
    assert game.view(0).mines_left == 0 and game.view(0).char((1, 1)) == "F"
    game.apply(0, Flag((1, 1)))
    assert game.view(0).char((1, 1)) == "." and game.view(0).mines_left == 1
    for cell in ((3, 3), (2, 2)):
        game.apply(0, Flag(cell))
    assert game.view(0).mines_left == -1  # the counter may go below zero
    unchanged(game, Reveal((2, 2)), IllegalCode.CELL_FLAGGED)


def test_a_satisfied_chord_opens_the_other_neighbours_and_a_wrong_flag_detonates() -> None:
    game = game_with(5, 5, LAYOUT, (0, 0))
    game.apply(0, Reveal((0, 0)))
    unchanged(game, Chord((3, 0)), IllegalCode.CHORD_NOT_SATISFIED)  # a 1 without a flag
    unchanged(game, Chord((3, 3)), IllegalCode.CHORD_NOT_SATISFIED)  # not an open number
    game.apply(0, Flag((4, 0)))
    events = game.apply(0, Chord((3, 0)))
    assert {(4, 1)} <= {(r, c) for r, c, _ in events[0].cells} and game.outcome is None
    lost = game_with(5, 5, LAYOUT, (0, 0))
    lost.apply(0, Reveal((0, 0)))
    lost.apply(0, Flag((4, 1)))  # the wrong neighbour
    end = lost.apply(0, Chord((3, 0)))[-1]
    assert end.outcome.termination == EXPLODED and end.fatal == (4, 0) and end.wrong_flags == ((4, 1),)
    rows = lost.view(2).rows
    assert rows[4][0] == "X" and rows[4][1] == "W" and rows[2][3] == rows[3][2] == "*"  # fatal, crossed, others
    assert lost.clicks == [1, 1, 1]


def test_a_losing_chord_shows_every_mine_it_opened() -> None:
    """A chord under two wrong flags opens two mines: both show as opened (``X``), as the
    Minesweeper programs show them; the event names the first (an outside probe saw one ``X``
    and one ``*``)."""
    game = game_with(5, 5, {(2, 2), (2, 4), (3, 0), (4, 0)}, (0, 0))
    game.apply(0, Reveal((0, 0)))
    game.apply(0, Flag((3, 1)))
    game.apply(0, Flag((3, 2)))
    end = game.apply(0, Chord((2, 1)))[-1]
    assert isinstance(end, ClassicEnded) and end.outcome.termination == EXPLODED and end.fatal == (2, 2)
    for rows in (game.view(2).rows, Classic.from_snapshot(game.snapshot()).view(0).rows):
        assert rows[2][2] == rows[3][0] == "X" and rows[4][0] == rows[2][4] == "*" and rows[3][1] == rows[3][2] == "W"


def test_the_game_is_won_when_every_safe_cell_is_open_without_flags() -> None:
    game = game_with(5, 5, LAYOUT, (0, 0))
    game.apply(0, Reveal((0, 0)))
    for cell in sorted(set(game.numbers) - game.opened):
        if cell not in game.opened:
            game.apply(0, Reveal(cell))
    assert game.outcome.termination == CLEARED and game.outcome.winner == 0
    assert all(game.view(0).char(m) == "F" for m in LAYOUT)  # on a win every mine shows flagged
    assert game.view(0).flags == 0 and game.view(0).mines_left == 0  # and the counter says none is left
    unchanged(game, Reveal((4, 0)), IllegalCode.GAME_OVER)


def test_every_refusal_changes_nothing() -> None:
    game = game_with(5, 5, LAYOUT, (0, 0))
    game.apply(0, Reveal((0, 0)))
    unchanged(game, Reveal((0, 0)), IllegalCode.CELL_NOT_HIDDEN)
    unchanged(game, Flag((0, 0)), IllegalCode.CELL_NOT_HIDDEN)
    unchanged(game, Reveal((5, 0)), IllegalCode.OUT_OF_RANGE)
    unchanged(game, Mark((4, 4)), IllegalCode.NOT_A_MOVE)
    before = game.snapshot()
    with pytest.raises(IllegalMove) as refused:
        game.apply(1, Reveal((4, 4)))
    assert refused.value.code is IllegalCode.NOT_A_SEAT and game.snapshot() == before
    game.apply(0, Resign())
    assert game.outcome.termination == RESIGNATION
    unchanged(game, Flag((4, 4)), IllegalCode.GAME_OVER)


# ---------------------------------------------------------------------- 3BV


def brute_force_clicks(width: int, height: int, mines: frozenset) -> int:
    """The fewest left clicks that open every safe cell, by search over what is open."""
    geo = geometry(width, height)
    numbers = numbers_of(geo, mines)
    safe = frozenset(numbers)

    def opens(cell):
        opened, todo = {cell}, [cell]
        while todo:
            c = todo.pop()
            if numbers[c] == 0:
                for n in geo.neighbours(c):
                    if n not in opened:
                        opened.add(n)
                        todo.append(n)
        return frozenset(opened)

    blocks = {opens(cell) for cell in safe}

    @lru_cache(maxsize=None)
    def least(opened: frozenset) -> int:
        if opened == safe:
            return 0
        first = min(safe - opened)  # some click must open this cell
        return 1 + min(least(opened | b) for b in blocks if first in b)

    return least(frozenset())


@settings(max_examples=150, deadline=None)
@given(st.integers(3, 5), st.integers(3, 5), st.data())
def test_3bv_is_the_least_number_of_clicks(width, height, data) -> None:
    cells = [(r, c) for r in range(height) for c in range(width)]
    mines = frozenset(data.draw(st.lists(st.sampled_from(cells), max_size=width * height - 1, unique=True)))
    assert three_bv(width, height, mines) == brute_force_clicks(width, height, mines)


# ---------------------------------------------------------------------- plain data, views, secrets


def played(seed: int, max_moves: int = 400) -> list[Classic]:
    rng = random.Random(seed)
    width, height, count = rng.choice([(9, 9, 10), (16, 16, 40), (12, 7, 20)])
    game = Classic.new(width, height, count, random.Random(seed))
    versions = [game]
    for _ in range(max_moves):
        if game.outcome is not None:
            break
        game = game.copy()
        hidden = [c for c in game.geo.cells if c not in game.opened]
        opened_numbers = [c for c in game.opened if game.numbers[c]]
        roll = rng.random()
        if roll < 0.15:
            move = Flag(rng.choice(hidden))
        elif roll < 0.25 and opened_numbers:
            move = Chord(rng.choice(opened_numbers))
        else:
            choice = [c for c in hidden if c not in game.flags] or hidden
            move = Reveal(rng.choice(choice)) if game.mines is None or rng.random() < 0.05 else Reveal(
                rng.choice([c for c in choice if c not in game.mines] or choice))
        try:
            events = game.apply(0, move)
        except IllegalMove:
            game = versions[-1]
            continue
        for event in events:
            assert event_from_data(event_to_data(event), event.audience) == event
        versions.append(game)
    return versions


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6))
def test_round_trips_copies_and_views(seed: int) -> None:
    versions = played(seed)
    for older, game in zip(versions, versions[1:]):
        assert Classic.from_snapshot(game.snapshot()) == game == restore("classic", game.snapshot())
        view = game.view(0)
        assert ClassicView.from_data(view.to_data()) == view
        assert patch_data(older.view(0), game.diff(older.view(0), view).to_data()) == view
        assert game.view(2) == replace(view, viewer=2)  # nothing private: one view for all
        if game.outcome is None:  # nothing of the layout before the end
            assert view.mines is None and view.seed is None and view.three_bv is None
            assert not set("*XW") & set("".join(view.rows))
            assert game.setup.seed not in repr(view.to_data())


def test_the_record_and_the_replay_of_a_finished_game() -> None:
    versions = next(v for v in (played(s) for s in range(50)) if v[-1].outcome is not None and len(v) > 5)
    final = versions[-1]
    record = final.record()
    assert record["seed"] == final.setup.seed and record["three_bv"] == three_bv(final.setup.width,
                                                                                 final.setup.height, final.mines)
    with pytest.raises(ValueError):
        versions[1].record()
    with pytest.raises(ValueError):
        versions[1].position(0)
    for at, then in enumerate(versions):
        assert final.position(at).rows == then.view(2).rows or at == len(versions) - 1
        assert set(final.position(at).mines) == set(final.mines)


def test_a_replay_step_never_draws_the_layout_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A no-guess layout's search took seconds on a large board: a replay step (any visitor's
    GET, on the server's event loop) replays the moves on the layout the game has."""
    game = Classic.new(16, 16, 40, random.Random(7), no_guess=True)
    game.apply(0, Reveal((8, 8)))
    game.apply(0, Flag(next(c for c in sorted(game.mines or ()))))
    game.apply(0, Resign())
    expected = [game.position(at) for at in range(4)]
    monkeypatch.setattr("engine.classic.generate", lambda *args: pytest.fail("the layout was drawn again"))
    assert [game.position(at) for at in range(4)] == expected
    assert expected[1].rows != expected[0].rows and set(expected[1].mines) == set(game.mines)


@pytest.mark.parametrize(("no_guess", "size", "digest"), [
    (False, (9, 9, 10), "95a10f173757f670"),
    (False, (30, 16, 99), "44507c2b45cdaa74"),
    (True, (9, 9, 10), "95a10f173757f670"),
    (True, (30, 16, 99), "629950610d0c89ea"),
])
def test_a_seed_draws_the_same_layout_as_when_it_was_published(no_guess, size, digest) -> None:
    """A finished game publishes its seed; anybody re-draws the layout from it. If this fails,
    the generator changed what a seed means: bump ``LAYOUT_VERSION`` (and these digests)."""
    width, height, count = size
    mines = generate(width, height, count, (height // 2, width // 2), random.Random(0x5EED), no_guess)
    assert LAYOUT_VERSION == "mineduel-classic-v1"
    assert hashlib.sha256(repr(sorted(mines)).encode()).hexdigest()[:16] == digest


@pytest.mark.parametrize("no_guess", [False, True])
def test_a_prepared_first_click_plays_as_the_click_would(no_guess: bool) -> None:
    """``prepared`` draws the layout the first click would draw (the seed decides) and changes
    nothing else; anything but a first reveal, or a refused one, leaves the game as it is."""
    fresh = Classic.new(16, 16, 40, random.Random(9), no_guess)
    ahead = fresh.prepared(Reveal((3, 4)))
    assert ahead is not fresh and fresh.mines is None and ahead.opened == set() and ahead.log == []
    assert ahead.costly(Reveal((3, 4))) is False
    direct = fresh.copy()
    assert ahead.apply(0, Reveal((3, 4))) == direct.apply(0, Reveal((3, 4)))
    assert ahead.snapshot() == direct.snapshot()
    for move in (Flag((0, 0)), Reveal((99, 99)), Resign()):
        assert fresh.prepared(move) is fresh
    assert direct.prepared(Reveal((0, 0))) is direct  # laid out already


def test_a_no_guess_board_is_made_only_within_the_search_s_budget() -> None:
    """``most_mines(.., no_guess=True)``: a fifth of the cells, or NO_GUESS_WORK ÷ cells on a small
    board, never more than W·H−9. Every preset and every count of a board up to 16×16 pass; a
    large dense board (the outside probe's 60×40/1600: seconds of search) is refused at
    ``Classic.new``; a game made before the rule (a stored setup) still draws its layout."""
    from engine.classic import NO_GUESS_SHARE, NO_GUESS_WORK, BadBoard, most_mines

    for width, height, count in PRESETS.values():
        Classic.new(width, height, count, random.Random(1), no_guess=True)
    for width in range(5, 61):
        for height in range(5, 41):
            cells = width * height
            expected = min(cells - 9, max(cells // NO_GUESS_SHARE, NO_GUESS_WORK // cells))  # the dumb twin
            assert most_mines(width, height, no_guess=True) == expected <= most_mines(width, height)
            if cells <= 16 * 16:
                assert expected == most_mines(width, height)  # small boards: any count
    assert most_mines(60, 40, True) == 480 and most_mines(30, 16, True) == 312
    for width, height, count, most in ((60, 40, 1600, 480), (60, 40, 481, 480), (40, 30, 360, 240)):
        with pytest.raises(BadBoard) as refused:
            Classic.new(width, height, count, random.Random(1), no_guess=True)
        assert refused.value.problem == "mines" and refused.value.no_guess and refused.value.most_mines == most
        assert str(refused.value) == f"a no-guess {width}x{height} board takes 1..{most} mines"
        Classic.new(width, height, count, random.Random(1))  # a board that may be guessed: fine
    old = Classic(ClassicSetup(30, 16, 400, True, SEED))  # over the budget, made before it
    old.apply(0, Reveal((8, 15)))
    assert len(old.mines) == 400 and (8, 15) in old.opened

"""What the room server asks of a game (engine.game.Game), as the duel provides it: copies,
the event codec, the public record, replay positions, restoring by kind."""

from __future__ import annotations

import gc
import random
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    GAMES,
    SPECTATOR,
    VIEWERS,
    Chord,
    Duel,
    Explore,
    Flag,
    IllegalMove,
    Mark,
    Resign,
    Reveal,
    event_from_data,
    event_to_data,
    move_from_data,
    restore,
    verify,
)
from engine.classic import Classic


def random_game(seed: int, max_moves: int = 300) -> list[Duel]:
    """Every version of one game of random explores and marks (wrong ones too)."""
    rng = random.Random(seed)
    duel = Duel.new(random.Random(seed), first=0)
    versions = [duel]
    for _ in range(max_moves):
        if duel.outcome is not None:
            break
        duel = duel.copy()
        cell = rng.choice([c for c in duel.geo.cells if duel.is_hidden(c)])
        duel.apply(duel.to_move, Mark(cell) if rng.random() < 0.4 else Explore(cell))
        versions.append(duel)
    return versions


def random_classic_game(seed: int, clicks: int = 200) -> None:
    """One classic game of random reveals, flags and chords, a copy per click (as the server)."""
    rng = random.Random(seed)
    game = Classic.new(16, 16, 40, random.Random(seed))
    for _ in range(clicks):
        if game.outcome is not None:
            break
        game = game.copy()
        cell = (rng.randrange(16), rng.randrange(16))
        try:
            game.apply(0, rng.choice([Reveal, Reveal, Flag, Chord])(cell))
        except IllegalMove:
            pass


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 120))
def test_a_viewer_sees_its_view_class_view_but_for_its_viewer_field(seed: int, resign_at: int) -> None:
    """Renderers render one view per class (``Game.view_class``) for all its viewers
    (server/edge/codec_msgpack.py), so a viewer's view must be its class's with its own
    ``viewer`` field, in every version: a seat's own wrong marks, drawn on its board, make it a
    class of its own while the game goes on and after the end (a resignation leaves them
    hidden), and a classic game has one class."""
    versions = random_game(seed)
    if resign_at < len(versions) - 1:  # the game resigned instead of played on
        versions = versions[: resign_at + 1]
        resigned = versions[-1].copy()
        resigned.apply(resigned.to_move, Resign())
        versions.append(resigned)
    rng = random.Random(seed)
    classic = Classic.new(9, 9, 10, random.Random(seed))
    for _ in range(60):
        if classic.outcome is not None:
            break
        classic = classic.copy()
        try:
            classic.apply(0, rng.choice([Reveal, Reveal, Flag, Chord])((rng.randrange(9), rng.randrange(9))))
        except IllegalMove:
            pass
        versions.append(classic)
    for game in versions:
        for viewer in VIEWERS:
            assert game.view(viewer) == replace(game.view(game.view_class(viewer)), viewer=viewer)


def test_a_games_versions_leave_no_reference_cycles() -> None:
    """Every object a move makes is freed by reference counting once its version is dropped
    (the auto-reveal's cache included): the server collects cyclic garbage rarely
    (server/gc_policy.py), so a cycle made per move would be memory held until then and work
    for every pass (docs/PERFORMANCE.md, nineteenth session: a component and its restriction
    held each other)."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for seed in range(12):
            random_game(seed)
            random_classic_game(seed)
        found = gc.collect()
        kinds = Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.collect()
        if was_enabled:
            gc.enable()
    assert found == 0, kinds.most_common(8)


def test_a_copy_is_equal_independent_and_has_every_attribute() -> None:
    rng = random.Random(3)
    duel = Duel.new(random.Random(1), first=0)
    for _ in range(40):
        if duel.outcome is not None:
            break
        copy = duel.copy()
        assert copy == duel and sorted(vars(copy)) == sorted(vars(duel))  # a new field is copied too
        before = duel.snapshot()
        cell = rng.choice([c for c in copy.geo.cells if copy.is_hidden(c)])
        move = Mark(cell) if rng.random() < 0.3 else Explore(cell)
        copy.apply(copy.to_move, move)
        assert duel.snapshot() == before  # the original is untouched
        duel.apply(duel.to_move, move)
        assert duel == copy and duel.view(0) == copy.view(0)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10**6))
def test_every_event_round_trips_through_its_plain_form(seed: int) -> None:
    rng = random.Random(seed)
    duel = Duel.new(random.Random(seed), first=0)
    seen = set()
    while duel.outcome is None:
        cell = rng.choice([c for c in duel.geo.cells if duel.is_hidden(c)])
        resign = len(duel.log) >= 10 and rng.random() < 0.01  # not before every event type had a chance
        move = Resign() if resign else Mark(cell) if rng.random() < 0.4 else Explore(cell)
        for event in duel.apply(duel.to_move, move):
            data = event_to_data(event)
            assert isinstance(data["t"], str) and "audience" not in data
            assert event_from_data(data, event.audience) == event
            seen.add(type(event))
    assert len(seen) >= 4
    for bad in ({}, {"t": "boom"}, {"t": "turn_changed"}, {"t": "mine_shown", "cell": [1], "seat": 0, "claim": "x"}):
        with pytest.raises(ValueError):
            event_from_data(bad)


def test_the_record_is_published_only_at_the_end_and_replays_the_game() -> None:
    versions = random_game(11)
    with pytest.raises(ValueError):
        versions[len(versions) // 2].record()
    final = versions[-1]
    record = final.record()
    assert verify(record["commitment"], record["width"], record["height"], [tuple(m) for m in record["mines"]],
                  record["salt"])
    replayed = Duel.replay(final.setup, [(seat, move_from_data(rest)) for seat, *rest in record["moves"]])
    assert replayed == final and record["lines"] == [m.to_data() for m in final.view(SPECTATOR).moves]
    assert record["outcome"] == final.outcome.to_data() and record["scores"] == final.scores


def test_a_replay_position_is_the_public_board_of_that_step_with_the_end_published() -> None:
    versions = random_game(12)
    final = versions[-1]
    with pytest.raises(ValueError):
        versions[1].position(0)
    for bad in (-1, len(final.log) + 1):
        with pytest.raises(ValueError):
            final.position(bad)
    assert final.position(len(final.log)) == final.view(SPECTATOR)
    for at in range(len(final.log)):
        view = final.position(at)
        then = versions[at]
        assert view.rows == then.view(SPECTATOR).rows and view.scores == tuple(then.scores)
        assert set(view.mines) == set(final.setup.mines)  # the layout, published at the end
        assert view.wrong_marks == tuple(tuple(sorted(m)) for m in then.wrong_marks)
        assert [m.cell for m in view.moves] == [line.cell for line in then.lines]  # every cell named


def test_the_number_a_never_opened_cell_would_show() -> None:
    final = random_game(13)[-1]
    view = final.view(SPECTATOR)
    for cell in final.geo.cells:
        assert view.neighbour_mines(cell) == sum(1 for n in final.geo.neighbours(cell) if n in final.setup.mines)
    with pytest.raises(ValueError):
        Duel.new(random.Random(1), first=0).view(SPECTATOR).neighbour_mines((0, 0))


def test_a_game_is_restored_by_its_kind() -> None:
    for duel in random_game(14)[::7]:
        assert restore(duel.kind, duel.snapshot()) == duel
        assert restore("duel", duel.snapshot(), previous=duel) == duel
    assert GAMES["duel"] is Duel and Duel.seats == 2 and Duel.viewers == (0, 1, SPECTATOR)
    with pytest.raises(ValueError):
        restore("chess", {})

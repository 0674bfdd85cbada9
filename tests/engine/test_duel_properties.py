"""Property tests over random games: no leaks in views, replay, round-trips, diffs, deduction.

Games are played by a random player that explores or marks random hidden cells (so wrong
marks, hits and re-marks all happen), sometimes resigning or timing out.
"""

from __future__ import annotations

import random

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import (
    SPECTATOR,
    VIEWERS,
    Duel,
    Explore,
    Mark,
    Resign,
    Timeout,
    View,
    diff,
    event_to_data,
    patch,
    patch_data,
    verify,
    visible_to,
)
from engine.bots import hidden_cells
from engine.deduce import revealable
from engine.encoding import CLAIM_CHARS, HIDDEN, OWN_WRONG_MARK, UNCLAIMED_MINE
from engine.view import diff_data_of_move, diff_of_move, public_rows, view_of

PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_move(duel: Duel, rng: random.Random):
    roll = rng.random()
    if roll < 0.01:
        return rng.randrange(2), Resign()
    if roll < 0.015:
        return duel.to_move, Timeout()
    seat = duel.to_move
    target = rng.choice(hidden_cells(duel.view(seat)))
    return seat, (Mark(target) if rng.random() < 0.4 else Explore(target))


def play(seed: int, ruleset: str, max_moves: int = 400):
    """Yield ``(duel, events)`` after each move of a random game until it ends."""
    rng = random.Random(seed)
    duel = Duel.new(rng, ruleset=ruleset)
    for _ in range(max_moves):
        if duel.outcome is not None:
            return
        seat, move = random_move(duel, rng)
        yield duel, seat, move, duel.apply(seat, move)


games = st.tuples(st.integers(0, 2**32), st.sampled_from(["brettspielnetz", "coan"]))


def assert_no_secrets(duel: Duel, view: View) -> None:
    """Before the end: no hidden mine, no salt, no wrong mark of anybody but the viewer."""
    hidden_mines = {m for m in duel.setup.mines if m not in duel.claims}
    encoded = msgpack.packb(view.to_data())
    assert duel.setup.salt.encode() not in encoded
    assert view.salt is None and view.mines is None
    for r, c in hidden_mines:
        assert view.rows[r][c] in ".x", "a hidden mine shows"
    for seat in (0, 1):
        if seat != view.viewer:
            assert view.wrong_marks[seat] == ()
            assert all(m.cell is None for m in view.moves if m.seat == seat and m.verdict == "Blubb!")
            for r, c in duel.wrong_marks[seat] - duel.wrong_marks[view.viewer] if view.viewer != SPECTATOR else duel.wrong_marks[seat]:
                if (r, c) not in duel.numbers:
                    assert view.rows[r][c] == "."
    if view.viewer == SPECTATOR:
        assert "x" not in "".join(view.rows)


@PROPERTY
@given(games)
def test_views_never_leak_before_the_end_and_show_everything_after(game):
    seed, ruleset = game
    for duel, seat, move, events in play(seed, ruleset):
        views = {v: duel.view(v) for v in VIEWERS}
        if duel.outcome is None:
            for view in views.values():
                assert_no_secrets(duel, view)
            for s in (0, 1):  # the author sees its own wrong marks
                hidden_own = {c for c in duel.wrong_marks[s] if duel.is_hidden(c)}
                assert {c for c in hidden_own if views[s].char(c) == "x"} == hidden_own
        else:
            for view in views.values():
                assert view.mines == tuple(sorted(duel.setup.mines))
                assert view.wrong_marks == tuple(tuple(sorted(w)) for w in duel.wrong_marks)
                assert verify(view.commitment, 11, 11, view.mines, view.salt)
            assert views[0].rows == views[1].rows == views[SPECTATOR].rows or views[0].wrong_marks


def expected_char(duel: Duel, viewer: int, cell: tuple[int, int]) -> str:
    """One cell of a view, decided cell by cell (the painters paint from the cells that show
    something): a number, else a claim, else (once over) an unclaimed mine, else the viewer's
    own wrong mark, else hidden."""
    if cell in duel.numbers:
        return str(duel.numbers[cell])
    if cell in duel.claims:
        seat, claim = duel.claims[cell]
        return CLAIM_CHARS[seat][claim]
    if duel.outcome is not None and cell in duel.setup.mines:
        return UNCLAIMED_MINE
    if viewer != SPECTATOR and cell in duel.wrong_marks[viewer]:
        return OWN_WRONG_MARK
    return HIDDEN


@PROPERTY
@given(games)
def test_every_cell_of_every_view_shows_what_takes_precedence(game):
    seed, ruleset = game
    for duel, *_ in play(seed, ruleset):
        public = public_rows(duel)
        for viewer in VIEWERS:
            expected = tuple("".join(expected_char(duel, viewer, (r, c)) for c in range(11)) for r in range(11))
            assert duel.view(viewer).rows == expected
            assert view_of(duel, viewer, public) == duel.view(viewer)  # the shared rows change nothing


@PROPERTY
@given(games)
def test_the_public_rows_repainted_after_each_move_equal_a_fresh_painting(game):
    """Duel._repaint (the rows of the version before, with the cells the move showed) against
    painting the whole board, on copies as the server makes them, on decoded versions, and with
    a version's rows left unpainted now and then (the next one then paints from scratch)."""
    seed, ruleset = game
    rng = random.Random(seed)
    duel = Duel.new(rng, ruleset=ruleset)
    for step in range(400):
        if duel.outcome is not None:
            break
        if step % 9 == 4:
            duel = Duel.from_snapshot(duel.snapshot(), duel)
        seat, move = random_move(duel, rng)
        copy = duel.copy()
        copy.apply(seat, move)
        if rng.random() < 0.8:
            assert copy.public_rows() == tuple(copy.board_rows(unclaimed_mines=copy.outcome is not None))
        duel = copy


@PROPERTY
@given(games)
def test_events_for_others_carry_no_secret_before_the_end(game):
    seed, ruleset = game
    for duel, seat, move, events in play(seed, ruleset):
        for viewer in VIEWERS:
            for event in events:
                if not visible_to(event, viewer):
                    assert event.audience == seat != viewer
                    continue
                data = event_to_data(event)
                if data["t"] == "game_ended":
                    continue
                packed = msgpack.packb(data)
                assert duel.setup.salt.encode() not in packed
                if data["t"] == "move_played" and data["verdict"] == "Blubb!" and viewer != seat:
                    assert data["cell"] is None


@PROPERTY
@given(games)
def test_replay_from_setup_and_log_reproduces_the_state_exactly(game):
    seed, ruleset = game
    last = None
    for duel, *_ in play(seed, ruleset):
        last = duel
    if last is not None:
        assert Duel.replay(last.setup, last.log) == last


@PROPERTY
@given(games)
def test_snapshots_and_views_round_trip_through_msgpack(game):
    seed, ruleset = game
    for duel, *_ in play(seed, ruleset):
        packed = msgpack.packb(duel.snapshot())
        assert Duel.from_snapshot(msgpack.unpackb(packed)) == duel
        for viewer in VIEWERS:
            view = duel.view(viewer)
            assert View.from_data(msgpack.unpackb(msgpack.packb(view.to_data()))) == view


def assert_same_duel(got: Duel, want: Duel) -> None:
    """Equal state, the same attributes, byte-identical stored form, equal views."""
    assert got == want
    assert vars(got).keys() == vars(want).keys()
    assert msgpack.packb(got.snapshot()) == msgpack.packb(want.snapshot())
    for viewer in VIEWERS:
        assert got.view(viewer) == want.view(viewer)


@PROPERTY
@given(games, st.integers(0, 2**32))
def test_decoding_with_an_earlier_version_equals_decoding_alone(game, other_seed):
    """``Duel.from_snapshot(data, previous)`` reuses what ``previous`` has in common with
    ``data``; whatever is passed (the version before, any other version, a branch of the same
    setup, another game) the result is the plain decode's."""
    seed, ruleset = game
    stored = [msgpack.unpackb(msgpack.packb(duel.snapshot())) for duel, *_ in play(seed, ruleset)]
    if not stored:
        return
    chained: list[Duel] = []
    previous = None
    for data in stored:  # each version decoded with the one before, as a server process does
        previous = Duel.from_snapshot(data, previous)
        assert_same_duel(previous, Duel.from_snapshot(data))
        if chained:  # the items the versions have in common were reused, not decoded again
            before = chained[-1]
            assert all(a is b for a, b in zip(before.lines, previous.lines))
            assert all(a is b for a, b in zip(before.log, previous.log))
        chained.append(previous)
    rng = random.Random(other_seed)
    setup = chained[0].setup
    branch = Duel.replay(setup, chained[-1].log[: rng.randrange(len(chained[-1].log) + 1)])
    for _ in range(rng.randrange(6)):  # then its own moves: the move lists part there
        if branch.outcome is not None:
            break
        branch.apply(*random_move(branch, rng))
    other = Duel.new(random.Random(other_seed), ruleset=ruleset)
    for base in (rng.choice(chained), rng.choice(chained), branch, other):
        data = rng.choice(stored)
        assert_same_duel(Duel.from_snapshot(data, base), Duel.from_snapshot(data))
    data = msgpack.unpackb(msgpack.packb(branch.snapshot()))
    assert_same_duel(Duel.from_snapshot(data, rng.choice(chained)), Duel.from_snapshot(data))


@PROPERTY
@given(games)
def test_diffs_patch_old_views_into_new_ones(game):
    seed, ruleset = game
    previous = None
    for duel, *_ in play(seed, ruleset):
        views = [duel.view(v) for v in VIEWERS]
        if previous:
            for old, new in zip(previous, views):
                change = diff(old, new)
                assert patch(old, change) == new
                wire = msgpack.unpackb(msgpack.packb(change.to_data()))
                assert patch_data(old, wire) == new
                if duel.outcome is None:
                    assert len(change.moves) == 1 and "moves" not in change.changed
        previous = views


@PROPERTY
@given(games)
def test_the_diff_of_a_move_equals_the_diff_of_the_views(game):
    """Duel.diff_since (engine.view.diff_of_move: worked out from what the move showed) against
    its dumb twin, the diff of the two views, for every viewer after every move, also for
    versions decoded from snapshots; and it declines (None) where it cannot tell."""
    seed, ruleset = game
    rng = random.Random(seed)
    duel = Duel.new(rng, ruleset=ruleset)
    for step in range(400):
        if duel.outcome is not None:
            break
        seat, move = random_move(duel, rng)
        new = duel.copy()
        new.apply(seat, move)
        if step % 5 == 2:  # as another server process has it: decoded, reusing the version before
            new = Duel.from_snapshot(new.snapshot(), duel)
        for viewer in VIEWERS:
            want = diff(duel.view(viewer), new.view(viewer))
            assert new.diff_since(duel, viewer) == want
            assert new.diff_since(duel, viewer).to_data() == want.to_data()
            assert new.diff_data_since(duel, viewer) == want.to_data()
            fast = diff_of_move(duel, new, viewer)
            assert fast is None if new.outcome is not None else fast == want
            data = diff_data_of_move(duel, new, viewer)
            assert data is None if new.outcome is not None else data == want.to_data()
            if data is not None:
                assert msgpack.packb(data) == msgpack.packb(want.to_data())
        assert diff_of_move(new, duel, SPECTATOR) is None  # not the version after
        duel = new
    assert diff_of_move(duel, duel, SPECTATOR) is None


@PROPERTY
@given(games)
def test_after_every_move_nothing_more_is_deducible_and_deduced_cells_are_true(game):
    seed, ruleset = game
    for duel, *_ in play(seed, ruleset):
        assert revealable(11, 11, 15, duel.numbers, duel.claims.keys()) == {}
        for (r, c), n in duel.numbers.items():
            assert (r, c) not in duel.setup.mines
            assert n == sum(1 for x in duel.geo.neighbours((r, c)) if x in duel.setup.mines)


@PROPERTY
@given(games)
def test_scores_equal_the_sum_of_move_points_and_the_winner_has_more(game):
    seed, ruleset = game
    last = None
    for duel, *_ in play(seed, ruleset):
        for s in (0, 1):
            assert duel.scores[s] == sum(ln.points for ln in duel.lines if ln.seat == s)
        last = duel
    if last is not None and last.outcome is not None and last.outcome.termination == "all_mines":
        a, b = last.scores
        assert last.outcome.winner == (None if a == b else (0 if a > b else 1))

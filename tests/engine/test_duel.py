"""The duel rules of RULES.md, one test per rule (each row of the action table included)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from engine import (
    ALL_MINES,
    COAN,
    MARK_TABLE_BRETTSPIELNETZ,
    RESIGNATION,
    SPECTATOR,
    TIMEOUT,
    Action,
    CellsRevealed,
    Claim,
    Duel,
    Explore,
    GameEnded,
    IllegalCode,
    IllegalMove,
    Mark,
    MineShown,
    MovePlayed,
    Phase,
    Resign,
    Setup,
    Timeout,
    TurnChanged,
    Verdict,
    WrongMarkPlaced,
    draw_setup,
    verify,
)
from engine.deduce import revealable

from .duel_helpers import LAYOUT_NAMES, SALT, cell, cells, make_duel, of_type, one

# ---------------------------------------------------------------------------------- set-up


def test_new_game_has_15_mines_outside_the_opening_block_and_the_centre_shows_0():
    for seed in range(200):
        setup = draw_setup(random.Random(seed))
        assert len(setup.mines) == 15
        assert not setup.mines & {(r, c) for r in (4, 5, 6) for c in (4, 5, 6)}
        assert len(bytes.fromhex(setup.salt)) == 32
    duel = Duel(setup)
    view = duel.view(SPECTATOR)
    assert view.rows[5][5] == "0"
    assert sum(row.count(".") for row in view.rows) == 120  # the 8 safe openers stay hidden
    assert view.scores == (0, 0)


def test_layouts_are_uniform_over_the_112_candidate_cells():
    counts: dict = {}
    rng = random.Random(7)
    for _ in range(3000):
        for m in draw_setup(rng).mines:
            counts[m] = counts.get(m, 0) + 1
    assert len(counts) == 112
    expected = 3000 * 15 / 112  # about 402 per cell
    assert all(abs(n - expected) < 0.3 * expected for n in counts.values())


def test_first_seat_is_random_unless_chosen():
    firsts = {draw_setup(random.Random(s)).first for s in range(40)}
    assert firsts == {0, 1}
    assert {draw_setup(random.Random(s), first=1).first for s in range(10)} == {1}


def test_the_commitment_is_published_at_start_and_verifies_against_layout_and_salt():
    duel = make_duel()
    assert verify(duel.commitment, 11, 11, duel.setup.mines, SALT)
    moved = set(duel.setup.mines) - {cell("a1")} | {cell("b1")}
    assert not verify(duel.commitment, 11, 11, moved, SALT)
    assert not verify(duel.commitment, 11, 11, duel.setup.mines, "cd" * 32)


def test_a_layout_with_a_mine_in_the_centre_is_refused():
    with pytest.raises(ValueError):
        Duel(Setup("brettspielnetz", 11, 11, frozenset({(5, 5)}), SALT, 0))


# ------------------------------------------------------------------ the action table rows


def test_explore_a_mine_is_autsch_minus_5_and_the_mine_shows_as_hit():
    for ruleset in ("brettspielnetz", "coan"):
        duel = make_duel(ruleset=ruleset)
        events = duel.apply(0, Explore(cell("a1")))
        played = one(events, MovePlayed)
        assert (played.verdict, played.points, played.cell) == (Verdict.AUTSCH, -5, cell("a1"))
        assert one(events, MineShown) == MineShown(cell("a1"), 0, Claim.HIT)
        assert duel.scores == [-5, 0]
        assert duel.view(SPECTATOR).rows[0][0] == "a"


def test_explore_a_safe_cell_is_gut_and_scores_its_hidden_neighbour_mines():
    duel = make_duel()
    events = duel.apply(0, Explore(cell("b2")))  # a1, c1, a2 around it
    played = one(events, MovePlayed)
    assert (played.verdict, played.points) == (Verdict.GUT, 3)
    assert one(of_type(events, CellsRevealed), CellsRevealed).cells == ((1, 1, 3),)
    assert duel.view(1).rows[1][1] == "3"


def test_explore_scores_only_neighbour_mines_not_yet_visible():
    duel = make_duel()
    duel.apply(0, Mark(cell("a1")))
    played = one(duel.apply(1, Explore(cell("b2"))), MovePlayed)
    assert (played.verdict, played.points) == (Verdict.GUT, 2)


def test_explore_scores_nothing_under_coan():
    duel = make_duel(ruleset="coan")
    assert one(duel.apply(0, Explore(cell("b2"))), MovePlayed).points == 0


def test_mark_a_mine_is_gut_with_the_table_value_for_the_kth_visible_mine():
    duel = make_duel()
    events = duel.apply(0, Mark(cell("a1")))
    played = one(events, MovePlayed)
    assert (played.verdict, played.points) == (Verdict.GUT, 5)
    assert one(events, MineShown) == MineShown(cell("a1"), 0, Claim.MARKED)
    assert duel.view(SPECTATOR).rows[0][0] == "A"


def test_k_counts_hit_mines_too():
    duel = make_duel()
    duel.apply(0, Explore(cell("a1")))  # mine 1, hit
    assert one(duel.apply(1, Mark(cell("c1"))), MovePlayed).points == MARK_TABLE_BRETTSPIELNETZ[1]
    assert duel.view(SPECTATOR).rows[0][2] == "B"


def test_the_mark_table_pays_each_slot_once_and_the_game_ends_at_15_visible_mines():
    duel = make_duel(first=0)
    points = []
    for k, name in enumerate(sorted(LAYOUT_NAMES, key=cell), start=1):
        seat = (k - 1) % 2
        assert duel.phase is Phase.PLAYING
        points.append(one(duel.apply(seat, Mark(cell(name))), MovePlayed).points)
    assert tuple(points) == MARK_TABLE_BRETTSPIELNETZ == (5, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6)
    assert duel.phase is Phase.OVER
    assert duel.scores == [sum(points[0::2]), sum(points[1::2])] == [38, 33]
    assert duel.outcome.termination == ALL_MINES and duel.outcome.winner == 0


def test_coan_correct_mark_is_plus_5_flat():
    duel = make_duel(ruleset="coan")
    for k, name in enumerate(["a1", "c1", "a2", "k11"]):
        assert one(duel.apply(k % 2, Mark(cell(name))), MovePlayed).points == 5
    assert COAN.mark_table == (5,) * 15


def test_mark_a_safe_cell_is_blubb_minus_3_and_stays_secret():
    duel = make_duel()
    events = duel.apply(0, Mark(cell("b2")))
    public = one(events, MovePlayed)
    assert (public.verdict, public.points, public.cell, public.audience) == (Verdict.BLUBB, -3, None, None)
    private = one(events, WrongMarkPlaced)
    assert (private.cell, private.audience) == (cell("b2"), 0)
    assert not of_type(events, CellsRevealed) and not of_type(events, MineShown)
    assert duel.scores == [-3, 0]
    for other in (1, SPECTATOR):
        view = duel.view(other)
        assert view.rows[1][1] == "."
        assert view.wrong_marks == ((), ())
        assert view.moves[-1].cell is None
    own = duel.view(0)
    assert own.rows[1][1] == "x" and own.wrong_marks == ((cell("b2"),), ())
    assert own.moves[-1].cell == cell("b2")


def test_coan_wrong_mark_is_minus_2():
    duel = make_duel(ruleset="coan")
    assert one(duel.apply(0, Mark(cell("b2"))), MovePlayed).points == -2


def test_a_wrongly_marked_cell_stays_a_legal_target_for_both_players():
    duel = make_duel()
    duel.apply(0, Mark(cell("b2")))
    duel.apply(1, Mark(cell("b2")))  # the opponent may mark it too (also wrong)
    duel.apply(0, Mark(cell("b2")))  # and the author again
    assert duel.scores == [-6, -3]
    duel.apply(1, Explore(cell("b2")))
    assert duel.view(0).rows[1][1] == "3"  # revealed now; the number replaces the private marker


# ------------------------------------------------------------------------------- turns


def test_players_strictly_alternate_and_every_action_ends_the_turn():
    duel = make_duel(first=1)
    for seat, move in [(1, Mark(cell("a1"))), (0, Explore(cell("k1"))), (1, Mark(cell("b2"))), (0, Explore(cell("f5")))]:
        assert duel.to_move == seat
        events = duel.apply(seat, move)
        assert events[-1] == TurnChanged(1 - seat)
        with pytest.raises(IllegalMove) as err:
            duel.apply(seat, Explore(cell("e5")))
        assert err.value.code is IllegalCode.NOT_YOUR_TURN


def test_events_list_the_move_first_and_the_turn_last():
    duel = make_duel()
    events = duel.apply(0, Explore(cell("b2")))
    assert isinstance(events[0], MovePlayed) and isinstance(events[-1], TurnChanged)
    assert events[0].number == 1 and events[0].action is Action.EXPLORE


# ------------------------------------------------------------------------ auto-reveal


def test_auto_reveal_opens_exactly_what_public_information_determines():
    duel = make_duel()
    events = duel.apply(0, Explore(cell("f5")))  # f5 = (4, 5): a 0 next to the centre
    expected = revealable(11, 11, 15, {(5, 5): 0, (4, 5): 0}, [])
    deduced = [e for e in of_type(events, CellsRevealed) if e.cause == "deduction"]
    got = {(r, c): n for e in deduced for r, c, n in e.cells}
    assert got == expected
    assert one(events, MovePlayed).auto_revealed == len(expected)
    for (r, c), n in got.items():
        assert (r, c) not in duel.setup.mines and n == duel._count((r, c))


def test_nobody_scores_for_auto_revealed_cells():
    duel = make_duel()
    events = duel.apply(0, Explore(cell("f5")))
    assert duel.scores[0] == one(events, MovePlayed).points == 0


def test_a_wrong_mark_reveals_nothing_so_it_cannot_leak():
    duel = make_duel()
    before = dict(duel.numbers)
    duel.apply(0, Mark(cell("f5")))
    assert duel.numbers == before and duel.last_opened == ()


# --------------------------------------------------------------------------------- end


def test_resign_loses_at_any_time_even_on_the_opponents_turn():
    duel = make_duel(first=0)
    events = duel.apply(1, Resign())
    ended = one(events, GameEnded)
    assert (ended.outcome.termination, ended.outcome.winner) == (RESIGNATION, 0)
    assert duel.phase is Phase.OVER and duel.view(0).to_move is None


def test_timeout_loses_and_only_the_seat_to_move_can_run_out():
    duel = make_duel(first=0)
    with pytest.raises(IllegalMove) as err:
        duel.apply(1, Timeout())
    assert err.value.code is IllegalCode.NOT_YOUR_TURN
    ended = one(duel.apply(0, Timeout()), GameEnded)
    assert (ended.outcome.termination, ended.outcome.winner) == (TIMEOUT, 1)


def test_at_the_end_everything_is_shown_to_everybody():
    duel = make_duel()
    duel.apply(0, Mark(cell("b2")))  # wrong, seat 0
    duel.apply(1, Mark(cell("c3")))  # wrong, seat 1
    duel.apply(0, Mark(cell("a1")))
    ended = one(duel.apply(1, Resign()), GameEnded)
    assert ended.mines == tuple(sorted(cells(*LAYOUT_NAMES)))
    assert ended.salt == SALT and ended.wrong_marks == ((cell("b2"),), (cell("c3"),))
    for viewer in (0, 1, SPECTATOR):
        view = duel.view(viewer)
        assert view.salt == SALT and view.mines == ended.mines
        assert view.wrong_marks == ((cell("b2"),), (cell("c3"),))
        assert all(m.cell is not None for m in view.moves)
        assert view.rows[0][0] == "A"
        assert sum(row.count("*") for row in view.rows) == 14
        assert verify(view.commitment, 11, 11, view.mines, view.salt)


def test_more_points_wins_and_equal_points_is_a_draw():
    recorded = json.loads((Path(__file__).parent / "data" / "drawn_game.json").read_text())
    s = recorded["setup"]
    from engine import move_from_data

    setup = Setup(s["ruleset"], s["width"], s["height"], frozenset(map(tuple, s["mines"])), s["salt"], s["first"])
    log = [(entry[0], move_from_data(entry[1:])) for entry in recorded["log"]]
    duel = Duel.replay(setup, log)
    assert duel.scores == recorded["scores"] and duel.scores[0] == duel.scores[1]
    assert duel.outcome.termination == ALL_MINES and duel.outcome.winner is None


# ------------------------------------------------------------------------ illegal moves

ILLEGAL = [
    (IllegalCode.NOT_YOUR_TURN, lambda d: d.apply(1, Explore(cell("b2")))),
    (IllegalCode.NOT_A_SEAT, lambda d: d.apply(2, Explore(cell("b2")))),
    (IllegalCode.NOT_A_SEAT, lambda d: d.apply(-1, Resign())),
    (IllegalCode.OUT_OF_RANGE, lambda d: d.apply(0, Explore((11, 0)))),
    (IllegalCode.OUT_OF_RANGE, lambda d: d.apply(0, Mark((0, -1)))),
    (IllegalCode.OUT_OF_RANGE, lambda d: d.apply(0, Mark(("a", 1)))),  # type: ignore[arg-type]
    (IllegalCode.CELL_NOT_HIDDEN, lambda d: d.apply(0, Explore((5, 5)))),
    (IllegalCode.CELL_NOT_HIDDEN, lambda d: d.apply(0, Mark(cell("k11")))),  # already marked
    (IllegalCode.NOT_A_MOVE, lambda d: d.apply(0, "explore")),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("code,attempt", ILLEGAL, ids=[f"{c.value}-{i}" for i, (c, _) in enumerate(ILLEGAL)])
def test_an_illegal_move_raises_its_code_and_changes_nothing(code, attempt):
    duel = make_duel(first=1)
    duel.apply(1, Mark(cell("k11")))
    before = duel.snapshot()
    with pytest.raises(IllegalMove) as err:
        attempt(duel)
    assert err.value.code is code and err.value.message
    assert duel.snapshot() == before


def test_no_move_is_accepted_after_the_end():
    duel = make_duel()
    duel.apply(0, Resign())
    before = duel.snapshot()
    for seat, move in [(1, Explore(cell("b2"))), (0, Resign()), (1, Timeout())]:
        with pytest.raises(IllegalMove) as err:
            duel.apply(seat, move)
        assert err.value.code is IllegalCode.GAME_OVER
    assert duel.snapshot() == before


# -------------------------------------------------------------------------- plain data


def test_snapshot_round_trip_of_a_game_in_progress():
    duel = make_duel()
    for seat, move in [(0, Explore(cell("b2"))), (1, Mark(cell("d4"))), (0, Explore(cell("a1")))]:
        duel.apply(seat, move)
    again = Duel.from_snapshot(duel.snapshot())
    assert again == duel and again.view(1) == duel.view(1)


@pytest.mark.parametrize("broken", [{}, {"format": 99}, {"format": 1, "ruleset": "brettspielnetz"}])
def test_malformed_snapshots_raise_value_error(broken):
    with pytest.raises(ValueError):
        Duel.from_snapshot(broken)


@pytest.mark.parametrize("rows", [lambda b: b[:-1], lambda b: [*b[:-1], b[-1] + "."], lambda b: [b[0][:-1], *b[1:]]],
                         ids=["a row short", "a row long", "a row missing a cell"])
def test_a_snapshot_whose_board_is_not_the_setups_size_raises_value_error(rows):
    data = make_duel().snapshot()
    with pytest.raises(ValueError, match="board"):
        Duel.from_snapshot({**data, "board": rows(data["board"])})


def test_the_revealed_numbers_stay_out_of_the_cyclic_gc():
    """``numbers`` is keyed by the board's own cells (``Geometry.own``), not by the tuples moves
    and snapshots bring: a dict holding one fresh (tracked) tuple is tracked until a full
    collection, and so is every copy made of it, which the server's young GC passes would
    traverse at every move (bench/path.py --young)."""
    import gc

    gc.collect()  # the board's cells, like any old tuple of ints, are untracked once seen
    duel = make_duel()
    for seat, move in [(0, Explore(cell("b2"))), (1, Mark(cell("d4"))), (0, Explore(cell("a1")))]:
        duel = duel.copy()
        duel.apply(seat, type(move)(tuple(list(move.cell))))  # a tuple made just now, as the wire makes it
        assert not gc.is_tracked(duel.numbers), move
    again = Duel.from_snapshot(duel.snapshot())
    assert again.numbers == duel.numbers and not gc.is_tracked(again.numbers)
    assert not gc.is_tracked(again.copy().numbers)

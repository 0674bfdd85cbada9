import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import Explore, Mark, Resign, Timeout, move_from_data, move_to_data

moves = st.one_of(
    st.builds(Explore, st.tuples(st.integers(0, 10), st.integers(0, 10))),
    st.builds(Mark, st.tuples(st.integers(0, 10), st.integers(0, 10))),
    st.just(Resign()),
    st.just(Timeout()),
)


@given(moves)
def test_moves_round_trip_through_plain_data(move):
    assert move_from_data(move_to_data(move)) == move


@pytest.mark.parametrize("bad", [[], ["explore"], ["explore", 1], ["dig", 1, 2], ["mark", "1", 2], ["resign", 1], None, "explore"])
def test_malformed_moves_raise_value_error(bad):
    with pytest.raises(ValueError):
        move_from_data(bad)


def test_a_refused_move_is_named_by_its_action_not_by_a_python_repr() -> None:
    """What a client reads in ``not_a_move``: the action it sent, and the game's own moves."""
    from engine import Abort, Classic, Duel, Explore, IllegalMove, Mark
    from engine.moves import move_name

    assert move_name(Explore((0, 0))) == "explore" and move_name(Abort()) == "abort" and move_name("x") == "str"
    classic = Classic.new(9, 9, 10, random.Random(1))
    for move, name in ((Abort(), "abort"), (Explore((0, 0)), "explore"), (Mark((1, 1)), "mark")):
        with pytest.raises(IllegalMove) as refused:
            classic.apply(0, move)
        assert str(refused.value).startswith(f"a classic game has no '{name}' move") and "(" not in str(refused.value)[:30]
    with pytest.raises(IllegalMove) as refused:
        Duel.new(random.Random(1)).apply(0, "explore")  # type: ignore[arg-type]
    assert "a duel has no 'str' move" in str(refused.value)

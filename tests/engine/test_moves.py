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

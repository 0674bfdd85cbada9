from hypothesis import given
from hypothesis import strategies as st

from engine import cell_name, geometry, parse_cell_name
import pytest


def test_neighbours_of_corner_edge_and_inside():
    geo = geometry(11, 11)
    assert sorted(geo.neighbours((0, 0))) == [(0, 1), (1, 0), (1, 1)]
    assert len(geo.neighbours((0, 5))) == 5
    assert len(geo.neighbours((5, 5))) == 8 and (5, 5) not in geo.neighbours((5, 5))
    assert geo.centre == (5, 5) and len(geo.block(geo.centre)) == 9


def test_contains_rejects_anything_but_int_pairs_on_the_board():
    geo = geometry(11, 11)
    assert geo.contains((10, 10))
    for bad in [(11, 0), (0, -1), (1.0, 2), ("a", 1), (True, 1), [1, 2], (1, 2, 3), None]:
        assert not geo.contains(bad)


def test_rules_md_names():
    assert cell_name((5, 5)) == "f6" and parse_cell_name("d9") == (8, 3)


@given(st.integers(0, 59), st.integers(0, 700))
def test_cell_names_round_trip(r, c):
    assert parse_cell_name(cell_name((r, c))) == (r, c)


@pytest.mark.parametrize("bad", ["", "6", "f", "F6", "f0", "f-1", "6f", "f6 "])
def test_bad_cell_names_raise(bad):
    with pytest.raises(ValueError):
        parse_cell_name(bad)


@given(st.integers(1, 30), st.integers(1, 30), st.data())
def test_own_is_the_boards_own_equal_tuple(width, height, data):
    geo = geometry(width, height)
    r, c = data.draw(st.integers(0, height - 1)), data.draw(st.integers(0, width - 1))
    fresh = tuple([r, c])
    own = geo.own(fresh)
    assert own == fresh and own is geo.cells[r * width + c] and geo.own(own) is own
    assert geo.centre == (height // 2, width // 2) and geo.centre is geo.own(geo.centre)

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.logs import format_event


def test_key_value_line():
    assert format_event("move_committed", room="abc", v=7, player=None) == "event=move_committed room=abc v=7"


@given(st.text(max_size=40))
def test_values_with_spaces_or_quotes_split_back_into_one_field(value):
    line = format_event("x", name=value)
    parts = shlex.split(line, posix=True)
    assert parts[0] == "event=x"
    assert len(parts) == 2 and parts[1].startswith("name=")


@pytest.mark.parametrize("key", ["token", "salt", "mines", "state"])
def test_secret_fields_are_refused(key):
    with pytest.raises(ValueError):
        format_event("oops", **{key: "x"})

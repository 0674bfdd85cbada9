import logging
import shlex
from urllib.parse import parse_qsl

import pytest
from hypothesis import given
from hypothesis import strategies as st
from uvicorn.logging import AccessFormatter

from server.logs import RedactFilter, format_event


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


def access_record(path: str) -> logging.LogRecord:
    return logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                             ("127.0.0.1:5000", "POST", path, "1.1", 200), None)


def test_a_token_in_a_request_path_is_redacted_and_the_access_line_still_formats():
    """uvicorn's access formatter unpacks the record's arguments: the filter redacts them in
    place (it once replaced them with ``None``, and every request with ``?token=`` lost its
    access line to a formatting error)."""
    record = access_record("/api/v1/guests/me/name?token=abc.def&x=1")
    assert RedactFilter().filter(record)
    line = AccessFormatter('%(client_addr)s - "%(request_line)s" %(status_code)s', use_colors=False).format(record)
    assert line == '127.0.0.1:5000 - "POST /api/v1/guests/me/name?token=[redacted]&x=1 HTTP/1.1" 200 OK'
    plain = access_record("/api/v1/leaderboard?preset=beginner")
    assert RedactFilter().filter(plain) and plain.args[2] == "/api/v1/leaderboard?preset=beginner"


def test_a_credential_in_the_message_itself_is_redacted_whole():
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "Authorization: Bearer abc.def for %s", ("r1",), None)
    assert RedactFilter().filter(record)
    assert record.getMessage() == "Authorization: Bearer [redacted] for r1"
    assert "abc.def" not in record.getMessage()


@given(st.lists(st.sampled_from(["plain", "upper", "encoded", "ENCODED"]), min_size=5, max_size=5))
def test_a_token_parameter_is_redacted_however_its_name_is_spelled(spellings):
    """The query's names are percent-decoded before the server reads them, so ``?%74oken=``
    authenticates as ``?token=`` does: an outside probe found such a token in the access log."""
    def spelled(ch: str, how: str) -> str:
        return {"plain": ch, "upper": ch.upper(), "encoded": f"%{ord(ch):02x}", "ENCODED": f"%{ord(ch):02X}"}[how]

    name = "".join(spelled(ch, how) for ch, how in zip("token", spellings, strict=True))
    query = f"x=1&{name}=abc.def"
    assert {k.lower(): v for k, v in parse_qsl(query)}["token"] == "abc.def"  # the name as the server reads it
    record = access_record(f"/api/v1/games/g1/ws?{query}")
    assert RedactFilter().filter(record)
    assert "abc.def" not in record.getMessage()

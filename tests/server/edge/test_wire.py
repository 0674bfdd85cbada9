"""The one wire module: frames of both edges → typed messages → engine moves; never raises."""

from __future__ import annotations

import json

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Explore, Flag, Mark
from server.edge import wire


def packed(**fields) -> bytes:
    return msgpack.packb(fields)


def code_of(frame: bytes) -> str | None:
    parsed = wire.parse_msgpack(frame)
    return parsed.code if isinstance(parsed, wire.BadMessage) else None


# ---------------------------------------------------------------------- msgpack: typed values


def test_a_move_becomes_an_engine_move() -> None:
    assert wire.parse_msgpack(packed(t="move", v=4, action="explore", cell=[4, 5])) == \
        wire.MoveMessage(4, Explore((4, 5)))
    assert wire.parse_msgpack(packed(t="move", v=0, action="mark", cell=[-1, 1000])) == \
        wire.MoveMessage(0, Mark((-1, 1000)))  # off the board: the engine says out_of_range


def test_only_integers_are_integers_and_a_cell_is_only_a_pair_of_them() -> None:
    for v in ("4", 4.0, True, None, -1, 2**53, [4]):
        assert code_of(packed(t="move", v=v, action="explore", cell=[4, 4])) == "bad_field", v
    for cell in (["4", "4"], "4-4", [4.0, 4], [True, 4], [4], [4, 4, 4], (4,), {"r": 4}, [2**40, 1], None):
        assert code_of(packed(t="move", v=4, action="explore", cell=cell)) == "bad_field", cell
    for action in ("sweep", "", None, 1, "EXPLORE"):
        assert code_of(packed(t="move", v=4, action=action, cell=[4, 4])) == "bad_field", action


def test_a_resignation_checks_a_present_version_and_refuses_garbage() -> None:
    assert wire.parse_msgpack(packed(t="resign")) == wire.ResignMessage(None)
    assert wire.parse_msgpack(packed(t="resign", v=None)) == wire.ResignMessage(None)
    assert wire.parse_msgpack(packed(t="resign", v=7)) == wire.ResignMessage(7)
    for v in ("7", 7.5, float("nan"), -1, 2**64 - 1, True, [7]):
        assert code_of(packed(t="resign", v=v)) == "bad_field", v


def test_a_rematch_offer_or_answer_is_its_type_alone() -> None:
    assert wire.parse_msgpack(packed(t="rematch")) == wire.RematchMessage(decline=False)
    assert wire.parse_msgpack(packed(t="decline_rematch", v=3)) == wire.RematchMessage(decline=True)
    assert code_of(packed(t="Rematch")) == "unknown_type"


def test_what_is_not_a_message() -> None:
    assert code_of(b"\xc1") == "malformed"
    assert code_of(msgpack.packb([1, 2])) == "not_a_map"
    assert code_of(packed(t="dance")) == "unknown_type"
    assert code_of(packed(cell=[4, 4], action="explore", v=1)) == "unknown_type"  # "t" is required
    assert isinstance(wire.parse_msgpack("text"), wire.BadMessage)


# ---------------------------------------------------------------------- the browser: form fields


def test_the_browser_sends_form_fields_as_strings() -> None:
    headers = {"HX-Request": "true", "HX-Trigger": "play"}
    assert wire.parse_browser('{"v": "12", "mode": "select", "cell": "5-5", "HEADERS": {}}') == \
        wire.CellClick((5, 5), "select", 12)
    assert wire.parse_browser(json.dumps({"v": "3", "mode": "mark", "cell": "0-10", "HEADERS": headers})) == \
        wire.CellClick((0, 10), "mark", 3)
    assert wire.parse_browser('{"v": "3", "a": "confirm"}') == wire.Command("confirm", 3)
    assert wire.parse_browser('{"cell": "1-1"}') == wire.CellClick((1, 1), "select", None)  # no mode: select
    for bad in ('nope', '[]', '{}', '{"cell": "1"}', '{"cell": "-1-2"}', '{"a": "explode"}', '{"cell": "1-1001"}',
                '{"cell": [1, 1]}', '{"cell": "1-1-1"}', '{"cell": " 1-1"}',
                # what the page never sends: an unknown mode, a version that is not its digits
                '{"cell": "1-1", "mode": "boom"}', '{"cell": "1-1", "mode": 1}', '{"cell": "1-1", "v": 3}',
                '{"a": "confirm", "v": "\u0663"}', '{"a": "confirm", "v": "-1"}', '{"goto": "f6", "v": "x"}'):
        assert isinstance(wire.parse_browser(bad), wire.BadMessage), bad


def test_both_edges_share_one_rule_for_coordinates_and_actions() -> None:
    top = wire.MAX_COORD
    assert wire.parse_browser(json.dumps({"cell": f"{top}-0"})) == wire.CellClick((top, 0), "select", None)
    assert isinstance(wire.parse_browser(json.dumps({"cell": f"{top + 1}-0"})), wire.BadMessage)
    assert isinstance(wire.parse_msgpack(packed(t="move", v=1, action="explore", cell=[top, 0])), wire.MoveMessage)
    assert code_of(packed(t="move", v=1, action="explore", cell=[top + 1, 0])) == "bad_field"
    assert wire.cell_move("explore", (1, 2)) == Explore((1, 2)) and wire.cell_move("mark", (1, 2)) == Mark((1, 2))
    assert wire.cell_move("flag", (1, 2)) == Flag((1, 2))  # the classic game's moves too
    assert wire.cell_move("sweep", (1, 2)) is None


# ---------------------------------------------------------------------- nothing raises

values = st.recursive(st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text(max_size=8),
                      lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                      max_leaves=10)
fields = st.fixed_dictionaries({}, optional={"t": st.sampled_from(["move", "resign"]) | values, "v": values,
                                             "action": st.sampled_from(["explore", "mark"]) | values,
                                             "cell": values, "mode": values, "a": values})


@settings(max_examples=400, deadline=None)
@given(st.one_of(fields.map(lambda d: msgpack.packb(d, use_bin_type=True)), st.binary(max_size=80),
                 st.text(max_size=40)))
def test_the_msgpack_parser_never_raises(frame) -> None:
    parsed = wire.parse_msgpack(frame)
    assert isinstance(parsed, (wire.MoveMessage, wire.ResignMessage, wire.BadMessage))
    if isinstance(parsed, wire.MoveMessage):
        assert type(parsed.v) is int and all(type(x) is int for x in parsed.move.cell)


@settings(max_examples=400, deadline=None)
@given(st.one_of(fields.map(lambda d: json.dumps(d, default=repr)), st.text(max_size=120), st.binary(max_size=80)))
def test_the_browser_parser_never_raises(frame) -> None:
    parsed = wire.parse_browser(frame)
    assert isinstance(parsed, (wire.CellClick, wire.Command, wire.BadMessage))
    if not isinstance(parsed, wire.BadMessage):
        assert parsed.v is None or type(parsed.v) is int


def test_the_go_to_field_names_a_cell_or_nothing() -> None:
    assert wire.parse_browser('{"goto": "k11"}') == wire.GoTo((10, 10), "k11")
    assert wire.parse_browser('{"goto": " F6 "}') == wire.GoTo((5, 5), " F6 ")
    for text in ("", "11k", "k0", "k", "é1", "-1"):
        assert wire.parse_browser(json.dumps({"goto": text})) == wire.GoTo(None, text), text
    for value in (["k11"], 11, None, "a" * 9):
        assert isinstance(wire.parse_browser(json.dumps({"goto": value})), wire.BadMessage), value

import hashlib

from engine import commitment, verify
from engine.commitment import canonical


def test_canonical_form_is_exactly_rules_md():
    mines = [(10, 3), (0, 1), (2, 2)]
    assert canonical(11, 11, mines, "00ff") == "mineduel-v1:11x11:0,1;2,2;10,3:00ff"
    expected = hashlib.sha256(b"mineduel-v1:11x11:0,1;2,2;10,3:00ff").hexdigest()
    assert commitment(11, 11, mines, "00ff") == expected


def test_sorting_is_numeric_not_textual():
    assert canonical(11, 11, [(10, 0), (2, 0)], "s").split(":")[2] == "2,0;10,0"


def test_verify_detects_a_moved_mine_or_another_salt():
    c = commitment(11, 11, [(0, 0)], "aa")
    assert verify(c, 11, 11, [(0, 0)], "aa")
    assert not verify(c, 11, 11, [(0, 1)], "aa")
    assert not verify(c, 11, 11, [(0, 0)], "ab")
    assert not verify(c, 11, 12, [(0, 0)], "aa")

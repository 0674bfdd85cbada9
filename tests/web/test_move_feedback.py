"""What a move's frames tell each viewer besides the board (pure; the browser side is in
``test_move_feedback_browser.py``): the toast, the tab's title, the "your turn" sound."""

from __future__ import annotations

import re

import pytest

from engine import SPECTATOR, Explore, Mark, Resign
from server.web.html_codec import HtmlCodec
from server.web.html_frames import SNAPSHOT_MARK
from server.web.sound import SoundHtml, turn_began
from server.web.status_view import tab_title
from tests.security.leaks import TOAST_RE

from .test_render import after, new_room, safe_far_cell

TITLE = re.compile(r'<div id="title" hx-swap-oob="innerHTML:title" hidden>([^<]*)</div>')


@pytest.fixture(scope="module")
def codec() -> HtmlCodec:
    return HtmlCodec()


def toast(frame: str) -> str:
    """The toast's text (tags dropped)."""
    found = re.search(r'<p id="toast"[^>]*>(.*?)</p>', frame, re.S)
    assert found, frame
    return re.sub(r"<[^>]+>", "", found.group(1)).replace("&middot;", "\u00b7")


def test_every_viewer_reads_the_move_in_the_toast(codec: HtmlCodec) -> None:
    room = new_room()
    new, events = after(room, 0, Explore((4, 4)))
    line = new.view(0).moves[-1]
    for viewer in (0, 1, SPECTATOR):
        text = toast(codec.update(room, new, viewer, events))
        assert text.startswith(f"Anna: explore e5 {line.verdict.value} ")
        if line.auto_revealed:
            assert "opened by" in text
    snapshot = codec.snapshot(new, 1)
    assert toast(snapshot) == ""  # a (re)connect brings no old news


def test_a_wrong_marks_toast_says_what_the_move_list_says_to_each(codec: HtmlCodec) -> None:
    room, _ = after(new_room(), 0, Explore((4, 4)))
    wrong = safe_far_cell(room.game)
    new, events = after(room, 1, Mark(wrong))
    name = f"{'abcdefghijk'[wrong[1]]}{wrong[0] + 1}"
    assert toast(codec.update(room, new, 1, events)) == f"Ben: mark {name} Blubb! \u22123"
    for viewer in (0, SPECTATOR):
        frame = codec.update(room, new, viewer, events)
        assert toast(frame) == "Ben: mark ? Blubb! \u22123"
        assert [w for *_, w in TOAST_RE.findall(frame)] == ["?"]  # the security inspector's view of it


def test_the_end_toasts_the_last_move_in_its_snapshot(codec: HtmlCodec) -> None:
    room, _ = after(new_room(), 0, Explore((4, 4)))
    new, events = after(room, 1, Resign())
    assert toast(codec.update(room, new, 0, events)) == ""  # a resignation is no move-list line
    assert codec.update(room, new, 0, events).startswith(SNAPSHOT_MARK)


def test_the_title_follows_the_status_in_every_frame(codec: HtmlCodec) -> None:
    room = new_room()
    assert TITLE.findall(codec.snapshot(room, 0)) == ["\u25cf Your turn \u00b7 Anna vs Ben \u00b7 MineDuel"]
    new, events = after(room, 0, Explore((4, 4)))
    assert TITLE.findall(codec.update(room, new, 0, events)) == ["Ben to move \u00b7 Anna vs Ben \u00b7 MineDuel"]
    assert TITLE.findall(codec.update(room, new, 1, events)) == ["\u25cf Your turn \u00b7 Anna vs Ben \u00b7 MineDuel"]
    over, events = after(new, 1, Resign())
    assert TITLE.findall(codec.update(new, over, 0, events))[0].startswith("Ben resigned \u2014 you win")
    assert tab_title(over, 1).startswith("You resigned \u2014 Anna wins")
    assert tab_title(over, SPECTATOR).startswith("Ben resigned \u2014 Anna wins")


def test_the_sound_is_only_in_the_turn_frame_of_a_page_that_asked(codec: HtmlCodec) -> None:
    loud = SoundHtml(codec)
    room = new_room()
    new, events = after(room, 0, Explore((4, 4)))
    assert turn_began(room, new, 1) and not turn_began(room, new, 0) and not turn_began(room, new, SPECTATOR)
    assert "<audio autoplay" in loud.update(room, new, 1, events)
    for viewer in (0, SPECTATOR):
        assert "<audio" not in loud.update(room, new, viewer, events)
    for viewer in (0, 1, SPECTATOR):
        assert "<audio" not in codec.update(room, new, viewer, events)  # sound off: never
        assert "<audio" not in loud.snapshot(new, viewer)  # a reconnect is no new turn
        assert 'id="sound"' in codec.snapshot(new, viewer)  # the empty place it goes into

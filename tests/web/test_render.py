"""The "html" codec and the view model, without a server: pure functions on engine games."""

from __future__ import annotations

import asyncio
import random
import re

import pytest

from engine import (
    ABANDONED,
    SPECTATOR,
    ClaimAbandoned,
    Duel,
    Explore,
    Mark,
    MoveLine,
    Outcome,
    Resign,
)
from engine.classic import Classic, ClassicSetup
from engine.clock import Clock
from engine.moves import Flag
from engine.rules import Action, Verdict
from server.core.commands import Commit, DeclineRematch, LinkRematch, OfferRematch
from server.core.decide import AWAY_GRACE_MS, LEAVE_GRACE_MS, decide
from server.core.room import Player, Room
from server.store.messages import Attendance
from server.web.html_codec import HtmlCodec
from server.web.html_frames import SNAPSHOT_MARK, keeping_step
from server.web.presence_view import away_text, claim_look
from server.web.status_view import clock_text, leaver_of, outcome_text
from server.web.view_model import cell_look, move_text, points_text, score_text

ANNA, BEN = Player("ga", "Anna"), Player("gb", "Ben")


@pytest.fixture(scope="module")
def codec() -> HtmlCodec:
    return HtmlCodec()


def new_room(seed: int = 5, players=(ANNA, BEN), clock: Clock | None = None) -> Room:
    return Room("room1", 2, Duel.new(random.Random(seed), first=0), players, clock, 0)


def after(room: Room, seat: int, move) -> tuple[Room, list]:
    """The room after ``move`` (a new Room, as the room service builds them)."""
    game = room.game.copy()
    events = game.apply(seat, move)
    return room.evolve(version=room.version + 1, game=game), events


def safe_far_cell(duel: Duel) -> tuple[int, int]:
    return next(c for c in [(0, 0), (0, 10), (10, 0), (10, 10)] if c not in duel.setup.mines)


def cells_in(frame: str) -> set[str]:
    return set(re.findall(r'id="(cell-\d+-\d+)"', frame))


# ---------------------------------------------------------------------- words


def test_points_scores_and_clocks_read_well() -> None:
    assert [points_text(p) for p in (4, -3, 0)] == ["+4", "\u22123", "\u00b10"]
    assert [score_text(p) for p in (12, 0, -4)] == ["12", "0", "\u22124"]
    assert clock_text(300_000) == "5:00"
    assert clock_text(61_001) == "1:02"  # rounded up: 0:00 only when the time is really gone
    assert clock_text(9_900) == "0:09.9"
    assert clock_text(0) == "0:00"
    assert clock_text(3_599_000) == "59:59" and clock_text(3_599_001) == "1:00:00"
    assert clock_text(5 * 3_600_000 + 62_000) == "5:01:02"
    assert clock_text(3 * 86_400_000) == "3 d" and clock_text(3 * 86_400_000 - 1000) == "2 d 23 h"
    assert clock_text(86_400_000 - 500) == "1 d" and clock_text(86_400_000 - 1000) == "23:59:59"


def test_a_game_left_reads_from_each_side() -> None:
    """The player who stayed claimed the win: the one who left is told so, not "opponent left"."""
    left = Outcome(ABANDONED, 0)
    names = ("Anna", "Ben")
    assert outcome_text(left, (3, 1), names, 0) == "Opponent left \u2014 you win, 3\u00a0:\u00a01"
    assert outcome_text(left, (3, 1), names, 1) == "You left \u2014 Anna wins, 3\u00a0:\u00a01"
    assert outcome_text(left, (3, 1), names, SPECTATOR) == "Ben left \u2014 Anna wins, 3\u00a0:\u00a01"
    assert outcome_text(Outcome(ABANDONED, None), (3, 1), names, SPECTATOR).startswith("A player left \u2014 a draw")
    drawn = Outcome(ABANDONED, None)  # Anna claimed a draw: Ben left (the claim's seat says so)
    assert outcome_text(drawn, (3, 1), names, 1, leaver=1).startswith("You left \u2014 a draw")
    assert outcome_text(drawn, (3, 1), names, 0, leaver=1).startswith("Opponent left \u2014 a draw")
    assert outcome_text(drawn, (3, 1), names, SPECTATOR, leaver=1).startswith("Ben left \u2014 a draw")


def test_the_seat_that_left_is_read_from_the_claim() -> None:
    room, _ = after(new_room(), 0, Explore(safe_far_cell(new_room().game)))
    assert leaver_of(room) is None
    game = room.game.copy()
    game.apply(0, ClaimAbandoned(True))  # Anna (seat 0) claims a draw: Ben left
    assert leaver_of(room.evolve(version=room.version + 1, game=game)) == 1


def test_move_lines_as_rules_md_writes_them() -> None:
    names = ("Anna", "Ben")
    line = MoveLine(7, 0, Action.MARK, (8, 3), Verdict.GUT, 4, 0)
    assert move_text(line, names).text == "7. Anna mark d9 Gut! +4"
    secret = MoveLine(8, 1, Action.MARK, None, Verdict.BLUBB, -3, 0)
    assert move_text(secret, names).text == "8. Ben mark ? Blubb! \u22123"
    auto = MoveLine(9, 0, Action.EXPLORE, (5, 4), Verdict.GUT, 2, 3)
    assert move_text(auto, names).text == "9. Anna explore e6 Gut! +2 \u00b7 3 revealed"


def test_cell_labels_and_classes() -> None:
    room = new_room()
    view = room.view(0)
    names = ("Anna", "Ben")
    hidden = cell_look(view, 0, 0, names, playable=True)
    assert (hidden.id, hidden.label, hidden.playable) == ("cell-0-0", "a1, hidden", True)
    assert "hidden" in hidden.css.split()
    centre = cell_look(view, 5, 5, names, playable=True)
    assert centre.label == "f6, 0" and not centre.playable and "n0" in centre.css
    selected = cell_look(view, 0, 0, names, playable=True, selected="mark", autofocus=True)
    assert "sel-mark" in selected.css and selected.autofocus and selected.selected
    assert selected.label == "a1, hidden, selected to mark"
    spectator = cell_look(room.view(SPECTATOR), 0, 0, names, playable=False)
    assert not spectator.playable and not spectator.autofocus


def test_claimed_mines_name_their_player() -> None:
    room = new_room()
    mine = sorted(room.game.setup.mines)[0]
    room, _ = after(room, 0, Mark(mine))
    look = cell_look(room.view(SPECTATOR), *mine, ("Anna", "Ben"), playable=False)
    assert look.label.startswith(f"{'abcdefghijk'[mine[1]]}{mine[0] + 1}, mine marked by Anna")
    assert {"mine", "marked", "p0", "last"} <= set(look.css.split()) and look.badge == "A"
    room, _ = after(room, 1, Explore(sorted(room.game.setup.mines)[1]))
    hit = cell_look(room.view(0), *sorted(room.game.setup.mines)[1], ("Anna", "Ben"), playable=True)
    assert "hit" in hit.css and "p1" in hit.css and "mine hit by Ben" in hit.label


# ---------------------------------------------------------------------- frames


def test_snapshot_has_every_area_once(codec: HtmlCodec) -> None:
    room = new_room()
    frame = codec.snapshot(room, 0)
    assert frame.startswith(SNAPSHOT_MARK)
    for area in ("status", "players", "board", "mines-left", "moves", "fair", "endgame", "notice", "hb",
                 "seen-v", "selection"):
        assert frame.count(f'id="{area}"') == 1, area
    assert len(cells_in(frame)) == 121
    assert 'value="2"' in frame  # the version the page shows
    assert "style=" not in frame and "<script" not in frame


def test_update_sends_only_what_changed(codec: HtmlCodec) -> None:
    room = new_room()
    new, events = after(room, 0, Explore((4, 4)))
    frame = codec.update(room, new, 0, events)
    assert not frame.startswith(SNAPSHOT_MARK)
    changed = {f"cell-{r}-{c}" for r, c in new.view(0).last_opened}
    assert cells_in(frame) == changed
    assert 'hx-swap-oob="afterbegin:#moves"' in frame and 'id="move-1"' in frame
    assert 'id="seen-v"' in frame and 'value="3"' in frame
    assert 'id="board"' not in frame and 'id="fair"' not in frame
    assert re.search(r'<p id="notice" [^>]*></p>', frame)  # "wait for their move" no longer holds: cleared
    assert len(frame) < 4000


def test_a_wrong_mark_reaches_only_its_author(codec: HtmlCodec) -> None:
    room = new_room()
    room, _ = after(room, 0, Explore((4, 4)))
    wrong = safe_far_cell(room.game)
    new, events = after(room, 1, Mark(wrong))
    name = f"{'abcdefghijk'[wrong[1]]}{wrong[0] + 1}"
    for viewer in (0, SPECTATOR):
        for frame in (codec.update(room, new, viewer, events), codec.snapshot(new, viewer)):
            assert "wrong" not in frame
            assert '<span class="at">?</span> <span class="verdict">Blubb!' in frame
            assert f'<span class="at">{name}</span>' not in frame
    own = codec.update(room, new, 1, events)
    assert "wrong-own" in own and f"cell-{wrong[0]}-{wrong[1]}" in cells_in(own)
    assert f'<span class="at">{name}</span> <span class="verdict">Blubb!' in own


def test_joining_and_ending_send_the_whole_picture(codec: HtmlCodec) -> None:
    waiting = new_room(players=(ANNA, None))
    assert "waiting for an opponent" in codec.snapshot(waiting, SPECTATOR)
    assert 'id="join"' in codec.snapshot(waiting, SPECTATOR)
    joined = waiting.evolve(version=3, players=(ANNA, BEN))
    assert codec.update(waiting, joined, 0, []).startswith(SNAPSHOT_MARK)
    moved, _ = after(joined, 0, Explore(safe_far_cell(joined.game)))
    over, events = after(moved, 1, Resign())
    frame = codec.update(moved, over, SPECTATOR, events)
    assert frame.startswith(SNAPSHOT_MARK)
    assert "Ben resigned" in frame and "Anna wins" in frame
    assert 'class="fair verified"' in frame and 'id="replay"' in frame
    assert frame.count("cell mine unclaimed") == 15  # every mine shown at the end


def test_the_offerers_page_goes_to_the_rematch_when_it_is_linked(codec: HtmlCodec) -> None:
    """The update that links the rematch takes the page of the player who offered it there by
    itself (the other one's form answer takes them); nobody else's page moves, and a page
    loaded afterwards stays on the finished game."""
    over, _ = after(new_room(), 1, Resign())
    offered = decide(over, BEN, OfferRematch(), None, 0)
    assert isinstance(offered, Commit)
    linked = decide(offered.room, ANNA, LinkRematch("room2"), None, 0)
    assert isinstance(linked, Commit)
    follows = 'hx-get="/g/room1/rematch" hx-trigger="load"'
    frames = {viewer: codec.update(offered.room, linked.room, viewer, []) for viewer in (0, 1, SPECTATOR)}
    assert all('id="rematch-link" href="/g/room2"' in frame for frame in frames.values())
    assert follows in frames[1] and follows not in frames[0] and follows not in frames[SPECTATOR]
    assert all(follows not in codec.snapshot(linked.room, viewer) for viewer in (0, 1, SPECTATOR))
    assert follows not in codec.update(over, offered.room, 1, [])  # the offer itself moves nobody


def test_spectators_read_the_rematch_as_onlookers(codec: HtmlCodec) -> None:
    """A spectator is told who offered and who declined, and is offered to watch the rematch,
    never to play it; the players' own words stay theirs."""
    over, _ = after(new_room(), 1, Resign())
    offered = decide(over, BEN, OfferRematch(), None, 0)
    assert isinstance(offered, Commit)
    assert "Ben offers a rematch." in codec.update(over, offered.room, SPECTATOR, [])
    declined = decide(offered.room, ANNA, DeclineRematch(), None, 0)
    assert isinstance(declined, Commit)
    watching = codec.update(offered.room, declined.room, SPECTATOR, [])
    assert "Anna declined the rematch." in watching and "offers a rematch" not in watching
    assert "You declined the rematch." in codec.update(offered.room, declined.room, 0, [])
    again = decide(declined.room, BEN, OfferRematch(), None, 0)
    assert isinstance(again, Commit)
    linked = decide(again.room, ANNA, LinkRematch("room2"), None, 0)
    assert isinstance(linked, Commit)
    assert "Watch the rematch" in codec.update(again.room, linked.room, SPECTATOR, [])
    assert all("Play the rematch" in codec.update(again.room, linked.room, seat, []) for seat in (0, 1))


def test_user_text_is_escaped(codec: HtmlCodec) -> None:
    evil = Player("gx", '<script>alert("x")</script>')
    frame = codec.snapshot(new_room(players=(evil, BEN)), SPECTATOR)
    assert "<script>" not in frame and "&lt;script&gt;" in frame


def test_presence_heartbeat_and_clocks(codec: HtmlCodec) -> None:
    here = codec.presence(new_room(), Attendance(3, (None, None)))
    assert 'id="spectators"' in here and ">3<" in here and 'id="away"' not in here  # the heartbeat's to say
    assert codec.away(away_text(new_room(), Attendance(3, (None, None)), 10**9)) == \
        '<p id="away" class="away" role="status" hx-swap-oob="morph"></p>'
    gone = Attendance(0, (None, 1_000))
    assert "has left" not in away_text(new_room(), gone, 1_000 + AWAY_GRACE_MS - 1)  # a reload is no leaving
    assert f"{BEN.name} has left the game." in codec.away(away_text(new_room(), gone, 1_000 + AWAY_GRACE_MS))
    letters = new_room(clock=Clock.correspondence(3).start(0, now_ms=1_000))  # nobody "leaves" a game of days
    assert away_text(letters, gone, 1_000 + AWAY_GRACE_MS) == f"{BEN.name} is not here right now."
    assert away_text(letters, Attendance(0, (1_000, 1_000)), 10**9) == f"{ANNA.name} and {BEN.name} are not here right now."
    later = 1_000 + AWAY_GRACE_MS
    look = claim_look(new_room(), 0, gone, later)
    assert look is not None and "has left" not in codec.claim(look)  # who left is the away note's to say, once
    assert f"If {BEN.name} does not come back, you can claim the game in" in codec.claim(look)
    assert codec.heartbeat().startswith('<div id="hb"')
    clocked = new_room(clock=Clock.new(300_000, 2_000).start(0, now_ms=1_000))
    beat = codec.heartbeat(clocked, now_ms=61_000)
    assert 'id="clock-0"' in beat and ">4:00<" in beat and 'id="clock-1"' in beat and ">5:00<" in beat
    assert "clock-0" in codec.snapshot(clocked, 0) and beat.count('role="timer"') == 2  # named timers, not bare spans


def test_selection_fragment_is_for_one_connection(codec: HtmlCodec) -> None:
    room = new_room()
    frame = codec.selection(room, 0, [(0, 0), (1, 1)], ((0, 0), "explore"), focus=(0, 0))
    assert cells_in(frame) == {"cell-0-0", "cell-1-1"}
    assert "sel-explore" in frame and frame.count("autofocus") == 1
    assert "Confirm: explore a1" in frame and 'accesskey="c"' in frame
    assert not re.search(r'tabindex="[1-9]', frame)  # no positive tabindex: Tab follows the reading order
    cleared = codec.selection(room, 0, [(0, 0)], None)
    assert "sel-" not in cleared.replace("sel-what", "").replace("sel-buttons", "").replace("sel-act", "")


def test_replay_is_for_finished_games_only(codec: HtmlCodec) -> None:
    room = new_room()
    with pytest.raises(ValueError):
        codec.replay(room, 0)
    over, _ = after(room, 0, Resign())
    assert codec.replay(over, 999)["look"].at == len(over.game.log)  # clamped to the game
    assert codec.replay(over, -5)["look"].at == 0


def test_replay_fragments(codec: HtmlCodec) -> None:
    room = new_room()
    room, _ = after(room, 0, Explore((4, 4)))
    room, _ = after(room, 1, Resign())
    start = codec.replay(room, 0)
    assert str(start["board"]).count("ghost-mine") == 15
    assert "0/2" in str(start["replay"]) and 'id="replay-first"' in str(start["replay"])
    one = codec.replay(room, 1)
    assert "1. Anna explore e5" in str(one["replay"]) and 'aria-current="step"' in str(one["moves"])
    end = codec.replay(room, 2)
    assert "Ben resigned" in str(end["replay"])


def test_a_classic_replay_step_shows_the_layout_faintly_and_its_wrong_flags(codec: HtmlCodec) -> None:
    """Between the start and the end a classic game's step shows its hidden mines faintly and a
    flag on a safe cell as wrong (the layout is public once the game is over); the last step is
    the final board; the step's snapshot brackets what the step shows, as a duel's does."""
    game = Classic(ClassicSetup(9, 9, 10, False, "ab" * 16))
    game.mines = frozenset({(0, c) for c in range(9)} | {(1, 0)})
    room = Room("solo1", 0, game, (ANNA,), None, 0)
    for move in (Flag((1, 1)), Flag((0, 0)), Resign()):
        room, _ = after(room, 0, move)
    with pytest.raises(ValueError):
        codec.replay(Room("solo2", 0, Classic(game.setup), (ANNA,), None, 0), 0)  # not over: no step
    step = str(codec.replay(room, 2)["board"])
    assert re.search(r'id="cell-1-1" class="cell hidden flag wrong-flag" aria-label="b2, flagged but safe"', step)
    assert 'id="cell-0-0" class="cell hidden flag last" aria-label="a1, flagged, last move"' in step
    assert step.count("ghost-mine") == 9 and "unclaimed" not in step
    final = codec.replay(room, 3)
    assert "ghost-mine" not in str(final["board"]) and str(final["board"]).count("cell mine unclaimed") == 9
    assert "3/3</span> Anna gave up.</p>" in str(final["replay"]) and final["look"].scores is None
    snapshot = codec.snapshot(room, SPECTATOR)
    kept = keeping_step(snapshot)
    assert 'id="board"' in snapshot and 'id="replay"' in snapshot and 'id="status"' in kept
    assert all(f'id="{area}"' not in kept for area in ("board", "counter", "endgame", "replay"))


# ---------------------------------------------------------------------- the connection's selection


def test_a_connection_drops_a_selection_the_board_overtook(codec: HtmlCodec) -> None:
    from server.edge.browser_session import BrowserConn

    sent: list[str] = []

    async def send(frame: str) -> None:
        sent.append(frame)

    async def nothing(*_args) -> None:
        return None

    async def run() -> None:
        conn = BrowserConn(codec, 0, "html", "ga", send, nothing, maxsize=8)
        conn.selected = ((0, 0), "explore")
        conn.send('<button id="cell-3-3" class="cell open n1"></button>')
        assert conn.selected is not None  # another cell: kept
        conn.send('<button id="cell-0-0" class="cell open n1"></button>')
        assert conn.selected is None  # the selected cell opened: dropped, panel redrawn
        assert len(sent) == 3 and "cell-0-0" in sent[1]  # both frames, then the panel redrawn
        conn.selected = ((1, 1), "mark")
        conn.push(codec.selection(new_room(), 0, [(1, 1)], conn.selected))  # our own frame: kept
        assert conn.selected is not None
        conn.send(codec.snapshot(new_room(), 0))
        assert conn.selected is None  # a snapshot redraws everything without a selection

    asyncio.run(run())


def test_the_abort_button_and_the_claim_area(codec: HtmlCodec) -> None:
    room = new_room()
    assert 'value="abort" id="abort-game"' in codec.snapshot(room, 0)
    assert 'value="abort"' not in codec.snapshot(room, SPECTATOR)  # inert there, and out of sight (keeps a focus)
    assert 'id="abort-game" aria-disabled="true" tabindex="-1"' in codec.snapshot(room, SPECTATOR)
    assert codec.claim(None).count('aria-disabled="true" tabindex="-1"') == 2
    gone = Attendance(0, (None, 10_000))
    look = claim_look(room, 0, gone, 10_000 + 15_500)
    assert look is not None and look.wait_s == 45 and look.opponent == BEN.name
    waiting = codec.claim(look)
    assert "claim the game in 45" in waiting and 'value="claim-win"' not in waiting
    ready = codec.claim(claim_look(room, 0, gone, 10_000 + 60_000))
    assert 'id="claim-win"' in ready and 'id="claim-draw"' in ready and 'value="claim-win"' in ready
    assert claim_look(room, 1, gone, 10**9) is None  # the one who left has nothing to claim
    assert claim_look(room, SPECTATOR, gone, 10**9) is None
    assert claim_look(room, 0, Attendance(0, (None, None)), 10**9) is None
    off = codec.claim(None)
    assert 'class="claim off"' in off and 'value="claim' not in off and 'id="claim-win" aria-disabled="true"' in off
    assert 'role="status"></p>' in off  # the live region is there, empty: the inert buttons are not in it
    # Ben has just taken the last seat (his page is opening): no countdown until the away grace is over
    joined = room.evolve(seated_ms=50_000)
    never = Attendance(0, (None, 20_000))  # the empty seat's stamp, from before the join
    assert claim_look(joined, 0, never, 50_000 + AWAY_GRACE_MS - 1) is None
    late = claim_look(joined, 0, never, 50_000 + AWAY_GRACE_MS)
    assert late is not None and late.wait_s == (LEAVE_GRACE_MS - AWAY_GRACE_MS) // 1000  # from the join
    back = Attendance(0, (None, 51_000))  # came, and went again (a reload, say)
    assert claim_look(joined, 0, back, 51_000 + AWAY_GRACE_MS - 1) is None
    left = claim_look(joined, 0, back, 51_000 + AWAY_GRACE_MS)
    assert left is not None and left.wait_s == (LEAVE_GRACE_MS - AWAY_GRACE_MS) // 1000


def test_the_result_line_puts_the_winners_score_first_and_a_draws_from_the_readers_side() -> None:
    from engine import Outcome
    from engine.events import ALL_MINES, RESIGNATION
    from server.web.status_view import outcome_text

    names = ("Anna", "Ben")
    won = Outcome(ALL_MINES, 1)
    assert outcome_text(won, (-64, 12), names, 1).endswith("you win, 12\u00a0:\u00a0\u221264")
    assert outcome_text(won, (-64, 12), names, 0).endswith("Ben wins, 12\u00a0:\u00a0\u221264")
    assert outcome_text(won, (-64, 12), names, SPECTATOR).endswith("Ben wins, 12\u00a0:\u00a0\u221264")
    resigned = Outcome(RESIGNATION, 0)
    assert outcome_text(resigned, (3, 9), names, 0) == "Ben resigned \u2014 you win, 3\u00a0:\u00a09"
    assert outcome_text(resigned, (3, 9), names, 1) == "You resigned \u2014 Anna wins, 3\u00a0:\u00a09"
    drawn = Outcome(ALL_MINES, None)  # (a draw on points under a ruleset that counts them so)
    assert outcome_text(drawn, (4, 6), names, 1).endswith("a draw, 6\u00a0:\u00a04")
    assert outcome_text(drawn, (4, 6), names, SPECTATOR).endswith("a draw, 4\u00a0:\u00a06")


def test_the_board_tells_its_keys_and_the_timer_its_seconds(codec: HtmlCodec) -> None:
    """A playable board is described by the keyboard hint (read on entering it, though the
    hint shows only while a cell has the focus); a spectator's is not. The classic timer says
    "1 second", not "1 seconds"."""
    room = new_room()
    assert 'aria-describedby="kbd-hint"' in codec.snapshot(room, 0)
    assert 'aria-describedby' not in codec.snapshot(room, SPECTATOR).split('id="board"')[1].split(">")[0]
    assert 'role="timer" aria-label="time 1 second"' in str(codec.solo.m.timer("1", True))  # a name on a timer, not a bare span
    assert 'aria-label="time 2.20 seconds"' in str(codec.solo.m.timer("2.20", False))


# ---------------------------------------------------------------------- accessibility (outside probe)


def test_the_ended_panel_keeps_confirm_and_yes_resign_as_inert_buttons(codec: HtmlCodec) -> None:
    """The game's end takes the selection panel off; the Confirm or "Yes, resign" a player
    pressed to end it stays, inert (aria-disabled, type button, out of the Tab order), so the
    frame morphs it in place and the focus stays on it (a removed button drops it to <body>)."""
    over, _ = after(new_room(), 1, Resign())
    for frame in (codec.snapshot(over, 0), codec.selection_panel(None, False)):
        assert '<div id="selection" class="selection off"' in frame
        for element in ("confirm", "resign-yes"):
            tag = re.search(rf'<button [^>]*id="{element}"[^>]*>([^<]*)<', frame)
            assert tag is not None, element
            assert 'type="button"' in tag.group(0) and 'aria-disabled="true"' in tag.group(0)
            assert 'tabindex="-1"' in tag.group(0) and " disabled" not in tag.group(0) and "autofocus" not in tag.group(0)
            assert tag.group(1) == "The game is over"


def test_a_low_clock_says_so_in_words_and_once_in_its_own_live_region(codec: HtmlCodec) -> None:
    """The colour is not all: a low clock's name and text say "low time"; each seat has a
    polite live region on the page from the start (empty), which the heartbeats fill once the
    clock is low, with the same words every second (so it is announced once)."""
    t0 = 4_000_000_000_000  # started in 2096: the page (which reads the wall clock) shows all of it
    clocked = new_room(clock=Clock.new(60_000, 0).start(0, now_ms=t0))
    page = codec.snapshot(clocked, 0)
    for seat in (0, 1):
        assert f'<span id="low-time-{seat}" class="low-time visually-hidden" aria-live="polite" hx-swap-oob="morph"></span>' in page
    assert "low time" not in page
    early, late, later = (codec.heartbeat(clocked, now_ms=t0 + t) for t in (20_000, 31_000, 32_000))
    assert "low time" not in early and "running low" not in early and 'id="low-time-0"' in early
    assert 'aria-label="time left 0:29, low time"' in late and ">0:29<span class=\"visually-hidden\">, low time</span>" in late
    region = re.compile(r'<span id="low-time-0"[^>]*>(.*?)</span>')
    assert region.search(late).group(1) == region.search(later).group(1) == \
        "Your time is running low: less than 30 seconds left."
    assert region.search(early).group(1) == ""
    assert re.search(r'<span id="low-time-1"[^>]*></span>', late)  # the other seat's time is not low


def test_the_rematch_news_is_one_live_region_there_from_the_end_on(codec: HtmlCodec) -> None:
    """#rematch-news is in the end screen before any offer (empty) and stays; the offer, the
    wait and the refusal are words inside it (they were new role=status elements, not read)."""
    over, _ = after(new_room(), 1, Resign())
    news = re.compile(r'<p class="offer" id="rematch-news" role="status">(.*?)</p>', re.DOTALL)
    for viewer in (0, 1, SPECTATOR):
        assert news.search(codec.snapshot(over, viewer)).group(1) == ""
    offered = decide(over, BEN, OfferRematch(), None, 0)
    assert isinstance(offered, Commit)
    said = {viewer: news.search(codec.update(over, offered.room, viewer, [])).group(1) for viewer in (0, 1, SPECTATOR)}
    assert said[0] == '<span id="rematch-offered">Ben offers a rematch (seats swapped).</span>'
    assert said[1] == '<span id="rematch-waiting">Rematch offered: waiting for Anna.</span>'
    assert said[SPECTATOR] == '<span id="rematch-offered">Ben offers a rematch.</span>'
    assert 'role="status"' not in codec.update(over, offered.room, 0, []).split('id="rematch-news"')[1].split("</p>", 1)[1]
    declined = decide(offered.room, ANNA, DeclineRematch(), None, 0)
    assert isinstance(declined, Commit)
    assert news.search(codec.update(offered.room, declined.room, 1, [])).group(1) == \
        '<span id="rematch-declined">Anna declined the rematch.</span>'


def test_the_replay_bar_says_a_missing_step_is_an_unavailable_link_and_reads_its_place_whole(codec: HtmlCodec) -> None:
    room, _ = after(new_room(), 0, Explore((4, 4)))
    room, _ = after(room, 1, Resign())
    start = str(codec.replay(room, 0)["replay"])
    first = re.search(r'<span [^>]*id="replay-first"[^>]*>', start).group(0)
    assert 'role="link"' in first and 'aria-disabled="true"' in first
    assert 'id="replay-where" aria-live="polite" aria-atomic="true"' in start
    assert str(codec.replay(room, 1)["replay"]).count('id="replay-where"') == 1


def test_the_lobby_counts_are_no_live_region(codec: HtmlCodec) -> None:
    """They change every second or so: a live region there kept interrupting a screen reader."""
    from server.web.lobby import Lobby, lobby_sections

    counts = lobby_sections(codec.env)(Lobby(online=3, playing=1), None)["counts"]
    assert counts.startswith('<p id="lobby-counts"') and "aria-live" not in counts and "role=" not in counts


def test_the_pairing_pages_live_parts_keep_their_ids_and_say_what_changed(codec: HtmlCodec) -> None:
    """The computer's offer is words in #pair-offer (a live region on the page from the start,
    empty); Cancel is there in every state (inert once the search is over: a focus on it stays,
    morphed); a search that is over says so in the heading too. Every part is morphed."""
    pair = codec.macros("_pair.html")
    offer = re.compile(r'<p id="pair-offer" class="pair-offer" role="status">(.*?)</p>')
    waiting, offered, over = str(pair.actions()), str(pair.actions(computer=True)), str(pair.actions(over=True))
    assert all('hx-swap-oob="morph"' in x for x in (waiting, offered, over))
    assert offer.search(waiting).group(1) == offer.search(over).group(1) == ""
    assert "play the computer instead" in offer.search(offered).group(1)
    assert 'id="pair-cancel"' in waiting and 'id="pair-cancel"' in offered and 'id="pair-computer"' in offered
    cancel = re.search(r'<button [^>]*id="pair-cancel"[^>]*>([^<]*)<', over)
    assert 'aria-disabled="true"' in cancel.group(0) and 'type="button"' in cancel.group(0)
    assert cancel.group(1) == "The search has ended"
    stopped = str(pair.status("You stopped looking for an opponent.", home=True))
    assert '<h1 id="pair-heading" hx-swap-oob="morph">No longer looking for an opponent</h1>' in stopped
    assert 'id="pair-status"' in stopped and 'hx-swap-oob="morph"' in stopped.split(">")[0]
    assert "pair-heading" not in str(pair.status("Waiting."))


def test_the_classic_board_is_described_by_its_keyboard_hint(codec: HtmlCodec) -> None:
    classic = Room("solo1", 0, Classic(ClassicSetup(9, 9, 10, False, "ab" * 16)), (ANNA,), None, 0)
    board = codec.solo.snapshot(classic, 0).split('id="board"')[1].split(">")[0]
    assert 'aria-describedby="kbd-hint"' in board
    assert "aria-describedby" not in codec.solo.snapshot(classic, SPECTATOR).split('id="board"')[1].split(">")[0]


def test_a_correspondence_clock_says_when_the_move_is_due(codec: HtmlCodec) -> None:
    """Days away, "2 d 23 h" alone leaves the reader to count: the running seat's card says the
    moment, in UTC (a live clock's does not, nor the waiting seat's)."""
    from server.core.commands import Play
    from server.core.decide import decide, open_room
    from server.web import i18n
    from server.web.status_view import clock_looks

    t = 1_764_684_300_000  # Dec 2, 2025, 14:05 UTC
    room = open_room("r1", Duel.new(random.Random(5), first=0), (ANNA, BEN), Clock.correspondence(3), t).room
    cell = next(c for c in room.game.geo.cells if room.game.is_hidden(c) and c not in room.game.setup.mines)
    moved = decide(room, ANNA, Play(Explore(cell)), None, t).room  # Ben's 3 days from now
    looks = clock_looks(moved, t + 1_000)
    assert looks is not None and [look.deadline_ms for look in looks] == [None, t + 3 * 86_400_000]
    assert 'id="deadline-1">move by Dec 5, 2025, 2:05\u202fPM UTC</small>' in codec.snapshot(moved, 0)
    with i18n.using("de"):
        assert "Zug bis 05.12.2025, 14:05 UTC" in codec.snapshot(moved, SPECTATOR)
    live = open_room("r2", Duel.new(random.Random(5), first=0), (ANNA, BEN), Clock.new(300_000, 2_000), t).room
    live = decide(live, ANNA, Play(Explore(cell)), None, t).room
    assert all(look.deadline_ms is None for look in clock_looks(live, t + 1_000) or []) and "deadline-" not in \
        codec.snapshot(live, 0)

"""When the shell works a command's costly part out ahead (server/core/ahead.py): plain values."""

from __future__ import annotations

import random

from engine import Classic, Duel, Reveal
from server.core.ahead import worth_answering, worth_preparing
from server.core.commands import Play
from server.core.computer import computer
from server.core.decide import open_room
from server.core.due import answer_due
from server.core.room import Player

ANNA, BEN = Player("gA", "Anna"), Player("gB", "Ben")
T0 = 1_000


def test_only_the_seat_s_own_first_click_on_a_no_guess_board_is_prepared() -> None:
    room = open_room("s1", Classic.new(9, 9, 10, random.Random(3), no_guess=True), (ANNA,), None, T0).room
    click = Play(Reveal((4, 4)))
    assert worth_preparing(room, ANNA, click, room.version) and worth_preparing(room, ANNA, click, None)
    assert not worth_preparing(room, BEN, click, room.version)  # not the seat's: refused by decide anyway
    assert not worth_preparing(room, None, click, room.version)  # a spectator
    assert not worth_preparing(room, ANNA, click, room.version - 1)  # stale: refused anyway
    guessing = open_room("s2", Classic.new(9, 9, 10, random.Random(3)), (ANNA,), None, T0).room
    assert not worth_preparing(guessing, ANNA, click, guessing.version)  # nothing costly: a random layout


def test_only_the_strong_computer_s_due_answer_is_worked_out_ahead() -> None:
    strong = open_room("r1", Duel.new(random.Random(1), first=0), (computer(3), ANNA), None, T0).room
    due = answer_due(strong)
    assert due is not None and due >= T0
    assert not worth_answering(strong, due - 1) and worth_answering(strong, due)
    weak = open_room("r2", Duel.new(random.Random(1), first=0), (computer(1), ANNA), None, T0).room
    assert not worth_answering(weak, answer_due(weak) or T0)  # answers in the loop: a few µs
    people = open_room("r3", Duel.new(random.Random(1), first=0), (BEN, ANNA), None, T0).room
    assert not worth_answering(people, T0 + 10**9)

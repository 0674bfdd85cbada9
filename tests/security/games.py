"""Random duels pushed through the real codecs exactly as the hub does, with every frame inspected.

:func:`play` builds successive :class:`server.core.room.Room` values with the room core, as the
room service does (a waiting room, the join, then one commit per move, decided by
:func:`server.core.decide.decide`) and, for
each new version and each viewer class (seat 0, seat 1, spectators), asks both codecs for the
frame the hub would send — ``update(old, new, viewer, events)`` to connections that had the
previous version, ``snapshot(new, viewer)`` to (re)connecting ones — plus the browser's
per-connection selection frames, and hands every frame to :class:`tests.security.leaks.Inspector`.

Players: a mix of random players (random hidden cells, explores and marks, wrong marks,
re-marks of their own wrong marks, moves onto the other seat's wrong marks, resignations,
timeouts) and the engine's bot (``engine.bots.choose_move``), chosen per game.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from engine import SPECTATOR, Duel, Explore, Mark, Resign, Timeout
from engine.bots import choose_move
from engine.clock import Clock
from engine.rules import Verdict
from server.core.commands import Commit, Join, Play, Tick
from server.core.decide import decide, open_room
from server.core.due import next_due
from server.core.room import Player, Room
from server.edge.codec_msgpack import MsgpackCodec
from server.store.messages import Attendance
from server.web.html_codec import HtmlCodec

from .leaks import Inspector, Truth, expect

ANNA, BEN = Player("g-anna", "Anna"), Player("g-ben", "Ben")
VIEWERS = (0, 1, SPECTATOR)
MAX_MOVES = 400  # a duel cannot last longer than its 121 cells allow; this is only a bound


@dataclass(frozen=True)
class Style:
    """How the two players of one game behave."""

    bot: float
    """Share of moves chosen by ``engine.bots.choose_move``."""
    mine_bias: float
    """Share of random moves aimed at a hidden mine (omniscient, so games end sooner)."""
    mark: float
    """Chance a random move is a mark (on a safe cell: a wrong mark)."""
    own_marks: float
    """Chance to play on one's own wrong mark again (re-mark or explore it)."""
    their_marks: float
    """Chance to play on the other seat's wrong mark."""
    resign: float
    timeout: float
    snapshots: float
    """Share of versions for which (re)connect snapshots are rendered too (always at the
    start and at the end)."""

    @classmethod
    def draw(cls, rng: random.Random) -> "Style":
        return cls(
            bot=rng.choice([0.0] * 10 + [0.3] * 7 + [1.0] * 3),
            mine_bias=rng.uniform(0.3, 0.85),
            mark=rng.uniform(0.1, 0.6),
            own_marks=rng.uniform(0, 0.3),
            their_marks=rng.uniform(0, 0.3),
            resign=rng.choice([0.0, 0.0, 0.01, 0.03]),
            timeout=rng.choice([0.0, 0.005]),
            snapshots=rng.uniform(0.02, 0.06),
        )


def pick_move(rng: random.Random, room: Room, style: Style):
    duel = room.game
    seat = duel.to_move
    if rng.random() < style.resign:
        return rng.randrange(2), Resign()
    if room.clock is not None and rng.random() < style.timeout:
        return seat, Timeout()
    if rng.random() < style.bot:
        return seat, choose_move(room.view(seat), rng)
    hidden = [c for c in duel.geo.cells if duel.is_hidden(c)]
    own = sorted(duel.wrong_marks[seat] & set(hidden))
    theirs = sorted(duel.wrong_marks[1 - seat] & set(hidden))
    if own and rng.random() < style.own_marks:
        cell = rng.choice(own)
    elif theirs and rng.random() < style.their_marks:
        cell = rng.choice(theirs)
    elif rng.random() < style.mine_bias:
        cell = rng.choice(sorted(duel.hidden_mines))
    else:
        cell = rng.choice(hidden)
    return seat, (Mark(cell) if rng.random() < style.mark else Explore(cell))


class Codecs:
    def __init__(self) -> None:
        self.html = HtmlCodec()
        self.msgpack = MsgpackCodec()


def render_all(codecs: Codecs, inspector: Inspector, old: Room | None, new: Room, events, truth: Truth,
               rng: random.Random, style: Style) -> None:
    """Every frame the hub (and the browser edge) could send for version ``new.version``."""
    snapshots = old is None or truth.over or rng.random() < style.snapshots
    for viewer in VIEWERS:
        if old is not None:
            data = inspector.msgpack(codecs.msgpack.update(old, new, viewer, events), viewer, truth)
            if truth.over:
                expect({"salt", "mines"} <= set(data["diff"]["changed"]), "the end update does not publish", viewer)
            frame = codecs.html.update(old, new, viewer, events)
            inspector.html(frame, viewer, truth)
            if truth.over:  # the end publishes the layout, and the page checks it
                expect("fair verified" in frame, "the end frame does not publish a verified layout", viewer)
        if snapshots:
            inspector.msgpack(codecs.msgpack.snapshot(new, viewer), viewer, truth)
            if old is None or not truth.over:  # at the end the html update is the whole snapshot
                inspector.html(codecs.html.snapshot(new, viewer), viewer, truth)
        if viewer != SPECTATOR and not truth.over and rng.random() < 0.1:
            # the browser's own selection frames: a few cells redrawn, one selected
            cells = [rng.choice(new.game.geo.cells) for _ in range(3)]
            selected = (cells[0], rng.choice(["explore", "mark"]))
            inspector.html(codecs.html.selection(new, viewer, cells, selected, focus=cells[0]), viewer, truth)
    inspector.msgpack(codecs.msgpack.presence(new, Attendance(rng.randrange(5), (None, rng.randrange(9)))),
                      SPECTATOR, truth)


def play(seed: int, codecs: Codecs, inspector: Inspector, stats: Counter[str]) -> None:
    """One whole random game, every frame of every viewer class inspected."""
    rng = random.Random(seed)
    style = Style.draw(rng)
    ruleset = rng.choice(["brettspielnetz", "coan"])
    clock = Clock.new(300_000, 2_000) if rng.random() < 0.3 else None
    duel = Duel.new(rng, ruleset, first=0)
    now = 0
    waiting = open_room(f"r{seed}", duel, (ANNA, None), clock, now).room
    render_all(codecs, inspector, None, waiting, [], Truth.of(duel, 1), rng, style)
    room = commit(decide(waiting, BEN, Join(), None, now))
    render_all(codecs, inspector, waiting, room, [], Truth.of(duel, 2), rng, style)
    probe = rng.randrange(1, 60)
    for n in range(MAX_MOVES):
        if room.game.outcome is not None:
            break
        if n == probe:
            try:
                codecs.html.replay(room, rng.randrange(0, 5))
            except ValueError:
                stats["replays_refused_before_end"] += 1
            else:
                raise AssertionError("a replay of an unfinished game was rendered")
        seat, move = pick_move(rng, room, style)
        mover_marks = set(room.game.wrong_marks[seat])
        now += rng.randrange(0, 3000)
        if isinstance(move, Timeout):  # the flag falls: any process's sweeper claims it
            now = next_due(room) or now
            decision = decide(room, None, Tick(), None, now)  # a timeout, or an abort before both moved
        else:
            decision = decide(room, room.players[seat], Play(move), room.version, now)
        new = commit(decision)
        after, events = new.game, decision.events
        stats["moves"] += 1
        stats[type(move).__name__.lower()] += 1
        if after.lines and len(after.lines) > len(room.game.lines) and after.lines[-1].verdict is Verdict.BLUBB:
            stats["wrong_marks"] += 1
            if after.lines[-1].cell in mover_marks:
                stats["re_marks"] += 1
        render_all(codecs, inspector, room, new, events, Truth.of(after, new.version), rng, style)
        room = new
    expect(room.game.outcome is not None, "the game did not end within the bound")
    stats["games"] += 1
    stats[f"ended_{room.game.outcome.termination}"] += 1
    stats["bot_games" if style.bot == 1.0 else "mixed_games" if style.bot else "random_games"] += 1


def commit(decision) -> Room:  # noqa: ANN001 - a Decision
    """The room a decision commits (every move here is legal: a refusal is a test bug)."""
    expect(isinstance(decision, Commit), f"refused: {decision!r}")
    return decision.room

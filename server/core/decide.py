"""How a room changes: ``decide(room, actor, command, seen_version, now_ms)``, pure.

Everything that affects a room's changes lives here: who may do what in which phase, the
stale-version check, the clock (started by the first move, pressed after a move that passes
the turn, stopped at the end, and a flag that fell turning any move into the timeout), what
the server does by itself when something falls due (:class:`Tick`: a first move that did not
come aborts the game, a fallen flag ends it, a computer player answers: :mod:`server.core.due`),
aborting, claiming a game the opponent left, rematch offers, and the engine's refusals. The
answer is a plain value:

- :class:`Commit`: the new room (version + 1) with its log entry and engine events, for the
  shell to commit with one compare-and-set. A commit may also carry a :class:`Refusal` for the
  actor (a move that arrived after the flag fell commits the timeout and is itself refused).
- :class:`Refusal`: nothing changes; ``code`` (a :class:`Refused`) says why, ``room`` is the room
  as it stands (a stale client gets it as a fresh snapshot). Each edge maps the code to its own
  HTTP status or error frame.
- :class:`Unchanged`: nothing to commit because the command already holds (a player joining a
  room where it is seated, a rematch already linked, a clock that has not run out).

Clock time that ran while the store was out of reach is given back first, in the commit the
decision makes (:mod:`server.core.outages`; the shell passes the outages it saw).

No awaits, no Redis, no HTTP, no clock reads, no randomness: the shell passes ``now_ms`` and
builds new games (with their random layouts) before calling :func:`open_room`. The commands
and answers are :mod:`server.core.commands`; the rematch's decisions :mod:`server.core.rematch`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engine import Abort, ClaimAbandoned, Game, IllegalMove, Move, Timeout, move_to_data
from engine.clock import Clock

from .commands import (
    Claim,
    Command,
    Commit,
    Decision,
    DeclineRematch,
    Join,
    LinkRematch,
    OfferRematch,
    Play,
    Refusal,
    Refused,
    Tick,
    Unchanged,
)
from .computer import has_computer, reply, seat_away_since
from .due import answer_due, clock_due, first_move_due
from .outages import Outage, resumed
from .rematch import decline_rematch, link_rematch, offer_rematch
from .room import Player, Room, Status, open_seat

LEAVE_GRACE_MS = 60_000
"""How long a live game's player must be gone before the opponent may claim the game."""

AWAY_GRACE_MS = 5_000
"""How long a seat must have had no connection before the opponent is shown it as away (the
claim still counts from the first moment). Why: a page reloading (the joiner's, after its Join
form) or a joiner's page opening connects again within a second or two, and "has left the
game" meanwhile would be false (and a screen reader says it)."""


# ---------------------------------------------------------------------- deciding


def decide(room: Room, actor: Player | None, command: Command, seen_version: int | None, now_ms: int,
           outages: Sequence[Outage] = ()) -> Decision:
    """What ``actor`` (``None``: the server itself) doing ``command`` does to ``room`` at
    ``now_ms``. ``seen_version``: the version the actor's command was made on (``None``: not
    checked). ``outages``: when the deciding process could not reach its store; a running
    clock's time inside them is given back first (:mod:`server.core.outages`), in the commit
    this decision makes (a ``Tick`` with nothing else to do commits the refund alone). The
    room is never changed: a commit carries a new one."""
    if outages and isinstance(command, (Play, Tick, Claim)):
        paused, given_ms = resumed(room, outages, now_ms)
        if given_ms:
            return _with_refund(room, paused, given_ms, _decide(paused, actor, command, seen_version, now_ms))
    return _decide(room, actor, command, seen_version, now_ms)


def _with_refund(room: Room, paused: Room, given_ms: int, decision: Decision) -> Decision:
    """A decision made on ``paused`` (``room`` with outage time given back): a commit carries
    the refund; nothing else to commit on a ``Tick`` commits the refund alone; a refusal (and
    any other "unchanged") shows the room as it stands, refund not made."""
    if isinstance(decision, Commit):
        return replace(decision, given_ms=given_ms)
    if isinstance(decision, Unchanged) and decision.room is paused:
        seat = paused.clock.running if paused.clock is not None else None
        return Commit(paused.evolve(version=room.version + 1), "resume", (seat, given_ms), given_ms=given_ms)
    if isinstance(decision, Refusal):
        return replace(decision, room=room) if decision.room is paused else decision
    return Unchanged(room)


def _decide(room: Room, actor: Player | None, command: Command, seen_version: int | None, now_ms: int) -> Decision:
    match command:
        case Play(move):
            return _play(room, actor, move, seen_version, now_ms)
        case Join():
            return _join(room, actor, now_ms)
        case Tick(answer):
            return _tick(room, now_ms, answer)
        case Claim(draw, gone_since_ms):
            return _claim(room, actor, draw, gone_since_ms, now_ms)
        case OfferRematch():
            return offer_rematch(room, actor)
        case DeclineRematch():
            return decline_rematch(room, actor)
        case LinkRematch(room_id):
            return link_rematch(room, actor, room_id)
    raise TypeError(f"not a command: {command!r}")


def open_room(room_id: str, game: Game, players: tuple[Player | None, ...], clock: Clock | None,
              now_ms: int, rated: bool = False, listed: bool = True) -> Commit:
    """A new room at version 1. ``rated`` holds only between two people (a computer's games
    are never rated); ``listed``: whether the lobby may list it (not a private challenge)."""
    if len(players) != game.seats:
        raise ValueError(f"a {game.kind} takes {game.seats} players, not {len(players)}")
    room = Room(room_id, 1, game, players, clock, now_ms, seated_ms=None if open_seat(players) is not None else now_ms,
                listed=listed)
    return Commit(room.evolve(rated=rated and not has_computer(room)), "create", ())


def _play(room: Room, actor: Player | None, move: Move, seen: int | None, now_ms: int) -> Decision:
    seat = room.seat_of(actor)
    if seat is None:
        return Refusal(Refused.NOT_SEATED, "only the players of this game can move", room)
    if seen is not None and seen != room.version:
        return Refusal(Refused.STALE, f"you saw version {seen}, the game is at {room.version}", room)
    if room.status is Status.WAITING and not isinstance(move, Abort):
        return Refusal(Refused.NOT_PLAYING, "waiting for the second player", room)
    ending = _due_end(room, now_ms)
    if ending is not None:
        timed = _apply(room, room.game.to_move, ending, now_ms)
        if isinstance(timed, Commit):
            return Commit(timed.room, timed.kind, timed.detail, timed.events,
                          Refusal(Refused.TIME_OUT, "your time ran out", timed.room))
        return timed
    if isinstance(move, Timeout):
        return Refusal(Refused.NOT_A_MOVE, "a timeout is the clock's to claim", room)
    if isinstance(move, ClaimAbandoned):
        return Refusal(Refused.NOT_A_MOVE, "a game is claimed with a claim, when the opponent has left", room)
    return _apply(room, seat, move, now_ms)


def _join(room: Room, actor: Player | None, now_ms: int) -> Decision:
    if actor is None:
        return Refusal(Refused.NOT_SEATED, "only a player can take a seat", room)
    if room.seat_of(actor) is not None:
        return Unchanged(room)
    seat = open_seat(room.players)
    if room.status is Status.OVER and seat is not None:  # a challenge called off (its seat never taken)
        return Refusal(Refused.GAME_OVER, "the challenge was called off", room)
    if room.status is not Status.WAITING or seat is None:
        return Refusal(Refused.ROOM_FULL, "both seats are taken" if len(room.players) == 2
                       else "a classic game has one player", room)
    players = list(room.players)
    players[seat] = actor
    new = room.evolve(version=room.version + 1, players=tuple(players))
    if open_seat(players) is None:
        new = new.evolve(seated_ms=now_ms)  # the first move is due from now (server.core.due)
    return Commit(new, "join", (seat, actor.to_data()))


def _tick(room: Room, now_ms: int, answer: Move | None) -> Decision:
    if room.status is not Status.PLAYING:
        return Unchanged(room)
    seat = room.game.to_move
    ending = _due_end(room, now_ms)
    if ending is not None:
        return _apply(room, seat, ending, now_ms)
    due = answer_due(room)
    if due is not None and now_ms >= due:
        return _apply(room, seat, reply(room) if answer is None else answer, now_ms)
    return Unchanged(room)


def _claim(room: Room, actor: Player | None, draw: bool, gone_since_ms: int | None, now_ms: int) -> Decision:
    seat = room.seat_of(actor)
    if seat is None:
        return Refusal(Refused.NOT_SEATED, "only a player of this game can claim it", room)
    if len(room.players) != 2:  # a classic game: nobody to have left
        return Refusal(Refused.NOT_A_MOVE, "only a game against an opponent can be claimed", room)
    if room.status is not Status.PLAYING:
        return Refusal(Refused.NOT_PLAYING if room.status is Status.WAITING else Refused.GAME_OVER,
                       "only a game being played can be claimed", room)
    if room.clock is not None and room.clock.per_move:
        return Refusal(Refused.OPPONENT_PRESENT, "in correspondence the clock decides: wait for the opponent's time",
                       room)
    gone = seat_away_since(room, 1 - seat, gone_since_ms)
    if gone is None:
        return Refusal(Refused.OPPONENT_PRESENT, "your opponent is here", room)
    if now_ms - gone < LEAVE_GRACE_MS:
        left_s = -(-(LEAVE_GRACE_MS - (now_ms - gone)) // 1000)
        return Refusal(Refused.OPPONENT_PRESENT, f"your opponent left; you can claim in {left_s} s", room)
    return _apply(room, seat, ClaimAbandoned(draw), now_ms)


def _apply(room: Room, seat: int, move: Move, now_ms: int) -> Decision:
    """``move`` applied to a copy of the game (a refused move leaves ``room`` as it was)."""
    game = room.game.copy()
    try:
        events = game.apply(seat, move)
    except IllegalMove as exc:
        return Refusal(Refused(exc.code.value), exc.message, room)
    clock = room.clock
    if clock is not None:
        if game.outcome is not None:
            clock = clock.stop(now_ms)
        elif clock.running is None:
            clock = clock.start(game.to_move, now_ms)  # the first move starts the clock
        elif clock.running == seat and game.to_move != seat:
            clock = clock.press(seat, now_ms)
    new = room.evolve(version=room.version + 1, game=game, clock=clock, moved_ms=now_ms,
                      started_ms=room.started_ms if room.started_ms is not None else now_ms if game.started else None,
                      ended_ms=now_ms if game.outcome is not None else None)
    return Commit(new, "move", (seat, *move_to_data(move)), tuple(events))


def _due_end(room: Room, now_ms: int) -> Abort | Timeout | None:
    """How the game ends by itself at ``now_ms``, if it does: a seat that has not made its first
    move when its window closes, or its flag falls, aborts the game (it never played, so there
    is no result); a fallen flag otherwise loses on time."""
    deadline = clock_due(room)
    fell = deadline is not None and now_ms >= deadline
    first = first_move_due(room)
    if first is not None and (now_ms >= first or fell):
        return Abort()
    return Timeout() if fell else None

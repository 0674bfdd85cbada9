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
builds new games (with their random layouts) before calling :func:`open_room`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from engine import Abort, ClaimAbandoned, Game, IllegalMove, Move, Timeout, move_to_data
from engine.clock import Clock
from engine.events import Event

from .computer import has_computer, level_of, reply, seat_away_since
from .due import answer_due, clock_due, first_move_due
from .outages import Outage, resumed
from .room import Player, Room, Status, open_seat

LEAVE_GRACE_MS = 60_000
"""How long a live game's player must be gone before the opponent may claim the game."""

AWAY_GRACE_MS = 5_000
"""How long a seat must have had no connection before the opponent is shown it as away (the
claim still counts from the first moment). Why: a page reloading (the joiner's, after its Join
form) or a joiner's page opening connects again within a second or two, and "has left the
game" meanwhile would be false (and a screen reader says it)."""


class Refused(StrEnum):
    """Why a command changed nothing (machine-readable; the edges map these)."""

    STALE = "stale"
    """The sender saw another version than the current one."""
    NOT_SEATED = "not_seated"
    """Only a player seated in the room may do that."""
    NOT_PLAYING = "not_playing"
    """A seat is still empty."""
    ROOM_FULL = "room_full"
    NOT_OVER = "not_over"
    """That needs a finished game (a rematch)."""
    TIME_OUT = "time_out"
    """The mover's flag had fallen: the timeout was committed instead."""
    OPPONENT_PRESENT = "opponent_present"
    """A claim needs the opponent gone for the grace period (live games only)."""
    NO_OFFER = "no_offer"
    """There is no rematch offer of the opponent's to accept or decline."""
    # the rules' refusals (engine.IllegalCode), by the same names
    GAME_OVER = "game_over"
    NOT_YOUR_TURN = "not_your_turn"
    NOT_A_SEAT = "not_a_seat"
    OUT_OF_RANGE = "out_of_range"
    CELL_NOT_HIDDEN = "cell_not_hidden"
    NOT_A_MOVE = "not_a_move"
    CELL_FLAGGED = "cell_flagged"
    CHORD_NOT_SATISFIED = "chord_not_satisfied"
    TOO_LATE_TO_ABORT = "too_late_to_abort"
    # only the shell says these (there is no room to decide on, or it lost every race)
    UNKNOWN_ROOM = "unknown_room"
    BUSY = "busy"


# ---------------------------------------------------------------------- commands


@dataclass(frozen=True, slots=True)
class Join:
    """The actor takes the first empty seat."""


@dataclass(frozen=True, slots=True)
class Play:
    """The actor's seat plays ``move`` (a resignation is the engine move ``Resign()``)."""

    move: Move


@dataclass(frozen=True, slots=True)
class Tick:
    """The server (the sweeper of any process) does what has fallen due (:mod:`server.core.due`):
    aborts a game whose first move did not come, ends one whose flag fell, plays a computer's
    answer. Nothing due: :class:`Unchanged`.

    ``answer``: the computer's answer (:func:`~server.core.computer.reply`) already worked out
    by the shell for this very room, else it is worked out here. Why: the strong computer thinks
    off the loop, and its move must be decided at the time it is ready, so that its thinking
    (and any wait for the worker) is on its own clock and never on the opponent's."""

    answer: Move | None = None


@dataclass(frozen=True, slots=True)
class Claim:
    """The actor claims the game (a win, or a draw when ``draw``) because the opponent left:
    the shell passes when the opponent's last connection closed (``gone_since_ms``, ``None``
    while connected), which must be :data:`LEAVE_GRACE_MS` ago, counted from no earlier than both
    seats were taken (:func:`~server.core.computer.seat_away_since`)."""

    draw: bool
    gone_since_ms: int | None


@dataclass(frozen=True, slots=True)
class OfferRematch:
    """After the end, the actor offers the same opponent a new game."""


@dataclass(frozen=True, slots=True)
class DeclineRematch:
    """The opponent's offer is declined (or the actor's own withdrawn)."""


@dataclass(frozen=True, slots=True)
class LinkRematch:
    """After the end, record ``room_id`` (a new room, players swapped) as this room's rematch:
    the actor accepts the opponent's offer (a computer, or a game of one seat, needs none)."""

    room_id: str


Command = Join | Play | Tick | Claim | OfferRematch | DeclineRematch | LinkRematch


# ---------------------------------------------------------------------- answers


@dataclass(frozen=True, slots=True)
class Refusal:
    code: Refused
    message: str
    room: Room | None
    """The room as it stands (``None`` only for :attr:`Refused.UNKNOWN_ROOM`)."""


@dataclass(frozen=True, slots=True)
class Commit:
    room: Room
    """The new room: what the shell writes iff the stored version is still the previous one."""
    kind: str
    """``create``, ``join``, ``move`` (timeouts, aborts and claims too), ``offer`` (a rematch
    offered or declined) or ``rematch``: the log entry's kind."""
    detail: tuple[Any, ...]
    """The log entry's data: ``(seat, *move_to_data(move))`` for a move."""
    events: tuple[Event, ...] = ()
    refusal: Refusal | None = None
    """Set when the actor's own command was refused although something is committed."""
    given_ms: int = 0
    """Clock time given back for a store outage in this commit (:mod:`server.core.outages`)."""

    @property
    def seat(self) -> int | None:
        """The seat that moved or joined (for logs), if any."""
        return self.detail[0] if self.kind in ("move", "join") and self.detail else None


@dataclass(frozen=True, slots=True)
class Unchanged:
    room: Room


Decision = Commit | Refusal | Unchanged


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
            return _offer_rematch(room, actor)
        case DeclineRematch():
            return _decline_rematch(room, actor)
        case LinkRematch(room_id):
            return _link_rematch(room, actor, room_id)
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


def rematch_players(room: Room) -> tuple[Player | None, ...]:
    """The players of a rematch: the same, seats rotated (a duel's seats swapped)."""
    return room.players[1:] + room.players[:1]


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


def _finished_seat(room: Room, actor: Player | None, what: str) -> int | Refusal:
    seat = room.seat_of(actor)
    if seat is None:
        return Refusal(Refused.NOT_SEATED, f"only a player of this game can {what}", room)
    if room.status is not Status.OVER:
        return Refusal(Refused.NOT_OVER, "a rematch needs a finished game", room)
    return seat


def _offer_rematch(room: Room, actor: Player | None) -> Decision:
    seat = _finished_seat(room, actor, "offer a rematch")
    if isinstance(seat, Refusal):
        return seat
    if open_seat(room.players) is not None:  # a challenge called off before anybody took it
        return Refusal(Refused.NOT_PLAYING, "nobody took the other seat: there is nobody to play a rematch with", room)
    if room.rematch is not None or room.rematch_offer == seat:
        return Unchanged(room)
    if room.rematch_offer is not None:
        return Refusal(Refused.NO_OFFER, "your opponent offered a rematch already: accept it", room)
    return Commit(room.evolve(version=room.version + 1, rematch_offer=seat, rematch_declined=None), "offer",
                  (seat, "offer"))


def _decline_rematch(room: Room, actor: Player | None) -> Decision:
    seat = _finished_seat(room, actor, "answer a rematch offer")
    if isinstance(seat, Refusal):
        return seat
    if room.rematch_offer is None or room.rematch is not None:
        return Unchanged(room)
    declined = seat if seat != room.rematch_offer else None  # the offerer withdrawing declines nothing
    return Commit(room.evolve(version=room.version + 1, rematch_offer=None, rematch_declined=declined), "offer",
                  (seat, "decline" if declined is not None else "withdraw"))


def accepts_rematch(room: Room, seat: int) -> bool:
    """Whether ``seat`` may start the rematch now: the opponent offered it (a computer always
    would, and a game of one seat has nobody to ask)."""
    others = [s for s in range(len(room.players)) if s != seat]
    return all(room.rematch_offer == s or level_of(room.players[s]) is not None for s in others)


def _link_rematch(room: Room, actor: Player | None, room_id: str) -> Decision:
    seat = _finished_seat(room, actor, "start a rematch")
    if isinstance(seat, Refusal):
        return seat
    if room.rematch is not None:
        return Unchanged(room)
    if not accepts_rematch(room, seat):
        return Refusal(Refused.NO_OFFER, "your opponent has not offered a rematch: offer one", room)
    return Commit(room.evolve(version=room.version + 1, rematch=room_id, rematch_offer=None), "rematch", (room_id,))


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
                      started_ms=now_ms if room.started_ms is None else room.started_ms,
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

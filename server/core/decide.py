"""How a room changes: ``decide(room, actor, command, seen_version, now_ms)``, pure.

Everything that affects a room's changes lives here: who may do what in which phase, the
stale-version check, the clock (started at the join that fills the last seat, pressed after a
move that passes the turn, stopped at the end, and a flag that fell turning any command into
the timeout), and the engine's refusals. The answer is a plain value:

- :class:`Commit`: the new room (version + 1) with its log entry and engine events, for the
  shell to commit with one compare-and-set. A commit may also carry a :class:`Refusal` for the
  actor (a move that arrived after the flag fell commits the timeout and is itself refused).
- :class:`Refusal`: nothing changes; ``code`` (a :class:`Refused`) says why, ``room`` is the room
  as it stands (a stale client gets it as a fresh snapshot). Each edge maps the code to its own
  HTTP status or error frame.
- :class:`Unchanged`: nothing to commit because the command already holds (a player joining a
  room where it is seated, a rematch already linked, a clock that has not run out).

No awaits, no Redis, no HTTP, no clock reads, no randomness: the shell passes ``now_ms`` and
builds new games (with their random layouts) before calling :func:`open_room`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from engine import Game, IllegalMove, Move, Timeout, move_to_data
from engine.clock import Clock
from engine.events import Event

from .room import Player, Room, Status


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
    # the rules' refusals (engine.IllegalCode), by the same names
    GAME_OVER = "game_over"
    NOT_YOUR_TURN = "not_your_turn"
    NOT_A_SEAT = "not_a_seat"
    OUT_OF_RANGE = "out_of_range"
    CELL_NOT_HIDDEN = "cell_not_hidden"
    NOT_A_MOVE = "not_a_move"
    CELL_FLAGGED = "cell_flagged"
    CHORD_NOT_SATISFIED = "chord_not_satisfied"
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
class ClaimTimeout:
    """Anybody (the clock sweeper of any process) ends the game if the running flag fell."""


@dataclass(frozen=True, slots=True)
class LinkRematch:
    """After the end, record ``room_id`` (a new room, players swapped) as this room's rematch."""

    room_id: str


Command = Join | Play | ClaimTimeout | LinkRematch


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
    """``create``, ``join``, ``move`` (timeouts too) or ``rematch``: the log entry's kind."""
    detail: tuple[Any, ...]
    """The log entry's data: ``(seat, *move_to_data(move))`` for a move."""
    events: tuple[Event, ...] = ()
    refusal: Refusal | None = None
    """Set when the actor's own command was refused although something is committed."""

    @property
    def seat(self) -> int | None:
        """The seat that moved or joined (for logs), if any."""
        return self.detail[0] if self.kind in ("move", "join") and self.detail else None


@dataclass(frozen=True, slots=True)
class Unchanged:
    room: Room


Decision = Commit | Refusal | Unchanged


# ---------------------------------------------------------------------- deciding


def decide(room: Room, actor: Player | None, command: Command, seen_version: int | None, now_ms: int) -> Decision:
    """What ``actor`` (``None``: the server itself) doing ``command`` does to ``room`` at
    ``now_ms``. ``seen_version``: the version the actor's command was made on (``None``: not
    checked). The room is never changed: a commit carries a new one."""
    match command:
        case Play(move):
            return _play(room, actor, move, seen_version, now_ms)
        case Join():
            return _join(room, actor, now_ms)
        case ClaimTimeout():
            return _claim_timeout(room, now_ms)
        case LinkRematch(room_id):
            return _link_rematch(room, actor, room_id)
    raise TypeError(f"not a command: {command!r}")


def open_room(room_id: str, game: Game, players: tuple[Player | None, ...], clock: Clock | None,
              now_ms: int) -> Commit:
    """A new room at version 1 (the clock starts at once if every seat is taken)."""
    if len(players) != game.seats:
        raise ValueError(f"a {game.kind} takes {game.seats} players, not {len(players)}")
    room = Room(room_id, 1, game, players, clock, now_ms)
    return Commit(_start_clock_if_full(room, now_ms), "create", ())


def rematch_players(room: Room) -> tuple[Player | None, ...]:
    """The players of a rematch: the same, seats rotated (a duel's seats swapped)."""
    return room.players[1:] + room.players[:1]


def _play(room: Room, actor: Player | None, move: Move, seen: int | None, now_ms: int) -> Decision:
    seat = room.seat_of(actor)
    if seat is None:
        return Refusal(Refused.NOT_SEATED, "only the players of this game can move", room)
    if seen is not None and seen != room.version:
        return Refusal(Refused.STALE, f"you saw version {seen}, the game is at {room.version}", room)
    if room.status is Status.WAITING:
        return Refusal(Refused.NOT_PLAYING, "waiting for the second player", room)
    if _flag_fell(room, now_ms):
        timed = _apply(room, room.game.to_move, Timeout(), now_ms)
        if isinstance(timed, Commit):
            return Commit(timed.room, timed.kind, timed.detail, timed.events,
                          Refusal(Refused.TIME_OUT, "your time ran out", timed.room))
        return timed
    if isinstance(move, Timeout):
        return Refusal(Refused.NOT_A_MOVE, "a timeout is the clock's to claim", room)
    return _apply(room, seat, move, now_ms)


def _join(room: Room, actor: Player | None, now_ms: int) -> Decision:
    if actor is None:
        return Refusal(Refused.NOT_SEATED, "only a player can take a seat", room)
    if room.seat_of(actor) is not None:
        return Unchanged(room)
    if room.status is not Status.WAITING:
        return Refusal(Refused.ROOM_FULL, "both seats are taken", room)
    seat = room.players.index(None)
    players = list(room.players)
    players[seat] = actor
    new = room.evolve(version=room.version + 1, players=tuple(players))
    return Commit(_start_clock_if_full(new, now_ms), "join", (seat, actor.to_data()))


def _claim_timeout(room: Room, now_ms: int) -> Decision:
    if not _flag_fell(room, now_ms):
        return Unchanged(room)
    return _apply(room, room.game.to_move, Timeout(), now_ms)


def _link_rematch(room: Room, actor: Player | None, room_id: str) -> Decision:
    if room.seat_of(actor) is None:
        return Refusal(Refused.NOT_SEATED, "only a player of this game can ask for a rematch", room)
    if room.status is not Status.OVER:
        return Refusal(Refused.NOT_OVER, "a rematch needs a finished game", room)
    if room.rematch is not None:
        return Unchanged(room)
    return Commit(room.evolve(version=room.version + 1, rematch=room_id), "rematch", (room_id,))


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
        elif clock.running == seat and game.to_move != seat:
            clock = clock.press(seat, now_ms)
    new = room.evolve(version=room.version + 1, game=game, clock=clock,
                      started_ms=now_ms if room.started_ms is None else room.started_ms,
                      ended_ms=now_ms if game.outcome is not None else None)
    return Commit(new, "move", (seat, *move_to_data(move)), tuple(events))


def _flag_fell(room: Room, now_ms: int) -> bool:
    deadline = room.deadline_ms()
    return deadline is not None and now_ms >= deadline


def _start_clock_if_full(room: Room, now_ms: int) -> Room:
    if room.clock is None or room.status is not Status.PLAYING or room.clock.running is not None:
        return room
    return room.evolve(clock=room.clock.start(room.game.to_move, now_ms))

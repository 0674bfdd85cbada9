"""Computer players: who they are in a room, when they answer, and what they play.

A computer holds a seat like a person: a :class:`~server.core.room.Player` whose id names its
level (``@bot1`` easy, ``@bot2`` medium, ``@bot3`` strong; guest ids start with ``g``, so
nobody else can have one). Its moves go through the same decision and commit as anybody's
(:func:`server.core.decide.decide` with a ``Tick`` when it is due), so any server process may
make them and a restart loses nothing: the room's deadline (:mod:`server.core.due`) says when
its answer is due, and the sweeper of whichever process sees it first plays it.

It answers after a short, human-looking pause that depends only on the room and version (so
every process agrees on it), and it sees what its seat may see and nothing else:
:func:`reply` hands :func:`engine.bots.bot_move` the seat's view, never the game.
"""

from __future__ import annotations

import random
import zlib

from engine import Move
from engine.bots import LEVELS, Level, bot_move

from .room import Player, Room, Status

PREFIX = "@bot"
NAMES = {Level.EASY: "Computer (easy)", Level.MEDIUM: "Computer (medium)", Level.STRONG: "Computer (strong)"}
"""Display names; people cannot take them (``server.edge.guests.reserved_names``)."""
PAUSE_MS = (700, 2_000)
"""Shortest and longest pause before an answer."""


def computer(level: int) -> Player:
    """The player of a computer at ``level`` (1, 2 or 3); ``ValueError`` for another."""
    if type(level) is not int or level not in LEVELS:
        raise ValueError(f"a computer's level is one of {sorted(LEVELS)}, not {level!r}")
    return Player(f"{PREFIX}{level}", NAMES[Level(level)])


def level_of(player: Player | None) -> int | None:
    """The computer level of ``player``, or ``None`` for a person (or an empty seat)."""
    if player is None or not player.id.startswith(PREFIX):
        return None
    level = player.id[len(PREFIX):]
    return int(level) if level.isdigit() and int(level) in LEVELS else None


def has_computer(room: Room) -> bool:
    return any(level_of(p) is not None for p in room.players)


def to_answer(room: Room) -> int | None:
    """The level of the computer whose turn it is in a game being played, else ``None``."""
    if room.status is not Status.PLAYING:
        return None
    return level_of(room.players[room.game.to_move])


def seat_away_since(room: Room, seat: int, since: int | None) -> int | None:
    """Since when the person in ``seat`` has been away, as the rules count it, given since when
    the seat has had no connection (presence's ``since``): a computer is never away (it plays
    from the server), an open seat has nobody to be away, and nobody left before both seats were
    taken. Why the last: the seat's time without a connection starts while it is still empty,
    and a joiner whose page had not yet opened its socket could be claimed against at once."""
    player = room.players[seat]
    if since is None or player is None or level_of(player) is not None:
        return None
    return since if room.seated_ms is None else max(since, room.seated_ms)


def people_away(room: Room, away_since: tuple[int | None, ...]) -> tuple[int | None, ...]:
    """:func:`seat_away_since` for each seat of ``room``."""
    return tuple(seat_away_since(room, seat, since) for seat, since in zip(range(len(room.players)), away_since))


def pause_ms(room: Room) -> int:
    """How long the computer to move waits after the last change (the same in every process)."""
    low, high = PAUSE_MS
    return low + zlib.crc32(f"{room.id}:{room.version}".encode()) % (high - low)


def reply(room: Room) -> Move:
    """The move of the computer whose turn it is, made from its seat's view alone."""
    level = to_answer(room)
    if level is None:
        raise ValueError("no computer is to move here")
    seat = room.game.to_move
    return bot_move(room.view(seat), level, answer_rng(room))  # type: ignore[arg-type]  # a duel's View


def answer_rng(room: Room) -> random.Random:
    """The random source of the computer's answer at this version: the same in every process
    (so any process may answer, and a retry answers alike), never the layout's source, and
    secret until the end: seeded with the duel's commitment salt too. Why the salt: seeded by the
    public room id and version alone, an opponent or a spectator replayed every choice of the
    computer (the strong one's guessed marks included) and so learned which of its marks were
    wrong, a secret, and that those cells are safe."""
    salt = room.game.setup.salt  # type: ignore[attr-defined]  # the computer plays duels only
    return random.Random(f"{salt}:{room.id}:{room.version}")


def slow_to_answer(room: Room) -> bool:
    """Whether the computer to move thinks long enough (tens of ms) to be run off the loop."""
    return to_answer(room) == Level.STRONG

"""New games for new rooms, drawn from the system's random source.

The room core takes games ready-made (it never draws randomness); the edges make them here.
A ``seed`` (a deterministic layout) is a test-only hook that the edges accept only when
``settings.test_hooks`` is on.
"""

from __future__ import annotations

import random

from engine import Classic, Duel, Game
from engine.classic import most_mines

from ..core.commands import Refused
from ..core.computer import computer
from ..core.pools import Pool, pool_clock
from ..core.room import Player, Room, Status
from ..store.presence import attendance_of
from ..store.service import RoomRefused, RoomService


def duel(ruleset: str, seed: int | None = None) -> Duel:
    """A duel under ``ruleset`` (seat 0 moves first); raises ``ValueError`` for an unknown ruleset."""
    rng = random.Random(seed) if seed is not None else random.SystemRandom()
    return Duel.new(rng, ruleset, first=0)


def classic(width: int, height: int, mines: int, no_guess: bool = False, seed: int | None = None) -> Classic:
    """A classic game (its layout is drawn at the first click from a seed drawn now); raises
    ``ValueError`` for a board RULES.md does not allow."""
    rng = random.Random(seed) if seed is not None else random.SystemRandom()
    return Classic.new(width, height, mines, rng, no_guess)


def rematch_of(room: Room) -> Game:
    """A new game of the same kind and settings as ``room``'s (a classic game's restart). A
    no-guess board made before its budget narrowed (``engine.classic.most_mines``) restarts
    with as many mines as such a board may hold now, not with an error."""
    if room.kind == "classic":
        s = room.game.settings
        mines = min(s["mines"], most_mines(s["width"], s["height"], s["no_guess"]))
        return classic(s["width"], s["height"], mines, s["no_guess"])
    return duel(room.ruleset or "brettspielnetz")


def random_seat(seats: int) -> int:
    return random.SystemRandom().randrange(seats)


async def pool_game(rooms: RoomService, pool: Pool, players: tuple[Player, Player], room_id: str) -> bool:
    """Open room ``room_id`` for a pair of quick pairing's ``pool`` (players by seat; the pool's
    clock, which starts with the first move; rated as the pool is): True if this call opened
    it, False if it was open already (another process opened the same pair's room first; the
    room's create commit lets one win). Listed in the lobby's live games."""
    try:
        room = await rooms.create(duel(pool.ruleset), players, pool_clock(pool), room_id=room_id, rated=pool.rated)
    except RoomRefused as exc:
        if exc.code is not Refused.BUSY:  # BUSY: the id is taken (by this pair: ids are never reused)
            raise
        return False
    await rooms.aftermath.list(room)
    return True


async def pool_game_seen(rooms: RoomService, room_id: str, seat: int) -> bool:
    """Whether the player in ``seat`` of a quick pairing's game has seen it (the matchmaker's
    ``seen``): it is over, that seat has moved in it, or has had a connection to it. A room not
    there yet (its opener has not made it: the seek hands the pair, which opens it) was not."""
    try:
        room = await rooms.latest(room_id)
    except RoomRefused as exc:
        if exc.code is Refused.UNKNOWN_ROOM:
            return False
        raise
    if room.status is Status.OVER or any(mover == seat for mover, _ in getattr(room.game, "log", ())):
        return True
    fields = await rooms.store.attendance_fields([room_id])
    return attendance_of(fields[0])[1][seat]


COMPUTER_INSTEAD = 2
"""The level of the computer a seeker who waited alone long enough may play (medium)."""


async def computer_game(rooms: RoomService, pool: Pool, player: Player) -> tuple[Room, int]:
    """A game against the medium computer with ``pool``'s ruleset and clock, casual (a game
    with a computer is never rated), the player in a random seat: the room and that seat."""
    seat = random_seat(2)
    players = [computer(COMPUTER_INSTEAD), computer(COMPUTER_INSTEAD)]
    players[seat] = player
    room = await rooms.create(duel(pool.ruleset), tuple(players), pool_clock(pool))
    await rooms.aftermath.list(room)
    return room, seat

"""A stored room decoded alone and from an earlier version of it (what ``RoomService.load_many``
does with this process's cached room: the lobby reads every listed room every second).

Plays ``--rooms`` duels ``--moves`` moves each (random hidden cells, a mine marked, else
explored), packs the last two versions with ``StoredForm``, and times ``unpack_room`` of the
last: cold, from the version before (the cache one move behind), and from the same version.
Prints figures; asserts nothing.

    python bench/decode_previous.py --rooms 50 --moves 40
"""

from __future__ import annotations

import argparse
import random
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import Duel, Explore, Mark  # noqa: E402
from server.core.room import Player, Room  # noqa: E402
from server.store.stored_form import StoredForm, unpack_room  # noqa: E402


def rooms(count: int, moves: int) -> list[tuple[bytes, Room, Room]]:
    """Per room: the last version's stored bytes, the version before it, the last version."""
    rng, stored, out = random.Random(3), StoredForm(), []
    for k in range(count):
        room = before = Room(f"r{k}", 1, Duel.new(random.Random(k), first=0), (Player("a", "A"), Player("b", "B")),
                             None, 0)
        for _ in range(moves):
            game = room.game.copy()
            if game.outcome is not None:  # type: ignore[attr-defined]
                break
            cell = rng.choice([c for c in game.geo.cells if game.is_hidden(c)])  # type: ignore[attr-defined]
            game.apply(game.to_move, Mark(cell) if cell in game.setup.mines else Explore(cell))  # type: ignore[attr-defined]
            before, room = room, room.evolve(version=room.version + 1, game=game)
        stored.pack(before)
        out.append((stored.pack(room), before, room))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=50)
    parser.add_argument("--moves", type=int, default=40)
    args = parser.parse_args()
    made = rooms(args.rooms, args.moves)
    ways = {"cold": lambda: [unpack_room(data) for data, _, _ in made],
            "from the version before": lambda: [unpack_room(data, before) for data, before, _ in made],
            "from the same version": lambda: [unpack_room(data, last) for data, _, last in made]}
    for name, decode in ways.items():
        best = min(timeit.repeat(decode, number=5, repeat=5)) / 5 / len(made)
        print(f"{name:>24}: {best * 1e6:7.1f} us a room")


if __name__ == "__main__":
    main()

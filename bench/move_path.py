"""In-process CPU of one move on the server, without sockets or Redis: what the room service
and the hub compute per committed move.

For 30 seeded games of random explores and marks (at most ~80 moves each), per move:

- ``apply``: copy the duel (``clone_duel``), ``Duel.apply`` with the deduction auto-reveal,
  the new ``Room``;
- ``stored``: ``Room.to_data()`` packed with msgpack (what the commit writes to Redis);
- ``events``: the events as plain data, and the packed pub/sub message;
- ``render3``: the msgpack ``update`` frame for seat 0, seat 1 and spectators (views, diffs).

Every run plays the same moves; each step of each move counts with its fastest of 5 runs (the
machine is shared: the minimum is the code's cost, and per move it is steadier than the
fastest whole run). Pass another
checkout's root to compare (e.g. ``git archive <commit> | tar -x -C /tmp/old``):

    python bench/move_path.py [root]
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).resolve().parent.parent))

from engine import Duel, Explore, IllegalMove  # noqa: E402
from engine.moves import Mark  # noqa: E402
from server.codec_msgpack import MsgpackCodec  # noqa: E402
from server.room import Player, Room, clone_duel, events_to_data  # noqa: E402
from server.store import pack  # noqa: E402

GAMES = 30
STEPS = ("apply", "stored", "events", "render3")


def run() -> list[tuple[float, float, float, float]]:
    """One pass over the games: the seconds of each step, per move."""
    spent = []
    codec = MsgpackCodec()
    players = (Player("a", "Anna"), Player("b", "Ben"))
    for seed in range(GAMES):
        rng = random.Random(seed)
        room = Room("r1", 1, Duel.new(rng, "brettspielnetz", first=0), players, None, 0)
        for _ in range(800):  # bounded, refused moves included
            if room.duel.outcome is not None:
                break
            duel = room.duel
            hidden = [(r, c) for r in range(11) for c in range(11) if (r, c) not in duel.numbers and (r, c) not in duel.claims]
            cell = rng.choice(hidden)
            move = Mark(cell) if rng.random() < 0.4 else Explore(cell)
            t0 = time.perf_counter()
            copy = clone_duel(duel)
            try:
                events = copy.apply(copy.to_move, move)
            except IllegalMove:
                continue
            new = room.evolve(version=room.version + 1, duel=copy)
            t1 = time.perf_counter()
            data = pack(new.to_data())
            t2 = time.perf_counter()
            pack([b"commit", new.version, data, events_to_data(events), b"nonce"])
            t3 = time.perf_counter()
            for viewer in (0, 1, 2):
                codec.update(room, new, viewer, events)
            t4 = time.perf_counter()
            spent.append((t1 - t0, t2 - t1, t3 - t2, t4 - t3))
            room = new
    return spent


def main() -> None:
    runs = [run() for _ in range(5)]
    moves = len(runs[0])
    per = {step: 1e6 * sum(min(r[m][i] for r in runs) for m in range(moves)) / moves for i, step in enumerate(STEPS)}
    print(f"{moves} moves; per move (us), fastest of 5 per move and step: "
          + ", ".join(f"{k} {v:.0f}" for k, v in per.items()) + f"; total {sum(per.values()):.0f}")


if __name__ == "__main__":
    main()

"""In-process CPU of one move on the server, without sockets or Redis: what the room service
and the hub compute per committed move.

For 30 seeded games of random explores and marks (at most ~80 moves each), per move:

- ``apply``: the room core's decision (``server.core.decide.decide``: a copy of the duel,
  ``Duel.apply`` with the deduction auto-reveal, the new ``Room``);
- ``stored``: the room's stored form (``StoredForm.pack``: what the commit writes to Redis);
- ``events``: the packed pub/sub message with the events as plain data;
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

from engine import Duel, Explore  # noqa: E402
from engine.moves import Mark  # noqa: E402
from server.core.commands import Commit, Play  # noqa: E402
from server.core.decide import decide, open_room  # noqa: E402
from server.core.room import Player  # noqa: E402
from server.edge.codec_msgpack import MsgpackCodec  # noqa: E402
from server.store.messages import commit_message  # noqa: E402
from server.store.stored_form import StoredForm  # noqa: E402

GAMES = 30
STEPS = ("apply", "stored", "events", "render3")


def run() -> list[tuple[float, float, float, float]]:
    """One pass over the games: the seconds of each step, per move."""
    spent = []
    codec = MsgpackCodec()
    stored = StoredForm()
    players = (Player("a", "Anna"), Player("b", "Ben"))
    for seed in range(GAMES):
        rng = random.Random(seed)
        room = open_room("r1", Duel.new(rng, "brettspielnetz", first=0), players, None, 0).room
        for _ in range(800):  # bounded, refused moves included
            if room.game.outcome is not None:
                break
            game = room.game
            hidden = [(r, c) for r in range(11) for c in range(11) if (r, c) not in game.numbers and (r, c) not in game.claims]
            cell = rng.choice(hidden)
            move = Mark(cell) if rng.random() < 0.4 else Explore(cell)
            t0 = time.perf_counter()
            decision = decide(room, players[game.to_move], Play(move), room.version, 0)
            if not isinstance(decision, Commit):
                continue
            new = decision.room
            t1 = time.perf_counter()
            data = stored.pack(new)
            t2 = time.perf_counter()
            commit_message(new.version, data, decision.events, b"n" * 14)
            t3 = time.perf_counter()
            for viewer in (0, 1, 2):
                codec.update(room, new, viewer, decision.events)
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

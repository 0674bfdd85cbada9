"""Time what the hub renders per room version: 3 views (seat 0, seat 1, spectators) + 3 diffs.

Replays 40 seeded games (random explores and marks, at most 80 moves each) and times
``view_of`` for the three viewer classes and ``diff(...).to_data()`` against the previous
version's views, best of 5. Pass another checkout's root to compare versions:

    python bench/views.py                 # this tree
    python bench/views.py /tmp/old        # e.g. `git archive <commit> engine | tar -x -C /tmp/old`
"""

from __future__ import annotations

import copy
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).resolve().parent.parent))

from engine import Duel, Explore  # noqa: E402
from engine.moves import Mark  # noqa: E402
from engine.view import diff, view_of  # noqa: E402


def games(n: int = 40, max_moves: int = 80) -> list[list[Duel]]:
    out = []
    for seed in range(n):
        rng = random.Random(seed)
        d = Duel.new(rng, "brettspielnetz", first=0)
        states: list[Duel] = []
        for _ in range(10 * max_moves):  # bounded, illegal tries included
            if d.outcome is not None or len(states) >= max_moves:
                break
            hidden = [(r, c) for r in range(d.setup.height) for c in range(d.setup.width)
                      if (r, c) not in d.numbers and (r, c) not in d.claims]
            cell = rng.choice(hidden)
            d2 = copy.deepcopy(d)
            try:
                d2.apply(d2.to_move, Mark(cell) if rng.random() < 0.4 else Explore(cell))
            except Exception:
                continue
            d = d2
            states.append(d)
        out.append(states)
    return out


def main() -> None:
    replayed = games()
    n = sum(len(g) for g in replayed)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for g in replayed:
            prev = None
            for d in g:
                views = [view_of(d, v) for v in (0, 1, 2)]
                if prev:
                    for a, b in zip(prev, views):
                        diff(a, b).to_data()
                prev = views
        best = min(best, time.perf_counter() - t)
    print(f"{n} versions: {1e6 * best / n:.1f} us per version (3 views + 3 diffs), best of 5")


if __name__ == "__main__":
    main()

"""What a no-guess layout costs by board size and density, and which boards the rule allows.

The layout of a no-guess classic game is searched at its first click, in the server's board
worker (``server/store/service.py``: ``RoomService.boards``). ``engine.classic.most_mines``
bounds what a no-guess board may hold so that every allowed board is cheap to search; this
prints the figures the bound was chosen from: ``engine.classic.generate(..., no_guess=True)``
per board over seeded first clicks, median and max, and whether the board is allowed.
Prints figures; asserts nothing. Record results in docs/PERFORMANCE.md ("Engine").

    python bench/no_guess_budget.py --seeds 5
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.classic import generate, most_mines  # noqa: E402

BOARDS = [  # width, height, mines: the presets, small dense boards, large boards by density
    (9, 9, 10), (16, 16, 40), (30, 16, 99),
    (8, 8, 40), (16, 16, 100), (16, 16, 150), (30, 16, 200), (30, 16, 312),
    (40, 30, 240), (40, 30, 360), (40, 30, 480),
    (60, 40, 240), (60, 40, 480), (60, 40, 600), (60, 40, 720), (60, 40, 960), (60, 40, 1600),
]
SLOW_S = 1.0
"""A board whose first seed took longer is measured once only (the point is made)."""


def time_board(width: int, height: int, mines: int, seeds: int) -> list[float]:
    times: list[float] = []
    for seed in range(seeds):
        rng = random.Random(1000 + seed)
        click = (rng.randrange(height), rng.randrange(width))
        started = time.process_time()
        try:
            generate(width, height, mines, click, random.Random(seed), True)
        except ValueError:
            pass  # a search that gives up costs its time all the same
        times.append((time.process_time() - started) * 1000)
        if times[0] > SLOW_S * 1000:
            break
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    print(f"# bench/no_guess_budget.py --seeds {args.seeds}; load average {os.getloadavg()[0]:.2f}")
    print(f"{'board':>14} {'density':>8} {'allowed':>8} {'median ms':>10} {'max ms':>9} {'n':>3}")
    for width, height, mines in BOARDS:
        times = time_board(width, height, mines, args.seeds)
        allowed = mines <= most_mines(width, height, no_guess=True)
        print(f"{f'{width}x{height}/{mines}':>14} {mines / (width * height):>8.0%} {'yes' if allowed else 'no':>8} "
              f"{statistics.median(times):>10.1f} {max(times):>9.1f} {len(times):>3}", flush=True)
    print(f"# load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

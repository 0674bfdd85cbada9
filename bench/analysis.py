"""Post-game analysis benchmark: what a whole game's analysis costs (engine/analysis.py and the
worker's job in server/store/analyses.py), and what serving a stored one costs the loop.

Prints figures; asserts nothing. Record results in docs/PERFORMANCE.md ("Post-game analysis").

    python bench/analysis.py --games 1000 --seed 1

The games are recorded first (not timed): seeded 11x11/15 duels played to the end by the
engine's computer players (engine/bots.py), the level pair and the ruleset varying with the
seed; one game in five has the strong level on a seat, which makes deliberate wrong marks (so
the mover's own wrong marks take part). Each game's setup and log is then timed through

- ``analyze_game(setup, log)``: the exact analysis (every position replayed and solved, plus
  one conditioned solve per explore that risks a mine);
- the worker's whole job, ``server.store.analyses.compute`` (the above, the overlay's codes and
  msgpack), and the size of what is stored;
- the loop's share when the analysis is read back: ``StoredAnalysis.unpack`` and the API's
  JSON body.

The slowest 10 games are timed again afterwards (best of 3): on a shared machine a lone slow
game is often the machine.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine import Duel  # noqa: E402
from engine.analysis import analyze_game  # noqa: E402
from engine.bots import bot_move  # noqa: E402
from server.store.analyses import StoredAnalysis, compute  # noqa: E402

LEVEL_PAIRS = ((1, 2), (2, 1), (1, 1), (2, 2), (1, 3), (2, 2), (2, 1), (1, 2), (1, 1), (3, 2))
"""Per seed modulo 10: the levels of seat 0 and seat 1 (strong, 3, in one game in five)."""


def record(seed: int) -> Duel:
    rng = random.Random(seed)
    levels = LEVEL_PAIRS[seed % len(LEVEL_PAIRS)]
    duel = Duel.new(random.Random(seed), "coan" if seed % 4 == 3 else "brettspielnetz", first=seed % 2)
    while duel.outcome is None:
        seat = duel.to_move
        duel.apply(seat, bot_move(duel.view(seat), levels[seat], rng))
    return duel


def timed(fn, *args):
    t0 = time.perf_counter_ns()
    out = fn(*args)
    return out, time.perf_counter_ns() - t0


def summary(ns: list[int]) -> str:
    ms = sorted(x / 1e6 for x in ns)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return f"median {statistics.median(ms):.2f} ms, p99 {p99:.2f} ms, max {ms[-1]:.2f} ms, mean {statistics.fmean(ms):.2f} ms"


def machine() -> str:
    return f"{platform.processor() or '?'}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1, help="the first game's seed (then seed + 1, ...)")
    args = ap.parse_args(argv)
    print(f"# {machine()}")
    print(f"# load average at start: {load()}")

    t0 = time.perf_counter()
    games = [record(args.seed + i) for i in range(args.games)]
    moves = [len(d.lines) for d in games]
    wrong = sum(1 for d in games for ln in d.lines if ln.verdict.value == "Blubb!")
    print(f"recorded {len(games)} games in {time.perf_counter() - t0:.1f} s: moves per game median "
          f"{statistics.median(moves):.0f}, max {max(moves)}; {wrong} wrong marks")

    engine_ns, worker_ns, loop_ns, sizes, per_move = [], [], [], [], []
    slowest: list[tuple[int, int]] = []
    for i, duel in enumerate(games):
        log = list(duel.log)
        _, dt = timed(analyze_game, duel.setup, log)
        engine_ns.append(dt)
        per_move.append(dt / max(1, len(duel.lines)))
        data, dw = timed(compute, duel.setup, log)
        worker_ns.append(dw)
        sizes.append(len(data))
        _, dl = timed(lambda b: json.dumps(StoredAnalysis.unpack(b).to_data()), data)
        loop_ns.append(dl)
        item = (dt, i)
        if len(slowest) < 10:
            heapq.heappush(slowest, item)
        elif dt > slowest[0][0]:
            heapq.heapreplace(slowest, item)

    print(f"analyze_game per game:        {summary(engine_ns)}")
    print(f"  per move:                   median {statistics.median(per_move) / 1e6:.3f} ms")
    print(f"worker job (analysis + pack): {summary(worker_ns)}")
    print(f"loop: unpack + API JSON:      {summary(loop_ns)}")
    print(f"stored size: median {statistics.median(sizes) / 1024:.1f} KiB, max {max(sizes) / 1024:.1f} KiB")
    again = max(min(timed(analyze_game, games[i].setup, list(games[i].log))[1] for _ in range(3)) for _, i in slowest)
    print(f"slowest 10 games re-timed (best of 3): max {again / 1e6:.2f} ms")
    print(f"# load average at end: {load()}")


if __name__ == "__main__":
    main()

"""Auto-reveal benchmark: ``deduce.revealable`` uncached against the incremental
``RevealCache`` (engine/reveal_cache.py) on the same positions, in the same run.

Prints figures; asserts only that both give the same answers.  Record results in
docs/PERFORMANCE.md ("Engine").

    python bench/reveal.py --games 100 --seed 1

Positions: every auto-reveal a seeded 11x11/15 duel asks for (``engine.Duel``, so exactly the
calls the server makes: after every move but a wrong mark), in games whose moves come from

- ``random``: a random hidden cell, marked with probability 0.4, else explored (as
  bench/move_path.py plays);
- ``explore``: a random hidden cell explored (as the bots of bench/load.py play);
- ``bot``: engine.bots.choose_move for the seat to move (certain mines, then certain-safe
  cells, then the least likely mine).

Timing: each game's positions are asked in order, once uncached and once through a new cache,
alternately, ``--repeats`` times; each call counts with its fastest time (the machine is
shared: the minimum is the code's cost).  Automatic garbage collection is off while timing, as
in the server (server/gc_policy.py runs it on a timer).  Per call: median, p99, mean, total,
and the ratio of the totals (= of the means: the auto-reveal per move averaged over whole
games, moves without one, wrong marks, counting zero on both sides).

``--interleave N`` also replays N games through ``Duel.copy`` + ``Duel.apply`` (the server's
path, each game with its own reveal cache) and times the auto-reveal per move with the games
played one after another and interleaved one move at a time: the second is what a server with
many rooms sees, each room's cached positions gone cold since its last move.

    python bench/reveal.py --games 10 --workloads explore --interleave 500
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.workloads import play  # noqa: E402
from engine import Duel  # noqa: E402
from engine.deduce import RevealCache, revealable  # noqa: E402

WORKLOADS = ("random", "explore", "bot")


def positions(kind: str, seed: int) -> list[tuple]:
    """(width, height, total, numbers, visible mines) of every auto-reveal of one game."""
    rng = random.Random(f"{kind}-{seed}")
    duel = Duel.new(rng, "brettspielnetz", first=0)
    asked: list[tuple] = []
    real = RevealCache.extend

    def record(cache, base, number, mine, width, height, total, numbers, visible):
        asked.append((width, height, total, dict(numbers), list(visible)))
        return real(cache, base, number, mine, width, height, total, numbers, visible)

    RevealCache.extend = record
    try:
        for _ in play(duel, kind, rng, 800):
            pass
    finally:
        RevealCache.extend = real
    return asked


def time_game(calls: list[tuple], repeats: int) -> tuple[list[int], list[int]]:
    """Fastest-of-``repeats`` nanoseconds per call, uncached and cached (a new cache per pass)."""
    clock = time.perf_counter_ns
    best_u = [1 << 62] * len(calls)
    best_c = [1 << 62] * len(calls)
    for _ in range(repeats):
        for i, args in enumerate(calls):
            t0 = clock()
            revealable(*args)
            dt = clock() - t0
            if dt < best_u[i]:
                best_u[i] = dt
        cache = RevealCache()
        for i, args in enumerate(calls):
            t0 = clock()
            revealable(*args, cache=cache)
            dt = clock() - t0
            if dt < best_c[i]:
                best_c[i] = dt
    return best_u, best_c


def game_moves(kind: str, seed: int) -> list[tuple]:
    """(seat, move) of every move one game of ``positions`` plays, refused ones left out."""
    rng = random.Random(f"{kind}-{seed}")
    return list(play(Duel.new(rng, "brettspielnetz", first=0), kind, rng, 800))


def replay_ns(kind: str, seeds: list[int], games: list[list[tuple]], interleaved: bool) -> tuple[int, int]:
    """Every game replayed through ``Duel.copy`` + ``Duel.apply`` (the server's way, each game
    with its own reveal cache), one game after another or one move of each game in turn;
    returns (nanoseconds inside ``Duel._auto_reveal``, moves)."""
    spent = [0]
    real = Duel._auto_reveal
    clock = time.perf_counter_ns

    def timed(self, *args):  # noqa: ANN001, ANN202
        t0 = clock()
        try:
            return real(self, *args)
        finally:
            spent[0] += clock() - t0

    duels = [Duel.new(random.Random(f"{kind}-{seed}"), "brettspielnetz", first=0) for seed in seeds]
    order = ([(g, i) for g, moves in enumerate(games) for i in range(len(moves))] if not interleaved else
             [(g, i) for i in range(max(map(len, games), default=0)) for g in range(len(games)) if i < len(games[g])])
    Duel._auto_reveal = timed
    try:
        for g, i in order:
            seat, move = games[g][i]
            duel = duels[g].copy()
            duel.apply(seat, move)
            duels[g] = duel
    finally:
        Duel._auto_reveal = real
    return spent[0], len(order)


def cold_figures(kind: str, seed: int, n: int, repeats: int) -> str:
    """The auto-reveal per move with ``n`` games played one after another, and interleaved (a
    room's data goes cold between its moves, as with many rooms on a server)."""
    seeds = [seed * 100003 + g for g in range(n)]
    games = [game_moves(kind, s) for s in seeds]
    out = []
    for interleaved in (False, True):
        best = None
        for _ in range(repeats):
            gc.collect()
            gc.disable()
            try:
                ns, moves = replay_ns(kind, seeds, games, interleaved)
            finally:
                gc.enable()
            best = ns / moves if best is None else min(best, ns / moves)
        out.append(f"{'interleaved' if interleaved else 'one by one'} {fmt(best)}")
    return f"  the auto-reveal per move through Duel.apply, {n} games: " + ", ".join(out) + f" (best of {repeats})"


def pct(sorted_ns: list[int], q: float) -> int:
    return sorted_ns[min(len(sorted_ns) - 1, int(q * len(sorted_ns)))]


def fmt(ns: float) -> str:
    return f"{ns / 1e3:.1f} µs" if ns < 1e6 else f"{ns / 1e6:.2f} ms"


def line(label: str, ns: list[int]) -> str:
    s = sorted(ns)
    return (f"  {label:<9} n={len(s):>6}  median {fmt(statistics.median(s)):>9}  p99 {fmt(pct(s, 0.99)):>9}  "
            f"mean {fmt(sum(s) / len(s)):>9}  total {sum(s) / 1e6:8.1f} ms")


def cache_memory(games: list[list[tuple]]) -> str:
    """A game's cache in memory (tracemalloc), sampled every 6th auto-reveal of up to 10 games."""
    samples = []
    for calls in games[:10]:
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        cache = RevealCache()
        for i, args in enumerate(calls):
            revealable(*args, cache=cache)
            if i % 6 == 5:
                after = tracemalloc.take_snapshot()
                samples.append(sum(stat.size_diff for stat in after.compare_to(before, "filename")))
        tracemalloc.stop()
    if not samples:
        return "no sample"
    samples.sort()
    return (f"median {statistics.median(samples) / 1024:.0f} KiB, p90 {pct(samples, 0.9) / 1024:.0f} KiB, "
            f"max {samples[-1] / 1024:.0f} KiB ({len(samples)} samples)")


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        for row in Path("/proc/cpuinfo").read_text().splitlines():
            if row.startswith("model name"):
                cpu = row.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()} ({platform.python_implementation()})"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=100, help="games per workload")
    ap.add_argument("--repeats", type=int, default=3, help="timed passes per game (fastest counts)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help=f"comma-separated, of {', '.join(WORKLOADS)}")
    ap.add_argument("--interleave", type=int, default=0, metavar="N",
                    help="also replay N games through Duel.apply one by one and interleaved (cold data)")
    args = ap.parse_args(argv)
    print(f"# reveal bench  {time.strftime('%Y-%m-%d %H:%M')}  {machine()}")
    print(f"# {' '.join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:]))}")
    for kind in args.workloads.split(","):
        games = [positions(kind, args.seed * 100003 + g) for g in range(args.games)]
        calls = sum(len(g) for g in games)
        for g in games:  # the same answers, or the figures mean nothing
            cache = RevealCache()
            for call in g:
                assert revealable(*call, cache=cache) == revealable(*call)
        gc.collect()
        print(f"{kind}: {args.games} games, {calls} auto-reveals; load average at start {load()}")
        all_u: list[int] = []
        all_c: list[int] = []
        gc.disable()
        try:
            for g in games:
                u, c = time_game(g, args.repeats)
                all_u += u
                all_c += c
                gc.collect()
        finally:
            gc.enable()
        print(line("uncached", all_u))
        print(line("cached", all_c))
        print(f"  ratio uncached/cached: total {sum(all_u) / sum(all_c):.2f}, "
              f"median {statistics.median(all_u) / statistics.median(all_c):.2f}, "
              f"p99 {pct(sorted(all_u), 0.99) / pct(sorted(all_c), 0.99):.2f}")
        print(f"  a game's cache during play: {cache_memory(games)}; load average at end {load()}")
        if args.interleave:
            print(cold_figures(kind, args.seed, args.interleave, args.repeats))


if __name__ == "__main__":
    main()

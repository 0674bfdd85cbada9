"""Classic benchmark: no-guess layout generation (engine.no_guess) against ms_toollib.

Prints figures; asserts nothing.  Record results in docs/PERFORMANCE.md ("Engine").

    python bench/classic.py --seeds 200 --seed 1

For each board (the three presets, a large custom board and a dense Expert-sized one), the
same seeded first clicks, in the same run:

- ``no_guess_layout`` as shipped (uniform draws checked by ``clears_without_guessing``, then
  repairs if none is accepted), and repairs only (``redraws=0``) with each way of picking the
  number to repair (``choose="latest"``, the default, and ``"random"``, Simon Tatham's choice):
  time per board (median / p99 / max), the work per board, and the boards' mean 3BV with its
  standard error (a repaired board could differ from a uniform one);
- ``clears_without_guessing`` on the boards generated: with the local rules (as shipped) and
  without (``analyze`` decides every step: the plain loop), same answers;
- how many plain uniform random layouts our check accepts (what rejection sampling faces);
- ``ms_toollib.laymine_solvable`` (rejection sampling with its own solver, Rust) for the same
  first click, and how many of its boards our check accepts; how many of ours its
  ``is_solvable`` accepts, and how many of the others its ``unsolvable_structure`` templates
  reject outright; the mean 3BV of both.

ms_toollib's generator cannot be seeded (it draws from its own RNG), so its figures vary from
run to run; ours are deterministic given ``--seed`` (their timings are not).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.no_guess import GenerationStats, clears_without_guessing, no_guess_layout, solve_stats  # noqa: E402

BOARDS = [  # name, width, height, mines, share of --seeds
    ("beginner", 9, 9, 10, 1.0),
    ("intermediate", 16, 16, 40, 1.0),
    ("expert", 30, 16, 99, 1.0),
    ("large", 60, 40, 480, 0.25),
    ("dense", 30, 16, 130, 0.25),
]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()} ({platform.python_implementation()})"


def pct(sorted_s, q):
    return sorted_s[min(len(sorted_s) - 1, int(q * len(sorted_s)))]


def fmt(s):
    return f"{s * 1e3:.1f} ms" if s < 10 else f"{s:.1f} s"


def line(label, times, extra=""):
    s = sorted(times)
    print(
        f"  {label:<34} n={len(s):>4}  median {fmt(statistics.median(s)):>9}  p99 {fmt(pct(s, 0.99)):>9}"
        f"  max {fmt(s[-1]):>9}  {extra}"
    )


def ms_board(width, height, mines):
    """ms_toollib's board: rows of numbers, -1 on a mine."""
    board = [[0] * width for _ in range(height)]
    for r, c in mines:
        board[r][c] = -1
    for r in range(height):
        for c in range(width):
            if board[r][c] != -1:
                board[r][c] = sum(
                    (rr, cc) in mines
                    for rr in (r - 1, r, r + 1)
                    for cc in (c - 1, c, c + 1)
                    if 0 <= rr < height and 0 <= cc < width
                )
    return board


def ms_mines(board):
    return frozenset((r, c) for r, row in enumerate(board) for c, v in enumerate(row) if v == -1)


def bbbv(ms, width, height, layouts):
    """Mean 3BV of the layouts, with its standard error: a check for bias between variants."""
    if len(layouts) < 2:
        return "3BV -"
    v = [ms.cal_bbbv(ms_board(width, height, m)) for m in layouts]
    return f"3BV {statistics.mean(v):.1f} ± {statistics.stdev(v) / len(v) ** 0.5:.1f}"


def bench_board(name, width, height, count, seeds, args, ms):
    rng = random.Random(f"clicks-{args.seed}-{name}")
    clicks = [(rng.randrange(height), rng.randrange(width)) for _ in range(seeds)]
    print(f"{name} {width}x{height}/{count} ({count / (width * height):.1%}), {seeds} first clicks; load {load()}")

    no_guess_layout(width, height, count, clicks[0], random.Random("warm-up"))  # caches, imports
    variants = [
        ("no_guess_layout (as shipped)", {}),
        ("  repairs only, choose=latest", {"redraws": 0}),
        ("  repairs only, choose=random", {"redraws": 0, "choose": "random"}),
    ]
    ours = {}
    for label, kwargs in variants:
        times, stats, layouts = [], GenerationStats(), []
        for k, click in enumerate(clicks):
            t0 = time.perf_counter()
            layouts.append(no_guess_layout(width, height, count, click, random.Random(f"{args.seed}-{k}"), stats=stats, **kwargs))
            times.append(time.perf_counter() - t0)
        ours[label] = layouts
        extra = f"drawn {stats.drawn}/{seeds}, draws/board {stats.draws / seeds:.1f}, " if not kwargs else ""
        line(
            label,
            times,
            extra + f"repairs/board {stats.perturbations / seeds:.1f}, mines moved/board {stats.moved / seeds:.1f}, "
            f"analyze calls/board {stats.exact_calls / seeds:.1f}" + (f", {bbbv(ms, width, height, layouts)}" if ms else ""),
        )
    layouts = ours[variants[0][0]]
    plain = random.Random(f"plain-{args.seed}-{name}")
    accepted = 0
    for r, c in clicks:
        free = [(rr, cc) for rr in range(height) for cc in range(width) if max(abs(rr - r), abs(cc - c)) > 1]
        accepted += clears_without_guessing(width, height, plain.sample(free, count), (r, c))
    print(f"  uniform random layouts (first block clear) our check accepts: {accepted}/{seeds}")
    for local in (True, False):
        times, calls = [], 0
        for click, mines in zip(clicks, layouts):
            t0 = time.perf_counter()
            got = solve_stats(width, height, mines, click, local_rules=local)
            times.append(time.perf_counter() - t0)
            assert got["cleared"]
            calls += got["exact_calls"]
        label = "clears_without_guessing" if local else "  the same, no local rules"
        line(label, times, f"analyze calls/board {calls / len(layouts):.1f}")

    if ms is None:
        return
    n_ms = max(1, round(seeds * args.ms_share)) if count / (width * height) > 0.25 else seeds
    times, theirs, failed = [], [], 0
    for r, c in clicks[:n_ms]:
        t0 = time.perf_counter()
        board, ok = ms.laymine_solvable(height, width, count, r, c, args.ms_max_times)
        times.append(time.perf_counter() - t0)
        if ok:
            theirs.append(((r, c), ms_mines(board)))
        else:
            failed += 1
    line("ms_toollib.laymine_solvable", times, f"failed {failed}")
    accepted = sum(clears_without_guessing(width, height, m, click) for click, m in theirs)
    print(f"  ms_toollib's boards our check accepts: {accepted}/{len(theirs)}")
    solvable = template = 0
    for (r, c), m in zip(clicks, layouts):
        board = ms_board(width, height, m)
        if ms.is_solvable(board, r, c):
            solvable += 1
        elif ms.unsolvable_structure(board):
            template += 1
    print(
        f"  our boards ms_toollib.is_solvable accepts: {solvable}/{len(layouts)} "
        f"(of the others, {template} hold one of its unsolvable_structure templates)"
    )
    print(f"  ms_toollib's boards: {bbbv(ms, width, height, [m for _, m in theirs])}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200, help="boards per preset (large and dense boards: a quarter)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ms-max-times", type=int, default=1_000_000, help="ms_toollib's attempt cap per board")
    ap.add_argument("--ms-share", type=float, default=0.2, help="share of the dense boards ms_toollib makes (slow)")
    ap.add_argument("--only", help="comma-separated board names (default: all)")
    args = ap.parse_args(argv)
    print(f"# classic bench  {time.strftime('%Y-%m-%d %H:%M')}  {machine()}")
    print(f"# {' '.join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:]))}")
    try:
        import ms_toollib as ms
    except ImportError:
        ms = None
        print("(ms_toollib not installed: pip install .[bench])")
    only = set(args.only.split(",")) if args.only else None
    for name, width, height, count, share in BOARDS:
        if only and name not in only:
            continue
        bench_board(name, width, height, count, max(1, round(args.seeds * share)), args, ms)
    print(f"# load average at end: {load()}")


if __name__ == "__main__":
    main()
